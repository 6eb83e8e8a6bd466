"""One line of an HTML page: lxml elements -> :class:`~pipeline.normalize.Line`.

* What an element is: site chrome (dropped) or struck through (kept, its
  range marked), a footnote, its classes and role (:func:`element_kind`, by
  the chrome and footnote markers of ``schema/markers.json``).
* :func:`line_from` / :func:`line_of`: the text of an element's content, or
  of a run of text and inline elements, as one :class:`~pipeline.normalize.Line`
  with its struck ranges, links (:class:`~pipeline.normalize.Link`), table
  cells and ``<br>`` breaks (:class:`LineBuilder`; explicit stacks, any depth).
* :func:`clean_page`: whether a content element holds no character
  :func:`pipeline.cleantext.clean_text` removes (its pieces then skip it).

Used by the block walk (:mod:`pipeline.htmlwalk`); raises nothing of its own.
"""

from __future__ import annotations

from functools import lru_cache

from lxml import etree

from .cleantext import UNWANTED, WHITESPACE, clean_href, clean_text
from .normalize import _SPACED_BLOCKS, _WALKED_LEAVES, CELL_SEPARATOR, CELL_TAGS, STRIKE_TAGS
from .page import Line, Link
from .schema import markers


_NO_CLASSES: frozenset[str] = frozenset()


@lru_cache(maxsize=1)
def _chrome() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """(tags, classes, ARIA roles) of site chrome and the (classes, roles)
    that keep such an element as content, from ``schema/markers.json``."""
    chrome = markers()["chrome"]
    return (frozenset(chrome["tags"]), frozenset(chrome["classes"]), frozenset(chrome["roles"]),
            frozenset(chrome["keep_classes"]), frozenset(chrome["keep_roles"]))


@lru_cache(maxsize=1)
def footnote_markers() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(classes, ARIA roles) of a footnote and the classes of its label (``[1]``), from ``schema/markers.json``."""
    m = markers()
    return frozenset(m["footnote_classes"]), frozenset(m["footnote_roles"]), frozenset(m["footnote_label_classes"])


def is_footnote(el, classes: frozenset[str]) -> bool:
    """Whether ``el`` (of ``classes``) is a footnote, by its class or role."""
    footnote_classes, roles, _ = footnote_markers()
    return bool(classes & footnote_classes) or el.get("role") in roles


def element_classes(el) -> frozenset[str]:
    """The classes of element ``el``."""
    return classes_of(el.get("class"))


def classes_of(value: str | None) -> frozenset[str]:
    """The classes of a ``class`` attribute's value (None: no attribute)."""
    return _class_set(value) if value else _NO_CLASSES


@lru_cache(maxsize=4096)  # a site uses a few class attributes over and over
def _class_set(value: str) -> frozenset[str]:
    return frozenset(value.split())


def is_chrome(el) -> bool:
    """Whether element ``el`` is site chrome (:func:`element_kind`)."""
    return _kind(el, el.tag)[0]


def class_role(el) -> tuple[str | None, str | None]:
    """``el``'s ``class`` and ``role`` attributes (None when absent), its
    attribute names read first: most elements have neither, and one read of
    the names costs half of two lookups by name."""
    keys = el.keys()
    if not keys:
        return None, None
    return el.get("class") if "class" in keys else None, el.get("role") if "role" in keys else None


def _kind(el, tag: str) -> tuple[bool, bool]:
    """:func:`element_kind` of the element ``el`` of ``tag``."""
    class_value, role = class_role(el)
    return element_kind(tag, class_value, role)


@lru_cache(maxsize=4096)  # a site uses a few (tag, class, role) triples over and over
def element_kind(tag: str, class_value: str | None, role: str | None) -> tuple[bool, bool]:
    """(site chrome, struck through) for an element of ``tag`` with these
    ``class`` and ``role`` attributes, by the chrome markers of
    ``schema/markers.json`` (:func:`_chrome`) and :data:`STRIKE_TAGS`."""
    classes = classes_of(class_value)
    tags, chrome_classes, roles, keep_classes, keep_roles = _chrome()
    chrome = ((tag in tags or bool(classes & chrome_classes) or role in roles)
              and not (classes & keep_classes or role in keep_roles))
    return chrome, tag in STRIKE_TAGS or "strike" in classes


def items_of(el) -> list:
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


class LineBuilder:
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
                s = WHITESPACE.sub(" ", s)
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
        if not self.struck and not self.links and not self.breaks:  # most lines
            return Line(text, (), (), cells)  # (text, struck, links, cells): by keyword, a dict a call
        lead = len(raw) - len(raw.lstrip())
        breaks = tuple(b - lead for b in self.breaks if 0 < b - lead < len(text))
        if not lead and len(text) == len(raw):  # nothing stripped: every range holds as it is
            return Line(text, tuple(r for r in self.struck if r[1] > r[0]), tuple(self.links), cells, breaks)
        shift = lambda a, b: (max(0, a - lead), max(0, min(len(text), b - lead)))  # noqa: E731
        shifted_links = ((shift(l.start, l.end), l.href) for l in self.links)
        return Line(text, tuple(r for r in (shift(a, b) for a, b in self.struck) if r[1] > r[0]),  # text, struck
                    tuple(Link(a, b, href) for (a, b), href in shifted_links if b > a), cells, breaks)  # links, ...


def line_from(element, skip: frozenset | set = frozenset(), clean: bool = False, pre: bool = False) -> Line:
    """The text of ``element``'s content (not the element's own tail) as one
    line, with struck ranges and links; ``clean``: the page holds no
    invisible character (:func:`clean_page`); ``pre``: its newlines are breaks."""
    return line_of(items_of(element), skip, clean, pre)


def line_of(items, skip: frozenset | set = frozenset(), clean: bool = False, pre: bool = False) -> Line:
    """One line of ``items`` (text and elements, as :func:`items_of` gives
    them); a digit right after a link is kept apart from the link's."""
    builder = LineBuilder(skip, clean, pre)
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


def clean_page(content) -> bool:
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
