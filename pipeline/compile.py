"""Stage 3, compile: statements -> the executable rules table.

One :class:`Rule` per (information kind, event) of ``schema/vocabulary.json``:

* no statement -> ``unknown`` (the engine says so, never guesses);
* statements that differ only by a stated condition (``如果是...``) ->
  ``conditional``, the conditions joined in ``condition``;
* statements that disagree -> the later ruling wins (a statement's date is the
  latest valid date of its record or of the examples illustrating it), and the
  overridden verdicts stay visible in ``conflicts`` with their records;
  ``changed_on`` is the date of the winning ruling when it is later than every
  overridden one;
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

from .corpus import Source
from .errors import CompileError
from .records import Record, Statement, compile_view
from .schema import events, info_kinds, procedural_rules, retention_terms, rulesets, statement_verdicts


@dataclass(frozen=True)
class Citation:
    """A record cited by a rule: ``role`` is supports, conflicts or superseded."""

    record_id: str
    source_id: str
    role: str
    verdict: str
    dates: tuple[str, ...]
    basis: str


@dataclass
class Rule:
    info_kind: str
    event: str
    verdict: str
    condition: str = ""
    latest_date: str | None = None
    changed_on: str | None = None
    citations: list[Citation] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)

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


_DATE_STAMPS = re.compile(r"\d{1,4}\s*[/／年.．\-]\s*\d{1,2}\s*[/／月.．\-]\s*\d{1,2}日?|\s+")


def ruling_key(record: Record) -> str:
    """A ruling regardless of its date stamps and spacing: its text without
    them, hashed (a slim record of :func:`pipeline.records.compile_view`
    carries it in place of the text)."""
    if record.ruling_key:
        return record.ruling_key
    return hashlib.blake2b(_DATE_STAMPS.sub("", record.norm).encode("utf-8"), digest_size=16).hexdigest()


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


def _decide(rule: Rule, items: list[tuple[Record, Statement]], examples: dict,
            frozen: frozenset[str] = frozenset(), other: frozenset[str] = frozenset()) -> list[tuple[Record, Statement]]:
    """Set the rule's verdict, condition, conflicts and changed_on; return the
    (record, statement) pairs that support the verdict."""
    # An exception ("但是…": basis exception) never decides a rule the other rulings make, nor
    # does a ruling of another ruleset than the OCG's where the OCG has ruled on the pair: both
    # are listed, as support or as conflicts, beside the rulings that decide.
    has_ocg = any(r.source_id not in other for r, s in items if s.basis != "exception")
    decides = [s.basis != "exception" and (not has_ocg or r.source_id not in other) for r, s in items]
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
    conditions = sorted({s.condition for _, s in deciding if s.condition})
    if conditions and len(by_verdict) > 1:
        rule.verdict, rule.condition = "conditional", "; ".join(conditions)
        return [(r, s) for v in sorted(by_verdict) for r, s, _ in by_verdict[v]] + [
            (r, s) for v in sorted(aside) for r, s, _ in aside[v]]
    # The later ruling wins; on equal dates a live page over a frozen extract; then the
    # better supported verdict; then a fixed order.
    order = statement_verdicts()

    def rank(v: str) -> tuple:
        latest = max(d for _, _, d in by_verdict[v])
        live = any(r.source_id not in frozen for r, _, d in by_verdict[v] if d == latest)
        return latest, live, len(by_verdict[v]), -order.index(v)

    ranked = sorted(by_verdict, key=rank, reverse=True)
    rule.verdict = ranked[0]
    win_date = max(d for _, _, d in by_verdict[rule.verdict])
    lost_dates = [d for d in (max(d for _, _, d in by_verdict[v]) for v in ranked[1:]) if d]
    for v in ranked[1:] + sorted(v for v in aside if v not in by_verdict):
        against = by_verdict.get(v, []) + aside.get(v, [])
        rule.conflicts.append({"verdict": v, "record_ids": sorted({r.id for r, _, _ in against}),
                               "latest_date": max(d for _, _, d in against) or None})
        for r, s, _ in against:
            rule.citations.append(Citation(r.id, r.source_id, "conflicts", v, r.dates_of(s), "stated"))
    # An exception or another ruleset's ruling that agrees with the rule supports it.
    by_verdict[rule.verdict] += aside.get(rule.verdict, [])
    # A re-publication day stands for an earlier ruling: it is no change of ruling.
    if lost_dates and win_date and win_date > max(lost_dates) and win_date not in republication_dates():
        rule.changed_on = win_date
    return [(r, s) for r, s, _ in by_verdict[rule.verdict]]


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
