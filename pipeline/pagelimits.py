"""The limits on one page (:class:`pipeline.limits.PageLimits`), checked on its text before it is parsed.

Each check takes the page's text (HTML) or a count, returns None, and raises
:class:`~pipeline.errors.NormalizeError` naming the page, the place (line,
element or block) and the limit's option when the page is over it:
:func:`check_elements` (start tags), :func:`check_attributes` (on one
element, and on the page), :func:`check_nesting` (elements open at once, as
libxml2 nests them), :func:`check_records` (blocks or records). Each is
linear in the page's size: a hostile page fails before it costs memory.
"""

from __future__ import annotations

import re
from itertools import islice

from lxml import etree

from .errors import NormalizeError


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


def check_attributes(text: str, limit: int, source_id: str = "", page_limit: int | None = None,
                     utf8: bytes | None = None) -> None:
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
    ``page_limit``; ``utf8``: ``text`` encoded, when the caller has it
    (the separators are counted in it)."""
    # the separators are counted only when the page is long enough to hold more (each is a character)
    count_all = (page_limit is not None and len(text) > page_limit
                 and separator_count(text, utf8) > page_limit)
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


def separator_count(text: str, utf8: bytes | None = None) -> int:
    """How many characters of ``text`` are one of :data:`_SEPARATORS`:
    counted in its UTF-8 bytes (where no other character's bytes are
    ASCII; ``utf8`` when the caller has them, else encoded here) by one
    deletion in C, a ninth of the time of eight ``str.count`` passes over
    a page of Chinese text."""
    raw = utf8 if utf8 is not None else text.encode("utf-8", "surrogatepass")
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
