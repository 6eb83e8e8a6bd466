"""The record types every stage shares, and the clock.

Kept free of heavy imports (spaCy, OpenCC, DuckDB): :mod:`pipeline.compile`,
:mod:`pipeline.generate` and :mod:`pipeline.load` take records without
loading the extractor's NLP pipeline.

* :class:`Ruling`: one ruling as the segment pass cuts it (text as written,
  canonical text, sentences, date stamps: found once, never derived again);
* :class:`Record`: one ruling record of a page (extract assembles it from the
  passes' values, load stores it, compile reads its statements);
* :class:`Statement`: what a record says about one (information kind,
  event) pair of ``schema/vocabulary.json``;
* :class:`CardMention`: a card named in 「」.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from .dates import RulingDate

if TYPE_CHECKING:  # the type alone: records stay free of the card index's imports
    from .cards import CardLink


# Not frozen: a frozen dataclass sets each field through object.__setattr__ (1.6 µs a call against
# 0.45 µs); made by the million in a large build and never changed after. unsafe_hash: hashable as before.
@dataclass(slots=True, unsafe_hash=True)
class CardMention:
    """A card named in 「」 (or in “”, 《》 when the name is a known card), or
    a game term in any quote marks (「」『』“”""《》), at characters
    ``start:end`` of the record's text; ``kind`` is ``card``, ``archetype``
    (``「女武神」怪兽``: a family of cards, never linked to one) or ``term``
    (a quoted game term such as ``「攻击力·守备力」``, ``『永续魔法』``, never linked);
    ``quote`` the marks around it."""

    name: str
    start: int
    end: int
    url: str | None
    norm_name: str = ""  # the name in Simplified script (no term mapping)
    kind: str = "card"
    quote: str = "「」"
    # The card it names (pipeline.cards.CardLink), found once by the annotate pass for a mention of
    # kind card; None for other kinds and for mentions read back from a database (linked again then).
    link: CardLink | None = None


@dataclass(frozen=True, slots=True)
class Statement:
    """``info_kind`` x ``event`` -> ``verdict``; ``basis`` is ``stated`` (the record
    says it), ``example`` (the record illustrates the statement of
    ``principle_id``), ``withdrawn`` (a struck-through sentence of the record said it)
    or ``exception`` (a sentence opening with 但是 states a case apart: compile
    never lets it overturn a rule); ``dates`` are the valid ISO dates of the sentences
    that make it (a ruling line may hold several dated rulings), empty when
    those sentences carry none (the record's dates then stand for it).

    Basis ``card_text``: the ruling says an effect of a card can or cannot
    be used after the event, and the kinds are those the effect's text
    depends on (:mod:`pipeline.cardrulings`); ``effect`` and ``passcode``
    cite it.

    ``reading`` says how the words were read, which weighs the statement
    when rulings disagree (``schema/rule_policy.json``): ``principle`` (a
    verdict word about a kind, in a sentence naming no card: ``…的情报在…后
    丢失``), ``case`` (a verdict word in a ruling on a named card), ``outcome``
    (what became of an effect: an outcome, ability, freedom or continuity word,
    ``可以发动②效果``); ``""`` in databases written before it was read."""

    info_kind: str
    event: str
    verdict: str
    condition: str = ""
    basis: str = "stated"
    principle_id: str = ""
    dates: tuple[str, ...] = ()
    reading: str = ""
    effect: str = ""  # basis card_text: the effect cited as numbered on the card (②)
    passcode: int | None = None  # basis card_text: the card whose effect it is

    @property
    def key(self) -> tuple[str, str, str, str, str, str]:
        """The statement without its dates."""
        return (self.info_kind, self.event, self.verdict, self.condition, self.basis, self.principle_id)


# Slots, not a named tuple (as Ruling below): read by field name in the passes, made positionally.
@dataclass(slots=True, unsafe_hash=True)
class Sentence:
    """A sentence of a ruling: characters ``start:end`` of its text, its
    canonical text (:func:`pipeline.chinese.canonical_text`), and whether
    more than half of its non-space characters are struck through."""

    start: int
    end: int
    norm: str
    struck: bool = False


# Slots, not a named tuple: the passes read its fields about 20 times a ruling, and the interpreter reads a
# slot by a specialized instruction, a named tuple's field by the generic attribute lookup (4 times the time).
# Not frozen, as CardMention (a frozen init is 3.6 times slower): never changed after segment makes it.
@dataclass(slots=True)
class Ruling:
    """One ruling as :func:`pipeline.segment.segment` cuts it from a page,
    never changed after (made by the thousand per page).

    ``text`` as written (after an example label), ``norm`` its canonical
    text (:func:`pipeline.chinese.canonical_text`); ``sentences`` in
    ``text`` (each with its canonical text); ``dates`` every date written in
    ``text`` (those it refers to marked ``reference``:
    :func:`pipeline.dates.mark_references`);
    ``links`` ``(start, end, href)`` and ``struck`` ``(start, end)`` in
    ``text``; ``status`` ``current``, ``superseded`` or ``pending``;
    ``withdrawn`` the struck part of a current ruling; ``parent_id`` the
    ruling of the list item it is nested in (or a footnote's); ``cells`` a
    table row's cells. The other fields are :class:`Record`'s."""

    id: str
    source_id: str
    seq: int
    block: int
    section: tuple[str, ...]
    norm_section: tuple[str, ...]
    role: str
    channel: str
    status: str
    text: str
    norm: str
    sentences: tuple[Sentence, ...]
    dates: tuple[RulingDate, ...]
    links: tuple[tuple[int, int, str], ...]
    struck: tuple[tuple[int, int], ...]
    withdrawn: str
    parent_id: str
    cells: tuple[str, ...]


@dataclass(slots=True)  # slots: a large build holds tens of thousands of records
class Record:
    """One ruling record: one entry as the page writes it (a line of a
    line-block, a paragraph, a list item's own text, a table row), with all
    its sentences; ``seq`` is its position in the page.

    ``role`` is ``principle``, ``example`` or ``note`` (a footnote); ``status`` is ``current``,
    ``superseded`` (struck through as a whole) or ``pending`` (under
    review); ``withdrawn`` is the struck-through part of a record that is
    otherwise current; ``faq`` holds ``(date raw, FAQ id, URL)`` of the
    dates that link the official FAQ; ``links`` are ``(start, end, href)``
    and ``sentences`` ``(start, end)`` in ``text``; ``parent_id`` is the
    record of the list item this one is nested in, or that a note belongs to.
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
    sentences: list[tuple[int, int]] = field(default_factory=list)
    struck: list[tuple[int, int]] = field(default_factory=list)
    withdrawn: str = ""
    parent_id: str = ""
    cells: list[str] = field(default_factory=list)  # a table row's cells, each its own field
    # Set on the slim copies compile receives (compile_view): the ruling's key
    # (section and text without date stamps, hashed) in place of its full text.
    ruling_key: str = ""

    @property
    def valid_dates(self) -> tuple[str, ...]:
        """The record's own valid dates (not those it refers to), ISO, sorted and distinct."""
        return tuple(sorted({d.iso for d in self.dates if d.counts}))

    @property
    def dated(self) -> bool:
        """Whether :attr:`valid_dates` holds a date (without building it)."""
        return any(d.counts for d in self.dates)

    def dates_of(self, statement: Statement) -> tuple[str, ...]:
        """The dates behind ``statement``: those of its own sentences, else the record's."""
        return statement.dates or self.valid_dates

    def add_statement(self, statement: Statement) -> None:
        """Add ``statement``, merging the dates of one already there without them."""
        merge_statement(self.statements, statement)


def merge_statement(statements: list[Statement], statement: Statement) -> None:
    """Add ``statement`` to ``statements``; one already there with the same
    key takes its dates instead (their union, sorted)."""
    for i, old in enumerate(statements):
        if old.key == statement.key:
            if not set(statement.dates) <= set(old.dates):
                dates = tuple(sorted(set(old.dates) | set(statement.dates)))
                statements[i] = replace(old, dates=dates)
            return
    statements.append(statement)


def change_words(change: str, old_verdict: str | None, new_verdict: str) -> str:
    """A rule change in words: ``lost -> kept``, ``kept, disputed by newer rulings``, ``kept, no longer disputed``."""
    return {"verdict": f"{old_verdict} -> {new_verdict}",
            "disputed": f"{new_verdict}, disputed by newer rulings",
            "settled": f"{new_verdict}, no longer disputed"}[change]


EXCERPT_CHARS = 240  # the longest ruling text the engine carries; `rulings show ID` has the whole


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters (the last one an ellipsis) when longer."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def compile_view(record: Record, ruling_key: str) -> Record:
    """The part of ``record`` compile and the engine read, for the build to
    hold while the other pages are read: ids, section, role, status, its own
    valid dates, statements, procedural rule ids and ``ruling_key`` (what
    :func:`pipeline.compile.cite_once` compares) instead of the normalized
    text; no text (the build reads the few texts the engine cites back from
    the database), cards, links, sentences or cells. A few hundred bytes
    instead of a few kilobytes a record."""
    return Record(record.id, record.source_id, record.seq, record.block, record.section, record.role,
                  record.channel, record.status, "", "", dates=[d for d in record.dates if d.counts],
                  date_from_heading=record.date_from_heading, statements=record.statements,
                  procedural=record.procedural, norm_section=record.norm_section, parent_id=record.parent_id,
                  ruling_key=ruling_key)


# What the shrink guard compares between a page's stored and new records.
SHRINK_MEASURES = ("records", "statements", "dated_records", "card_mentions")
MEASURE_LABELS = {"records": "records", "statements": "statements", "dated_records": "dated rulings",
                  "card_mentions": "card mentions"}
# A page this small may well double in one edit; a large one that does has changed its layout
# (rulings written as <br>-separated text in one block came back as one record per link).
GROWTH_MIN_RECORDS = 20
# A measure this small may well drop by half in an ordinary edit (two of four card names unquoted).
SHRINK_MIN = 5


class LayoutChange(NamedTuple):
    """What the shrink guard found: ``what`` (a :data:`SHRINK_MEASURES`
    name) went from ``before`` to ``after``, ``fewer`` or more."""

    what: str
    before: int
    after: int
    fewer: bool

    @property
    def label(self) -> str:
        return MEASURE_LABELS[self.what]

    def bound(self, max_shrink: float) -> str:
        """The bound crossed, in words: ``more than 50% fewer``, ``more than 2 times as many``."""
        if self.fewer:
            return f"more than {max_shrink:.0%} fewer"
        return f"more than {1 / (1 - max_shrink):.3g} times as many"


def page_counts(records: list[Record]) -> dict[str, int]:
    """A page's :data:`SHRINK_MEASURES`: its records, their statements, the
    records with a date of their own or a day heading's, the cards they
    name in 「」."""
    statements = dated = cards = 0
    for r in records:  # one pass: a page has thousands of records
        statements += len(r.statements)
        cards += len(r.cards)
        dated += r.dated
    return {"records": len(records), "statements": statements, "dated_records": dated, "card_mentions": cards}


def shrinkage(before: dict[str, int], after: dict[str, int], max_shrink: float) -> LayoutChange | None:
    """The first measure of at least :data:`SHRINK_MIN` in which a page lost
    more than ``max_shrink`` of what was stored (a markup change is likelier
    than a mass withdrawal of rulings), else its records if a page of at least
    :data:`GROWTH_MIN_RECORDS` now gives more than ``1 / (1 - max_shrink)``
    times as many (rulings split at every link or line: the same markup
    change the other way), or None; 1.0 accepts any page."""
    if max_shrink >= 1:
        return None
    for what in SHRINK_MEASURES:
        old, new = before.get(what, 0), after.get(what, 0)
        if old >= SHRINK_MIN and new < (1 - max_shrink) * old:
            return LayoutChange(what, old, new, True)
    old, new = before.get("records", 0), after.get("records", 0)
    if old >= GROWTH_MIN_RECORDS and new * (1 - max_shrink) > old:
        return LayoutChange("records", old, new, False)
    return None


# A heading's number on a numbered site: "3.1 ", "3.1. ", "一、", "（二）", "第3章 ". The topic reading
# (pipeline.extract) and the shrink guard's sections both compare headings without it.
HEADING_NUMBER = re.compile(r"\s*(?:\d+(?:\.\d+)*\.?\s+|[一二三四五六七八九十]+、|[（(][一二三四五六七八九十\d]+[）)]"
                            r"|第[一二三四五六七八九十\d]+[章节部分]+\s*)")


def unnumbered(heading: str) -> str:
    """``heading`` without a leading section number (``3.1 里侧·一时除外`` -> ``里侧·一时除外``);
    a heading that is only a number stays as it is."""
    m = HEADING_NUMBER.match(heading)
    return heading[m.end():] if m and m.end() < len(heading) else heading


def section_key(section_path: str) -> str:
    """A section as the shrink guard compares it: ``records.section_path``
    (headings joined by `` / ``) with each heading's number left out, so a
    page that renumbers its sections keeps them."""
    return " / ".join(unnumbered(h) for h in section_path.split(" / ")) if section_path else ""


def section_statements(records: list[Record]) -> dict[str, int]:
    """Statements per section of a page: :func:`section_key` -> count, for
    the sections that hold at least one."""
    counts: dict[str, int] = {}
    keys: dict[tuple[str, ...], str] = {}  # a section's records share its headings
    for r in records:
        if r.statements:
            key = keys.get(r.section)
            if key is None:
                key = keys[r.section] = section_key(" / ".join(r.section))
            counts[key] = counts.get(key, 0) + len(r.statements)
    return counts


class SectionLoss(NamedTuple):
    """What the per-section shrink guard found: ``section`` (a
    :func:`section_key`) held ``before`` statements and now ``after``."""

    section: str
    before: int
    after: int

    def describe(self, max_shrink: float) -> str:
        """``0 statements in section 'A / B' (was 36, more than 50% fewer; the section is gone)``."""
        gone = "; the section is gone" if self.after == 0 else ""
        return (f"{self.after} statements in section '{self.section}' (was {self.before}, "
                f"more than {max_shrink:.0%} fewer{gone})")


def section_shrinkage(before: dict[str, int], after: dict[str, int], max_shrink: float) -> SectionLoss | None:
    """The section that lost the most statements among those that held at
    least :data:`SHRINK_MIN` and now hold fewer than ``1 - max_shrink`` of
    them, a section gone counting as none left (numbered headings the topic
    reading does not know, rulings moved out of their heading: the page as a
    whole may lose less than the bound); None when there is none, or when
    ``max_shrink`` is 1.0 (any page accepted). Ties go to the section first
    in key order."""
    if max_shrink >= 1:
        return None
    lost = [SectionLoss(key, old, after.get(key, 0)) for key, old in before.items()
            if old >= SHRINK_MIN and after.get(key, 0) < (1 - max_shrink) * old]
    return min(lost, key=lambda s: (s.after - s.before, s.section), default=None)


def utc_now() -> str:
    """UTC now, ISO 8601 to the second, without offset (DuckDB TIMESTAMP text)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
