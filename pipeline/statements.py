"""Extract pass 4, statements: :class:`~pipeline.match.MatchedRuling` s -> :class:`Stated` rulings.

Takes a page's matched rulings (the match pass's) and returns each with
the tuple of :class:`~pipeline.records.Statement` s it makes:

* Chinese pages: :func:`resolve_statements` reads each matched sentence with
  :func:`pipeline.reader.sentence_statements` (principles state, examples
  support: an example, after ``例：`` naming a card, states what its own
  words show and supports the principle before it only on the events it
  names; each statement carries the dates of the sentence that makes it),
  then the ``card_text`` statements on a named card's numbered effect
  (:mod:`pipeline.cardrulings`, :mod:`pipeline.carddenials`);
* English pages: :func:`pipeline.statements_en.resolve_english_statements`;
* an exam's options keep only the key's right answers (:mod:`pipeline.exams`).

The readers gather statements on a :class:`Draft` per ruling, local to
this pass: nothing else is filled in place.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from . import exams, reading, retention
from .match import Matched, Matches, MatchedRuling
from .orthography import CARD_QUOTE
from .reader import Context, sentence_statements
from .records import CardMention, Ruling, Statement, merge_statement
from .retention import ANY_SECTION, sentence_terms, specific_kinds, without_history, outside_parens
from .schema import retention_terms


class Draft:
    """The statements of one ruling while its page is read: the ruling's
    fields the readers look at, its card mentions and the statements found so far."""

    __slots__ = ("id", "block", "section", "norm_section", "role", "status", "text", "norm", "dates", "cards",
                 "statements")

    def __init__(self, ruling: Ruling, cards: tuple[CardMention, ...]):
        self.id, self.block, self.section = ruling.id, ruling.block, ruling.section
        self.norm_section = ruling.norm_section
        self.role, self.status, self.text, self.norm = ruling.role, ruling.status, ruling.text, ruling.norm
        self.dates, self.cards = ruling.dates, cards
        self.statements: list[Statement] = []

    def add_statement(self, statement: Statement) -> None:
        """Add ``statement``, merging the dates of one already there without them."""
        merge_statement(self.statements, statement)


@dataclass(slots=True)  # slots and positional, as Annotated (pipeline.annotate)
class Stated:
    """A matched ruling and the statements it makes."""

    matched: MatchedRuling
    statements: tuple[Statement, ...]


def read_statements(matched: list[MatchedRuling], all_kinds: list[str], language: str) -> list[Stated]:
    """Each ruling with the statements it makes (``all_kinds``: the
    information kinds of ``schema/vocabulary.json``)."""
    drafts = [Draft(m.annotated.ruling, m.annotated.cards) for m in matched]
    sentences = [m.sentences for m in matched]
    if language == "zh":
        resolve_statements(drafts, sentences, all_kinds)
        from .cardrulings import card_text_statements  # the card texts: statements on a named card's effect
        card_text_statements(drafts, [m.card_sentences for m in matched], _sentence_events, _sentence_dates)
    else:
        from .statements_en import resolve_english_statements
        resolve_english_statements(drafts, sentences)
    exams.keep_answers(drafts)  # an exam's options: only the key's right answers say something
    return [Stated(m, tuple(d.statements)) for m, d in zip(matched, drafts)]  # matched, statements


def resolve_statements(records: list[Draft], docs: Matches, all_kinds: list[str]) -> None:
    """Fill ``record.statements`` from its sentences: principles state,
    examples support.

    A principle's sentences are read in order with what the block and the
    section said before as context; what a struck-through sentence of a
    record that is otherwise current says is kept with basis ``withdrawn``
    (history, never a verdict) and is no context for what follows. An example
    is read by :func:`_example_statements` with the principles just before it
    in its block (those since the previous run of examples).
    """
    block_kinds: dict[int, list[str]] = {}
    # What a 但是 sentence may except: what its section stated before (a 但是
    # paragraph speaks against the paragraphs before it).
    section_said: dict[tuple[str, ...], set[tuple[str, str, str]]] = defaultdict(set)
    section_last: dict[tuple[str, ...], tuple[list[str], list[str], str]] = {}
    principles: dict[int, list[Draft]] = {}
    last_role: dict[int, str] = {}
    # Outside topic sections: the kinds the block's ruling just before stated (one ruling back only).
    carried: dict[int, list[str]] = {}
    carried_cards: dict[int, frozenset[str]] = {}  # the cards that ruling named
    for record, sentences in zip(records, docs):
        section = record.norm_section or record.section
        carry = carried.pop(record.block, None) if carried else None
        cards = carried_cards.pop(record.block, frozenset()) if carried_cards else frozenset()
        if sentences is None:
            continue
        cfg = retention.section_config(section)  # through the module: tests read a page without its topics
        strict = cfg is None
        cfg = cfg or ANY_SECTION
        heading = reading.heading_kinds(section[-1]) if strict and section else frozenset()
        said = section_said[section]
        if record.role == "example":
            last_role[record.block] = "example"
            _example_statements(record, sentences, principles.get(record.block, []),
                                Context(cfg[0], cfg[1], block_kinds.get(record.block), strict=strict,
                                        section_said=said, heading=heading), all_kinds)
            continue
        ctx_key = section[:2]
        superseded = record.status == "superseded"
        before: tuple[str, ...] = ()
        for sentence in sentences:
            withdrawn = sentence.struck and not superseded  # a struck part of a current ruling
            ctx = (Context(cfg[0], cfg[1], carry, strict=True, section_said=said, heading=heading,
                           block_cards=cards, before=before) if strict else
                   Context(cfg[0], cfg[1], block_kinds.get(record.block), section_last.get(ctx_key),
                           section_said=said))
            statements, kinds = sentence_statements(sentence.doc, sentence.norm, ctx, all_kinds)
            before = _named_kinds(sentence, all_kinds) if strict else ()
            dates = _sentence_dates(record, sentence)
            for x in statements:
                record.add_statement(replace(x, basis="withdrawn" if withdrawn else x.basis, dates=dates))
            if statements and not superseded and not withdrawn:
                said.update(x.key[:3] for x in statements)
                if kinds and kinds != ["*"]:  # "任何情报" (every kind) is not carried to the next sentence
                    block_kinds[record.block] = kinds
                    carry = carried[record.block] = kinds
                    cards = carried_cards[record.block] = frozenset(CARD_QUOTE.findall(record.norm))
                section_last[ctx_key] = (sorted({x.info_kind for x in statements}),
                                         sorted({x.event for x in statements}), statements[-1].verdict)
        if any(x.basis in ("stated", "exception") for x in record.statements) and not superseded:
            if last_role.get(record.block) == "example":
                principles[record.block] = []
            last_role[record.block] = "principle"
            principles.setdefault(record.block, []).append(record)


def _named_kinds(sentence: Matched, all_kinds: list[str]) -> tuple[str, ...]:
    """The specific kinds ``sentence`` names (in text order, each once): what
    ``anaphora`` in the next sentence of its ruling may point back at."""
    specific = specific_kinds(tuple(all_kinds))
    terms = sentence_terms(sentence.doc, sentence.norm)
    return tuple(dict.fromkeys(t.value for t in terms if t.kind in ("KIND", "KIND*") and t.value in specific))


def _sentence_events(sentence: Matched) -> list[tuple[int, str]]:
    """The events ``sentence`` names, in order, as (position, event id); in
    a sentence that names no other event, a sequel flip (``之后再反转``,
    ``sequel`` of schema/retention_terms.json) is
    :data:`pipeline.cardrulings.SEQUEL_FLIP` (the card readers take it for
    a flip only when their record names no other event either)."""
    from .cardrulings import SEQUEL_FLIP

    terms = sentence_terms(sentence.doc, sentence.norm)
    events = [(t.start, t.value) for t in terms if t.kind == "EVENT"]
    return events or [(t.start, SEQUEL_FLIP) for t in terms if t.kind == "SEQUEL"]


def _sentence_dates(record: Draft, sentence: Matched) -> tuple[str, ...]:
    """The valid dates written inside ``sentence`` (its trailing stamps and
    date links); empty when it has none (the record's dates stand for it)."""
    return tuple(sorted({d.iso for d in record.dates if d.counts and sentence.start <= d.start < sentence.end}))


def _example_statements(record: Draft, sentences: tuple[Matched, ...], principles: list[Draft], ctx: Context,
                        all_kinds: list[str]) -> None:
    """What an example says, read with the principle it illustrates:

    * what its own words state (kind, event and verdict found in it, the
      principle's kinds as context): support (basis ``example``) where a
      principle just before it says the same, else its own ruling (``stated``);
    * a principle's statement about an event the example names, unless the
      example shows the opposite verdict for it or names other kinds: the
      example shows that case (``仍然会被…破坏``, ``可以发动②效果``).

    A statement a principle makes of every kind at once (``不会丢失任何情报``)
    is never passed on: an example supports it only through its own words."""
    made: dict[tuple[str, str, str], Draft] = {}
    for principle in principles:
        for s in principle.statements:
            if s.basis in ("stated", "exception"):  # an example of an exception is one too
                made.setdefault((s.info_kind, s.event, s.verdict), principle)
    shown: list[Statement] = []
    events: set[str] = set()
    named: set[str] = set()
    out_of_scope = retention_terms()["out_of_scope"]
    for sentence in sentences:
        if sentence.struck and record.status != "superseded":
            continue
        said, _ = sentence_statements(sentence.doc, sentence.norm, ctx, all_kinds)
        dates = _sentence_dates(record, sentence)
        shown += [replace(s, principle_id="", dates=dates) for s in said]  # basis: exception or stated
        if any(term in outside_parens(sentence.norm) for term in out_of_scope):
            continue  # a case at resolution time (处理时) shows no retained information
        for term in without_history(sentence_terms(sentence.doc, sentence.norm), sentence.norm):
            if term.kind == "EVENT":
                events.add(term.value)
            elif term.kind in ("KIND", "KIND*"):
                named.add(term.value)
    for s in shown:
        principle = made.get((s.info_kind, s.event, s.verdict)) if s.basis != "exception" else None
        record.add_statement(replace(s, basis="example" if principle else s.basis,
                                     principle_id=principle.id if principle else ""))
    contradicted = {(s.info_kind, s.event) for s in shown}
    own_events = {s.event for s in shown}  # an event the example speaks of in its own words
    for principle in principles:
        every_kind = _all_kind_keys(principle.statements, len(all_kinds))
        for s in principle.statements:
            if (s.basis != "stated" or s.event not in events or s.event in own_events
                    or (s.event, s.verdict) in every_kind
                    or (s.info_kind, s.event) in contradicted or (named and s.info_kind not in named)):
                continue
            record.add_statement(Statement(s.info_kind, s.event, s.verdict, s.condition, "example", principle.id,
                                           reading="outcome"))


def _all_kind_keys(statements: list[Statement], kinds: int) -> set[tuple[str, str]]:
    """The (event, verdict) pairs stated of (nearly) every kind at once."""
    counts: dict[tuple[str, str], int] = {}
    for s in statements:
        counts[(s.event, s.verdict)] = counts.get((s.event, s.verdict), 0) + 1
    return {key for key, n in counts.items() if n >= kinds - 1}
