"""The retention terms a matched sentence names, read for the statement readers.

Takes a matched sentence (its spaCy doc and canonical text, :mod:`pipeline.match`)
and returns its :class:`Term` s: kind, value and range, longest then
leftmost, minus those inside quotes, verdicts after a negator flipped, an
event written in two parts and a summon's turn added (:mod:`pipeline.reading`).
Also the word-level gates and helpers the readers share: which rulings may
state a retention at all (:func:`speaks_of_retention`), a section's topic
(:func:`section_config`), clauses (:func:`clause_bounds`) and what outcome
words say (:func:`outcome_verdict`). All the words are data of
``schema/retention_terms.json``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from . import reading
from .orthography import PARENTHESIZED, alternation, quote_ranges
from .records import unnumbered
from .schema import markers, retention_terms

if TYPE_CHECKING:
    from spacy.tokens import Doc


@dataclass
class Term:
    kind: str  # KIND, KIND*, EVENT, VERDICT, OUTCOME, ABILITY, FREEDOM, SEQUEL, SAME, ALL, HYPO, SCOPE, CONTINUITY, NONE
    value: str
    start: int
    end: int


def inside(ranges: list[tuple[int, int]], a: int, b: int, strict: bool = True) -> bool:
    return any(s <= a and b <= e for s, e in ranges) if strict else any(a < e and s < b for s, e in ranges)


def sentence_terms(doc: Doc, text: str) -> list[Term]:
    """Matched terms, longest-then-leftmost, minus those inside quotes;
    ``text`` is the doc's text (``doc.text`` joins its tokens anew each time).
    Read once per doc (an example's sentence is read twice); callers never
    change the list or its terms."""
    cached = doc.user_data.get("terms")
    if cached is None:
        cached = doc.user_data["terms"] = _read_terms(doc, text)
    return cached


def _read_terms(doc: Doc, text: str) -> list[Term]:
    from spacy.util import filter_spans  # spaCy is loaded: a doc exists

    card_ranges = quote_ranges(text, "「", "」")
    quoted = quote_ranges(text, "『", "』")
    terms = []
    for span in filter_spans(list(doc.spans.get("retention", []))):
        label, _, value = span.label_.partition("|")
        a, b = span.start_char, span.end_char
        if inside(card_ranges, a, b, strict=False):
            continue
        if label not in ("KIND", "KIND*", "ALL") and inside(quoted, a, b):
            continue
        if label == "VERDICT" and value in FLIPPED and _negated(text, a, terms):
            value = FLIPPED[value]
        terms.append(Term(label, value, a, b))
    return _drop_listed_events(_read_more(terms, text, card_ranges, quoted), text)


def _read_more(terms: list[Term], text: str, card_ranges: list[tuple[int, int]],
               quoted: list[tuple[int, int]]) -> list[Term]:
    """``terms`` with what :mod:`pipeline.reading` finds on top: an event
    written in two parts (除外…回到场上) where no term names that event, and
    the turn a summon kind's words name too (…特殊召唤的战斗阶段); in text order."""
    named = {x.value for x in terms if x.kind == "EVENT"}
    taken = [(x.start, x.end) for x in terms if x.kind == "EVENT"]
    more = [x for x in reading.split_events(text, taken, card_ranges + quoted) if x[1] not in named]
    more += reading.turn_kinds(text, [(x.kind, x.value, x.start, x.end) for x in terms if x.kind == "KIND"])
    if not more:
        return terms
    return sorted(terms + [Term(*x) for x in more], key=lambda x: (x.start, x.end))


def _drop_listed_events(terms: list[Term], text: str) -> list[Term]:
    """Without the event words that are items of a list of ways a monster
    came to be (``召唤·特殊召唤·反转·反转召唤``: 反转 joined by ``·`` to a
    kind) rather than something that happens to it."""
    def listed(i: int) -> bool:
        x = terms[i]
        before = terms[i - 1] if i else None
        after = terms[i + 1] if i + 1 < len(terms) else None
        return ((before is not None and before.kind == "KIND" and before.end == x.start - 1
                 and text[x.start - 1] == "·")
                or (after is not None and after.kind == "KIND" and after.start == x.end + 1
                    and text[x.end] == "·"))
    return [x for i, x in enumerate(terms) if x.kind != "EVENT" or not listed(i)]


FLIPPED = {"kept": "lost", "lost": "kept"}


def _negated(text: str, start: int, before: list[Term], window: int = 8) -> bool:
    """Whether a negator (``不会``, ``没有``: ``schema/retention_terms.json``)
    stands before the verdict word at ``start`` in its clause, with no other
    verdict between: ``不会复原`` says kept, ``攻击过的事实不会因变成里侧消失`` too,
    and so does a negator before a cause (``不会因为变成里侧表示而消失``)."""
    after_verdict = max([t.end for t in before if t.kind == "VERDICT"], default=0)
    clause = clause_delimiter().split(text[after_verdict:start])[-1]  # since the last verdict, in this clause
    if any(neg in clause[-window:] for neg in retention_terms()["negators"]):
        return True
    # "不会因为变成里侧表示而消失": the negator stands before the cause, any length back in the clause
    return clause.endswith("而") and any(neg in clause for neg in retention_terms()["cause_negators"])


@lru_cache(maxsize=1)
def clause_delimiter() -> re.Pattern:
    return re.compile("[" + re.escape(markers()["clause_delimiters"]) + "]")


def clause_bounds(text: str) -> list[tuple[int, int]]:
    """Clauses split at the delimiters of ``schema/markers.json`` (，；：,; （） 。)
    outside 「」『』 quotes."""
    delimiters = markers()["clause_delimiters"]
    bounds, start, depth = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "「『":
            depth += 1
        elif ch in "」』":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in delimiters:
            bounds.append((start, i))
            start = i + 1
    bounds.append((start, len(text)))
    return [(a, b) for a, b in bounds if b > a]


def without_history(terms: list[Term], text: str) -> list[Term]:
    """Without the event words that describe the monster's past rather than
    what happens to it (``当回合反转的怪兽…被一时除外``: an event word followed
    by ``的``, not by ``的场合`` or another of ``case_nouns``, when another
    event comes later in the sentence)."""
    last_event = max((i for i, x in enumerate(terms) if x.kind == "EVENT"), default=-1)
    cases = _case_suffixes()  # 变成里侧的场合: the case itself

    def history(i: int, x: Term) -> bool:
        return (x.kind == "EVENT" and i < last_event and text.startswith("的", x.end)
                and not text.startswith(cases, x.end))
    return [x for i, x in enumerate(terms) if not history(i, x)]


@lru_cache(maxsize=1)
def _case_suffixes() -> tuple[str, ...]:
    return tuple("的" + noun for noun in retention_terms()["case_nouns"])


def after_flip(terms: list[Term]) -> list[Term]:
    """The terms of a case at resolution time (``处理时``: the monster was
    face-down when the effect resolved, which is no retention event) that
    still speak of retention: from its first later flip (``之后反转成表侧表示``,
    ``再反转``) on, that flip its event; the kinds named before stay as its
    subject. Empty when the case has no later flip."""
    for i, x in enumerate(terms):
        if (x.kind == "EVENT" and x.value == "flip_face_up") or x.kind == "SEQUEL":
            flip = Term("EVENT", "flip_face_up", x.start, x.end)
            return [y for y in terms[:i] if y.kind in ("KIND", "KIND*")] + [flip] + terms[i + 1:]
    return []


def subject_of_verdict(terms: list[Term], i: int, text: str) -> bool:
    """Whether the kind ``terms[i]`` is what the verdict right after it speaks
    of (``攻击力复原``, ``守备力都不会再上升``: at most 2 characters between)."""
    nxt = terms[i + 1] if i + 1 < len(terms) else None
    return (nxt is not None and nxt.kind in ("VERDICT",) + OUTCOME_TERMS and nxt.start - terms[i].end <= 2
            and not clause_delimiter().search(text[terms[i].end:nxt.start]))


def outside_parens(text: str) -> str:
    return PARENTHESIZED.sub("", text)


# Term kinds that tell what became of an effect (schema/retention_terms.json
# outcomes, abilities, freedoms).
OUTCOME_TERMS = ("OUTCOME", "ABILITY", "FREEDOM")


def kinds_after(terms: list[Term], i: int) -> list[Term]:
    """The kind terms right after ``terms[i]`` (no other term between)."""
    out = []
    for y in terms[i + 1:]:
        if y.kind not in ("KIND", "KIND*"):
            break
        out.append(y)
    return out


@lru_cache(maxsize=1)
def elliptical_words() -> re.Pattern:
    """``elliptical_words`` of ``schema/retention_terms.json`` (longest first) and the negators."""
    t = retention_terms()
    return re.compile(alternation(t["elliptical_words"] + t["negators"]))


@lru_cache(maxsize=4)
def specific_kinds(all_kinds: tuple[str, ...]) -> frozenset[str]:
    """Kinds read in any retention topic section: all but ``generic_kinds``."""
    return frozenset(all_kinds) - frozenset(retention_terms()["generic_kinds"])


def outcome_verdict(x: Term, kind: str) -> str:
    """kept/lost shown by an outcome term of ``schema/retention_terms.json``:
    ``outcomes`` (OUTCOME) say kept or lost as such; ``abilities`` (ABILITY:
    able/unable to activate the effect) say kept when able for a kind that
    enables an effect, lost when able for one of ``restricting_kinds``;
    ``freedoms`` (FREEDOM: free/bound to attack or change position) say the
    restriction is lost when free."""
    if x.kind == "OUTCOME":
        return x.value
    if x.kind == "FREEDOM":
        return "lost" if x.value == "free" else "kept"
    restricting = kind in retention_terms()["restricting_kinds"]
    return "kept" if (x.value == "able") != restricting else "lost"


@lru_cache(maxsize=1)
def retention_words() -> tuple[re.Pattern, ...]:
    """Patterns of the event words, the verdict words, the outcome words
    (outcomes, abilities, freedoms), the words of the kinds, the
    ``continuity`` phrases and the words of the specific kinds (all but
    ``generic_kinds``) of ``schema/retention_terms.json``."""
    t = retention_terms()
    generic = set(t["generic_kinds"])
    words = {
        "events": [w for ws in t["events"].values() for w in ws],
        "verdicts": [w for ws in t["verdicts"].values() for w in ws],
        "outcomes": [w for key in ("outcomes", "abilities", "freedoms") for ws in t[key].values() for w in ws],
        # an outcome word may speak of a generic kind the ruling names (a freedom_kinds one, or one
        # inside the quoted effect an ability word activates): the reader decides
        "kinds": [w for kind, ws in t["kinds"].items() for w in ws],
        "continuity": t["continuity"],
        "specific": [w for kind, ws in t["kinds"].items() if kind not in generic for w in ws],
    }
    return tuple(re.compile(alternation(ws)) for ws in words.values())


def speaks_of_retention(norm: str, example: bool = False) -> bool:
    """Whether a ruling outside the topic sections may state a retention:
    it names an event (变成里侧, 一时除外, 除外…回到场上) and a verdict word
    (不再是, 仍然是), or an outcome word (不能再发动, 仍然可以攻击) and, unless
    it is an ``example`` (which may show the kinds of its principle), a kind
    (:func:`pipeline.reader._strict_outcome_kinds` decides which count); or a
    continuity phrase (持续在怪兽区域表侧表示…才会发动: both events) and a
    specific kind. The others state nothing and are not matched at all."""
    events_, verdicts_, outcomes_, kinds_, continuity_, specific_ = retention_words()
    if continuity_.search(norm) and specific_.search(norm):  # 持续在怪兽区域表侧表示…才会发动: both events
        return True
    return bool((events_.search(norm) or reading.split_events(norm, [], [])) and (verdicts_.search(norm) or (
        outcomes_.search(norm) and (example or kinds_.search(norm)))))


# Outside a retention topic section a ruling states only what it names itself:
# every kind allowed, no section default, the kind the object of the verdict.
ANY_SECTION = (None, frozenset())


@lru_cache(maxsize=4096)
def _unnumbered(heading: str) -> str:
    """``heading`` without a leading section number (:func:`pipeline.records.unnumbered`)."""
    return unnumbered(heading)


def section_config(section: tuple[str, ...]) -> tuple[str | None, frozenset[str]] | None:
    """(default kind, allowed kinds) of the deepest configured heading, or None
    when the section is not part of a retention topic. Headings are compared
    without their section numbers (a site may number them)."""
    topics = retention_terms()["topics"]
    topic = topics.get(_unnumbered(section[0])) if section else None
    if topic is None:
        return None
    for heading in reversed(section[1:]):
        cfg = topic.get(_unnumbered(heading))
        if cfg is not None:
            return cfg["default"], frozenset(cfg["allowed"])
    return None
