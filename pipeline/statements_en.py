"""English statements: the matched sentences of an English page -> what its rulings state.

Takes the :class:`~pipeline.statements.Draft` s of an English page and their
matched sentences (:mod:`pipeline.match`) and adds to each draft the
statements it makes: the kinds a ruling names with the event and verdict it
names, or those of the lead-in (a line ending with ':') it follows. Called
by :func:`pipeline.statements.read_statements`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from .match import Matched, Matches
from .orthography import alternation
from .records import Statement
from .retention import FLIPPED, sentence_terms
from .schema import retention_terms_en

if TYPE_CHECKING:
    from .statements import Draft


_IMPERATIVE = re.compile(r"[A-Z][a-z]+,")  # a capitalized verdict word opening its sentence before a comma


def _english_terms(sentences: tuple[Matched, ...]) -> tuple[list[str], list[str], str | None]:
    """(kinds, events, verdict) an English record names; a negator in the
    12 characters before a verdict word says the opposite; a verdict word
    opening its sentence as an imperative ("Remember, ...") is none."""
    negators = retention_terms_en()["negators"]
    kinds: list[str] = []
    events_: list[str] = []
    verdict = None
    for sentence in sentences:
        if sentence.struck:
            continue
        lowered = sentence.norm.lower()
        for term in sentence_terms(sentence.doc, sentence.norm):
            if term.kind == "KIND" and term.value not in kinds:
                kinds.append(term.value)
            elif term.kind == "EVENT" and term.value not in events_:
                events_.append(term.value)
            elif term.kind == "VERDICT" and verdict is None:
                if _IMPERATIVE.match(sentence.norm, term.start) and not sentence.norm[:term.start].strip():
                    continue  # "Remember, you can only ..." (a paragraph of the rulebook): no verdict
                lead = lowered[max(0, term.start - 12):term.start]
                verdict = FLIPPED[term.value] if any(n in lead for n in negators) else term.value
    return kinds, events_, verdict


def _returning_lead_ins(records: list[Draft]) -> dict[int, str]:
    """Lead-ins (index -> event) that name how a monster leaves the field
    and no event of their own, whose list (the records after them in their
    section, up to the next line ending with ':') says the monster comes
    back: ``returning_events`` of ``schema/retention_terms_en.json``
    ("A monster removed from play by this effect:" … "returns to the field
    in the same Battle Position", edisonrul-interdimensional-matter-transporter)."""
    terms = retention_terms_en()
    named = [phrase for phrases in terms["events"].values() for phrase in phrases]
    found: dict[int, str] = {}
    for i, record in enumerate(records):
        if not record.text.rstrip().endswith(":"):
            continue
        lowered = record.norm.lower()
        if any(phrase in lowered for phrase in named):
            continue
        listed = []
        for later in records[i + 1:]:
            if later.section != record.section or later.text.rstrip().endswith(":"):
                break
            listed.append(later.norm.lower())
        for event, words in terms["returning_events"].items():
            if (any(w in lowered for w in words["leaves"])
                    and any(_says(line, w) for line in listed for w in words["returns"])):
                found[i] = event
                break
    return found


@lru_cache(maxsize=1)
def _return_negation() -> re.Pattern:
    """``return_negations`` of ``schema/retention_terms_en.json``: whole words, and suffixes anywhere."""
    negations = retention_terms_en()["return_negations"]
    return re.compile("|".join([rf"\b(?:{alternation(negations['words'])})\b",
                                *(re.escape(s) for s in negations["suffixes"])]))


def _says(lowered: str, phrase: str) -> bool:
    """Whether lower-cased ``lowered`` holds ``phrase`` without a negation in
    the 12 characters before it ("is not returned to the field", "cannot return")."""
    at = lowered.find(phrase)
    while at >= 0:
        if not _return_negation().search(lowered[max(0, at - 12):at]):
            return True
        at = lowered.find(phrase, at + 1)
    return False


def resolve_english_statements(records: list[Draft], docs: Matches) -> None:
    """Statements of an English page: a record states the kinds it names
    with the event and verdict it names, or those of the lead-in it follows.

    A lead-in names an event (and maybe a verdict) but no kind and ends
    with ':' ("A monster flipped face-down remembers:"); it passes both on
    to the records after it in its section, until the next line ending with
    ':' or a record naming its own event or verdict without a kind
    (edisonrul-book-of-moon); a line of its list that names its own verdict
    ("remembers it was Flip Summoned") states that one. A lead-in naming how
    a monster leaves and comes back states its event too
    (:func:`_returning_lead_ins`)."""
    returning = _returning_lead_ins(records)
    scope: tuple[tuple[str, ...], list[str], str | None] | None = None  # section, events, verdict
    for i, (record, sentences) in enumerate(zip(records, docs)):
        lead_in = record.text.rstrip().endswith(":")
        if scope and scope[0] != record.section:
            scope = None
        if i in returning:
            verdict = _english_terms(sentences)[2] if sentences is not None else None
            scope = (record.section, [returning[i]], verdict)
            continue
        if sentences is None:
            if lead_in:
                scope = None
            continue
        kinds, events_, verdict = _english_terms(sentences)
        if not kinds:
            scope = (record.section, events_, verdict) if (lead_in and events_) else (
                None if (lead_in or events_ or verdict) else scope)
            continue
        events_ = events_ or (scope[1] if scope else [])
        verdict = verdict or (scope[2] if scope else None)
        if not verdict:
            continue
        for kind in kinds:  # a superseded record's statements are history: compile reads its status
            for event in events_:
                record.add_statement(Statement(kind, event, verdict, reading="principle"))
        if lead_in:
            scope = None
