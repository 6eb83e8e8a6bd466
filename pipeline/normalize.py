"""Stage 1, normalize: page bytes -> :class:`Page` of ordered text blocks.

* HTML is parsed with BeautifulSoup (lxml). Only the content element is kept
  (Sphinx ``article[role=main]``, MediaWiki ``.mw-parser-output``, ``main`` ...);
  site chrome (navigation, sidebars, footers, "edit" and heading anchor links,
  scripts) is dropped. Headings become the block's ``section`` path; an
  admonition title (``备注``, ``注意``) is a sub-heading of its contents.
* Struck-through text (``<del>``, ``<s>``, ``<strike>``, ``span.strike``) is kept
  and its character ranges are marked in :attr:`Line.struck`.
* Link targets are kept with their character ranges (card database entries and
  the official FAQ entry behind a date).
* Plain-text and Markdown pages (the seeds, English texts) are split into the
  same blocks: blank lines, bullets and headings separate blocks.

Chinese text is converted to one canonical script and vocabulary by
:func:`canonical_text` (OpenCC, then the regional terms of
``schema/regional_terms.tsv``; see :mod:`pipeline.chinese`); the original
text is always kept beside it. The script and region a Chinese page is
really written in are settled by :func:`settle_script`.

Errors: :class:`~pipeline.errors.NormalizeError` naming the source and place
for empty or binary pages; undecodable bytes are reported as warnings with the
byte offset and the page is still processed.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path

from bs4 import BeautifulSoup, Comment, NavigableString, SoupStrainer, Tag

from .chinese import (LangTag, canonical_text, map_regional_terms, match_key, name_key,  # noqa: F401
                      opencc_config, page_lang_tag, regional_terms, resolve_script_region, to_simplified)
from .corpus import Source
from .encoding import decode_bytes
from .errors import NormalizeError

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"

CONTENT_SELECTORS = (
    "article[role=main]",
    "div.mw-parser-output",
    "main",
    "div#content",
    "div#bodyContent",
    "article",
    "div.document",
)
CHROME_TAGS = {"nav", "aside", "footer", "header", "script", "style", "noscript", "form",
               "button", "svg", "label", "input", "select", "template", "iframe"}
CHROME_CLASSES = {"headerlink", "mw-editsection", "toc", "navbox", "sidebar", "related-pages",
                  "back-to-top", "noprint", "mw-jump-link", "catlinks", "printfooter",
                  "page-info", "theme-toggle-container", "content-icon-container", "edit-link"}
STRIKE_TAGS = {"del", "s", "strike"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
SUBHEADINGS = {"备注", "注意", "補足", "注意事項", "Note", "Notes"}
BLOCK_TAGS = {"p", "dd", "dt", "pre", "blockquote", "caption", "figcaption"}


@dataclass(frozen=True)
class Link:
    """A link inside a line: characters ``start:end`` of the line's text."""

    start: int
    end: int
    href: str


@dataclass
class Line:
    """One line of text as on the page, with struck ranges and links."""

    text: str
    struck: tuple[tuple[int, int], ...] = ()
    links: tuple[Link, ...] = ()


@dataclass
class Block:
    """A paragraph-like unit (a Sphinx line-block, a ``<p>``, a list item)."""

    index: int
    section: tuple[str, ...]
    lines: list[Line]
    bullet: bool = False


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


# --------------------------------------------------------------------------- decoding

def decode_page(data: bytes, source_id: str, declared: str | None = None) -> tuple[str, list[str]]:
    """Bytes -> (text, warnings): BOM, valid UTF-8, else the best of the
    declared charset (HTTP header ``declared`` or ``<meta charset>``), GB18030
    and Big5 (:func:`pipeline.encoding.decode_bytes`). A wrong declaration is
    detected, not trusted; undecodable bytes are replaced and reported with
    their byte offsets (the page is still processed).

    Raises NormalizeError for an empty page or one that looks binary.
    """
    if not data.strip():
        raise NormalizeError("page is empty", source_id=source_id, place="byte 0")
    head = data[:4096]
    if not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and head.count(b"\x00") > len(head) // 10:
        nul = head.index(b"\x00")
        raise NormalizeError("page looks binary (NUL bytes), not text", source_id=source_id, place=f"byte {nul}")
    decoded = decode_bytes(data, source_id, declared)
    return decoded.text, decoded.warnings


# --------------------------------------------------------------------------- HTML

def _is_chrome(tag: Tag) -> bool:
    if tag.name in CHROME_TAGS:
        return True
    classes = set(tag.get("class") or ())
    if classes & CHROME_CLASSES:
        return True
    return tag.get("role") in ("navigation", "banner", "contentinfo", "search")


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _line_from(element: Tag) -> Line:
    """Text of ``element`` with the ranges of struck text and links."""
    parts: list[str] = []
    struck: list[tuple[int, int]] = []
    links: list[Link] = []
    pos = 0

    def visit(node, in_strike: bool) -> None:
        nonlocal pos
        for child in node.children:
            if isinstance(child, Comment):
                continue
            if isinstance(child, NavigableString):
                s = _collapse(str(child))
                if s:
                    parts.append(s)
                    if in_strike:
                        struck.append((pos, pos + len(s)))
                    pos += len(s)
            elif isinstance(child, Tag):
                if _is_chrome(child):
                    continue
                if child.name == "br":
                    parts.append(" ")
                    pos += 1
                    continue
                strike = in_strike or child.name in STRIKE_TAGS or "strike" in (child.get("class") or ())
                start = pos
                visit(child, strike)
                if child.name == "a" and child.get("href") and pos > start:
                    links.append(Link(start, pos, child["href"]))

    visit(element, False)
    raw = "".join(parts)
    lead = len(raw) - len(raw.lstrip())
    text = raw.strip()
    shift = lambda a, b: (max(0, a - lead), max(0, min(len(text), b - lead)))  # noqa: E731
    return Line(
        text=text,
        struck=tuple(r for r in (shift(a, b) for a, b in struck) if r[1] > r[0]),
        links=tuple(Link(*shift(l.start, l.end), l.href) for l in links if shift(l.start, l.end)[1] > shift(l.start, l.end)[0]),
    )


class _HtmlWalker:
    """Walks the content element in document order and emits blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []

    def section(self, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
        return tuple(t for _, t in self.headings) + extra

    def emit(self, lines: list[Line], extra: tuple[str, ...], bullet: bool) -> None:
        lines = [l for l in lines if l.text]
        if lines:
            self.blocks.append(Block(len(self.blocks), self.section(extra), lines, bullet))

    def walk(self, element: Tag, extra: tuple[str, ...] = (), bullet: bool = False) -> None:
        for child in element.children:
            if not isinstance(child, Tag) or _is_chrome(child):
                if isinstance(child, NavigableString) and not isinstance(child, Comment) and str(child).strip():
                    self.emit([Line(_collapse(str(child)).strip())], extra, bullet)
                continue
            name = child.name
            classes = set(child.get("class") or ())
            if name in HEADINGS:
                level = HEADINGS[name]
                self.headings = [h for h in self.headings if h[0] < level]
                self.headings.append((level, _line_from(child).text.replace("¶", "").strip()))
            elif "line-block" in classes:
                self.emit(self._lines_of_line_block(child), extra, bullet)
                bullet = False
            elif "admonition" in classes:
                title = child.find(class_="admonition-title")
                label = _line_from(title).text if title else ""
                if title:
                    title.extract()
                self.walk(child, extra + ((label,) if label else ()), bullet)
            elif name in BLOCK_TAGS:
                self.emit([_line_from(child)], extra, bullet)
                bullet = False
            elif name == "li":
                if child.find(["p", "div", "ul", "ol", "table"]):
                    self.walk(child, extra, True)
                else:
                    self.emit([_line_from(child)], extra, True)
            elif name == "tr":
                self.emit([_line_from(child)], extra, bullet)
            else:
                self.walk(child, extra, bullet)

    @staticmethod
    def _lines_of_line_block(block: Tag) -> list[Line]:
        lines: list[Line] = []
        for el in block.find_all(class_=["line", "line-block"], recursive=False):
            if "line-block" in (el.get("class") or ()):
                lines.extend(_HtmlWalker._lines_of_line_block(el))
            else:
                lines.append(_line_from(el))
        return lines


def _content_element(soup: BeautifulSoup) -> Tag | None:
    for selector in CONTENT_SELECTORS:
        found = soup.select_one(selector)
        if found is not None:
            return found
    return soup.body


def normalize_html(text: str, source: Source) -> Page:
    """HTML text -> Page. Warns (does not fail) when no content element exists."""
    warnings: list[str] = []
    # Parsing only <title> and the body's content saves most of the tree building.
    soup = BeautifulSoup(text, "lxml", parse_only=SoupStrainer(["title", "body"]))
    title_tag = soup.find("title")
    title = _collapse(title_tag.get_text()).strip() if title_tag else ""
    content = _content_element(soup)
    if content is None:
        raise NormalizeError("page has no body or content element", source_id=source.id, place="<body>")
    if content.name == "body":
        warnings.append(f"{source.id}: no content element ({', '.join(CONTENT_SELECTORS[:3])} ...); used <body>")
    walker = _HtmlWalker()
    walker.walk(content)
    if not walker.blocks:
        warnings.append(f"{source.id}: no text blocks found in the content element")
    return Page(source.id, source.language, source.script, source.region, title, walker.blocks, warnings)


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


def normalize_text(text: str, source: Source) -> Page:
    """Plain text or Markdown -> Page."""
    markdown = source.format == "markdown"
    raw_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    current: list[Line] = []
    current_bullet = False
    current_indent = 0
    title = ""

    def flush() -> None:
        nonlocal current, current_bullet
        if current:
            blocks.append(Block(len(blocks), tuple(t for _, t in headings), current, current_bullet))
        current, current_bullet = [], False

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
                level = 1 if not headings else (3 if name in SUBHEADINGS else 2)
            title = title or name
            headings = [h for h in headings if h[0] < level] + [(level, name)]
            continue
        indent = len(raw) - len(raw.lstrip())
        bullet = BULLET.match(raw)
        if bullet or (current and indent < current_indent):
            flush()
        if bullet:
            current_bullet = True
            stripped = raw[bullet.end():].strip()
        if not current:
            current_indent = indent if not bullet else indent + 2
        if stripped.startswith(">"):
            stripped = stripped.lstrip("> ").strip()
        current.append(_md_line(stripped) if markdown else Line(_collapse(stripped)))
    flush()
    return Page(source.id, source.language, source.script, source.region, title, blocks, [])


# --------------------------------------------------------------------------- entry point

def normalize(data: bytes, source: Source, declared_charset: str | None = None) -> Page:
    """Page bytes -> :class:`Page`; dispatches on ``source.format``."""
    text, warnings = decode_page(data, source.id, declared_charset)
    if "\x00" in text:
        warnings.append(f"{source.id}: NUL characters removed at char {text.index(chr(0))}")
        text = text.replace("\x00", "")
    page = normalize_html(text, source) if source.format == "html" else normalize_text(text, source)
    page.warnings[:0] = warnings
    settle_script(page, text if source.format == "html" else "")
    return page


def settle_script(page: Page, html: str = "") -> None:
    """Set ``page.script`` and ``page.region`` of a Chinese page to what its
    text is written in: the manifest's declaration, else the page's own
    ``lang`` (from ``html``), checked against the characters of its blocks
    (:func:`pipeline.chinese.resolve_script_region`). A page without a
    language in the manifest takes the one its ``lang`` declares."""
    tag = page_lang_tag(html) if html else LangTag()
    if not page.language and tag.language:
        page.language = tag.language
    if page.language != "zh":
        return
    content = "\n".join(line.text for block in page.blocks for line in block.lines)
    page.script, page.region, warnings = resolve_script_region(content, page.script, page.region, tag, page.source_id)
    page.warnings.extend(warnings)
