"""Bounds on what one page may cost a run: nesting, attributes, records, time.

A page over a bound fails alone, like any broken page (one ``error:`` line
naming it and the limit, its previous records kept); the other pages go on.
Each default is far above what the bundled corpus holds (measured
2026-12-02: at most 18 levels of nesting, 8 attributes on one element,
18,677 on one page, 11,282 elements and 1,592 records on one page), and low enough that a
hostile page stays cheap (``python -m bench.hostile``): each bound is checked
before the step it protects (attributes before libxml2 parses, nesting
before the tree is built, records while the page's blocks are made); the
time limit is enforced by killing the worker process reading the page.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_NESTING = 50_000  # elements open at once
DEFAULT_MAX_ATTRIBUTES = 1_000  # attributes of one element
DEFAULT_MAX_PAGE_ATTRIBUTES = 500_000  # attributes of a page's elements in all (about 250 bytes each once parsed)
DEFAULT_MAX_PAGE_ELEMENTS = 200_000  # start tags of a page (about 300 bytes each once parsed and walked)
DEFAULT_MAX_PAGE_RECORDS = 20_000  # blocks of text (a ruling each, about 5 KB of memory in a build) per page
DEFAULT_PAGE_TIMEOUT = 120.0  # seconds of one page's processing in a worker process


@dataclass(frozen=True)
class PageLimits:
    """The bounds of one page (see the module's docstring): ``max_nesting``
    elements open at once, ``max_attributes`` on one element,
    ``max_records`` text blocks and records, ``max_page_attributes`` on the
    page's elements in all, ``max_elements`` start tags, ``timeout`` seconds of
    processing (None: no limit; enforced only where pages are read in
    worker processes)."""

    max_nesting: int = DEFAULT_MAX_NESTING
    max_attributes: int = DEFAULT_MAX_ATTRIBUTES
    max_records: int = DEFAULT_MAX_PAGE_RECORDS
    timeout: float | None = DEFAULT_PAGE_TIMEOUT
    max_page_attributes: int = DEFAULT_MAX_PAGE_ATTRIBUTES
    max_elements: int = DEFAULT_MAX_PAGE_ELEMENTS


DEFAULT_LIMITS = PageLimits()
