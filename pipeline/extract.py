"""Stage 2, extract: a normalized :class:`~pipeline.page.Page` -> ruling :class:`~pipeline.records.Record` s.

Extract runs four named passes over a page, in this order, each once, each
taking and returning plain typed values (nothing is filled in place):

1. ``segment`` (:func:`pipeline.segment.segment`): the page's blocks ->
   :class:`~pipeline.records.Ruling` s (where each ruling starts and ends;
   its text as written and canonical, sentences, date stamps, links,
   struck ranges, role, channel, status, parent);
2. ``annotate`` (:func:`pipeline.annotate.annotate`): rulings ->
   :class:`~pipeline.annotate.Annotated` rulings (FAQ links of its dates,
   card mentions, a yearly log's heading date);
3. ``match`` (:func:`pipeline.match.match_page`): annotated rulings ->
   :class:`~pipeline.match.MatchedRuling` s (the sentences spaCy's
   rule-based matchers read, the procedural rules English rulings state);
4. ``statements`` (:func:`pipeline.statements.read_statements`): matched
   rulings -> :class:`~pipeline.statements.Stated` rulings (their
   :class:`~pipeline.records.Statement` s: Chinese and English readers,
   card_text statements, exams).

Each pass takes the list the one before returns (one value per ruling, in
page order, the ruling inside it: nothing is zipped back by index), and
:func:`extract` then assembles one :class:`~pipeline.records.Record` per
ruling from the last (the storage type load and compile take).
"""

from __future__ import annotations

from .annotate import annotate
from .match import match_page
from .page import Page
from .records import Record
from .segment import segment
from .statements import Stated, read_statements

# The passes in pipeline order (their modules: pipeline.segment, .annotate, .match, .statements).
PASSES = ("segment", "annotate", "match", "statements")


def extract(page: Page, all_kinds: list[str]) -> list[Record]:
    """Page -> records with dates, card mentions, statements and procedural
    rules (``all_kinds``: the information kinds of ``schema/vocabulary.json``).
    Raises :class:`~pipeline.errors.ExtractError` naming the block for a
    ruling over spaCy's length limit."""
    rulings = segment(page)
    annotated = annotate(rulings, page.language, page.script, page.region)
    matched = match_page(annotated, page.language)
    stated = read_statements(matched, all_kinds, page.language)
    return [record(s) for s in stated]


def record(stated: Stated) -> Record:
    """The stored record of a ruling: its fields, its annotation, its
    statements and procedural rules (lists where :class:`Record` keeps lists)."""
    note = stated.matched.annotated
    ruling = note.ruling
    dates = list(ruling.dates)
    if note.heading_date is not None:
        dates.append(note.heading_date)
    # In the order of Record's fields, not by keyword: a call with keywords builds a dict of them.
    return Record(
        ruling.id, ruling.source_id, ruling.seq, ruling.block, ruling.section, ruling.role, ruling.channel,
        ruling.status, ruling.text, ruling.norm, dates, note.heading_date is not None,  # ..., date_from_heading
        list(note.faq), list(note.cards), list(stated.statements), list(stated.matched.procedural),  # ..., procedural
        list(ruling.links), ruling.norm_section, [(s.start, s.end) for s in ruling.sentences],  # ..., sentences
        list(ruling.struck), ruling.withdrawn, ruling.parent_id, list(ruling.cells))  # ..., cells


# The corpus's longest lists of dated examples hold 15 stamps; a record with more has
# rulings run together (a page in one table cell or <pre>, lines without breaks).
RUN_TOGETHER_DATES = 20


def layout_warnings(records: list[Record], source_id: str) -> list[str]:
    """Warnings about how a page was cut into records (a list of at most one
    line): records holding :data:`RUN_TOGETHER_DATES` or more date stamps of
    their own, the first named by its position (1-based) and section."""
    crowded = [(r, n) for r in records if len(r.dates) >= RUN_TOGETHER_DATES
               and (n := sum(1 for d in r.dates if d.kind != "reference")) >= RUN_TOGETHER_DATES]
    if not crowded:
        return []
    first, stamps = crowded[0]
    where = " > ".join(first.section) or "no section"
    more = f" (and {len(crowded) - 1} more records hold {RUN_TOGETHER_DATES} or more)" if len(crowded) > 1 else ""
    return [f"{source_id}: record {first.seq + 1} ({where}) holds {stamps} date stamps{more}: rulings "
            f"run together in a layout the pipeline does not separate? See `rulings show {first.id}`"]
