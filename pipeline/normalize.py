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
from dataclasses import dataclass, field
from functools import lru_cache

from .chinese import LangTag, char_counts
from .cleantext import CONTROL_CHARS, has_control_chars
from .corpus import Source
from .encoding import decode_bytes
from .dates import find_dates, mark_references
from .errors import NormalizeError
from .limits import DEFAULT_LIMITS, PageLimits
from .pagelimits import check_records
from .pagescript import language_warning, page_text, settle_script
from .schema import markers

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


# Not frozen, as pipeline.records.CardMention (a frozen init is 3.6 times slower); unsafe_hash: hashable as before.
@dataclass(slots=True, unsafe_hash=True)
class Link:
    """A link inside a line: characters ``start:end`` of the line's text."""

    start: int
    end: int
    href: str


@dataclass
class Line:
    """One line of text as on the page, with struck ranges and links; the
    cells of a table row (its text joins them with :data:`CELL_SEPARATOR`);
    ``breaks``: where a ``<br>`` fell (the space it became, at that index)."""

    text: str
    struck: tuple[tuple[int, int], ...] = ()
    links: tuple[Link, ...] = ()
    cells: tuple[str, ...] = ()
    breaks: tuple[int, ...] = ()

    def part(self, a: int, b: int) -> Line:
        """Characters ``a:b`` as a line of their own (stripped), with the struck
        ranges and links inside them."""
        raw = self.text[a:b]
        text = raw.strip()
        start = a + len(raw) - len(raw.lstrip())
        end = start + len(text)
        clip = lambda x, y: (max(x, start) - start, min(y, end) - start)  # noqa: E731
        return Line(text, tuple(clip(x, y) for x, y in self.struck if min(y, end) > max(x, start)),
                    tuple(Link(*clip(l.start, l.end), l.href) for l in self.links if l.start >= start and l.end <= end))


LETTER = re.compile(r"[^\W\d_]")  # a letter of any script
# Questions and answers (问：… / 答：…, Q1: … / A（17/3/24）: …): a question starts a ruling, its
# answer stays with it, a date stamp before either label allowed.
_STAMP_CLASS = r"\d/.\-年月日\s"  # what a date stamp is written with (its parentheses aside)
_STAMP = f"[{_STAMP_CLASS}]*"
# A Latin Q or A is a label only before a colon or a parenthesis that opens a date: "A (rare) case" is no answer.
QUESTION_LABEL = re.compile(_STAMP + r"(?:(?:问|提问)\s*[：:（(]|[QＱ]\d*\s*(?:[：:]|[（(]\d))")
ANSWER_LABEL = re.compile(_STAMP + r"(?:(?:答|回答)\s*[：:（(]|[AＡ]\d*\s*(?:[：:]|[（(]\d))")


def _own_date_at(text: str, language: str) -> str | None:
    """Where ``text`` carries a date of its own (not one it refers to:
    ``详见17/1/1的…``): ``"alone"`` (a date stamp and no word), ``"start"``
    (at most a short label before it and the ruling's words after it:
    ``17/3/24 「A」…``, ``①17/3/24 …``, ``Ruling (3/24/17): …``), ``"end"``, or None."""
    dates = find_dates(text, language)
    own = [d for d in mark_references(text, dates, *reference_words()) if d.kind != "reference"] if dates else []
    if not own:
        return None
    if stamp_only(text):
        return "alone"
    before, after = text[:own[0].start], _NOTE.sub("", text[own[0].end:])
    # before its ruling: after a label at most (①, 日期：, "Konami FAQ (…):"; "…发动（17/3/24），但…" is
    # no label), never after a sentence's end, and with the ruling's words after it
    # ("可以。（17/3/24）", "No (3/24/17)" end theirs)
    opener = before.rstrip()[-1:]
    label = not _SENTENCE_END.search(before) and (
        len(before.strip()) <= 8 or opener in "：:"
        or (opener in "(（" and _CLOSED_LABEL.match(text, own[0].end)))
    return "start" if label and LETTER.search(after) else "end"


_STAMP_CHARS = re.compile(f"[{_STAMP_CLASS}（）()]+")  # what a date stamp alone is written with
_NOTE = re.compile(r"[（(][^（）()]{1,8}[）)]")  # a stamp's note: 17/3/24（邮件）
_DATE_LIKE = re.compile(r"\d\s*[/.\-年]\s*\d")
# Konami FAQ (3/24/17, email): / Konami ruling (3/24/17) - : the parenthesis closes a label
_CLOSED_LABEL = re.compile(r"[^()（）]{0,20}[)）]\s*[：:\-—–]")
_SENTENCE_END = re.compile(r"[。！？!?；;]|\.(?:\s|$)")


def stamps_lead(opens: bool, ends: bool, stamps: list[str]) -> bool:
    """Whether the date stamps alone on lines of their own (``stamps``, in
    order) stand before the rulings they date. Only where the lines open with
    one, or with a title (:func:`is_title`) and then one (``opens``): yes
    when they do not also end with one (``ends``); when they do, their forms
    decide: a first stamp written otherwise than the others while the last is
    written like them is the day's, over rulings dated after them
    (``2019年1月9日`` / ``「A」…`` / ``17/3/24`` / ``「B」…`` / ``17/3/25``: no);
    else the last is the odd one, an update of the last ruling (``17/3/24`` /
    ``「A」…`` / ``18/1/5`` / ``「B」…`` / ``2019.1.9（更新）``: yes)."""
    if not opens:
        return False
    if not ends or len(stamps) < 3:
        return True
    shape = [_stamp_shape(text) for text in stamps]
    return not (shape[0] != shape[1] and shape[-1] == shape[-2])


def _stamp_shape(text: str) -> tuple[str, int]:
    """How a stamp is written: the separator after its first number, and that number's digits."""
    m = _FIRST_NUMBER.match(text)
    return (m.group(2), len(m.group(1))) if m else ("", 0)


_FIRST_NUMBER = re.compile(r"\D*(\d+)(\D?)")


def is_title(text: str) -> bool:
    """Whether a line is a title over the rulings after it rather than a
    ruling: a label ending in a colon (``「救援兔」的裁定：``), or a line that
    ends no sentence and holds little besides names in brackets (``「救援兔」``,
    ``【救援兔】``, ``「救援兔」的裁定``, ``「救援兔」（レスキュー・ラビット）``: six
    characters at most) or, in Latin script, a few words with capitals at
    both ends (``Rescue Rabbit``, ``Book of Moon``). ``「A」的效果可以对应「B」发动``
    and ``You can activate it`` are rulings."""
    text = text.strip()
    if text.endswith(("：", ":")):
        return True
    if not text or _SENTENCE_END.search(text[-1:]):
        return False
    rest = _BRACKETED.sub("", text).strip()
    if not rest:
        return True  # names in brackets only
    if _CJK.search(text):
        return len(rest) <= 6
    words = rest.split()
    return 1 <= len(words) <= 5 and words[0][:1].isupper() and words[-1][:1].isupper()


_BRACKETED = re.compile(r"「[^「」]*」|『[^『』]*』|【[^【】]*】|《[^《》]*》|（[^（）]*）|\([^()]*\)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def stamp_only(text: str) -> bool:
    """Whether ``text`` holds date stamps and no word (``17/3/24``, ``（2018.1.5）``,
    ``2019年1月9日``, ``17/3/24（邮件）``: a short note in parentheses is the stamp's)."""
    first = LETTER.search(text)
    if first is None:
        return True
    if first.group() not in "年月日" and not (len(text) <= 40 and text.lstrip()[:1].isdigit()
                                            and _DATE_LIKE.search(text)):
        return False  # most lines: their first letter is a word's (1.（略）, 2000（攻击力） have no date)
    return not LETTER.search(_STAMP_CHARS.sub("", _NOTE.sub("", text)))


@lru_cache(maxsize=1)
def reference_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words before and after a date that make it a date the text refers
    to (``schema/markers.json``, lower case), for :func:`pipeline.dates.mark_references`."""
    m = markers()
    return tuple(w.lower() for w in m["date_reference_before"]), tuple(w.lower() for w in m["date_reference_after"])


def split_dated_lines(line: Line, always: bool = False, language: str = "zh") -> list[Line]:
    """``line`` cut at its ``<br>`` (or ``<pre>`` newline) breaks into the rulings it holds:
    every part its own line in a line-block (``always``), else only when at
    least two parts carry a date of their own (dated rulings one after the
    other in one paragraph); else ``[line]``. A table row (cells) is never
    cut: its cells are its fields. See :func:`_rulings` for which parts make
    one ruling."""
    if not line.breaks or line.cells:
        return [line]
    bounds = (-1, *line.breaks, len(line.text))
    spans = [(a + 1, b) for a, b in zip(bounds, bounds[1:]) if line.text[a + 1:b].strip()]
    if always:  # a line-block: every part is a ruling (a stamp alone is glued to its ruling by extract)
        return [line.part(a, b) for a, b in spans]
    dated = [_own_date_at(line.text[a:b], language) for a, b in spans]
    if sum(d is not None for d in dated) < 2:
        return [line]
    return [line.part(a, b) for a, b in _rulings(line.text, spans, dated)]


def _rulings(text: str, spans: list[tuple[int, int]], dated: list[str | None]) -> list[tuple[int, int]]:
    """The character ranges of the rulings among the parts ``spans`` of a
    paragraph's line (``dated``: :func:`_own_date_at` of each): a question
    starts a ruling and its answer stays with it, and the page
    writes its dates before its rulings (stamps alone that lead:
    :func:`stamps_lead`; or most dated parts carry theirs before their
    words: a ruling starts at
    each dated part) or after them (a ruling ends at each dated part; parts
    after the last one are a ruling of their own)."""
    opens = dated[0] == "alone" or (len(dated) > 1 and dated[1] == "alone" and is_title(text[slice(*spans[0])]))
    stamps = [text[a:b] for (a, b), d in zip(spans, dated) if d == "alone"]
    date_first = (stamps_lead(opens, dated[-1] == "alone", stamps)
                  or 2 * sum(d == "start" for d in dated) > sum(d in ("start", "end") for d in dated))
    groups: list[list[int]] = []
    for i, (a, _) in enumerate(spans):
        if groups and ANSWER_LABEL.match(text, a):
            new = False
        elif QUESTION_LABEL.match(text, a):
            new = True
        elif date_first:
            new = bool(dated[i]) and not (dated[i - 1] == "alone" if i else False) or not groups
        else:
            new = not groups or bool(dated[groups[-1][-1]])  # the ruling before ended at its date
        if new:
            groups.append([i])
        else:
            groups[-1].append(i)
    return [(spans[g[0]][0], spans[g[-1]][1]) for g in groups]


@dataclass
class Block:
    """A paragraph-like unit (a Sphinx line-block, a ``<p>``, a list item);
    ``parent`` is the index of the block of the list item this one is nested
    in, or of the ruling a footnote (``note``) belongs to."""

    index: int
    section: tuple[str, ...]
    lines: list[Line]
    bullet: bool = False
    parent: int | None = None
    note: bool = False
    examples: bool = False  # under an example label heading or paragraph: its lines are examples
    group: int = -1  # the block this one continues (examples after a label: their principle's); -1: itself

    def __post_init__(self) -> None:
        if self.group < 0:
            self.group = self.index


@dataclass
class Page:
    """A normalized page: its blocks in document order and any warnings."""

    source_id: str
    language: str
    script: str
    region: str
    title: str
    blocks: list[Block]
    warnings: list[str] = field(default_factory=list)
    lang_tag: LangTag = field(default_factory=LangTag)  # the language the page's <head> declares


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
    decoded = decode_bytes(data, source_id, declared, language=language, script=script, region=region)
    return decoded.text, decoded.warnings


# --------------------------------------------------------------------------- entry point

def normalize(data: bytes, source: Source, declared_charset: str | None = None,
              limits: PageLimits = DEFAULT_LIMITS) -> Page:
    """Page bytes -> :class:`Page`; dispatches on ``source.format`` (``html``:
    :func:`pipeline.htmlpage.normalize_html`; ``pdf-text``:
    :func:`pipeline.pdftext.normalize_pdf_text`; else plain text or Markdown:
    :func:`pipeline.textpages.normalize_text`). Raises NormalizeError for a
    page it cannot read or over ``limits``."""
    text, warnings = decode_page(data, source.id, declared_charset, language=source.language, script=source.script,
                                 region=source.region)
    control = CONTROL_CHARS.search(text) if has_control_chars(text) else None
    if control:
        count = len(CONTROL_CHARS.findall(text))
        warnings.append(f"{source.id}: {count} control characters removed, the first "
                        f"(U+{ord(control.group(0)):04X}) at char {control.start()}")
        text = CONTROL_CHARS.sub("", text)
    # The readers import the page types from this module: imported here, when the first page is read.
    if source.format == "pdf-text":  # PDF lines joined back into paragraphs and list items
        from .pdftext import normalize_pdf_text
        page = normalize_pdf_text(text, source)
        check_records(len(page.blocks), limits.max_records, source.id, "page")
    elif source.format == "html":
        from .htmlpage import normalize_html
        page = normalize_html(text, source, limits)
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
