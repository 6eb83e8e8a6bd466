"""Stage 1, normalize: page bytes -> :class:`Page` of ordered text blocks.

* HTML is parsed once with lxml and its tree is walked directly: a
  BeautifulSoup tree of the same page costs about 15 times the lxml parse
  (``python -m bench`` prints both). BeautifulSoup reads the page's
  ``<head>`` (title, declared language: a small, often sloppy part) and
  parses the pages libxml2 gives up on (markup nested over 2048 levels).
  Only the content element is kept
  (Sphinx ``article[role=main]``, MediaWiki ``.mw-parser-output``, ``main`` ...);
  site chrome (navigation, sidebars, footers, "edit" and heading anchor links,
  scripts; the rules are data in ``schema/markers.json``) is dropped. Headings become the block's ``section`` path; an
  admonition title (``备注``, ``注意``) is a sub-heading of its contents.
* Struck-through text (``<del>``, ``<s>``, ``<strike>``, ``span.strike``) is kept
  and its character ranges are marked in :attr:`Line.struck`.
* Link targets are kept with their character ranges (card database entries and
  the official FAQ entry behind a date).
* Plain-text and Markdown pages (the seeds, English texts) are split into the
  same blocks: blank lines, bullets and headings separate blocks.

Chinese text is converted to one canonical script and vocabulary by
:func:`pipeline.chinese.canonical_text` (OpenCC, then the regional terms of
``schema/regional_terms.tsv``) in extract; the original text is always kept
beside it. The script and region a Chinese page is
really written in are settled by :func:`settle_script`.

Errors: :class:`~pipeline.errors.NormalizeError` naming the source and place
for empty or binary pages and pages with no text (no body, or only headings).
Warnings (the page is still processed): undecodable bytes (with the byte
offset), control characters (removed), no content element (``<body>`` is
used), tags the parser had to repair (line and column), a missing ``</html>``
(truncated?), and a page whose letters are mostly not in the script of its
declared language. Markup may nest to any depth: the walkers use explicit stacks.
"""

from __future__ import annotations

import codecs
import html
import re
import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, NavigableString, Tag, XMLParsedAsHTMLWarning
from lxml import etree

from .chinese import LangTag, char_counts, parse_lang_tag, resolve_script_region
from .corpus import Source
from .encoding import decode_bytes
from .dates import find_dates
from .errors import NormalizeError
from .limits import DEFAULT_LIMITS, PageLimits
from .page import Block, Line, Link, Page
from .schema import markers
from .segment import bare_label, label_line, split_dated_lines  # the layout rules: segment owns them

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


# --------------------------------------------------------------------------- HTML

# One lxml parse serves the walk and the repair warnings. libxml2's limits on
# depth and text size are lifted (huge_tree): hostile pages nest deep.
_PARSER_OPTIONS = dict(encoding="utf-8", recover=True, remove_comments=True, remove_pis=True, huge_tree=True)
_NO_CLASSES: frozenset[str] = frozenset()
_WHITESPACE = re.compile(r"\s+")
HEAD_END = re.compile(r"<body[\s>]", re.I)
HEAD_LIMIT = 65536


def _css_to_xpath(selector: str) -> str:
    """The XPath of the simple selectors of ``content_selectors``: ``tag``,
    ``tag[attr=value]``, ``tag.class``, ``tag#id``."""
    m = re.fullmatch(r"([a-z]+)(?:\[([a-z-]+)=([\w-]+)\]|\.([\w-]+)|#([\w-]+))?", selector)
    if m is None:
        raise ValueError(f"unsupported content selector {selector!r}")
    tag, attr, value, cls, ident = m.groups()
    if attr:
        return f"//{tag}[@{attr}='{value}']"
    if cls:
        return f"//{tag}[contains(concat(' ', normalize-space(@class), ' '), ' {cls} ')]"
    return f"//{tag}[@id='{ident}']" if ident else f"//{tag}"


@lru_cache(maxsize=1)
def _content_xpaths() -> tuple:
    """The content selectors of ``schema/markers.json``, compiled, first found wins."""
    return tuple(etree.XPath(_css_to_xpath(s)) for s in markers()["content_selectors"])


@lru_cache(maxsize=1)
def _chrome() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """(tags, classes, ARIA roles) of site chrome and the (classes, roles)
    that keep such an element as content, from ``schema/markers.json``."""
    chrome = markers()["chrome"]
    return (frozenset(chrome["tags"]), frozenset(chrome["classes"]), frozenset(chrome["roles"]),
            frozenset(chrome["keep_classes"]), frozenset(chrome["keep_roles"]))


@lru_cache(maxsize=1)
def note_headings() -> frozenset[str]:
    """Headings of notes (``备注``, ``注意``): they nest under the section they follow."""
    return frozenset(markers()["note_headings"])


@lru_cache(maxsize=1)
def _chrome_line_pattern() -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in markers()["chrome_line_patterns"]), re.I)


def chrome_line(text: str) -> bool:
    """A line of site chrome written inside the content (a navigation or
    breadcrumb line, a footer, "skip to content", an edit link), by the
    patterns of ``schema/markers.json``. A line holding a date is a ruling,
    never chrome."""
    return _chrome_line_pattern().search(text) is not None and not find_dates(text)


@lru_cache(maxsize=1)
def _footnote_markers() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    m = markers()
    return frozenset(m["footnote_classes"]), frozenset(m["footnote_roles"]), frozenset(m["footnote_label_classes"])


def _is_footnote(el, classes: frozenset[str]) -> bool:
    footnote_classes, roles, _ = _footnote_markers()
    return bool(classes & footnote_classes) or el.get("role") in roles


def _classes(el) -> frozenset[str]:
    return _classes_of(el.get("class"))


def _classes_of(value: str | None) -> frozenset[str]:
    """The classes of a ``class`` attribute's value (None: no attribute)."""
    return _class_set(value) if value else _NO_CLASSES


@lru_cache(maxsize=4096)  # a site uses a few class attributes over and over
def _class_set(value: str) -> frozenset[str]:
    return frozenset(value.split())


def _is_chrome(el) -> bool:
    return _kind(el, el.tag)[0]


def _class_role(el) -> tuple[str | None, str | None]:
    """``el``'s ``class`` and ``role`` attributes (None when absent), its
    attribute names read first: most elements have neither, and one read of
    the names costs half of two lookups by name."""
    keys = el.keys()
    if not keys:
        return None, None
    return el.get("class") if "class" in keys else None, el.get("role") if "role" in keys else None


def _kind(el, tag: str) -> tuple[bool, bool]:
    """:func:`_element_kind` of the element ``el`` of ``tag``."""
    class_value, role = _class_role(el)
    return _element_kind(tag, class_value, role)


@lru_cache(maxsize=4096)  # a site uses a few (tag, class, role) triples over and over
def _element_kind(tag: str, class_value: str | None, role: str | None) -> tuple[bool, bool]:
    """(site chrome, struck through) for an element of ``tag`` with these
    ``class`` and ``role`` attributes, by the chrome markers of
    ``schema/markers.json`` (:func:`_chrome`) and :data:`STRIKE_TAGS`."""
    classes = _classes_of(class_value)
    tags, chrome_classes, roles, keep_classes, keep_roles = _chrome()
    chrome = ((tag in tags or bool(classes & chrome_classes) or role in roles)
              and not (classes & keep_classes or role in keep_roles))
    return chrome, tag in STRIKE_TAGS or "strike" in classes


def _items(el) -> list:
    """The children of ``el`` in document order, text included: its ``.text``,
    then each child element followed by that child's ``.tail`` (a list: the
    tree holds them all anyway, and a list is built faster than a generator runs)."""
    text = el.text  # read once: lxml decodes a text from UTF-8 at each access
    items = [text] if text else []
    for child in el:
        if isinstance(child.tag, str):  # an entity reference left in the tree is only its tail
            items.append(child)
        tail = child.tail
        if tail:
            items.append(tail)
    return items


def _collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", clean_text(text))


# Format characters that draw nothing (zero-width space and joiners, word joiner, BOM, soft hyphen,
# bidirectional marks and embeddings): removed, so they never split a card name or a date.
INVISIBLE_CHARS = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")
# What clean_text removes: the invisible characters, and the control characters normalize removes from
# the raw page (CONTROL_CHARS) when a character reference or an entity gave them after the raw text was
# cleaned (&#x1b; &#27 &#x7f; &#x81;: libxml2 decodes them to the raw characters).
UNWANTED = re.compile(f"[{INVISIBLE_CHARS}\x00-\x08\x0e-\x1f\x7f-\x9f]")
ENTITY = re.compile(r"&(?:[a-zA-Z][a-zA-Z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


def clean_text(text: str) -> str:
    """Text as a reader sees it: HTML entities still in it after parsing (a
    page that escaped them twice: ``&amp;amp;`` -> ``&amp;`` -> ``&``) decoded,
    invisible format characters and control characters (:data:`UNWANTED`,
    the same C0 and C1 controls normalize removes from the raw page) removed."""
    if "&" in text:
        for _ in range(3):  # each pass undoes one level of escaping
            if not ENTITY.search(text):
                break
            text = html.unescape(text)
    return UNWANTED.sub("", text) if UNWANTED.search(text) else text


class _LineBuilder:
    """Collects one line of text from text pieces and inline elements, with
    the ranges of struck text and links; elements in ``skip`` (an
    admonition's title, already a section name) and site chrome are left
    out. Table cells are separated by :data:`CELL_SEPARATOR`. In ``pre``
    mode (a ``<pre>``) each newline is a break, as a ``<br>`` is."""

    def __init__(self, skip: frozenset | set = frozenset(), clean: bool = False, pre: bool = False):
        self.skip = skip
        self.clean = clean  # the page holds no invisible character: clean_text is a no-op on a piece without '&'
        self.pre = pre
        self.parts: list[str] = []
        self.struck: list[tuple[int, int]] = []
        self.links: list[Link] = []
        self.pos = 0
        self.cell_starts: list[int] = []
        self.cell_ends: list[int] = []
        self.breaks: list[int] = []

    def text(self, raw: str | None, in_strike: bool = False) -> None:
        if raw and (self.breaks or self.pre):  # most lines have neither: one test
            if self.breaks and self.breaks[-1] == self.pos - 1:
                raw = raw.lstrip()  # the start of a line after a break: its indentation is no text
            if raw and self.pre and "\n" in raw:
                self._pre_text(raw, in_strike)
                return
        if raw:
            s = raw if self.clean and "&" not in raw else clean_text(raw)
            if not (s.isprintable() and "  " not in s):  # else no whitespace but single ASCII spaces: as is
                s = _WHITESPACE.sub(" ", s)
            self.parts.append(s)
            if in_strike:
                self.struck.append((self.pos, self.pos + len(s)))
            self.pos += len(s)

    def line_break(self) -> None:
        """A ``<br>`` (or a newline of a ``<pre>``): one space, never two,
        whose index is a break of the line; white space right after it is dropped."""
        if not self.parts or self.parts[-1][-1:] != " ":
            self.parts.append(" ")
            self.pos += 1
        self.breaks.append(self.pos - 1)

    def _pre_text(self, raw: str, in_strike: bool) -> None:
        """Preformatted text: a break at each newline."""
        for i, piece in enumerate(raw.split("\n")):
            if i:
                self.line_break()
            if piece:
                self.text(piece, in_strike)

    def digit_break(self) -> None:
        """A space between two digit runs that a link boundary separates: two
        date links in a row (``17/3/24``, ``17/3/24``) are two dates, never
        ``17/3/2417/3/24``."""
        if self.parts and self.parts[-1][-1:].isdigit():
            self.parts.append(" ")
            self.pos += 1

    def element(self, element, in_strike: bool = False) -> None:
        """Add ``element`` and its subtree (not its tail)."""
        tag = element.tag
        if not len(element) and isinstance(tag, str) and tag not in _WALKED_LEAVES:
            self._leaf(element, tag, in_strike)  # most inline elements: no walk needed
            return
        # lxml's iterwalk, not recursion: hostile pages nest thousands of levels deep.
        # One frame per open element: (inside struck text, text position at its start, read).
        frames: list[tuple[bool, int, bool]] = [(in_strike, self.pos, True)]
        walker = etree.iterwalk(element, events=("start", "end"))
        for event, el in walker:
            if event == "start":
                outer_strike = frames[-1][0]
                tag = el.tag
                if tag == "br":
                    self.line_break()
                    walker.skip_subtree()
                    frames.append((outer_strike, self.pos, False))
                    continue
                # a comment or entity left in the tree is skipped as chrome is
                chrome, struck = (_kind(el, tag) if isinstance(tag, str)
                                  else (True, False))
                if chrome or el in self.skip:
                    walker.skip_subtree()
                    frames.append((outer_strike, self.pos, False))
                    continue
                if tag in _SPACED_BLOCKS and self.parts and self.parts[-1][-1:] not in ("", " "):
                    self.parts.append(" ")  # two paragraphs of one cell: "a b", never "ab"
                    self.pos += 1
                if tag in CELL_TAGS:
                    if self.cell_starts:
                        self.cell_ends.append(self.pos)
                    if self.pos and self.parts[-1].strip():
                        self.parts.append(CELL_SEPARATOR)
                        self.pos += len(CELL_SEPARATOR)
                    self.cell_starts.append(self.pos)
                text = el.text
                if tag == "a" and text and text[:1].isdigit():
                    self.digit_break()
                strike = outer_strike or struck
                frames.append((strike, self.pos, True))
                self.text(text, strike)
            else:
                _, start, read = frames.pop()
                is_link = el.tag == "a"
                if read and is_link and self.pos > start:
                    href = el.get("href")
                    if href:
                        self.links.append(Link(start, self.pos, clean_href(href)))
                if el is element:
                    break
                tail = el.tail
                if is_link and tail and tail[:1].isdigit():
                    self.digit_break()
                self.text(tail, frames[-1][0])

    def _leaf(self, element, tag: str, in_strike: bool) -> None:
        """A childless element other than a cell or ``<br>``: what
        :meth:`element`'s walk does for it, without the walk."""
        chrome, strike = _kind(element, tag)
        if chrome or element in self.skip:
            return
        strike = in_strike or strike
        text = element.text
        if tag != "a":
            self.text(text, strike)
            return
        if text and text[:1].isdigit():
            self.digit_break()
        start = self.pos
        self.text(text, strike)
        href = element.get("href")
        if href and self.pos > start:
            self.links.append(Link(start, self.pos, clean_href(href)))

    def line(self) -> Line:
        raw = "".join(self.parts)
        text = raw.strip()
        cells = (tuple(raw[a:b].strip() for a, b in zip(self.cell_starts, self.cell_ends + [len(raw)]))
                 if self.cell_starts else ())
        if not self.struck and not self.links and not self.breaks:
            return Line(text, cells=cells)
        lead = len(raw) - len(raw.lstrip())
        breaks = tuple(b - lead for b in self.breaks if 0 < b - lead < len(text))
        if not lead and len(text) == len(raw):  # nothing stripped: every range holds as it is
            return Line(text, tuple(r for r in self.struck if r[1] > r[0]), tuple(self.links), cells, breaks)
        shift = lambda a, b: (max(0, a - lead), max(0, min(len(text), b - lead)))  # noqa: E731
        shifted_links = ((shift(l.start, l.end), l.href) for l in self.links)
        return Line(
            text=text,
            struck=tuple(r for r in (shift(a, b) for a, b in self.struck) if r[1] > r[0]),
            links=tuple(Link(a, b, href) for (a, b), href in shifted_links if b > a),
            cells=cells,
            breaks=breaks,
        )


def _blank(run: list) -> bool:
    """Whether an inline run is only white space (text pieces, no element):
    its line has no text and is never emitted. Most runs are: the white
    space between two block elements, each of which cost a line builder."""
    return all(type(item) is str and item.isspace() for item in run)


def _line_from(element, skip: frozenset | set = frozenset(), clean: bool = False, pre: bool = False) -> Line:
    """The text of ``element``'s content (not the element's own tail) as one
    line, with struck ranges and links; ``clean``: the page holds no
    invisible character (:func:`_clean_page`); ``pre``: its newlines are breaks."""
    return _line_of(_items(element), skip, clean, pre)


def _line_of(items, skip: frozenset | set = frozenset(), clean: bool = False, pre: bool = False) -> Line:
    """One line of ``items`` (text and elements, as :func:`_items` gives
    them); a digit right after a link is kept apart from the link's."""
    builder = _LineBuilder(skip, clean, pre)
    after_link = False
    for item in items:
        if isinstance(item, str):
            if after_link and item[:1].isdigit():
                builder.digit_break()
            builder.text(item)
            after_link = False
        else:
            builder.element(item)
            after_link = item.tag == "a"
    return builder.line()


@dataclass
class _Frame:
    """An open container of the walk: its items left, the section names its
    admonitions add, whether it is a list item, the block its nested items
    belong to, and the inline run (text and inline elements) collected so far."""

    items: object
    extra: tuple[str, ...]
    bullet: bool
    parent: int | None = None
    item: bool = False  # a list item: its own text is the parent of its nested items
    note: bool = False  # a footnote: its blocks are notes of the ruling it belongs to
    chrome_lines: bool = True  # drop lines that are site chrome (not in table rows: cells are joined by |)
    run: list = field(default_factory=list)

    def child(self, element, extra: tuple[str, ...] | None = None, bullet: bool | None = None,
              parent: int | None = None, item: bool = False, note: bool = False,
              chrome_lines: bool = True) -> _Frame:
        """The frame of ``element``, inside this one."""
        return _Frame(iter(_items(element)), self.extra if extra is None else extra,
                      self.bullet if bullet is None else bullet, self.parent if parent is None else parent, item,
                      note or self.note, chrome_lines)


class _HtmlWalker:
    """Walks the content element in document order and emits blocks: one
    line per ruling as the page writes it (a line of a line-block, a
    paragraph, a list item's own text, a table row, a run of text and inline
    markup between two block elements), whatever inline markup it holds."""

    def __init__(self, footnote_ids: frozenset[str] = frozenset(), clean: bool = False, language: str = "zh",
                 max_blocks: int = DEFAULT_LIMITS.max_records, source_id: str = "") -> None:
        self.max_blocks, self.source_id = max_blocks, source_id  # more blocks: NormalizeError naming the page
        self._below: dict | None = None  # element -> the first admonition title or heading under it (_first_below)
        self.clean = clean  # no invisible character in the content (:func:`_clean_page`)
        self.language = language  # how its dates are written (split_dated_lines)
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        self.skip: set = set()  # admonition titles, already used as a section name; footnote labels
        self.footnote_ids = footnote_ids
        self.footnote_refs: dict[str, int] = {}  # footnote id -> the block whose ruling refers to it
        self.examples = False  # after an example label heading or paragraph, up to the next heading
        self.example_group: int | None = None  # the block of the principle those examples illustrate

    def section(self, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
        return tuple(t for _, t in self.headings) + extra

    def start_examples(self) -> None:
        """After an example label heading or paragraph: the blocks up to the
        next heading are examples of the principle block just before."""
        self.examples = True
        self.example_group = self.blocks[-1].group if self.blocks else None

    def heading(self, level: int, text: str) -> None:
        """A heading, by what it means rather than its level: the page's
        first heading is its title (level 0: every later heading nests under
        it, whatever level the page gives its sections); an example label
        (``例：``) is no section but marks the blocks up to the next heading
        as examples; a note heading (``备注``, ``注意``) nests under the
        section it follows."""
        if not text:
            return
        if bare_label(text):  # a heading needs no colon
            self.start_examples()
            return
        self.examples = False
        if not self.headings:
            level = 0
        elif text in note_headings():
            level = max(level, self.headings[-1][0] + 1)
        self.headings = [h for h in self.headings if h[0] < level] + [(level, text)]

    def emit(self, lines: list[Line], frame: _Frame) -> int | None:
        """Add a block of ``lines`` in ``frame``'s place; returns its index."""
        lines = [l for l in lines if l.text]
        for l in lines:
            if l.breaks:  # rare: cut the block's lines into the rulings they hold
                lines = [part for l in lines for part in split_dated_lines(l, language=self.language)]
                break
        if not lines:
            return None
        if frame.chrome_lines:
            lines = [l for l in lines if not chrome_line(l.text)]
            if not lines:
                return None
        if len(lines) == 1 and label_line().match(lines[0].text) and not frame.note:
            self.start_examples()  # a label on its own: the blocks after it are examples
            return None
        index = len(self.blocks)
        check_records(index + 1, self.max_blocks, self.source_id, f"block {index}")
        group = self.example_group if self.examples and self.example_group is not None else index
        self.blocks.append(Block(index, self.section(frame.extra), lines, frame.bullet, frame.parent, frame.note,
                                 self.examples, group))
        if self.footnote_ids:
            for line in lines:
                for link in line.links:
                    if link.href.startswith("#") and link.href[1:] in self.footnote_ids:
                        self.footnote_refs.setdefault(link.href[1:], index)
        return index

    def walk(self, element, extra: tuple[str, ...] = (), bullet: bool = False) -> None:
        # An explicit stack, not recursion: hostile pages nest thousands of levels deep.
        stack = [_Frame(iter(_items(element)), extra, bullet)]
        while stack:
            frame = stack[-1]
            child = next(frame.items, None)
            if child is None:
                self.flush(frame)
                stack.pop()
                continue
            if isinstance(child, str) or (child.tag in INLINE_TAGS and not _is_chrome(child)):
                frame.run.append(child)
                continue
            self.flush(frame)
            inner = self._visit(child, frame)
            if inner is not None:
                stack.append(inner)

    def flush(self, frame: _Frame) -> None:
        """Emit the frame's inline run as one line; a list item's own line
        becomes the parent of the items nested in it."""
        if not frame.run:
            return
        run, frame.run = frame.run, []
        if _blank(run):
            return
        line = _line_of(run, self.skip, self.clean)
        index = self.emit([line], frame)
        if frame.item and index is not None:
            frame.parent, frame.item = index, False

    def _visit(self, child, frame: _Frame) -> _Frame | None:
        """Handle one block-level item of ``frame``; returns the frame to
        descend into, if any."""
        name = child.tag
        class_value, role = _class_role(child)
        if _element_kind(name, class_value, role)[0] or child in self.skip:
            return None
        classes = _classes_of(class_value)
        if name in HEADINGS:
            self.heading(HEADINGS[name], _line_from(child, self.skip, self.clean).text.replace("¶", "").strip())
        elif "line-block" in classes:
            self.emit(self._lines_of_line_block(child), frame)
            frame.bullet = False
        elif _is_footnote(child, classes):
            # A footnote is a note of the ruling that refers to it; its label ([1]) is not text.
            if not frame.note:  # inside a footnote read before, whose labels are skipped already: its subtree's
                label_classes = _footnote_markers()[2]
                below = list(child.iterdescendants())  # held: proxies dropped one by one cost the depth each
                self.skip.update(el for el in below if _classes(el) & label_classes)
            return frame.child(child, parent=self.footnote_refs.get(child.get("id", ""), frame.parent), note=True)
        elif "admonition" in classes:
            title = self.first_below(child, 0)
            label = _line_from(title, self.skip, self.clean).text if title is not None else ""
            if title is not None:
                self.skip.add(title)
            return frame.child(child, extra=frame.extra + ((label,) if label else ()))
        elif name in BLOCK_TAGS:
            line = _line_from(child, self.skip, self.clean, pre=name == "pre")
            # Only at the top of the content, under a real heading: a paragraph heading never
            # becomes the page's title, nor outlives a list, admonition or footnote it sits in.
            top = self.headings and not (frame.extra or frame.bullet or frame.note or frame.parent is not None)
            heading = _paragraph_heading(child, classes, line.text) if top else None
            if heading:
                self.heading(PARAGRAPH_HEADING_LEVEL, heading)
            else:
                self.emit([line], frame)
            frame.bullet = False
        elif name == "li":
            return frame.child(child, bullet=True, item=True)
        elif name == "tr" and _layout_row(child, lambda cell: self.first_below(cell, 1) is not None):
            return frame.child(child)  # a table that lays out the page: its cells hold blocks, read as blocks
        elif name == "tr":
            self.emit([_line_from(child, self.skip, self.clean)], frame.child(child, chrome_lines=False))
        else:
            return frame.child(child)
        return None

    def first_below(self, element, slot: int):
        """The first admonition title (``slot`` 0) or heading (``slot`` 1)
        in ``element``'s subtree, None if it has none. Searched in place
        among its first :data:`_NEAR_BELOW` descendants (an admonition's
        title is its first child; most table cells are small); past them,
        from a map of every element of the page built in one pass the first
        time it is needed (:func:`_mark_ancestors`: a search of each
        admonition's or table cell's whole subtree costs the square of the
        depth of nested ones). The same element either way: the first in
        document order."""
        near = list(islice(element.iterdescendants(), _NEAR_BELOW + 1))
        found = next((el for el in near if (_is_admonition_title(el) if slot == 0 else el.tag in HEADINGS)), None)
        if found is not None or len(near) <= _NEAR_BELOW:
            return found
        if self._below is None:
            self._below = {}
            root = element.getroottree().getroot()
            titles = root.xpath("//*[contains(concat(' ', normalize-space(@class), ' '), ' admonition-title ')]")
            _mark_ancestors(self._below, titles, 0)
            _mark_ancestors(self._below, [el for el in root.iter(*HEADINGS)], 1)
        return self._below.get(element, (None, None))[slot]

    def _lines_of_line_block(self, block) -> list[Line]:
        """Each ``.line`` child is a line; nested line-blocks are read in
        place; any other block child (not Sphinx's markup, but seen) is a
        line too, and so is each ``<br>``-separated run of text and inline
        elements written in the block itself or in one of its lines."""
        lines: list[Line] = []
        run: list = []  # text and inline elements written in the block itself, up to a <br> or a block
        stack = [iter(_items(block))]
        while stack:
            el = next(stack[-1], None)
            if el is None:
                stack.pop()
                continue
            if isinstance(el, str):
                if run or not el.isspace():  # the white space between two lines is no run
                    run.append(el)
                continue
            if el.tag in INLINE_TAGS and el.tag != "br" and not _is_chrome(el):
                run.append(el)
                continue
            if run:
                if not _blank(run):
                    lines.append(_line_of(run, self.skip, self.clean))
                run.clear()
            class_value, role = _class_role(el)
            if "line-block" in _classes_of(class_value):
                stack.append(iter(_items(el)))
            elif el.tag != "br" and not _element_kind(el.tag, class_value, role)[0] and el not in self.skip:
                lines.append(_line_from(el, self.skip, self.clean))
        if run and not _blank(run):
            lines.append(_line_of(run, self.skip, self.clean))
        for line in lines:
            if line.breaks:  # rare: every <br>-separated part is a line of its own
                return [part for line in lines for part in split_dated_lines(line, True, self.language)]
        return lines


# Below any <h1>-<h6>: a paragraph heading nests under the page's last real heading.
PARAGRAPH_HEADING_LEVEL = 7
# A card name alone, in bold (a card page's sections): 「死者苏生」, 「死者苏生」：
CARD_NAME_ONLY = re.compile(r"「[^「」]{1,80}」[：:]?")
_LAYOUT_BLOCKS = frozenset({"p", "div", "ul", "ol", "table", "pre", "blockquote", "dl", "section", "article",
                            *HEADINGS})


def _paragraph_heading(el, classes: frozenset[str], text: str) -> str | None:
    """The text of a paragraph that is a heading in all but its tag, or None:
    Sphinx's ``<p class="rubric">``, or a ``<p>`` that is wholly one
    ``<strong>`` / ``<b>`` holding a card name alone (``<p><b>「死者苏生」</b></p>``:
    the rulings after it are that card's). Any other bold paragraph is a
    ruling (``<p><b>「A」可以对应「B」发动</b></p>``, ``<p><strong>答：可以</strong></p>``)."""
    if el.tag != "p" or not text:
        return None
    if "rubric" in classes:
        return text
    if len(el) != 1 or el[0].tag not in ("strong", "b") or (el.text or "").strip() or (el[0].tail or "").strip():
        return None
    return text if CARD_NAME_ONLY.fullmatch(text) else None


# Descendants of an admonition or a table cell searched in place for its title or heading (first_below).
_NEAR_BELOW = 64
_XML_SPACE = re.compile("[ \t\n\r]+")


def _is_admonition_title(el) -> bool:
    """Whether ``el`` is an element whose class attribute, split at XML white
    space (as XPath's ``normalize-space``), holds ``admonition-title``."""
    value = el.get("class") if isinstance(el.tag, str) else None
    return bool(value) and "admonition-title" in value and "admonition-title" in _XML_SPACE.split(value)


def _mark_ancestors(below: dict, elements: list, slot: int) -> None:
    """For each of ``elements`` (in document order), make it the ``slot``
    of ``below[a]`` (a pair, (None, None) at first) for each ancestor ``a``
    that has none yet: each ancestor gets the first of them in its
    subtree. A walk up stops at an ancestor marked before (so are all of
    its ancestors), so the cost is one step per element marked, whatever
    the depth."""
    for element in elements:
        parent = element.getparent()
        while parent is not None:
            pair = below.get(parent, (None, None))
            if pair[slot] is not None:
                break
            below[parent] = (element, pair[1]) if slot == 0 else (pair[0], element)
            parent = parent.getparent()


def _layout_row(tr, has_heading=None) -> bool:
    """Whether table row ``tr`` lays out the page rather than holding a
    record: in a table of one or two rows (``thead``, ``tbody`` counted
    together) without header cells (a data table has a row a record, and
    most have headers), a cell with a heading, or with three or more block
    elements, or the table's only cell with two or more."""
    table = tr.getparent()
    if table is not None and table.tag in _ROW_GROUPS:
        table = table.getparent()
    # its own rows (not those of a table nested in a cell), three at most: a table of 100,000
    # rows must not cost 100,000 squared
    rows = list(islice(_own_rows(table), 3)) if table is not None else [tr]
    if len(rows) > 2 or any(c.tag == "th" for r in rows for c in r):
        return False
    cells = [c for c in tr if c.tag in CELL_TAGS]
    for cell in cells:
        blocks = sum(1 for c in cell if c.tag in _LAYOUT_BLOCKS)
        if blocks >= 3 or (has_heading(cell) if has_heading else
                           any(isinstance(d.tag, str) and d.tag in HEADINGS for d in cell.iterdescendants())):
            return True
        if blocks >= 2 and len(cells) == 1 and len(rows) == 1:
            return True
    return False


_ROW_GROUPS = ("thead", "tbody", "tfoot")


def _own_rows(table):
    """The rows of ``table`` itself, in its ``thead``, ``tbody`` and ``tfoot`` too."""
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in _ROW_GROUPS:
            yield from (row for row in child if row.tag == "tr")


def _clean_page(content) -> bool:
    """Whether the text of ``content`` holds no character :func:`clean_text`
    removes (:data:`UNWANTED`): then it changes none of its pieces that hold
    no ``&`` (an entity left by a page that escaped twice), and is skipped
    for those. One serialization in C per page, against a regex search per
    text piece (a yearly log that writes "Q&A" once still skips it for its
    other pieces). It includes text the walk drops (chrome, scripts): that
    can only make a page take the general path, never skip a piece that
    needed cleaning."""
    text = etree.tostring(content, method="text", encoding="unicode", with_tail=False)
    return not UNWANTED.search(text)  # one scan (INVISIBLE's and then has_control_chars' took twice its time)


def _reference_controls(content) -> str | None:
    """A warning counting the control characters in the text of ``content``
    (character references gave them: the raw ones are gone before the parse,
    :func:`normalize`), or None when there are none."""
    text = etree.tostring(content, method="text", encoding="unicode", with_tail=False)
    if not has_control_chars(text):
        return None
    controls = CONTROL_CHARS.findall(text)
    return (f"{len(controls)} control characters written as character references removed, the first "
            f"U+{ord(controls[0]):04X}")


def clean_href(href: str) -> str:
    """A link target without the characters :func:`clean_text` removes
    (``href="x&#x1b;[31m"``: libxml2 decodes references in attributes too)."""
    if href.isprintable():  # every character UNWANTED names is unprintable (Unicode categories Cc and Cf)
        return href
    return UNWANTED.sub("", href) if UNWANTED.search(href) else href


def _content_element(root):
    for xpath in _content_xpaths():
        found = xpath(root)
        if found:
            return found[0]
    return root.find("body")


def _parse(text: str, max_nesting: int = DEFAULT_LIMITS.max_nesting, source_id: str = ""):
    """(root element or None, libxml2's error log) of the page's HTML.

    libxml2 gives up on markup nested deeper than 2048 levels (the rest of
    the page is lost); such a page is parsed again by BeautifulSoup, whose
    tree has no depth limit, and its tree is copied into an lxml one: first
    its depth is measured (:func:`check_nesting`), and a page nested deeper
    than ``max_nesting`` fails (NormalizeError) before any tree is built.
    """
    parser = etree.HTMLParser(**_PARSER_OPTIONS)
    try:
        root = etree.fromstring(text.encode("utf-8", "replace"), parser)
    except (etree.LxmlError, ValueError):
        root = None
    if any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log):
        root = None  # the partial tree is freed before the second parse
        check_nesting(text, max_nesting, source_id)
        root = _tree_from_soup(text)
    return root, parser.error_log


class _Depth:
    """A parser target that follows how many elements are open and raises
    NormalizeError (naming the page, the element's number in document
    order and the limit) when more than ``limit`` are; it builds nothing."""

    def __init__(self, limit: int, source_id: str):
        self.limit, self.source_id, self.depth, self.count = limit, source_id, 0, 0

    def start(self, tag, attrib) -> None:
        self.depth += 1
        self.count += 1
        if self.depth > self.limit:
            raise NormalizeError(f"markup nested over {self.limit} levels deep, over the limit (--max-nesting)",
                                 source_id=self.source_id, place=f"element {self.count} <{tag}>")

    def end(self, tag) -> None:
        self.depth -= 1

    def close(self) -> None:
        return None


def check_nesting(text: str, limit: int, source_id: str = "") -> None:
    """Raise NormalizeError when ``text`` (HTML) has more than ``limit``
    elements open at once, as libxml2's parser nests them (implied end
    tags closed: ``<p>a<p>b`` is one level): one pass of the parser with
    a target that only counts (:class:`_Depth`), stopped at the first
    element over the limit. Linear in the page's size."""
    parser = etree.HTMLParser(target=_Depth(limit, source_id), encoding="utf-8", recover=True, huge_tree=True,
                              remove_comments=True, remove_pis=True)
    try:
        etree.fromstring(text.encode("utf-8", "replace"), parser)
    except (etree.LxmlError, ValueError):
        pass  # what the parser cannot read, the full parse reports


# A start tag as libxml2's tokenizer reads it: "<" and a letter, then anything but ">" or a
# quote, and quoted values (which may hold ">"): each character is read once. Possessive: a
# backtracking repeat keeps state for each of its rounds (a tag of a million quoted values: 165 MB).
_START_TAG = re.compile(r"""<[A-Za-z][^>"']*+(?:(?:"[^"]*+"|'[^']*+')[^>"']*+)*+""")
# In a start tag: its name, or an attribute with its value if it has one (a="x"b="y" is two attributes).
_ATTRIBUTE = re.compile(r"""[^\s/"'=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]*))?|"[^"]*"|'[^']*'""")


_TAG_OPEN = re.compile(r"<[A-Za-z]")  # a start tag's first characters, as libxml2's tokenizer reads them


def check_elements(text: str, limit: int, source_id: str = "") -> None:
    """Raise NormalizeError (naming the page, the line of the first start
    tag over the limit, and the limit) when ``text`` (HTML) holds more than
    ``limit`` start tags: each element costs about 300 bytes once parsed
    and read (1.5 million empty ``<div>``s took 635 MB). Counted in C
    (``<`` less ``</``: at least the start tags), then, when that could be
    over the limit, tag by tag up to the first over it."""
    if len(text) <= limit:
        return  # each start tag has a "<" of its own: a page of fewer characters holds fewer tags
    opens = text.count("<")
    if opens <= limit or opens - text.count("</") <= limit:
        return
    over = next(islice(_TAG_OPEN.finditer(text), limit, None), None)
    if over is not None:
        line = text.count("\n", 0, over.start()) + 1
        raise NormalizeError(f"more than {limit} elements on one page, over the limit (--max-page-elements)",
                             source_id=source_id, place=f"line {line}")


def check_attributes(text: str, limit: int, source_id: str = "", page_limit: int | None = None) -> None:
    """Raise NormalizeError (naming the page, the line and the limit) when
    a start tag of ``text`` (HTML) holds more than ``limit`` attributes, or
    its tags more than ``page_limit`` in all, before libxml2 reads them:
    its parser compares each attribute of a tag with all those before it (a
    million attributes on one tag kept it busy for hours), and holds each
    in about 250 bytes (2 million took 770 MB). One pass of
    :data:`_START_TAG` over the page, linear in its size: only a tag long
    enough to hold ``limit`` attributes (two characters each) is counted,
    and every tag only when the page's separators (white space, ``/``,
    quotes: each attribute is preceded by one) could number more than
    ``page_limit``."""
    # the separators are counted only when the page is long enough to hold more (each is a character)
    count_all = (page_limit is not None and len(text) > page_limit
                 and separator_count(text) > page_limit)
    total = 0
    for tag in _START_TAG.finditer(text):
        if not count_all and tag.end() - tag.start() <= 2 * limit:
            continue
        count = _attribute_count(text, tag.start(), tag.end(), limit)
        total += count
        if count > limit or (count_all and total > page_limit):
            line = text.count("\n", 0, tag.start()) + 1
            what = (f"more than {limit} attributes on one element, over the limit (--max-attributes)"
                    if count > limit else f"more than {page_limit} attributes on the page's elements, over the "
                    "limit (--max-page-attributes)")
            raise NormalizeError(what, source_id=source_id, place=f"line {line}")


_SEPARATORS = (" ", "\n", "\t", "\r", "\f", "/", '"', "'")
_SEPARATOR_BYTES = "".join(_SEPARATORS).encode("ascii")


def separator_count(text: str) -> int:
    """How many characters of ``text`` are one of :data:`_SEPARATORS`:
    counted in its UTF-8 bytes (where no other character's bytes are
    ASCII) by one deletion in C, a ninth of the time of eight
    ``str.count`` passes over a page of Chinese text."""
    raw = text.encode("utf-8", "surrogatepass")
    return len(raw) - len(raw.translate(None, _SEPARATOR_BYTES))


def _attribute_count(text: str, start: int, end: int, most: int) -> int:
    """The attributes of the start tag ``text[start:end]``, counted up to
    ``most + 1`` (read in place: a tag of a million attributes is neither
    copied nor listed)."""
    found = _ATTRIBUTE.finditer(text, start + 1, end)
    return sum(1 for _ in islice(found, most + 2)) - 1  # the first is the tag's name


def check_records(count: int, limit: int, source_id: str, place: str) -> None:
    """Raise NormalizeError when a page reaches ``count`` blocks (or
    records), over ``limit``: raised as the block over it is made, so a
    page of a million tiny rulings stops before it fills the memory."""
    if count > limit:
        raise NormalizeError(f"over {limit} records on one page, over the limit (--max-page-records)",
                             source_id=source_id, place=place)


def _soup(text: str) -> BeautifulSoup:
    """BeautifulSoup's parse (lxml) of ``text``."""
    with _warnings.catch_warnings():  # bs4's advice on odd markup is for programmers, not about the page
        _warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        _warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        return BeautifulSoup(text, "lxml")


def _tree_from_soup(text: str):
    """The lxml tree of BeautifulSoup's parse of ``text`` (comments dropped,
    attributes lxml cannot hold skipped). Explicit stack: any depth."""
    soup = _soup(text)
    root = etree.Element("html")
    # (children left, the copy, its last child so far: len() of an lxml element counts its children)
    stack = [[iter(soup.html.children if soup.html else soup.children), root, None]]
    while stack:
        frame = stack[-1]
        children, parent, last = frame
        child = next(children, None)
        if child is None:
            stack.pop()
        elif isinstance(child, Tag):
            el = etree.SubElement(parent, child.name)
            for name, value in child.attrs.items():
                try:
                    el.set(name, " ".join(value) if isinstance(value, list) else value)
                except ValueError:
                    pass
            frame[2] = el
            stack.append([iter(child.children), el, None])
        elif type(child) is NavigableString:  # not a comment, doctype or CDATA
            if last is None:
                parent.text = (parent.text or "") + str(child)
            else:
                last.tail = (last.tail or "") + str(child)
    return root


# An end tag that closes a title's raw text: </title then whitespace, / or > (not </titles>).
TITLE_END = re.compile(r"</title[\t\n\f\r />]", re.I)


def _titles_closed(head: str) -> bool:
    """Whether the last ``<title`` of ``head`` (the text BeautifulSoup parses)
    is closed in it by a real end tag. Then the page's first title closes
    before ``<body`` too, and the full parse's title is the one BeautifulSoup
    finds; an unclosed title's raw text would run on into the body."""
    last = head.lower().rfind("<title")
    return last >= 0 and TITLE_END.search(head, last) is not None


def page_head(text: str, root=None) -> tuple[str, LangTag]:
    """(title, declared language) from the page's ``<head>``: from ``root``,
    the page's lxml tree, when it has a ``<title>`` in ``<head>`` and a
    ``lang`` on ``<html>`` (most pages: no second parse); else parsed with
    BeautifulSoup, which finds a title or a ``<meta http-equiv>`` wherever
    the head's markup put it: only the text before ``<body`` (at most 64 KB)
    is parsed, so it costs little whatever the page's size."""
    end = HEAD_END.search(text, 0, HEAD_LIMIT)
    head = text[:end.start() if end else HEAD_LIMIT]
    tree_lang = root.get("lang", "").strip() if root is not None and root.tag == "html" else ""
    if tree_lang and _titles_closed(head):
        tree_head = root.find("head")
        title = next(tree_head.iter("title"), None) if tree_head is not None else None
        # Only a title right in <head>: BeautifulSoup's text leaves out one inside <template>, <rt> or <rp>.
        if title is not None and title.getparent() is tree_head:
            return _collapse("".join(title.itertext())).strip(), parse_lang_tag(tree_lang)
    soup = _soup(head)
    title = _collapse(soup.title.get_text()).strip() if soup.title else ""
    html = soup.find("html")
    lang = html.get("lang") if html is not None else None
    if not lang:
        meta = soup.find("meta", attrs={"http-equiv": re.compile("^content-language$", re.I)})
        lang = meta.get("content") if meta is not None else None
    return title, parse_lang_tag(lang.strip()) if isinstance(lang, str) and lang.strip() else LangTag()


def normalize_html(text: str, source: Source, limits: PageLimits = DEFAULT_LIMITS) -> Page:
    """HTML text -> Page. Warns (does not fail) when no content element exists.

    Raises NormalizeError naming the source when the page has neither a
    content element nor a body, or no text in it, and when it is over one of
    ``limits``: more than ``max_elements`` start tags, an element with more
    than ``max_attributes`` attributes, or more than ``max_page_attributes``
    in all (checked before parsing), more than ``max_nesting`` elements open at once
    (checked before the tree is built), more than ``max_records`` blocks.
    """
    warnings: list[str] = []
    check_elements(text, limits.max_elements, source.id)
    check_attributes(text, limits.max_attributes, source.id, limits.max_page_attributes)
    root, errors = _parse(text, limits.max_nesting, source.id)
    content = _content_element(root) if root is not None else None
    if content is None:
        raise NormalizeError("page has no body or content element", source_id=source.id, place="<body>")
    if content.tag == "body":
        selectors = markers()["content_selectors"]
        warnings.append(f"{source.id}: no content element ({', '.join(selectors[:3])} ...); used <body>")
    # A list, not a generator: lxml frees the proxy of an element dropped while its ancestors have
    # none by walking up to one that has, so dropping them one by one costs the depth each time.
    candidates = list(content.iter("aside", "div", "li", "section"))
    footnote_ids = frozenset(el.get("id") for el in candidates if el.get("id") and _is_footnote(el, _classes(el)))
    del candidates
    clean = _clean_page(content)
    references = None if clean else _reference_controls(content)
    if references:
        warnings.append(f"{source.id}: {references}")
    walker = _HtmlWalker(footnote_ids, clean, source.language, limits.max_records, source.id)
    walker.walk(content)
    if not walker.blocks:
        raise NormalizeError("page has no text in its content element", source_id=source.id, place=f"<{content.tag}>")
    warnings.extend(markup_warnings(text, errors, source.id))
    title, lang = page_head(text, root)
    return Page(source.id, source.language, source.script, source.region, title, walker.blocks, warnings, lang)


# --------------------------------------------------------------------------- plain text and Markdown

BULLET = re.compile(r"^(\s*)(?:[•·●▪◦]|[-*+](?=\s)|\d{1,2}\.(?=\s))\s*")
MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
SENTENCE_END = re.compile(r"[。．.!?！？:：」』)]\s*$")
NO_HEADING_CHARS = re.compile(r"[。，,；;「」『』：:]")


def _looks_like_heading(line: str, prev_blank: bool, next_blank: bool) -> bool:
    s = line.strip()
    if not s or not prev_blank or not next_blank or len(s) > 40:
        return False
    if NO_HEADING_CHARS.search(s) or SENTENCE_END.search(s) or BULLET.match(line):
        return False
    if find_dates(s, "en"):  # a dated line is a ruling, never a heading
        return False
    return len(s) <= 16 or (s[:1].isupper() and len(s.split()) <= 6)


def _md_line(text: str) -> Line:
    """Strip Markdown emphasis and links, keeping link targets with ranges."""
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    links: list[Link] = []
    out: list[str] = []
    last = 0
    for m in MD_LINK.finditer(text):
        out.append(text[last:m.start()])
        start = sum(map(len, out))
        out.append(m.group(1))
        links.append(Link(start, start + len(m.group(1)), m.group(2)))
        last = m.end()
    out.append(text[last:])
    return Line("".join(out).strip(), (), tuple(links))


def normalize_text(text: str, source: Source, limits: PageLimits = DEFAULT_LIMITS) -> Page:
    """Plain text or Markdown -> Page. A list item after a line ending with
    ':' (its lead-in, in the same section) has that line's block as its
    ``parent``. Raises NormalizeError for a page of more than
    ``limits.max_records`` blocks, or with none."""
    markdown = source.format == "markdown"
    raw_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    current: list[Line] = []
    current_bullet = False
    current_indent = 0
    title = ""

    lead_in: int | None = None  # the block ending with ':' whose list items follow (their parent)
    item_indent: int | None = None  # the indent of its first item: a bullet indented otherwise ends the list
    bullet_indent = 0

    def flush() -> None:
        nonlocal current, current_bullet, lead_in, item_indent
        if current:
            check_records(len(blocks) + 1, limits.max_records, source.id, f"line {start_line}")
            opens_list = current[-1].text.endswith(":")
            if current_bullet and lead_in is not None:
                if item_indent is None:
                    item_indent = bullet_indent
                elif bullet_indent != item_indent:
                    lead_in = None
            parent = lead_in if current_bullet and not opens_list else None
            blocks.append(Block(len(blocks), tuple(t for _, t in headings), current, current_bullet, parent))
            if opens_list:
                lead_in, item_indent = len(blocks) - 1, None
            elif not current_bullet:
                lead_in = None
        current, current_bullet = [], False

    start_line = 1  # of the block being read
    for i, raw in enumerate(raw_lines):
        stripped = raw.strip()
        if not stripped or set(stripped) <= {"|"}:
            flush()
            continue
        prev_blank = i == 0 or not raw_lines[i - 1].strip()
        next_blank = i + 1 >= len(raw_lines) or not raw_lines[i + 1].strip()
        md_heading = re.match(r"^(#{1,6})\s+(.*)$", stripped) if markdown else None
        if md_heading or _looks_like_heading(raw, prev_blank, next_blank):
            flush()
            if md_heading:
                level, name = len(md_heading.group(1)), md_heading.group(2).strip()
            else:
                name = stripped
                level = 1 if not headings else (3 if name in note_headings() else 2)
            title = title or name
            headings = [h for h in headings if h[0] < level] + [(level, name)]
            lead_in = None
            continue
        indent = len(raw) - len(raw.lstrip())
        bullet = BULLET.match(raw)
        if bullet or (current and indent < current_indent):
            flush()
        if bullet:
            current_bullet, bullet_indent = True, indent
            stripped = raw[bullet.end():].strip()
        if not current:
            current_indent = indent if not bullet else indent + 2
            start_line = i + 1
        if stripped.startswith(">"):
            stripped = stripped.lstrip("> ").strip()
        current.append(_md_line(clean_text(stripped)) if markdown else Line(_collapse(stripped)))
    flush()
    if not blocks:
        raise NormalizeError("page has no text blocks, only headings", source_id=source.id,
                             place=f"lines 1-{len(raw_lines)}")
    return Page(source.id, source.language, source.script, source.region, title, blocks, [])


# --------------------------------------------------------------------------- entry point

def normalize(data: bytes, source: Source, declared_charset: str | None = None,
              limits: PageLimits = DEFAULT_LIMITS) -> Page:
    """Page bytes -> :class:`Page`; dispatches on ``source.format``.
    Raises NormalizeError for a page it cannot read or over ``limits``
    (:func:`normalize_html`; a text page of more than ``max_records`` blocks)."""
    text, warnings = decode_page(data, source.id, declared_charset, language=source.language, script=source.script,
                                 region=source.region)
    control = CONTROL_CHARS.search(text) if has_control_chars(text) else None
    if control:
        count = len(CONTROL_CHARS.findall(text))
        warnings.append(f"{source.id}: {count} control characters removed, the first "
                        f"(U+{ord(control.group(0)):04X}) at char {control.start()}")
        text = CONTROL_CHARS.sub("", text)
    if source.format == "pdf-text":  # PDF lines joined back into paragraphs and list items
        from .pdftext import normalize_pdf_text
        page = normalize_pdf_text(text, source)
        check_records(len(page.blocks), limits.max_records, source.id, "page")
    else:
        page = normalize_html(text, source, limits) if source.format == "html" else normalize_text(text, source, limits)
    page.warnings[:0] = warnings
    chars = char_counts(page_text(page))  # counted once for both checks of the page's script
    settle_script(page, chars)
    mismatch = language_warning(page, chars=chars)
    if mismatch:
        page.warnings.append(mismatch)
    return page


def page_text(page: Page) -> str:
    """The text of every line of ``page``, one line a row."""
    return "\n".join(line.text for block in page.blocks for line in block.lines)


def settle_script(page: Page, chars: Mapping[str, int] | None = None) -> None:
    """Set ``page.script`` and ``page.region`` of a Chinese page to what its
    text is written in: the manifest's declaration, else the page's own
    ``lang`` (:attr:`Page.lang_tag`), checked against the characters of its
    blocks (:func:`pipeline.chinese.resolve_script_region`). A page without a
    language in the manifest takes the one its ``lang`` declares. ``chars``:
    the character counts of :func:`page_text`, if the caller has them."""
    tag = page.lang_tag
    if not page.language and tag.language:
        page.language = tag.language
    if page.language != "zh":
        return
    content = char_counts(page_text(page)) if chars is None else chars
    page.script, page.region, warnings = resolve_script_region(content, page.script, page.region, tag, page.source_id)
    page.warnings.extend(warnings)


# --------------------------------------------------------------------------- checks that only warn

# C0 and C1 controls other than tab, newline, vertical tab, form feed and carriage return.
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# The same characters in UTF-8: C0 and DEL are single bytes no other character's bytes hold;
# C1 (U+0080-U+009F) is \xc2 followed by \x80-\x9f.
_NOT_C0_BYTES = bytes(b for b in range(256) if not (b <= 0x08 or 0x0e <= b <= 0x1f or b == 0x7f))
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


def has_control_chars(text: str, chunk: int = 1 << 20) -> bool:
    """Whether ``text`` holds a character of :data:`CONTROL_CHARS`, read
    from its UTF-8 bytes a chunk of characters at a time: a translation that
    deletes every other byte, then a search for the C1 lead byte, both in C
    (a third of the time of the pattern's scan, which tests a character
    class at every character of the page)."""
    for at in range(0, len(text), chunk):
        raw = text[at:at + chunk].encode("utf-8", "surrogatepass")
        if raw.translate(None, _NOT_C0_BYTES) or (b"\xc2" in raw and _C1_UTF8.search(raw)):
            return True
    return False


HTML_OPEN = re.compile(r"<html[\s>]", re.I)
HTML_CLOSE = re.compile(r"</html\s*>", re.I)


def markup_warnings(text: str, errors, source_id: str) -> list[str]:
    """Warnings for HTML that the parser had to repair: mismatched closing
    tags (libxml2's ``errors`` log of the parse, with line and column) and a
    page that ends without ``</html>`` (probably truncated). The page is
    still processed."""
    warnings = []
    mismatched = [e for e in errors if e.type_name == "ERR_TAG_NAME_MISMATCH"]
    if mismatched:
        first = mismatched[0]
        warnings.append(f"{source_id}: {len(mismatched)} mismatched or unclosed tags repaired, the first at "
                        f"line {first.line}, column {first.column}: {first.message}")
    # </html> is looked for in the page's last 4 KB first: a search from the start scans the whole page
    if HTML_OPEN.search(text) and not (HTML_CLOSE.search(text, max(0, len(text) - 4096)) or HTML_CLOSE.search(text)):
        warnings.append(f"{source_id}: page ends at line {text.count(chr(10)) + 1} without </html>; "
                        "it may be truncated")
    return warnings


SCRIPTS = {"zh": "Chinese", "en": "Latin"}
SCRIPT_LETTERS = {
    "Chinese": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"),
    "Japanese kana": re.compile(r"[\u3041-\u30fa]"),  # without ・ and ー, which Chinese text uses too
    "Hangul": re.compile(r"[\uac00-\ud7a3]"),
    "Latin": re.compile(r"[A-Za-z]"),
}


def language_warning(page: Page, min_letters: int = 20, *, chars: Mapping[str, int] | None = None) -> str | None:
    """A warning when most letters of the page are not in the script of its
    declared language (a Japanese page declared ``zh``, an English one declared
    ``zh``...), naming the shares and the first block in the other script.
    ``chars``: the character counts of :func:`page_text`, if the caller has them."""
    expected = SCRIPTS.get(page.language)
    if expected is None:
        return None
    chars = char_counts(page_text(page)) if chars is None else chars
    counts = letter_counts(chars)
    total = sum(counts.values())
    if total < min_letters or max(counts, key=counts.get) == expected:
        return None
    first_other = next((block for block in page.blocks if _letters_mostly_not(block, expected)), None)
    shares = ", ".join(f"{n / total:.0%} {script}" for script, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n)
    where = f"block {first_other.index} (section {' / '.join(first_other.section) or '-'})" if first_other else "-"
    return (f"{page.source_id}: declared language {page.language!r} but most letters are not {expected} "
            f"({shares}); first such block: {where}")


def letter_counts(chars: Mapping[str, int]) -> dict[str, int]:
    """Letters per script of :data:`SCRIPT_LETTERS`, from character counts
    (character -> occurrences): each distinct character is matched once,
    by one ``findall`` per script over them all."""
    distinct = "".join(chars)
    return {script: sum(map(chars.__getitem__, pattern.findall(distinct)))
            for script, pattern in SCRIPT_LETTERS.items()}


def _letters_mostly_not(block: Block, expected: str) -> bool:
    """Whether ``block`` has letters and most are not in the ``expected`` script."""
    counts = letter_counts(char_counts("\n".join(line.text for line in block.lines)))
    return any(counts.values()) and max(counts, key=counts.get) != expected
