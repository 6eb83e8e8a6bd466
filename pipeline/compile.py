"""Stage 3, compile: statements -> the executable rules table.

Takes records with their statements (:class:`~pipeline.records.Record`, the
slim copies of :func:`for_compile` in a build); gives :class:`Rule` and
:class:`ProceduralRule` values (reviewed against the stored rules by
:mod:`pipeline.review`, called from :mod:`pipeline.finish`).

One :class:`Rule` per (information kind, event) of ``schema/vocabulary.json``:

* no statement -> ``unknown`` (the engine says so, never guesses);
* statements that differ only by a stated condition (``如果是...``) ->
  ``conditional``, the conditions joined in ``condition`` and, where a
  condition names a case of ``schema/rule_policy.json`` (a fact about the
  monster the engines can test), a verdict per case in ``cases``;
* statements that disagree -> replayed by date (a statement's date is the
  latest valid date of its record or of the examples illustrating it): the
  earliest rulings establish the verdict, and a newer ruling changes it only
  when it states the change as a principle, or when enough distinct newer
  rulings agree (``schema/rule_policy.json``); ``changed_on`` is the date of
  the last change. A newer ruling that changes nothing is listed in
  ``disputed_by`` (the rule is disputed: one misread example never flips an
  established rule). Every other verdict stays visible in ``conflicts``
  with its records;
* an exception (a sentence opening with 但是: statement basis ``exception``)
  never decides a verdict the other rulings make: it is listed among the
  conflicts when it disagrees, and supports the rule when it agrees;
* a re-publication day of the official database (``republication_dates``,
  2017-03-24) never makes a change of ruling (``changed_on``), and counts
  for "later" only when a statement has no other date;
* a kind that can never be face-down (``face_down`` not_applicable: Link
  monsters) is not_applicable on ``flip_face_up`` too;
* superseded (struck-through) records and the withdrawn (struck-through)
  sentences of current records never decide a verdict; they are listed in
  the rule's citations with role ``superseded``.

Procedural rules (seeds 000 and 003) compile to :class:`ProceduralRule`: the
rule id with the records that state it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from .corpus import Source
from .dates import DATE_STAMPS
from .errors import CompileError
from .orthography import CARD_QUOTE
from .records import Record, Statement, compile_view
from .schema import (channel_labels, events, info_kinds, procedural_rules, retention_terms, rule_policy, rulesets,
                     statement_verdicts)


@dataclass(frozen=True)
class Citation:
    """A record cited by a rule: ``role`` is supports, conflicts or superseded."""

    record_id: str
    source_id: str
    role: str
    verdict: str
    dates: tuple[str, ...]
    basis: str


@dataclass(frozen=True)
class Case:
    """One case of a conditional rule: where the monster's ``fact`` has one
    of ``values`` (``schema/rule_policy.json``), the rule's verdict is
    ``verdict``, stated by ``record_ids``; ``condition`` is the rulings' own
    words for it; ``disputed_by``: newer rulings of the case that disagree
    without changing it."""

    case_id: str
    fact: str
    values: tuple
    verdict: str
    record_ids: tuple[str, ...]
    condition: str
    disputed_by: tuple[str, ...] = ()


@dataclass
class Rule:
    """The rules table's row for one (info kind, event): its verdict and the
    rulings behind it. ``disputed_by``: newer rulings that disagree with the
    verdict without changing it (``schema/rule_policy.json``), for review;
    ``cases``: a conditional rule's verdict per case."""

    info_kind: str
    event: str
    verdict: str
    condition: str = ""
    latest_date: str | None = None
    changed_on: str | None = None
    citations: list[Citation] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    disputed_by: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    changed_by: list[str] = field(default_factory=list)  # the rulings that made the change of changed_on

    @property
    def record_ids(self) -> list[str]:
        return [c.record_id for c in self.citations if c.role == "supports"]

    @property
    def dates(self) -> list[str]:
        return sorted({d for c in self.citations if c.role == "supports" for d in c.dates})


@dataclass(frozen=True)
class ProceduralRule:
    rule_id: str
    summary: str
    record_ids: tuple[str, ...]
    dates: tuple[str, ...]


def ruling_key(record: Record) -> str:
    """A ruling regardless of its date stamps and spacing: its text without
    them, hashed (a slim record of :func:`pipeline.records.compile_view`
    carries it in place of the text)."""
    if record.ruling_key:
        return record.ruling_key
    return text_key(record.norm)


def text_key(norm_text: str) -> str:
    """:func:`ruling_key` of a record's normalized text (``records.norm_text``):
    32 hex digits, equal for two texts that differ only in date stamps
    (bare or in brackets), an opening channel label (``邮件：``,
    ``schema/channels.tsv``), punctuation and spacing: one ruling however a
    page formats it (the report shows such rulings as one, and compile counts
    them as one)."""
    text = _channel_label().sub("", DATE_STAMPS.sub("", norm_text).strip(), count=1)
    return hashlib.blake2b(_NOT_WORD.sub("", text).encode("utf-8"), digest_size=16).hexdigest()


_NOT_WORD = re.compile(r"[\W_]+")


@lru_cache(maxsize=1)
def _channel_label() -> re.Pattern:
    """A channel label opening a ruling (``邮件：``), any label of ``schema/channels.tsv``."""
    labels = sorted(channel_labels(), key=len, reverse=True)
    return re.compile(r"^(?:" + "|".join(map(re.escape, labels)) + r")\s*[:：]", re.IGNORECASE)


def for_compile(records: list[Record]) -> list[Record]:
    """The records of a page that compile needs (those stating something),
    each as its slim :func:`~pipeline.records.compile_view`."""
    return [compile_view(r, ruling_key(r)) for r in records if r.statements or r.procedural]


def _ruling_key(record: Record) -> tuple[tuple[str, ...], str]:
    """A ruling regardless of its date stamps and spacing: section and text."""
    return record.norm_section or record.section, ruling_key(record)


def cite_once(records: list[Record], sources: list[Source]) -> tuple[list[Record], frozenset[str]]:
    """The records to compile, each ruling once, and the frozen extracts.

    A frozen extract is a source that ``rulings refresh`` never fetches
    whose URL a fetched source also has (seed 004 and the live page
    ``ocg-rule-c03-face-down-temp-banish``). Its records that the live page
    also holds (same section and text, dates and spacing aside) are left out:
    a rule cites the live page's record. Returns (records, frozen source ids);
    :func:`compile_rules` lets the live page win over a frozen extract when
    two rulings of equal date disagree."""
    live_urls = {s.url for s in sources if s.fetch and s.url}
    frozen = frozenset(s.id for s in sources if not s.fetch and s.url in live_urls)
    if not frozen:
        return records, frozen
    url_of = {s.id: s.url for s in sources}
    live_keys = {(url_of.get(r.source_id), _ruling_key(r)) for r in records if r.source_id not in frozen}
    kept = [r for r in records if r.source_id not in frozen or (url_of[r.source_id], _ruling_key(r)) not in live_keys]
    return kept, frozen


def other_rulesets(sources: list[Source]) -> frozenset[str]:
    """The ids of the sources that do not rule on the OCG (``schema/rulesets.json``:
    neither an OCG language nor an OCG site's URL), such as the TCG Edison-format
    card pages: their rulings decide only where the OCG's are silent."""
    ocg = rulesets()["ocg"]
    languages, prefixes = set(ocg["languages"]), tuple(ocg["url_prefixes"])
    return frozenset(s.id for s in sources if s.language not in languages and not (s.url or "").startswith(prefixes))


def compile_rules(records: list[Record], frozen: frozenset[str] = frozenset(),
                  other: frozenset[str] = frozenset()) -> list[Rule]:
    """All (kind, event) pairs of the vocabulary, sorted, each with its verdict.

    ``frozen``: source ids of frozen extracts (:func:`cite_once`), which lose
    to a live page when their rulings of equal date disagree; ``other``:
    source ids of other rulesets than the OCG (:func:`other_rulesets`), whose
    rulings decide only a pair the OCG's rulings are silent on (elsewhere they
    are cited, as support or conflicts, whatever their dates). Raises
    CompileError naming the record for a statement whose kind, event or
    verdict is not in the vocabulary (a stored database older than the
    schema, a term list pointing elsewhere)."""
    _check_statements(records)
    stated: dict[tuple[str, str], list[tuple[Record, Statement]]] = defaultdict(list)
    superseded: dict[tuple[str, str], list[tuple[Record, Statement]]] = defaultdict(list)
    # (principle, kind, event) -> the examples illustrating it
    examples: dict[tuple[str, str, str], list[tuple[Record, Statement]]] = defaultdict(list)
    for r in records:
        for s in r.statements:
            if s.basis == "example":
                if r.status != "superseded":
                    examples[(s.principle_id, s.info_kind, s.event)].append((r, s))
            elif r.status == "superseded" or s.basis == "withdrawn":
                superseded[(s.info_kind, s.event)].append((r, s))
            else:
                stated[(s.info_kind, s.event)].append((r, s))
    rules = [_compile_pair(kind, event, stated.get((kind, event), []), examples, superseded.get((kind, event), []),
                           frozen, other) for kind in sorted(info_kinds()) for event in sorted(events())]
    return _never_face_down(rules)


def _never_face_down(rules: list[Rule]) -> list[Rule]:
    """A kind whose monsters the corpus says can never be face-down (Link
    monsters: ``face_down`` is ``not_applicable``) cannot be flipped face-up
    either: its ``flip_face_up`` rule is ``not_applicable`` too, citing the
    same rulings (whatever a general sentence about every kind said)."""
    by_pair = {(r.info_kind, r.event): r for r in rules}
    for rule in rules:
        if rule.event == "face_down" and rule.verdict == "not_applicable":
            flip = by_pair.get((rule.info_kind, "flip_face_up"))
            if flip is not None and flip.verdict != "not_applicable":
                flip.verdict, flip.condition, flip.changed_on, flip.conflicts = "not_applicable", "", None, []
                flip.disputed_by, flip.cases = [], []
                flip.citations = [c for c in rule.citations if c.role == "supports"]
                flip.latest_date = rule.latest_date
    return rules


def _check_statements(records: list[Record]) -> None:
    kinds, evts, verdicts = set(info_kinds()), set(events()), set(statement_verdicts())
    for r in records:
        for s in r.statements:
            for value, known, what in ((s.info_kind, kinds, "info kind"), (s.event, evts, "event"),
                                       (s.verdict, verdicts, "verdict")):
                if value not in known:
                    raise CompileError(f"statement with unknown {what} {value!r} (schema/vocabulary.json)",
                                       source_id=r.source_id, place=f"record {r.id}")


def _effective_date(record: Record, statement: Statement, examples: dict) -> str:
    """The latest date of a statement or of the examples illustrating it; a
    re-publication day counts only when no other date is known."""
    dates = list(record.dates_of(statement))
    for ex, ex_statement in examples.get((record.id, statement.info_kind, statement.event), []):
        dates.extend(ex.dates_of(ex_statement))
    own = [d for d in dates if d not in republication_dates()]
    return max(own or dates) if dates else ""


def republication_dates() -> frozenset[str]:
    """Days the official database re-published older rulings (``schema/retention_terms.json``)."""
    return frozenset(retention_terms()["republication_dates"])


def _compile_pair(kind: str, event: str, items: list[tuple[Record, Statement]], examples: dict,
                  superseded: list[tuple[Record, Statement]], frozen: frozenset[str], other: frozenset[str]) -> Rule:
    rule = Rule(kind, event, "unknown")
    if items:
        for r, s in _decide(rule, items, examples, frozen, other):
            rule.citations.append(Citation(r.id, r.source_id, "supports", s.verdict, r.dates_of(s), "stated"))
            for ex, ex_statement in examples.get((r.id, kind, event), []):
                rule.citations.append(Citation(ex.id, ex.source_id, "supports", s.verdict, ex.dates_of(ex_statement),
                                               "example"))
    for r, s in superseded:
        rule.citations.append(Citation(r.id, r.source_id, "superseded", s.verdict, r.dates_of(s), "stated"))
    # One citation per record and role, supports first, then by date.
    seen, unique = set(), []
    for c in sorted(rule.citations, key=lambda c: (c.role != "supports", c.dates[-1:] or ("",), c.record_id)):
        if (c.record_id, c.role) not in seen:
            seen.add((c.record_id, c.role))
            unique.append(c)
    rule.citations = unique
    rule.latest_date = rule.dates[-1] if rule.dates else None
    return rule


@dataclass(frozen=True)
class _Evidence:
    """One deciding (record, statement) with what weighs it: its effective
    date (``""`` undated), how it was read, the ruling it is (its text, the
    same on every page that repeats it) and whether its page is live."""

    record: Record
    statement: Statement
    date: str
    reading: str
    ruling: str
    live: bool


@dataclass
class _Replay:
    """What replaying a pair's rulings by date decided: the verdict, the date
    it last changed (None: never, or on a re-publication day) and the
    rulings that changed it (``changed_by``), and the rulings that disagree
    with it but did not change it (``held``: the rule is disputed)."""

    verdict: str
    changed_on: str | None = None
    changed_by: list[_Evidence] = field(default_factory=list)
    held: list[_Evidence] = field(default_factory=list)


def _strength(evidence: list[_Evidence]) -> tuple[bool, bool, int]:
    """How strongly one day's rulings of one verdict say it: from a live page
    (not a frozen extract), as a principle, how many rulings."""
    alone = set(rule_policy()["override_alone"])
    return (any(e.live for e in evidence), any(e.reading in alone for e in evidence),
            len({e.ruling for e in evidence}))


def _by_verdict(evidence: list[_Evidence]) -> dict[str, list[_Evidence]]:
    out: dict[str, list[_Evidence]] = defaultdict(list)
    for e in evidence:
        out[e.statement.verdict].append(e)
    return out


def _ranked(group: dict[str, list[_Evidence]]) -> list[str]:
    """One day's verdicts, the strongest first (:func:`_strength`; then a fixed order)."""
    order = statement_verdicts()
    return sorted(group, key=lambda v: (*_strength(group[v]), -order.index(v)), reverse=True)


def _ties(group: dict[str, list[_Evidence]], ranked: list[str]) -> dict[str, list[_Evidence]]:
    """The day's other verdicts as strongly stated as its first: a tie the
    fixed order breaks, held for review rather than settled silently."""
    return {v: list(group[v]) for v in ranked[1:] if _strength(group[v]) == _strength(group[ranked[0]])}


def _replay(evidence: list[_Evidence]) -> _Replay:
    """Replay ``evidence`` by date (``schema/rule_policy.json``).

    The earliest rulings establish a verdict (on one day the strongest:
    :func:`_strength`; a tie is held for review). A newer ruling of another
    verdict changes it when its reading is one of ``override_alone`` (a
    principle) or when ``agreeing_rulings`` distinct rulings have given that
    verdict since the established one was last stated; otherwise it is
    held: the rule is disputed. A ruling of the established verdict states
    it again and clears what was held. A ruling dated on a re-publication
    day (its real date unknown) never changes a verdict: it is held.

    Undated rulings: a topic page writes its principles undated and keeps
    them current. Where no dated principle speaks of the pair, its undated
    principles are the standing rule that dated rulings must overcome as
    above; elsewhere undated rulings decide only where none is dated (they
    are cited, as support or as conflicts)."""
    policy = rule_policy()
    alone, needed = set(policy["override_alone"]), policy["agreeing_rulings"]
    dated = [e for e in evidence if e.date]
    undated = [e for e in evidence if not e.date]
    state: _Replay | None = None
    held: dict[str, list[_Evidence]] = defaultdict(list)
    standing = [e for e in undated if e.reading in alone]
    if dated and standing and not any(e.reading in alone for e in dated):
        group = _by_verdict(standing)
        ranked = _ranked(group)
        state = _Replay(ranked[0])
        held.update(_ties(group, ranked))
    by_date: dict[str, list[_Evidence]] = defaultdict(list)
    for e in dated or undated:
        by_date[e.date].append(e)
    for date in sorted(by_date):
        group = _by_verdict(by_date[date])
        ranked = _ranked(group)
        if state is None:
            state = _Replay(ranked[0])
            held.update(_ties(group, ranked))
            continue
        top = ranked[0]
        if top == state.verdict:  # stated again: what disagreed before is answered
            held.clear()
            held.update(_ties(group, ranked))
            continue  # a disagreement of the same day that ranks lower is a conflict, not a change
        held[top] += group[top]
        if date in republication_dates():
            continue  # re-published: when it was ruled is unknown, so it is no newer ruling
        if any(e.reading in alone for e in held[top]) or len({e.ruling for e in held[top]}) >= needed:
            state.verdict, state.changed_on, state.changed_by = top, date or None, held[top]
            held.clear()
    state.held = [e for v in sorted(held) for e in held[v]]
    return state


def _evidence(items: list[tuple[Record, Statement]], examples: dict, frozen: frozenset[str]) -> list[_Evidence]:
    return [_Evidence(r, s, _effective_date(r, s, examples), s.reading, ruling_key(r), r.source_id not in frozen)
            for r, s in items]


def _decide(rule: Rule, items: list[tuple[Record, Statement]], examples: dict,
            frozen: frozenset[str] = frozenset(), other: frozenset[str] = frozenset()) -> list[tuple[Record, Statement]]:
    """Set the rule's verdict, condition, cases, conflicts, changed_on and
    disputed_by; return the (record, statement) pairs that support the verdict."""
    # An exception ("但是…": basis exception) never decides a rule the other rulings make, nor
    # does a ruling of another ruleset than the OCG's where the OCG has ruled on the pair, nor a
    # ruling left only on a frozen extract where its live page rules on the pair (the live page
    # dropped or reworded it): they are listed, as support or as conflicts, beside those that decide.
    has_ocg = any(r.source_id not in other for r, s in items if s.basis != "exception")
    has_live = any(r.source_id not in frozen for r, s in items if s.basis != "exception")
    decides = [s.basis != "exception" and (not has_ocg or r.source_id not in other)
               and (not has_live or r.source_id not in frozen) for r, s in items]
    if not any(decides):  # exceptions alone: they decide, as the only rulings there are
        decides = [True] * len(items)
    deciding = [pair for pair, d in zip(items, decides) if d]
    aside: dict[str, list[tuple[Record, Statement, str]]] = defaultdict(list)
    for (r, s), d in zip(items, decides):
        if not d:
            aside[s.verdict].append((r, s, _effective_date(r, s, examples)))
    by_verdict: dict[str, list[tuple[Record, Statement, str]]] = defaultdict(list)
    for r, s in deciding:
        by_verdict[s.verdict].append((r, s, _effective_date(r, s, examples)))
    cases, in_cases, case_verdicts = _cases(deciding, examples, frozen)
    general = [(r, s) for r, s in deciding if id(s) not in in_cases]
    if case_verdicts and general:  # what the rulings without a case's condition say is one more verdict
        case_verdicts = case_verdicts | {_replay(_evidence(general, examples, frozen)).verdict}
    if len(case_verdicts) > 1:
        rule.verdict, rule.cases = "conditional", cases
        rule.condition = "; ".join(sorted({s.condition for _, s in deciding if s.condition and id(s) in in_cases}))
        rule.disputed_by = sorted({rid for c in cases for rid in c.disputed_by})
        return [(r, s) for v in sorted(by_verdict) for r, s, _ in by_verdict[v]] + [
            (r, s) for v in sorted(aside) for r, s, _ in aside[v]]
    replay = _replay(_evidence(deciding, examples, frozen))
    rule.verdict, rule.changed_on = replay.verdict, replay.changed_on
    rule.changed_by = sorted({e.record.id for e in replay.changed_by})
    rule.disputed_by = sorted({e.record.id for e in replay.held})
    others = sorted((v for v in by_verdict if v != rule.verdict),
                    key=lambda v: max(d for _, _, d in by_verdict[v]), reverse=True)
    for v in others + sorted(v for v in aside if v not in by_verdict and v != rule.verdict):
        against = by_verdict.get(v, []) + aside.get(v, [])
        rule.conflicts.append({"verdict": v, "record_ids": sorted({r.id for r, _, _ in against}),
                               "latest_date": max(d for _, _, d in against) or None})
        for r, s, _ in against:
            rule.citations.append(Citation(r.id, r.source_id, "conflicts", v, r.dates_of(s), "stated"))
    # An exception or another ruleset's ruling that agrees with the rule supports it.
    by_verdict[rule.verdict] += aside.get(rule.verdict, [])
    return [(r, s) for r, s, _ in by_verdict[rule.verdict]]


def case_of(condition: str) -> dict | None:
    """The case of ``schema/rule_policy.json`` a statement's condition text
    belongs to, or None: the first case one of whose ``words`` occurs in it
    (quoted effect text 『…』 aside) and is not negated (a ``negators``
    word just before it, ``negated_after`` just after: ``不是可以通常召唤的
    怪兽``, ``可以通常召唤的怪兽以外`` name no case), or that lists among its
    ``cards`` (passcodes) a card the condition names in 「」 by any of its
    names (``对于「放電電擊槍野馬」等效果``: the Taiwanese name of 「放电枪野马」)."""
    policy = rule_policy()
    text = _QUOTED_EFFECT.sub("", condition)
    named = _named_cards(text) if any(c.get("cards") for c in policy["cases"]) else set()
    for case in policy["cases"]:
        if named & set(case.get("cards", ())):
            return case
        for word in case.get("words", ()):
            for m in re.finditer(re.escape(word), text):
                before, after = text[max(0, m.start() - NEGATOR_REACH):m.start()], text[m.end():]
                if not any(n in before for n in policy["negators"]) and not after.startswith(
                        tuple(policy["negated_after"])):
                    return case
    return None


def _named_cards(text: str) -> set[int]:
    """The passcodes of the cards ``text`` names in 「」 (the card index links
    a name in any language, script or region)."""
    from .cards import card_index  # loaded by a build or refresh already; only for conditions that name cards

    index = card_index()
    return {link.passcode for name in CARD_QUOTE.findall(text) if (link := index.link(name)).passcode}


NEGATOR_REACH = 3  # characters before a case's word where a negator negates it (不是 / 如果不是)
_QUOTED_EFFECT = re.compile(r"『[^』]*』")


def _cases(deciding: list[tuple[Record, Statement]], examples: dict,
           frozen: frozenset[str]) -> tuple[list[Case], set[int], set[str]]:
    """A rule's cases: the statements grouped by the case their condition
    belongs to (:func:`case_of`), each case with its verdict (the replay of
    its own rulings), its records and the rulings that dispute it. A
    condition that names no case of the policy is a case of its own words,
    for people (the engines cannot test it). A case counts only when its
    rulings weigh (:func:`_weighs`); the statements of a case that does not
    are the rule's general rulings (one example with a condition never
    makes a rule conditional). Returns the policy's cases that count, the
    ids of the statements of every case that counts, and the verdicts of
    all cases that count (conditional when they differ)."""
    grouped: dict[str, list[tuple[Record, Statement]]] = defaultdict(list)
    known = {c["id"]: c for c in rule_policy()["cases"]}
    for r, s in deciding:
        if s.condition:
            case = case_of(s.condition)
            grouped[case["id"] if case else "text:" + s.condition].append((r, s))
    split = _split_rulings(grouped)
    out, held, verdicts = [], set(), set()
    for case_id in [c for c in known if c in grouped] + sorted(c for c in grouped if c not in known):
        pairs = grouped[case_id]
        if not _weighs(pairs, split):
            continue
        replay = _replay(_evidence(pairs, examples, frozen))
        verdicts.add(replay.verdict)
        held.update(id(s) for _, s in pairs)
        if case_id in known:
            case = known[case_id]
            out.append(Case(case_id, case["fact"], tuple(case["values"]), replay.verdict,
                            tuple(sorted({r.id for r, s in pairs if s.verdict == replay.verdict})),
                            "; ".join(sorted({s.condition for _, s in pairs})),
                            tuple(sorted({e.record.id for e in replay.held}))))
    return out, held, verdicts


def _split_rulings(grouped: dict[str, list[tuple[Record, Statement]]]) -> set[str]:
    """Records that state two cases of the rule with different verdicts in
    one ruling (``在召唤的回合…仍然不能攻击；在反转召唤的回合…可以攻击``): the
    ruling itself draws the line between the cases."""
    verdicts: dict[str, set[str]] = defaultdict(set)
    for pairs in grouped.values():
        for r, s in pairs:
            verdicts[r.id].add(s.verdict)
    return {rid for rid, v in verdicts.items() if len(v) > 1}


def _weighs(pairs: list[tuple[Record, Statement]], split: set[str]) -> bool:
    """Whether a case's rulings establish it: a principle among them, a
    ruling that draws the line between cases itself, or as many distinct
    rulings as change a verdict (``schema/rule_policy.json``)."""
    policy = rule_policy()
    return (any(s.reading in policy["override_alone"] or r.id in split for r, s in pairs)
            or len({ruling_key(r) for r, _ in pairs}) >= policy["agreeing_rulings"])


def compile_procedural(records: list[Record]) -> list[ProceduralRule]:
    """The procedural rules the corpus states, sorted by id."""
    found: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.status == "superseded":
            continue
        for rule_id in r.procedural:
            found[rule_id].append(r)
    rules = procedural_rules()
    out = []
    for rule_id in sorted(found):
        recs = sorted(found[rule_id], key=lambda r: r.id)
        dates = tuple(sorted({d for r in recs for d in r.valid_dates}))
        out.append(ProceduralRule(rule_id, rules[rule_id]["summary"], tuple(r.id for r in recs), dates))
    return out
