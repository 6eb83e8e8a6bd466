"""The page markers of ``schema/markers.json`` as patterns and predicates.

Takes a line's text (or a parsed page's root element) and answers from the
markers: :func:`content_element` (the page's content element by the
``content_selectors``, else ``<body>``), :func:`note_headings` (``备注``,
``注意``), :func:`chrome_line` (a line of site chrome written inside the
content). The example labels (``例：``) are the segment pass's
(:func:`pipeline.segment.label_line`). Each pattern is compiled once.
Raises :class:`~pipeline.schema.SchemaError` through :func:`pipeline.schema.markers`
when ``markers.json`` is broken; ValueError for a content selector it cannot read.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree

from .dates import find_dates
from .schema import markers


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


def content_element(root):
    """The first element of ``root`` (a parsed page) a content selector finds
    (first selector first), else its ``<body>``, else None."""
    for xpath in _content_xpaths():
        found = xpath(root)
        if found:
            return found[0]
    return root.find("body")
