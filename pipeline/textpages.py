"""Plain-text and Markdown pages: decoded text -> :class:`~pipeline.normalize.Page` (:func:`normalize_text`).

Blank lines, bullets and headings (Markdown ``#`` headings; in plain text a
short line between blank lines that ends no sentence and holds no date)
separate blocks; a list item after a line ending with ``:`` is a child of
that line's block. Markdown emphasis is dropped and its links kept with
their character ranges.

Raises :class:`~pipeline.errors.NormalizeError` naming the page and line for
a page of more than ``max_records`` blocks, or of headings only.
"""

from __future__ import annotations

import re

from .cleantext import clean_text, collapse
from .corpus import Source
from .dates import find_dates
from .errors import NormalizeError
from .limits import DEFAULT_LIMITS, PageLimits
from .page import Block, Line, Link, Page
from .pagelimits import check_records
from .pagemarkers import note_headings


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
        current.append(_md_line(clean_text(stripped)) if markdown else Line(collapse(stripped)))
    flush()
    if not blocks:
        raise NormalizeError("page has no text blocks, only headings", source_id=source.id,
                             place=f"lines 1-{len(raw_lines)}")
    return Page(source.id, source.language, source.script, source.region, title, blocks, [])
