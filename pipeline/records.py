"""The record types every stage shares, and the clock.

Kept free of heavy imports (spaCy, OpenCC, DuckDB): :mod:`pipeline.compile`,
:mod:`pipeline.generate` and :mod:`pipeline.load` take records without
loading the extractor's NLP pipeline.

* :class:`Record`: one ruling record of a page (extract makes it, load
  stores it, compile reads its statements);
* :class:`Statement`: what a record says about one (information kind,
  event) pair of ``schema/vocabulary.json``;
* :class:`CardMention`: a card named in 「」.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .dates import RulingDate


@dataclass(frozen=True)
class CardMention:
    """A card named in 「」 (characters ``start:end`` of the record's text)."""

    name: str
    start: int
    end: int
    url: str | None
    norm_name: str = ""  # the name in Simplified script (no term mapping)


@dataclass(frozen=True)
class Statement:
    """``info_kind`` x ``event`` -> ``verdict``; ``basis`` is ``stated`` (the record
    says it) or ``example`` (the record illustrates the statement of
    ``principle_id``)."""

    info_kind: str
    event: str
    verdict: str
    condition: str = ""
    basis: str = "stated"
    principle_id: str = ""


@dataclass
class Record:
    """One ruling record; ``seq`` is its position in the page.

    ``role`` is ``principle`` or ``example``; ``status`` is ``current``,
    ``superseded`` (struck through) or ``pending`` (under review);
    ``faq`` holds ``(date raw, FAQ id, URL)`` of the dates that link the
    official FAQ; ``links`` are ``(start, end, href)`` in ``text``.
    """

    id: str
    source_id: str
    seq: int
    block: int
    section: tuple[str, ...]
    role: str
    channel: str
    status: str
    text: str
    norm: str
    dates: list[RulingDate] = field(default_factory=list)
    date_from_heading: bool = False
    faq: list[tuple[str, str, str]] = field(default_factory=list)
    cards: list[CardMention] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    procedural: list[str] = field(default_factory=list)
    links: list[tuple[int, int, str]] = field(default_factory=list)
    # The section path in canonical text: what topics match and ids are made of,
    # so a Traditional page states what its Simplified twin states.
    norm_section: tuple[str, ...] = ()

    @property
    def valid_dates(self) -> tuple[str, ...]:
        """The record's valid dates, ISO, sorted and distinct."""
        return tuple(sorted({d.iso for d in self.dates if d.valid and d.iso}))


def utc_now() -> str:
    """UTC now, ISO 8601 to the second, without offset (DuckDB TIMESTAMP text)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
