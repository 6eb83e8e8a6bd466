"""Stage 1, normalize: page bytes -> :class:`Page` of ordered text blocks.

:func:`normalize` is the stage's entry: it decodes the bytes
(:func:`decode_page`), removes control characters (with a warning), reads
the page by its format into blocks, then settles the script it is written
in. The page types (:class:`Page`, :class:`Block`, :class:`Line`,
:class:`Link`) are defined here; the readers live in modules of their own:

* HTML (:func:`pipeline.htmlpage.normalize_html`): parsed once with lxml
  and walked directly (:mod:`pipeline.htmlwalk`, lines by
  :mod:`pipeline.htmlline`): a BeautifulSoup tree of the same page costs
  about 15 times the lxml parse (``python -m bench`` prints both).
  BeautifulSoup reads the page's ``<head>`` (title, declared language: a
  small, often sloppy part) and parses the pages libxml2 gives up on (markup
  nested over 2048 levels). Only the content element is kept (Sphinx
  ``article[role=main]``, MediaWiki ``.mw-parser-output``, ``main`` ...); site
  chrome (navigation, sidebars, footers, "edit" and heading anchor links,
  scripts; the rules are data in ``schema/markers.json``,
  :mod:`pipeline.pagemarkers`) is dropped. Headings become the block's
  ``section`` path; an admonition title (``备注``, ``注意``) is a sub-heading
  of its contents. Struck-through text (``<del>``, ``<s>``, ``<strike>``,
  ``span.strike``) is kept and its character ranges are marked in
  :attr:`Line.struck`; link targets are kept with their character ranges
  (card database entries and the official FAQ entry behind a date). The
  page's limits are checked before it is parsed (:mod:`pipeline.pagelimits`).
* Plain-text and Markdown pages (the seeds, English texts:
  :func:`pipeline.textpages.normalize_text`) are split into the same blocks:
  blank lines, bullets and headings separate blocks.
* PDF text (:func:`pipeline.pdftext.normalize_pdf_text`): its lines joined
  back into paragraphs and list items.

Chinese text is converted to one canonical script and vocabulary by
:func:`pipeline.chinese.canonical_text` (OpenCC, then the regional terms of
``schema/regional_terms.tsv``) in extract; the original text is always kept
beside it. The script and region a Chinese page is really written in are
settled by :func:`pipeline.pagescript.settle_script`.

Errors: :class:`~pipeline.errors.NormalizeError` naming the source and place
for empty or binary pages, pages with no text (no body, or only headings)
and pages over a limit. Warnings (the page is still processed): undecodable
bytes (with the byte offset), control characters (removed), no content
element (``<body>`` is used), tags the parser had to repair (line and
column), a missing ``</html>`` (truncated?), and a page whose letters are
mostly not in the script of its declared language. Markup may nest to any
depth: the walkers use explicit stacks.
"""

from __future__ import annotations

import codecs
import re

from .chinese import char_counts
from .cleantext import CONTROL_CHARS, has_control_bytes, has_control_chars
from .corpus import Source
from .encoding import Decoded, decode_bytes
from .errors import NormalizeError
from .limits import DEFAULT_LIMITS, PageLimits
from .pagelimits import check_records
from .pagescript import language_warning, page_text, settle_script
from .page import Page

STRIKE_TAGS = {"del", "s", "strike"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_TAGS = {"p", "dd", "dt", "pre", "caption", "figcaption"}
# Phrasing content: a run of these and text is one line, never cut apart.
INLINE_TAGS = {"a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i", "ins",
               "kbd", "mark", "q", "rb", "rp", "rt", "rtc", "ruby", "s", "samp", "small", "span", "strike", "strong",
               "sub", "sup", "time", "tt", "u", "var", "wbr", "br", "img"}
CELL_TAGS = {"td", "th"}
_WALKED_LEAVES = CELL_TAGS | {"br"}  # childless elements that still need _LineBuilder.element's walk
# Block elements met inside a line (a cell's paragraphs): a space keeps their texts apart.
_SPACED_BLOCKS = frozenset({"p", "div", "li", "dd", "dt", "blockquote", "pre", "ul", "ol", "dl"})
CELL_SEPARATOR = " | "  # between the cells of a table row


# --------------------------------------------------------------------------- decoding

BINARY_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def decode_page(data: bytes, source_id: str, declared: str | None = None, *, language: str = "", script: str = "",
                region: str = "") -> tuple[str, list[str]]:
    """Bytes -> (text, warnings): BOM, valid UTF-8, else the best of the
    declared charset (HTTP header ``declared`` or ``<meta charset>``) and the
    encodings of the page's ``language``, ``script`` and ``region``
    (windows-1252 for English; GB18030 and Big5 for Chinese:
    :func:`pipeline.encoding.decode_bytes`). A wrong declaration is
    detected, not trusted; undecodable bytes are replaced and reported with
    their byte offsets (the page is still processed).

    Raises NormalizeError for an empty page or one that looks binary.
    """
    decoded = decoded_page(data, source_id, declared, language=language, script=script, region=region)
    return decoded.text, decoded.warnings


def decoded_page(data: bytes, source_id: str, declared: str | None = None, *, language: str = "",
                 script: str = "", region: str = "") -> Decoded:
    """:func:`decode_page`'s reading as a :class:`~pipeline.encoding.Decoded`
    (with the page's bytes when the text is their UTF-8). Raises as it does."""
    if not data.strip():
        raise NormalizeError("page is empty", source_id=source_id, place="byte 0")
    head = data[:4096]
    # Text in any of our encodings has no C0 control bytes but tab, newlines and
    # ESC; compressed or image data has about 10 % of them. A few stray ones (a
    # NUL in a card name) do not make a page binary: normalize removes them.
    if not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        controls = BINARY_BYTES.findall(head)
        if len(controls) > max(3, len(head) // 100):
            first = BINARY_BYTES.search(head).start()
            raise NormalizeError("page looks binary (control bytes such as NUL), not text", source_id=source_id,
                                 place=f"byte {first}")
    return decode_bytes(data, source_id, declared, language=language, script=script, region=region)


# --------------------------------------------------------------------------- entry point

def normalize(data: bytes, source: Source, declared_charset: str | None = None,
              limits: PageLimits = DEFAULT_LIMITS) -> Page:
    """Page bytes -> :class:`Page`; dispatches on ``source.format`` (``html``:
    :func:`pipeline.htmlpage.normalize_html`; ``pdf-text``:
    :func:`pipeline.pdftext.normalize_pdf_text`; else plain text or Markdown:
    :func:`pipeline.textpages.normalize_text`). Raises NormalizeError for a
    page it cannot read or over ``limits``."""
    decoded = decoded_page(data, source.id, declared_charset, language=source.language, script=source.script,
                           region=source.region)
    text, warnings, utf8 = decoded.text, decoded.warnings, decoded.utf8
    # A page read from valid UTF-8 (most) is checked and parsed in its own bytes: the text is not encoded again.
    found = has_control_bytes(utf8) if utf8 is not None else has_control_chars(text)
    control = CONTROL_CHARS.search(text) if found else None
    if control:
        count = len(CONTROL_CHARS.findall(text))
        warnings.append(f"{source.id}: {count} control characters removed, the first "
                        f"(U+{ord(control.group(0)):04X}) at char {control.start()}")
        text, utf8 = CONTROL_CHARS.sub("", text), None
    # The readers import the page types from this module: imported here, when the first page is read.
    if source.format == "pdf-text":  # PDF lines joined back into paragraphs and list items
        from .pdftext import normalize_pdf_text
        page = normalize_pdf_text(text, source)
        check_records(len(page.blocks), limits.max_records, source.id, "page")
    elif source.format == "html":
        from .htmlpage import normalize_html
        page = normalize_html(text, source, limits, utf8)
    else:
        from .textpages import normalize_text
        page = normalize_text(text, source, limits)
    page.warnings[:0] = warnings
    chars = char_counts(page_text(page))  # counted once for both checks of the page's script
    settle_script(page, chars)
    mismatch = language_warning(page, chars=chars)
    if mismatch:
        page.warnings.append(mismatch)
    return page
