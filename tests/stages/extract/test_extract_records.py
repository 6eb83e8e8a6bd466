import json

import pytest

from pipeline.compile import info_kinds
from pipeline.extract import extract
from pipeline.segment import record_id, split_sentences
from pipeline.chinese import canonical_text
from pipeline.page import Block, Line, Page
from conftest import CASES

CASES = json.loads((CASES / "statements.json").read_text(encoding="utf-8"))


def page_of(lines, section, script="Hans", region="CN", language="zh", sid="case"):
    block = Block(0, tuple(section), [Line(t) for t in lines])
    return Page(sid, language, script, region, "", [block])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_statements(case):
    script, region = case.get("script", "Hans"), case.get("region", "CN")
    section = [canonical_text(s, "zh", script, region) for s in case["section"]]
    records = extract(page_of(case["lines"], section, script, region), info_kinds())
    got = {(s.info_kind, s.event, s.verdict) + ((s.condition,) if s.condition else ())
           for r in records for s in r.statements if s.basis == "stated"}
    if "expect_count" in case:
        assert len(got) == case["expect_count"]
        assert {tuple(x) for x in case["expect_some"]} <= got
    else:
        assert got == {tuple(x) for x in case["expect"]}


def test_examples_support_their_principle_with_dates():
    lines = ["S召唤的怪兽变成里侧或被一时除外后，仍然是S召唤的怪兽。16/1/8", "例：",
             "「幻龙星-嘲风」变成里侧后，被卡的效果破坏或被战斗破坏送去墓地时，可以发动②效果。15/2/13"]
    principle, example = extract(page_of(lines, ["里侧·一时除外", "出场方式"]), info_kinds())
    assert (principle.role, example.role) == ("principle", "example")
    assert [(s.info_kind, s.event, s.verdict, s.basis, s.principle_id) for s in example.statements] == [
        ("synchro_summoned", "face_down", "kept", "example", principle.id)]
    assert [d.iso for d in example.dates] == ["2015-02-13"]
    assert [c.name for c in example.cards] == ["幻龙星-嘲风"]


def test_sentences_keep_their_trailing_dates_and_parentheses():
    text = "被一时除外后，仍然当作。（再变成表侧表示的场合也不是。）22/4/23 下一句。17/3/24 17/3/24"
    spans = [text[a:b] for a, b in split_sentences(text, "zh")]
    assert spans == ["被一时除外后，仍然当作。（再变成表侧表示的场合也不是。）22/4/23", "下一句。17/3/24 17/3/24"]


def test_record_ids_are_stable_and_content_based():
    a = record_id("src", ("t", "s"), "文本", 1)
    assert a == record_id("src", ("t", "s"), "文本", 1)
    assert a != record_id("src", ("t", "s"), "文本。", 1) and a != record_id("src", ("t",), "文本", 1)


def test_yearly_log_channels_and_heading_dates():
    page = Page("log", "zh", "Hans", "CN", "", [
        Block(0, ("2019", "19/01", "1/7"), [Line("邮件："), Line("「No.66 霸键甲虫」的效果不适用。"),
                                            Line("数据库："), Line("「儚无水木」的效果不能在结束阶段发动。19/1/11")])])
    r1, r2 = extract(page, info_kinds())
    assert (r1.channel, [d.iso for d in r1.dates], r1.date_from_heading) == ("email", ["2019-01-07"], True)
    assert (r2.channel, [d.iso for d in r2.dates], r2.date_from_heading) == ("database", ["2019-01-11"], False)


def test_struck_part_of_a_ruling_is_withdrawn_and_a_wholly_struck_ruling_superseded():
    first = "旧的裁定，变成里侧后，仍然是S召唤的怪兽。15/1/1"
    partly = Line(first + " 新的裁定。", struck=((0, len(first)),))
    wholly = Line("不再是S召唤的怪兽。", struck=((0, 10),))
    page = Page("p", "zh", "Hans", "CN", "", [Block(0, ("里侧·一时除外", "出场方式"), [partly]),
                                              Block(1, ("里侧·一时除外", "出场方式"), [wholly])])
    current, old = extract(page, info_kinds())
    assert (current.status, current.withdrawn, current.text) == ("current", first, first + " 新的裁定。")
    assert [(x.info_kind, x.verdict, x.basis) for x in current.statements] == [
        ("synchro_summoned", "kept", "withdrawn")]  # history, never a verdict
    assert (old.status, old.withdrawn) == ("superseded", "")


def test_pending_is_under_review_and_under_review_confirmed_is_an_answer():
    page = Page("log", "zh", "Hans", "CN", "", [
        Block(0, ("2021", "21/01", "1/6"), [Line("「甲」的①效果可以发动几次，调整中。"),
                                            Line("调整中确认："), Line("「乙」的效果可以发动。"),
                                            Line("「丙」的效果，調整中確認。")])])
    pending, answer, confirmed = extract(page, info_kinds())
    assert pending.status == "pending"
    assert (answer.channel, answer.status) == ("under_review_confirmed", "current")
    assert confirmed.status == "current"


def test_english_procedural_rules_from_seed_000_sentence():
    lines = ['Exception #1: You cannot change the battle position of a monster if it declared an attack that turn (even if the attack was negated).']
    [record] = extract(page_of(lines, ["Battle Position"], "Latn", "", "en"), info_kinds())
    assert record.procedural == ["position.not_after_attack_declared"]
