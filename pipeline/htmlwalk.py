"""The block walk of an HTML page: its content element -> :class:`~pipeline.normalize.Block` s.

:class:`HtmlWalker` walks the content element (lxml) in document order and
emits one block per paragraph-like unit (a line of a line-block, a
paragraph, a list item's own text, a table row, a run of text and inline
markup between two block elements), each with its section path (headings
by what they mean: the page's title, example labels, note headings,
admonition titles), list nesting (``parent``), footnotes as notes of the
ruling that refers to them, and the example group. Lines that hold several
dated rulings cut at their ``<br>`` breaks by
:func:`pipeline.normalize.split_dated_lines`. Explicit stacks: any depth.

Raises :class:`~pipeline.errors.NormalizeError` naming the page and block
when a page has more than ``max_blocks`` blocks (:func:`pipeline.pagelimits.check_records`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

from .htmllayout import PARAGRAPH_HEADING_LEVEL, layout_row, paragraph_heading
from .htmlline import (class_role, classes_of, element_classes, element_kind, footnote_markers, is_chrome,
                       is_footnote, items_of, line_from, line_of)
from .limits import DEFAULT_LIMITS
from .normalize import BLOCK_TAGS, HEADINGS, INLINE_TAGS
from .page import Block, Line
from .segment import bare_label, label_line, split_dated_lines  # the layout rules: segment owns them
from .pagelimits import check_records
from .pagemarkers import chrome_line, note_headings


def _blank(run: list) -> bool:
    """Whether an inline run is only white space (text pieces, no element):
    its line has no text and is never emitted. Most runs are: the white
    space between two block elements, each of which cost a line builder."""
    return all(type(item) is str and item.isspace() for item in run)


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
        return _Frame(iter(items_of(element)), self.extra if extra is None else extra,
                      self.bullet if bullet is None else bullet, self.parent if parent is None else parent, item,
                      note or self.note, chrome_lines)


class HtmlWalker:
    """Walks the content element in document order and emits blocks: one
    line per ruling as the page writes it (a line of a line-block, a
    paragraph, a list item's own text, a table row, a run of text and inline
    markup between two block elements), whatever inline markup it holds."""

    def __init__(self, footnote_ids: frozenset[str] = frozenset(), clean: bool = False, language: str = "zh",
                 max_blocks: int = DEFAULT_LIMITS.max_records, source_id: str = "") -> None:
        self.max_blocks, self.source_id = max_blocks, source_id  # more blocks: NormalizeError naming the page
        self._below: dict | None = None  # element -> the first admonition title or heading under it (_first_below)
        self.clean = clean  # no invisible character in the content (:func:`clean_page`)
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
        stack = [_Frame(iter(items_of(element)), extra, bullet)]
        while stack:
            frame = stack[-1]
            child = next(frame.items, None)
            if child is None:
                self.flush(frame)
                stack.pop()
                continue
            if isinstance(child, str) or (child.tag in INLINE_TAGS and not is_chrome(child)):
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
        line = line_of(run, self.skip, self.clean)
        index = self.emit([line], frame)
        if frame.item and index is not None:
            frame.parent, frame.item = index, False

    def _visit(self, child, frame: _Frame) -> _Frame | None:
        """Handle one block-level item of ``frame``; returns the frame to
        descend into, if any."""
        name = child.tag
        class_value, role = class_role(child)
        if element_kind(name, class_value, role)[0] or child in self.skip:
            return None
        classes = classes_of(class_value)
        if name in HEADINGS:
            self.heading(HEADINGS[name], line_from(child, self.skip, self.clean).text.replace("¶", "").strip())
        elif "line-block" in classes:
            self.emit(self._lines_of_line_block(child), frame)
            frame.bullet = False
        elif is_footnote(child, classes):
            # A footnote is a note of the ruling that refers to it; its label ([1]) is not text.
            if not frame.note:  # inside a footnote read before, whose labels are skipped already: its subtree's
                label_classes = footnote_markers()[2]
                below = list(child.iterdescendants())  # held: proxies dropped one by one cost the depth each
                self.skip.update(el for el in below if element_classes(el) & label_classes)
            return frame.child(child, parent=self.footnote_refs.get(child.get("id", ""), frame.parent), note=True)
        elif "admonition" in classes:
            title = self.first_below(child, 0)
            label = line_from(title, self.skip, self.clean).text if title is not None else ""
            if title is not None:
                self.skip.add(title)
            return frame.child(child, extra=frame.extra + ((label,) if label else ()))
        elif name in BLOCK_TAGS:
            line = line_from(child, self.skip, self.clean, pre=name == "pre")
            # Only at the top of the content, under a real heading: a paragraph heading never
            # becomes the page's title, nor outlives a list, admonition or footnote it sits in.
            top = self.headings and not (frame.extra or frame.bullet or frame.note or frame.parent is not None)
            heading = paragraph_heading(child, classes, line.text) if top else None
            if heading:
                self.heading(PARAGRAPH_HEADING_LEVEL, heading)
            else:
                self.emit([line], frame)
            frame.bullet = False
        elif name == "li":
            return frame.child(child, bullet=True, item=True)
        elif name == "tr" and layout_row(child, lambda cell: self.first_below(cell, 1) is not None):
            return frame.child(child)  # a table that lays out the page: its cells hold blocks, read as blocks
        elif name == "tr":
            self.emit([line_from(child, self.skip, self.clean)], frame.child(child, chrome_lines=False))
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
        stack = [iter(items_of(block))]
        while stack:
            el = next(stack[-1], None)
            if el is None:
                stack.pop()
                continue
            if isinstance(el, str):
                if run or not el.isspace():  # the white space between two lines is no run
                    run.append(el)
                continue
            if el.tag in INLINE_TAGS and el.tag != "br" and not is_chrome(el):
                run.append(el)
                continue
            if run:
                if not _blank(run):
                    lines.append(line_of(run, self.skip, self.clean))
                run.clear()
            class_value, role = class_role(el)
            if "line-block" in classes_of(class_value):
                stack.append(iter(items_of(el)))
            elif el.tag != "br" and not element_kind(el.tag, class_value, role)[0] and el not in self.skip:
                lines.append(line_from(el, self.skip, self.clean))
        if run and not _blank(run):
            lines.append(line_of(run, self.skip, self.clean))
        for line in lines:
            if line.breaks:  # rare: every <br>-separated part is a line of its own
                return [part for line in lines for part in split_dated_lines(line, True, self.language)]
        return lines


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
