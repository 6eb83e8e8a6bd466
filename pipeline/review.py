"""The review of a run's rules: what changed against the rules the database held.

Takes the rules a build or refresh compiled (:class:`~pipeline.compile.Rule`)
and the stored ones as :data:`Reviewed` values (:func:`pipeline.stored.previous_rules`);
gives the :class:`RuleChange` list a maintainer reads before publishing the
engine (:func:`review`: a verdict changed, a rule became disputed or was
settled, per rule and per case of a conditional rule), which load writes to
``rule_changes`` and ``rulings changes --rules`` lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .records import change_words

if TYPE_CHECKING:
    from .compile import Rule


@dataclass(frozen=True)
class RuleChange:
    """A rule a maintainer should read before publishing the engine:
    ``change`` is ``verdict`` (its verdict changed: ``record_ids`` are the
    rulings that changed it, or those behind the new verdict), ``disputed``
    (newer rulings disagree with it: ``record_ids`` are those) or
    ``settled`` (it is no longer disputed). ``case_id``: the case of a
    conditional rule the change is in, ``""`` for the rule itself."""

    info_kind: str
    event: str
    change: str
    old_verdict: str | None
    new_verdict: str
    record_ids: tuple[str, ...]
    case_id: str = ""

    def describe(self) -> str:
        """One line for people: ``summon_materials/face_down: lost -> kept (r1, r2)``."""
        what = change_words(self.change, self.old_verdict, self.new_verdict)
        ids = f" ({', '.join(self.record_ids[:MAX_CHANGE_IDS])}{', …' if len(self.record_ids) > MAX_CHANGE_IDS else ''})"
        case = f" in case {self.case_id}" if self.case_id else ""
        return f"{self.info_kind}/{self.event}{case}: {what}{ids if self.record_ids else ''}"


MAX_CHANGE_IDS = 5  # record ids a change's line names; the table holds them all

# What review compares of a rule: its verdict, its disputing records, and its cases' (case id -> (verdict, disputing)).
Reviewed = tuple[str, tuple[str, ...], dict[str, tuple[str, tuple[str, ...]]]]


def review(before: dict[tuple[str, str], Reviewed], rules: list[Rule]) -> list[RuleChange]:
    """The rules, and the cases of conditional rules, whose verdict changed
    or that became disputed or settled, against ``before`` (``(info kind,
    event) -> (verdict, disputed_by, {case id: (verdict, disputed_by)})`` of
    the rules a database held; empty for a first build: nothing to review)."""
    changes = []
    for rule in rules:
        old = before.get((rule.info_kind, rule.event))
        if old is None:
            continue
        # a conditional rule's disputes are its cases': they are reviewed case by case
        disputes = ((), ()) if rule.cases else (old[1], tuple(rule.disputed_by))
        changes += _reviewed(rule, "", old[0], disputes[0], rule.verdict, disputes[1], _changed_by(rule))
        old_cases = old[2] if len(old) > 2 else {}
        for case in rule.cases:
            if case.case_id in old_cases:
                verdict, disputed = old_cases[case.case_id]
                changes += _reviewed(rule, case.case_id, verdict, disputed, case.verdict, case.disputed_by,
                                     case.record_ids)
    return changes


def _reviewed(rule: Rule, case_id: str, old_verdict: str, old_disputed: tuple[str, ...], verdict: str,
              disputed: tuple[str, ...], changed_by: tuple[str, ...]) -> list[RuleChange]:
    """The change of one rule (or one case of it), if any, as a one-item list."""
    if old_verdict != verdict:
        return [RuleChange(rule.info_kind, rule.event, "verdict", old_verdict, verdict, changed_by, case_id)]
    if set(disputed) - set(old_disputed):
        return [RuleChange(rule.info_kind, rule.event, "disputed", old_verdict, verdict, tuple(disputed), case_id)]
    if old_disputed and not disputed:
        return [RuleChange(rule.info_kind, rule.event, "settled", old_verdict, verdict, (), case_id)]
    return []


def _changed_by(rule: Rule) -> tuple[str, ...]:
    """The rulings behind a rule's new verdict: those that changed it (since
    the verdict before was last stated), else all that support it."""
    return tuple(rule.changed_by or rule.record_ids)
