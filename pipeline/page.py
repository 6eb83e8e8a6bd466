"""The normalized page: what normalize returns and the segment pass takes.

:class:`Page` (the page's language, script, region, title and warnings)
holds :class:`Block` s in document order; a block holds :class:`Line` s as
the page writes them, each with its struck-through ranges, its
:class:`Link` s, its table cells and where a ``<br>`` fell. Plain data: no
layout rule lives here (where a ruling starts and ends is
:mod:`pipeline.segment`'s).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .chinese import LangTag


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
    cells of a table row (its text joins them with
    :data:`pipeline.normalize.CELL_SEPARATOR`); ``breaks``: where a ``<br>``
    fell (the space it became, at that index)."""

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
