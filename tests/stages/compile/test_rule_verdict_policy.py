"""Compile: a rules table that holds when new rulings arrive.

A newer ruling changes an established verdict only when it says so as a
principle, or when enough distinct newer rulings agree
(schema/rule_policy.json); otherwise the rule keeps its verdict and is
disputed. Conditional rules carry a verdict per case. Builds and refreshes
list the rules whose verdict changed or became disputed."""

from __future__ import annotations


import pytest

from pipeline import compile as compile_
from pipeline.compile import case_of, compile_rules
from pipeline.review import review
from pipeline.dates import RulingDate
from pipeline.records import Record, Statement

PAIR = ("synchro_summoned", "face_down")


def _ruling(rid: str, verdict: str, date: str | None, reading: str, text: str | None = None,
            source: str = "log") -> Record:
    """A record stating ``synchro_summoned / face_down -> verdict``, read as ``reading``."""
    dates = [RulingDate(date, 0, 0, date, True, "")] if date else []
    return Record(rid, source, 0, 0, ("裁定",), "principle", "", "current", text or rid, text or rid, dates=dates,
                  statements=[Statement(*PAIR, verdict, reading=reading)])


def _rule(records: list[Record]):
    [rule] = [r for r in compile_rules(records) if (r.info_kind, r.event) == PAIR]
    return rule


PRINCIPLE = _ruling("r-principle", "kept", "2018-01-01", "principle")


def test_a_newer_example_against_a_principle_leaves_the_rule_disputed():
    for reading in ("case", "outcome"):
        rule = _rule([PRINCIPLE, _ruling("r-example", "lost", "2025-06-01", reading)])
        assert (rule.verdict, rule.changed_on, rule.disputed_by) == ("kept", None, ["r-example"])
        assert rule.conflicts == [{"verdict": "lost", "record_ids": ["r-example"], "latest_date": "2025-06-01"}]


def test_a_newer_principle_changes_the_rule():
    rule = _rule([PRINCIPLE, _ruling("r-example", "lost", "2025-06-01", "case"),
                  _ruling("r-new-principle", "lost", "2026-01-01", "principle")])
    assert (rule.verdict, rule.changed_on, rule.disputed_by) == ("lost", "2026-01-01", [])
    # the principle alone changes it too, on its own date
    rule = _rule([PRINCIPLE, _ruling("r-new-principle", "lost", "2026-01-01", "principle")])
    assert (rule.verdict, rule.changed_on) == ("lost", "2026-01-01")


def test_enough_distinct_newer_rulings_that_agree_change_the_rule():
    two = [_ruling("r-a", "lost", "2025-06-01", "outcome", "「甲」变成里侧后不能发动①效果"),
           _ruling("r-b", "lost", "2025-09-01", "case", "「乙」变成里侧后不再是S召唤的怪兽")]
    rule = _rule([PRINCIPLE, *two])
    assert (rule.verdict, rule.changed_on, rule.disputed_by) == ("lost", "2025-09-01", [])


def test_one_ruling_repeated_on_several_pages_counts_once():
    """The same ruling text in a yearly log and on a topic page is one ruling."""
    same = "「甲」变成里侧后不能发动①效果。25/6/1"
    rule = _rule([PRINCIPLE, _ruling("r-log", "lost", "2025-06-01", "outcome", same, "log"),
                  _ruling("r-topic", "lost", "2025-06-01", "outcome", same, "topic")])
    assert (rule.verdict, sorted(rule.disputed_by)) == ("kept", ["r-log", "r-topic"])


def test_the_established_verdict_stated_again_settles_a_dispute():
    rule = _rule([PRINCIPLE, _ruling("r-example", "lost", "2025-06-01", "outcome"),
                  _ruling("r-again", "kept", "2025-12-01", "case")])
    assert (rule.verdict, rule.changed_on, rule.disputed_by) == ("kept", None, [])


def test_undated_rulings_decide_only_where_none_is_dated():
    undated = _ruling("r-undated", "lost", None, "principle")
    assert _rule([undated]).verdict == "lost"
    rule = _rule([undated, PRINCIPLE])
    assert (rule.verdict, rule.disputed_by) == ("kept", [])  # listed as a conflict, not a change
    assert rule.conflicts[0]["record_ids"] == ["r-undated"]


def test_the_policy_is_data(monkeypatch):
    """schema/rule_policy.json decides: with three agreeing rulings needed,
    two stay a dispute; with case readings allowed alone, one changes it."""
    policy = dict(compile_.rule_policy())
    records = [PRINCIPLE, _ruling("r-a", "lost", "2025-06-01", "outcome", "a"),
               _ruling("r-b", "lost", "2025-09-01", "case", "b")]
    monkeypatch.setattr(compile_, "rule_policy", lambda: {**policy, "agreeing_rulings": 3})
    assert (_rule(records).verdict, _rule(records).disputed_by) == ("kept", ["r-a", "r-b"])
    monkeypatch.setattr(compile_, "rule_policy", lambda: {**policy, "override_alone": ["principle", "case"]})
    rule = _rule([PRINCIPLE, _ruling("r-b", "lost", "2025-09-01", "case", "b")])
    assert (rule.verdict, rule.changed_on) == ("lost", "2025-09-01")


def test_an_undated_principle_stands_against_one_dated_example():
    """A topic page writes its principles undated: where no dated principle
    speaks of the pair, one newer example cannot overturn them."""
    undated = _ruling("r-undated", "kept", None, "principle")
    rule = _rule([undated, _ruling("r-example", "lost", "2025-06-01", "case")])
    assert (rule.verdict, rule.disputed_by) == ("kept", ["r-example"])
    two = [_ruling("r-a", "lost", "2025-06-01", "case", "a"), _ruling("r-b", "lost", "2025-07-01", "outcome", "b")]
    rule = _rule([undated, *two])  # two that agree change it, citing both
    assert (rule.verdict, rule.changed_on, rule.changed_by) == ("lost", "2025-07-01", ["r-a", "r-b"])


def test_the_same_ruling_written_otherwise_counts_once():
    """Date stamps in brackets, a channel label, punctuation and spacing do not make another ruling."""
    forms = ["「甲」变成里侧后，不再是S召唤的怪兽。25/6/1", "「甲」变成里侧后，不再是S召唤的怪兽（25/6/1）",
             "邮件：「甲」变成里侧后 不再是S召唤的怪兽。"]
    for other in forms[1:]:
        rule = _rule([PRINCIPLE, _ruling("r-one", "lost", "2025-06-01", "case", forms[0]),
                      _ruling("r-two", "lost", "2025-06-01", "case", other)])
        assert (rule.verdict, sorted(rule.disputed_by)) == ("kept", ["r-one", "r-two"]), other


def test_a_tie_on_one_day_is_held_for_review_and_a_principle_outweighs_examples():
    tie = _rule([_ruling("r-kept", "kept", "2018-01-01", "principle", "k"),
                 _ruling("r-lost", "lost", "2018-01-01", "principle", "l")])
    assert tie.disputed_by == ["r-lost"] or tie.disputed_by == ["r-kept"]
    examples = [_ruling("r-x", "lost", "2018-01-01", "case", "x"), _ruling("r-y", "lost", "2018-01-01", "outcome", "y")]
    rule = _rule([_ruling("r-principle", "kept", "2018-01-01", "principle"), *examples])
    assert (rule.verdict, rule.disputed_by) == ("kept", [])


def test_a_ruling_dated_only_on_a_republication_day_never_changes_a_verdict():
    rule = _rule([_ruling("r-old", "kept", "2016-01-01", "principle"),
                  _ruling("r-republished", "lost", "2017-03-24", "principle")])
    assert (rule.verdict, rule.changed_on, rule.disputed_by) == ("kept", None, ["r-republished"])


def test_a_ruling_left_only_on_a_frozen_extract_never_decides_against_the_live_page():
    live = _ruling("r-live", "kept", "2018-01-01", "principle", "live", source="topic")
    frozen = _ruling("r-seed", "lost", "2020-01-01", "principle", "seed only", source="seed")
    [rule] = [r for r in compile_rules([live, frozen], frozenset({"seed"})) if (r.info_kind, r.event) == PAIR]
    assert (rule.verdict, rule.changed_on) == ("kept", None)
    assert rule.conflicts[0]["record_ids"] == ["r-seed"]
    [rule] = [r for r in compile_rules([frozen], frozenset({"seed"})) if (r.info_kind, r.event) == PAIR]
    assert rule.verdict == "lost"  # alone, the extract decides


def _conditioned(rid: str, verdict: str, condition: str, reading: str, date: str = "2025-06-01") -> Record:
    record = _ruling(rid, verdict, date, reading, f"{rid} {condition}")
    record.statements = [Statement(*PAIR, verdict, condition, reading=reading)]
    return record


def test_one_example_with_a_condition_makes_no_rule_conditional():
    """A newer card example under 如果是不能通常召唤的怪兽 disputes the kept rule; it founds no case."""
    rule = _rule([PRINCIPLE, _ruling("r-again", "kept", "2019-01-01", "principle", "again"),
                  _conditioned("r-cond", "lost", "如果是不能通常召唤的怪兽", "case")])
    assert (rule.verdict, rule.cases, rule.disputed_by) == ("kept", [], ["r-cond"])
    # principles that name both cases make it conditional, each case with its verdict
    rule = _rule([_conditioned("r-can", "lost", "如果是可以通常召唤的怪兽", "principle"),
                  _conditioned("r-cannot", "kept", "如果是特殊召唤怪兽", "principle")])
    assert rule.verdict == "conditional"
    assert [(c.case_id, c.verdict) for c in rule.cases] == [("can_be_normal_summoned", "lost"),
                                                            ("cannot_be_normal_summoned", "kept")]


def test_a_case_keeps_its_disputes_and_a_change_inside_a_case_is_reviewed():
    base = [_conditioned("r-can", "kept", "如果是可以通常召唤的怪兽", "principle", "2018-01-01"),
            _conditioned("r-cannot", "lost", "如果是特殊召唤怪兽", "principle", "2018-01-01")]
    newer = _conditioned("r-new", "lost", "如果是可以通常召唤的怪兽", "case", "2025-06-01")
    rule = _rule(base + [newer])
    [can] = [c for c in rule.cases if c.case_id == "can_be_normal_summoned"]
    assert (can.verdict, can.disputed_by, rule.disputed_by) == ("kept", ("r-new",), ["r-new"])
    before = {PAIR: ("conditional", (), {"can_be_normal_summoned": ("kept", ()),
                                         "cannot_be_normal_summoned": ("lost", ())})}
    [change] = review(before, compile_rules(base + [newer]))
    assert (change.change, change.case_id, change.record_ids) == ("disputed", "can_be_normal_summoned", ("r-new",))
    # a newer principle flips the case: both cases now say lost, so the rule is lost, a change to review
    flipped = base + [newer, _conditioned("r-new2", "lost", "如果是可以通常召唤的怪兽", "principle", "2025-07-01")]
    [change] = review(before, compile_rules(flipped))
    assert (change.change, change.case_id, change.old_verdict, change.new_verdict) == (
        "verdict", "", "conditional", "lost")
    # with a third case kept, the rule stays conditional and the change is the case's
    before3 = {PAIR: ("conditional", (), {"can_be_normal_summoned": ("kept", ()),
                                          "cannot_be_normal_summoned": ("lost", ()),
                                          "flip_summoned_this_turn": ("kept", ())})}
    flip = _conditioned("r-flip", "kept", "在反转召唤的回合", "principle", "2018-01-01")
    [change] = review(before3, compile_rules(flipped + [flip]))
    assert (change.change, change.case_id, change.old_verdict, change.new_verdict) == (
        "verdict", "can_be_normal_summoned", "kept", "lost")
    assert "in case can_be_normal_summoned: kept -> lost" in change.describe()


@pytest.mark.parametrize("condition, case", [
    ("如果是可以通常召唤的怪兽", "can_be_normal_summoned"),
    ("如果是特殊召唤怪兽", "cannot_be_normal_summoned"),
    ("在反转召唤的回合变成里侧表示再反转", "flip_summoned_this_turn"),
    # the quoted effect text names a Flip Summon too: it is the effect's words, not the case
    ("『这张卡在召唤·反转召唤·特殊召唤的回合不能攻击』的怪兽在召唤·特殊召唤的回合变成里侧", "normal_or_special_summoned_this_turn"),
    ("对于「神影依·米德拉什」等效果", "counts_from_activation"),
    ("如果是融合怪兽", None),
    # negated or other words name no case (or not the one a substring would give)
    ("如果是不可以通常召唤的怪兽", None),
    ("如果不是可以通常召唤的怪兽", None),
    ("如果是可以通常召唤的怪兽以外", None),
    ("从额外卡组特殊召唤怪兽的场合", None),
    ("如果不是在反转召唤的回合", None),
    ("在召唤·反转召唤的回合", None),
    ("如果是不能通常召唤的怪兽", "cannot_be_normal_summoned"),
])
def test_a_condition_belongs_to_the_case_its_words_name(condition, case):
    found = case_of(condition)
    assert (found["id"] if found else None) == case


def test_conditions_that_split_by_case_give_each_case_its_verdict():
    kept = Statement("summoned_by_own_procedure", "temp_banish", "kept", "如果是特殊召唤怪兽", reading="principle")
    lost = Statement("summoned_by_own_procedure", "temp_banish", "lost", "如果是可以通常召唤的怪兽", reading="principle")
    records = [Record("r1", "t", 0, 0, ("出场方式",), "principle", "", "current", "a", "a", statements=[kept]),
               Record("r2", "t", 1, 0, ("出场方式",), "principle", "", "current", "b", "b", statements=[lost])]
    [rule] = [r for r in compile_rules(records) if r.info_kind == "summoned_by_own_procedure"
              and r.event == "temp_banish"]
    assert rule.verdict == "conditional"
    assert [(c.case_id, c.fact, c.values, c.verdict, c.record_ids) for c in rule.cases] == [
        ("can_be_normal_summoned", "can_normal_summon", (True,), "lost", ("r2",)),
        ("cannot_be_normal_summoned", "can_normal_summon", (False,), "kept", ("r1",))]


def test_review_lists_changed_disputed_and_settled_rules():
    rules = {(r.info_kind, r.event): r for r in compile_rules([PRINCIPLE, _ruling("r-x", "lost", "2025-06-01",
                                                                                    "case")])}
    before = {PAIR: ("lost", ()), ("counters", "face_down"): ("unknown", ())}
    [change] = review(before, list(rules.values()))
    assert (change.change, change.old_verdict, change.new_verdict) == ("verdict", "lost", "kept")
    [change] = review({PAIR: ("kept", ())}, list(rules.values()))
    assert (change.change, change.record_ids) == ("disputed", ("r-x",))
    settled = compile_rules([PRINCIPLE])
    [change] = review({PAIR: ("kept", ("r-x",))}, settled)
    assert change.change == "settled"
    assert review({}, settled) == []  # a first build has nothing to review


# --------------------------------------------------------------------------- end to end, pages of our own

def _page(title: str, lines: list[str]) -> str:
    body = "".join(f'<div class="line">{line}</div>' for line in lines)
    return (f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><h2>裁定</h2>"
            f'<div class="line-block">{body}</div></main></body></html>')


# --------------------------------------------------------------------------- the bundled corpus
