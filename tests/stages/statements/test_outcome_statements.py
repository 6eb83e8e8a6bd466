"""Statements read from what became of an effect (issue 13): outcome words
(仍然 / 不能再), abilities (可以发动) and freedoms (可以攻击) with their
polarity, continuity conditions, cases, exceptions, history, resolution-time
flips. Every word list of schema/retention_terms.json involved has a case
here, most of them in wordings the bundled pages do not use."""

from __future__ import annotations

import json

import pytest

from pipeline import schema
from pipeline.compile import compile_rules
from pipeline.extract import extract
from pipeline.page import Block, Line, Page
from pipeline.schema import info_kinds
from pipeline.schematerms import expand_alternatives

TOPIC = "里侧·一时除外"


def records(lines: list[str], heading: str, example_after: int | None = None):
    texts = list(lines)
    if example_after is not None:
        texts.insert(example_after, "例：")
    page = Page("p", "zh", "Hans", "CN", "", [Block(0, (TOPIC, heading), [Line(t) for t in texts])])
    return extract(page, info_kinds())


def said(text: str, heading: str) -> set[tuple[str, str, str]]:
    [record] = records([text], heading)
    return {(s.info_kind, s.event, s.verdict) for s in record.statements}


@pytest.mark.parametrize("text, heading, expected", [
    # outcomes: the effect still works (kept) / works no more (lost); the kind is the one named
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后仍然要在结束阶段发动②效果。", "用何出场",
     {("summoned_by_own_procedure", "temp_banish", "kept")}),
    ("自身①的方法特殊召唤的「甲」变成里侧表示后再反转，不能再发动②效果。", "用何出场",
     {("summoned_by_own_procedure", "face_down", "lost")}),
    # no kind named: the section's default
    ("「乙」为素材S召唤的「甲」被一时除外后，①效果不会再适用。", "用何出场",
     {("summon_materials", "temp_banish", "lost")}),
])
def test_outcome_words_show_kept_or_lost(text, heading, expected):
    assert said(text, heading) == expected


@pytest.mark.parametrize("text, heading, expected", [
    # an effect the information enables: able = kept, unable = lost
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后被破坏的场合，可以发动②效果。", "用何出场",
     {("summoned_by_own_procedure", "temp_banish", "kept")}),
    ("自身①的方法特殊召唤的「甲」变成里侧表示，之后被破坏的场合不能发动效果。", "用何出场",
     {("summoned_by_own_procedure", "face_down", "lost")}),
    # a restriction (restricting_kinds): able = the restriction is lost
    ("「甲」的效果适用后，那只怪兽变成里侧表示的场合，可以发动效果。", "持续取对象",
     {("continuous_target_link", "face_down", "lost")}),
    ("「甲」的效果适用后，那只怪兽变成里侧表示的场合，不能发动效果。", "持续取对象",
     {("continuous_target_link", "face_down", "kept")}),
])
def test_abilities_take_their_polarity_from_the_kind(text, heading, expected):
    assert said(text, heading) == expected


def test_an_ability_counts_only_for_the_monsters_own_effect():
    """``不能发动魔法·陷阱卡``: no ``效果`` after it (ability_object)."""
    text = "「甲」的效果适用的怪兽被一时除外后回到场上的场合，不能发动魔法·陷阱卡。"
    assert said(text, "添加buff") == set()


@pytest.mark.parametrize("text, heading", [
    ("当回合召唤的「甲」被一时除外，回到场上后对方仍然不能发动效果。", "何时出场"),
    ("当回合召唤的「甲」被一时除外，回到场上后对方可以发动「乙」的效果。", "何时出场"),
    ("当回合召唤的「甲」被一时除外，回到场上后双方都不能发动效果。", "何时出场"),
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后对方不能发动效果。", "用何出场"),
    ("当回合召唤的「甲」被一时除外，回到场上后对方不能改变表示形式。", "表示形式"),
])
def test_what_another_player_can_do_shows_nothing(text, heading):
    """An ability or freedom after one of ``other_actors`` (对方, 双方) is not the monster's."""
    assert said(text, heading) == set()


@pytest.mark.parametrize("text, expected", [
    # the ability word after 仍然 says which way (仍然 only adds "still")
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后仍然不能发动②效果。", "lost"),
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后依然不能发动②效果。", "lost"),
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后仍然可以发动②效果。", "kept"),
    # 可以再次 is an ability: for an effect the kind enables, able again = kept
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后可以再次发动②效果。", "kept"),
])
def test_an_adverb_yields_to_the_ability_word_after_it(text, expected):
    assert said(text, "用何出场") == {("summoned_by_own_procedure", "temp_banish", expected)}


@pytest.mark.parametrize("text", [
    "当回合召唤的「甲」被一时除外，正常地回到场上，但不能发动①效果。",  # 正常地: no kind after it
    "当回合召唤的「甲」被一时除外，也要等到结束阶段才回到场上，之后不能发动①效果。",  # 也要: likewise
])
def test_an_adverb_needing_a_kind_after_it_is_no_outcome_alone(text):
    assert said(text, "何时出场") == {("summoned_this_turn", "temp_banish", "lost")}


@pytest.mark.parametrize("text, heading, expected", [
    ("和「甲」战斗过的「乙」变成里侧表示后，可以改变表示形式。", "攻击过·战斗过·战斗破坏怪兽",
     {("battled", "face_down", "lost")}),
    # still bound through both events the case names
    ("「甲」的效果的对象怪兽变成里侧表示，翻开后也不能攻击。", "持续取对象",
     {("continuous_target_link", "face_down", "kept"), ("continuous_target_link", "flip_face_up", "kept")}),
    # a flip itself frees a monster to attack: that shows nothing
    ("「甲」的效果夺取控制权的怪兽翻开的场合，可以攻击。", "控制权", set()),
    # a freedom needs a named kind or a restricting default (用何出场's summon_materials is neither)
    ("「甲」的效果把怪兽盖放后，再被一时除外的场合，那个怪兽可以改变表示形式了。", "用何出场", set()),
])
def test_freedoms_show_a_restriction_lost_or_kept(text, heading, expected):
    assert said(text, heading) == expected


@pytest.mark.parametrize("text", [
    "当回合召唤的「甲」不需要持续在场上表侧表示，也可以发动①效果。",  # negated: not required
    "「甲」持续表侧表示存在期间，对方不能发动效果。",  # no kind named: not the section's default
    "如果自身①的方法特殊召唤的「甲」持续在场上表侧表示，可以发动②效果。",  # hypothetical
])
def test_continuity_negated_unnamed_or_hypothetical_states_nothing_lost(text):
    assert not any(verdict == "lost" for _, _, verdict in said(text, "何时出场"))


def test_continuity_means_lost_on_face_down_and_temp_banish():
    text = "自身②的方法特殊召唤的「甲」在到下次的准备阶段持续在场上表侧表示的场合才会发动③效果。"
    assert said(text, "何时出场") == {("summoned_by_own_procedure", "face_down", "lost"),
                                   ("summoned_by_own_procedure", "temp_banish", "lost")}


def test_a_case_separator_ends_the_events_of_the_case_before():
    text = ("自身记述的召唤方法召唤的「甲」变成里侧表示再翻开的场合，结束阶段不会发动效果；"
            "被一时除外再回到场上的场合，结束阶段仍然会发动效果。")
    assert said(text, "用何出场") == {("summoned_by_own_procedure", "face_down", "lost"),
                                  ("summoned_by_own_procedure", "temp_banish", "kept")}


def test_an_event_describing_the_past_is_not_the_event():
    """当回合反转的怪兽 is a flipped monster, not a flip; 变成里侧表示的场合 is the case itself."""
    assert said("当回合反转的怪兽持有『反转的回合』发动的效果时，被一时除外的场合，回到场上后不能再发动这类效果。",
                "何时出场") == {("flipped", "temp_banish", "lost")}
    assert said("「甲」用②效果召唤后，变成里侧表示的场合③效果不再适用。", "用何出场") == {
        ("summoned_by_own_procedure", "face_down", "lost")}


def test_a_resolution_time_case_speaks_only_of_its_later_flip():
    text = "「甲」的效果处理时，对象怪兽变成里侧表示的场合，仍然适用，那个怪兽之后反转成表侧表示的场合仍然不能攻击。"
    assert said(text, "持续取对象") == {("continuous_target_link", "flip_face_up", "kept")}
    # an effect that never applied loses nothing on the flip
    assert said("「甲」的效果处理时，对象怪兽变成里侧表示的场合，之后再反转，效果也不适用。", "持续取对象") == set()


@pytest.mark.parametrize("text, heading", [
    ("「甲」的效果适用的怪兽被破坏离场的场合，这个效果不再适用。", "添加buff"),  # neutral: destroyed, not banished
    ("当回合召唤的「甲」被一时除外的场合，只有满足条件才能发动效果。", "何时出场"),  # neutral: a requirement
])
def test_neutral_words_are_neither_event_nor_outcome(text, heading):
    assert said(text, heading) == set()


def test_a_generic_kind_right_before_its_verdict_is_read():
    """攻击力 is generic (also just describes a monster); right before 复原 it is what is lost."""
    text = "自身记述的召唤方法特殊召唤的「甲」被一时除外的场合，回到场上后攻击力复原。"
    assert said(text, "用何出场") == {("stat_changes", "temp_banish", "lost")}


def test_a_verdict_word_outranks_an_outcome_word():
    text = "「甲」的效果永久转移控制权的怪兽变成里侧的场合，不会再因这个效果送去墓地，不会归还控制权。"
    assert said(text, "控制权") == {("control_permanent", "face_down", "kept")}


def logged(text: str) -> set[tuple[str, str, str]]:
    """What ``text`` states as a line of a yearly log (no retention topic:
    the ruling must name its kind itself)."""
    page = Page("p", "zh", "Hans", "CN", "", [Block(0, ("2023", "23/11", "11/23"), [Line(text)])])
    [record] = extract(page, info_kinds())
    return {(s.info_kind, s.event, s.verdict) for s in record.statements}


@pytest.mark.parametrize("text, expected", [
    # the ruling's subject names a specific kind before its event: the outcome speaks of it
    ("自身①的方法特殊召唤的「甲」被一时除外，回到场上后仍然可以发动②效果。",
     {("summoned_by_own_procedure", "temp_banish", "kept")}),
    ("用自身记述的方法特殊召唤的「甲」被一时除外的场合，①效果不再适用。",
     {("summoned_by_own_procedure", "temp_banish", "lost")}),
    ("以自身记载的方法特殊召唤的「甲」变成里侧表示的场合，得到的效果丢失。",
     {("summoned_by_own_procedure", "face_down", "lost")}),
    ("通过自身的②效果特殊召唤的「甲」，因「乙」等效果变成里侧表示后，再变成表侧表示的场合，那个③效果也不再适用；"
     "因「丙」等效果被一时除外的场合，回到场上后③效果继续适用。",
     {("summoned_by_own_procedure", "face_down", "lost"), ("summoned_by_own_procedure", "temp_banish", "kept")}),
    ("用「甲」为素材连接召唤的「乙」被一时除外后，②效果不能再发动。", {("summon_materials", "temp_banish", "lost")}),
    ("「甲」作素材X召唤的怪兽被一时除外再回到场上，然后被对方的效果破坏的场合，仍然可以发动效果。",
     {("summon_materials", "temp_banish", "kept")}),
    ("在特殊召唤的回合的结束阶段发动了③效果后，因卡片效果被一时除外又在这个结束阶段内回到场上的场合，不能再次发动③效果。",
     {("summoned_this_turn", "temp_banish", "lost")}),
    # a kind the outcome names right after it: that one
    ("通过自身②效果特殊召唤在对方场上的「甲」被一时除外，回到对方场上后，不会再归还控制权。",
     {("delayed_control_transfer", "temp_banish", "lost")}),
    # a granted ability after it yields to a subject named by how it was summoned (subject_over_object)
    ("「甲」怪兽的效果特殊召唤的「乙」被一时除外后，「乙」仍然可以作2次攻击。",
     {("summoned_by_own_procedure", "temp_banish", "kept")}),
    # the object of a verdict word is what is kept or lost
    ("「甲」的效果特殊召唤的怪兽变成里侧表示的场合，就不是『这个效果特殊召唤的怪兽』。",
     {("summoned_by_specific_effect", "face_down", "lost")}),
    # a generic kind named as information (information_nouns) is what the ruling speaks of
    ("『攻击过』的情报在变成里侧表示后不会丢失，被一时除外后丢失。",
     {("attack_declared", "face_down", "kept"), ("attack_declared", "temp_banish", "lost")}),
    ("战斗破坏了怪兽的情报在变成里侧后丢失，一时除外后不丢失。",
     {("destroyed_by_battle", "face_down", "lost"), ("destroyed_by_battle", "temp_banish", "kept")}),
    ("「甲」攻击后变成里侧再反转的场合，由于攻击过的事实不会因变成里侧消失，仍然不能发动①效果。",
     {("attack_declared", "face_down", "kept")}),
    # a negator before the cause, however far back in the clause
    ("『攻击过』的事实不会因为变成里侧表示而消失。", {("attack_declared", "face_down", "kept")}),
    ("攻击过的情报因为变成里侧表示而丢失。", {("attack_declared", "face_down", "lost")}),
    ("所有『攻击过』的情报在变成里侧表示后都会丢失。", {("attack_declared", "face_down", "lost")}),
])
def test_a_logged_ruling_states_what_it_names_itself(text, expected):
    assert logged(text) == expected


@pytest.mark.parametrize("text", [
    # only generic kinds (特殊召唤的怪兽, 攻击力) before the event: nothing says whose information
    "特殊召唤的「甲」被一时除外，回到场上后仍然可以发动②效果。",
    "攻击过的「甲」变成里侧再反转，②效果可以发动。",
    # the kind comes after the event: it is not what the ruling is about
    "变成表侧表示的「甲」为素材连接召唤「乙」的场合，也可以发动「甲」的②效果。",
    # the clause names its own (generic) kind before the verdict: not the subject's
    "自身①的方法特殊召唤的「甲」被一时除外，回到场上后原本攻击力复原。",
    # a question under review states nothing
    "用自身效果召唤的「甲」在被一时除外后回到场上，是否还能特殊胜利，调整中。",
    # no event
    "自身①的方法特殊召唤的「甲」不能再发动②效果。",
    # information named inside a noun phrase: the verdict is another noun's
    "持有『攻击过』的情报的怪兽被一时除外的场合，那只怪兽装备的卡的效果不再适用。",
    "有攻击过的事实的怪兽变成里侧表示的场合，「甲」的效果不适用。",
    "没有『攻击过』的情报的怪兽变成里侧表示的场合，不会丢失任何东西。",
])
def test_a_logged_ruling_that_names_no_kind_of_its_own_states_nothing(text):
    assert logged(text) == set()


def logged_lines(*lines: str) -> list[set[tuple[str, str, str]]]:
    """What each of ``lines`` states as a line of one block of a yearly log."""
    page = Page("p", "zh", "Hans", "CN", "", [Block(0, ("2023", "23/11", "11/23"), [Line(t) for t in lines])])
    return [{(s.info_kind, s.event, s.verdict) for s in r.statements} for r in extract(page, info_kinds())]


def test_a_logged_ruling_that_names_no_kind_goes_on_with_the_ruling_just_before():
    assert logged_lines("『这个回合召唤·特殊召唤』的情报即使变成里侧也不会丢失。", "被一时除外的场合丢失。",
                        "与此无关的说明。", "被一时除外的场合丢失。") == [
        {("summoned_this_turn", "face_down", "kept")}, {("summoned_this_turn", "temp_banish", "lost")}, set(),
        set()]  # one ruling back only: the unrelated line between ends it


@pytest.mark.parametrize("second", [
    "「乙」被一时除外的场合丢失。",  # a card of its own: another ruling
    "攻击力在被一时除外后丢失。",  # a kind of its own (a generic one): not the one before
    "魔法·陷阱卡被盖放的场合，那张卡的效果不适用。",  # a noun of its own takes the verdict
    "这张卡被一时除外的场合，装备卡会被破坏，这个效果不适用。",
    "场地魔法被一时除外的话，效果不再适用。",
    "变成里侧表示的怪兽的效果无效化的场合，那个效果仍然适用。",
    "被一时除外的场合，丢失还是不丢失？",  # a question
])
def test_a_logged_ruling_with_a_card_or_kind_of_its_own_does_not_go_on_with_the_one_before(second):
    assert logged_lines("『这个回合召唤·特殊召唤』的情报即使变成里侧也不会丢失。", second)[1] == set()


def test_a_numbered_topic_heading_is_still_the_topic():
    """A site that numbers its headings (``3.1 里侧·一时除外`` / ``3.1.2 用何出场``)
    keeps the section defaults of the topic."""
    text = "「甲」被一时除外，回到场上后②效果继续适用。"  # no kind named: the section's default
    for section in ((TOPIC, "用何出场"), (f"3.1 {TOPIC}", "3.1.2 用何出场"), (f"一、{TOPIC}", "（二）用何出场")):
        page = Page("p", "zh", "Hans", "CN", "", [Block(0, section, [Line(text)])])
        [record] = extract(page, info_kinds())
        assert {(s.info_kind, s.event, s.verdict) for s in record.statements} == {
            ("summon_materials", "temp_banish", "kept")}, section


def test_two_cases_in_one_ruling_make_a_conditional_rule():
    text = ("『这张卡在召唤·特殊召唤的回合不能攻击』的怪兽在召唤·特殊召唤的回合变成里侧表示再反转，仍然不能攻击；"
            "在反转召唤的回合变成里侧表示再反转，可以攻击。")
    [record] = records([text], "何时出场")
    got = {(s.verdict, s.condition) for s in record.statements if s.event == "face_down"}
    assert got == {("kept", "『这张卡在召唤·特殊召唤的回合不能攻击』的怪兽在召唤·特殊召唤的回合变成里侧表示再反转"),
                   ("lost", "在反转召唤的回合变成里侧表示再反转")}
    [rule] = [r for r in compile_rules([record]) if (r.info_kind, r.event) == ("summoned_this_turn", "face_down")]
    assert rule.verdict == "conditional" and "在反转召唤的回合" in rule.condition


def test_a_but_sentence_about_another_event_is_no_exception():
    """但是 before a ruling on the other event is a ruling like any other:
    the later one wins."""
    recs = records(["P召唤的怪兽变成里侧后，不再是P召唤的怪兽。但是，被一时除外后，还是P召唤的怪兽。16/1/8",
                    "P召唤的怪兽被一时除外后，不再是P召唤的怪兽。10/1/1"], "出场方式")
    assert {s.basis for r in recs for s in r.statements} == {"stated"}
    [rule] = [r for r in compile_rules(recs) if (r.info_kind, r.event) == ("pendulum_summoned", "temp_banish")]
    assert (rule.verdict, rule.changed_on) == ("kept", "2016-01-08")


def test_a_condition_opener_needs_what_it_conditions():
    [record] = records(["对于这个问题，当回合召唤的怪兽被一时除外的场合丢失。"], "何时出场")
    assert [(s.info_kind, s.verdict, s.condition) for s in record.statements] == [("summoned_this_turn", "lost", "")]


def test_an_exception_never_overturns_the_rule():
    """但是… states a case apart (basis exception): listed among the conflicts,
    even when dated later; it makes no change of ruling."""
    principle = "上级·融合·S召唤的怪兽被一时除外后，失去用何怪兽召唤的情报。"
    example = "用「甲」为素材S召唤的「乙」被一时除外后，②效果不能再发动。18/7/13"
    exception = "但是，被解放的卡和素材等本身没有失去联系，被一时除外后的S怪兽使用「同调解除」，还能特殊召唤S素材。19/9/2"
    recs = records([principle, example, exception], "用何出场")
    assert [s.basis for s in recs[2].statements] == ["exception"]
    [rule] = [r for r in compile_rules(recs) if (r.info_kind, r.event) == ("summon_materials", "temp_banish")]
    assert (rule.verdict, rule.changed_on) == ("lost", None)
    assert rule.conflicts == [{"verdict": "kept", "record_ids": [recs[2].id], "latest_date": "2019-09-02"}]


@pytest.mark.parametrize("key, value, message", [
    ("outcomes", {"kept": ["仍然"], "maybe": ["也许"]}, "outcomes.maybe is not kept or lost"),
    ("abilities", {"able": []}, "must be a non-empty list"),
    ("freedoms", {"free": ["可以攻击"], "loose": ["x"]}, "freedoms.loose is not free or bound"),
    ("restricting_kinds", ["pledge"], "restricting_kinds[0] is not an info kind"),
    ("generic_kinds", ["summoned"], "generic_kinds[0] is not an info kind"),
    ("continuity_events", ["leave_field"], "continuity_events[0] is not an event"),
    ("ability_object", "", "ability_object must be a non-empty string"),
    ("ability_object_window", -1, "ability_object_window must be a whole number"),
    ("case_nouns", [], "case_nouns must be a non-empty list"),
    ("exception_openers", None, "exception_openers must be a list"),
    ("neutral", [""], "neutral must be a non-empty list of non-empty strings"),
    ("other_actors", "对方", "other_actors must be a list"),
    ("outcome_objects", [], "outcome_objects must be a non-empty list"),
    ("scheduled_kinds", {"delayed_control_transfer": ["归还"]}, "'归还' is not a term of verdicts.kept"),
    ("scheduled_kinds", {"delayed_control": ["不会归还控制权"]}, "scheduled_kinds.delayed_control is not an info kind"),
])
def test_the_outcome_word_lists_are_checked(monkeypatch, key, value, message):
    real = schema._json

    def edited(name):
        data = real(name)
        if name == "retention_terms.json":
            data = json.loads(json.dumps(data))
            data[key] = value
        return data

    monkeypatch.setattr(schema, "_json", edited)
    schema.retention_terms.cache_clear()
    try:
        with pytest.raises(schema.SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
            schema.retention_terms()
    finally:
        schema.retention_terms.cache_clear()


# --------------------------------------------------------------------------- kinds added for issue 13

def test_a_scheduled_transfer_that_will_not_happen_is_lost():
    """For control taken, 不会归还控制权 says control stays (kept); for a
    delayed transfer of control (scheduled_kinds) it says the transfer will
    not happen: lost."""
    assert said("「甲」的效果夺取了控制权的怪兽被一时除外，回到场上后不会归还控制权。", "控制权") == set()  # no kind named
    assert said("记述了延时转移控制权的「甲」被一时除外，回到场上后不会归还控制权。", "控制权") == {
        ("delayed_control_transfer", "temp_banish", "lost")}
    assert said("通过「甲」的效果永久转移控制权的怪兽被一时除外，回到场上后不会归还控制权。", "控制权") == {
        ("control_permanent", "temp_banish", "kept")}
    assert said("那只怪兽被一时除外，回到场上后不会再转移控制权。", "控制权") == {
        ("delayed_control_transfer", "temp_banish", "lost")}  # the kind named right after the outcome word


def test_counts_kept_by_two_sorts_of_effect_make_a_conditional_rule():
    lines = ["对于「甲」等效果，变成里侧表示或离场的场合，计数归零。", "对于「乙」等效果，变成里侧表示或离场的场合，不影响计数。"]
    recs = records(lines, "计数")
    assert [{(s.info_kind, s.event, s.verdict, s.condition) for s in r.statements} for r in recs] == [
        {("effect_count", "face_down", "lost", "对于「甲」等效果"), ("effect_count", "temp_banish", "lost", "对于「甲」等效果")},
        {("effect_count", "face_down", "kept", "对于「乙」等效果"), ("effect_count", "temp_banish", "kept", "对于「乙」等效果")}]
    rules = {(r.info_kind, r.event): r for r in compile_rules(recs)}
    assert rules[("effect_count", "face_down")].verdict == "conditional"


def test_information_an_effect_gave_that_is_not_a_summon_has_a_kind_of_its_own():
    text = "『这个效果变成里侧守备表示的这张卡·怪兽』等，其他『这个效果○○的这张卡·怪兽』等情报也在变成里侧或被一时除外后丢失。"
    assert said(text, "用何出场") == {("affected_by_specific_effect", "face_down", "lost"),
                                  ("affected_by_specific_effect", "temp_banish", "lost")}


def test_the_scorer_counts_a_candidate_kind_once_the_vocabulary_has_it():
    from pipeline.evaluation import _triples
    gold = [{"info_kind": "other:effect_count", "event": "face_down", "verdict": "lost"},
            {"info_kind": "other:not_a_kind_yet", "event": "face_down", "verdict": "lost"}]
    assert _triples(gold, info_kinds()) == {("effect_count", "face_down", "lost")}


def test_a_term_writes_its_spellings_as_alternatives(monkeypatch):
    """``{a|b|}`` in a term of schema/retention_terms.json is a, b or
    nothing; an unmatched brace is an error naming the term."""
    assert expand_alternatives("自身{记述的|}{①|②|}方法") == [
        "自身记述的①方法", "自身记述的②方法", "自身记述的方法", "自身①方法", "自身②方法", "自身方法"]
    assert expand_alternatives("一时除外") == ["一时除外"]
    kinds = schema.retention_terms()["kinds"]["summoned_by_own_procedure"]
    assert {"自身记述的方法特殊召唤", "自身记载的②的召唤方法召唤", "自身的④效果特殊召唤"} <= set(kinds)
    assert not any("{" in k or "|" in k for k in kinds)
    real = schema._json

    def edited(name):
        data = real(name)
        if name == "retention_terms.json":
            data = json.loads(json.dumps(data))
            data["kinds"]["counters"] = ["指示物", "自身{方法"]
        return data

    monkeypatch.setattr(schema, "_json", edited)
    schema.retention_terms.cache_clear()
    try:
        with pytest.raises(schema.SchemaError, match=r"kinds\.counters\[1\] '自身\{方法' has an unmatched brace"):
            schema.retention_terms()
    finally:
        schema.retention_terms.cache_clear()


# --------------------------------------------------------------------------- rulesets

def test_an_ocg_ruling_decides_over_any_ruling_of_another_ruleset():
    from dataclasses import replace

    from pipeline.compile import other_rulesets
    from pipeline.corpus import Source
    from pipeline.records import Statement

    [ocg] = records(["反转召唤的怪兽被一时除外后，不再是反转召唤的怪兽。"], "出场方式")
    edison = [replace(ocg, id=f"en{i}", source_id="edison", norm=f"Edison ruling {i}",
                      statements=[Statement("flip_summoned", "temp_banish", "kept", reading="principle")])
              for i in range(3)]

    def source(sid, language, url):
        return Source(sid, url, language, "", "", "markdown", "x", "p", False, "", None)
    sources = [source("case", "zh", "https://example.org/zh"), source("edison", "en", "https://edisonrul.ing/cards/i"),
               source("ocg-site", "en", "https://www.db.yugioh-card.com/yugiohdb/faq")]
    other = other_rulesets(sources)
    assert other == frozenset({"edison"})
    pair = ("flip_summoned", "temp_banish")
    [rule] = [r for r in compile_rules([ocg, *edison], other=other) if (r.info_kind, r.event) == pair]
    assert rule.verdict == "lost" and rule.conflicts[0]["record_ids"] == ["en0", "en1", "en2"]
    [counted] = [r for r in compile_rules([ocg, *edison]) if (r.info_kind, r.event) == pair]
    assert counted.verdict == "kept"  # without rulesets the three principles outnumber the one
    dated = replace(edison[0], statements=[Statement("flip_summoned", "temp_banish", "kept", dates=("2020-01-01",))])
    [later] = [r for r in compile_rules([ocg, dated], other=other) if (r.info_kind, r.event) == pair]
    assert later.verdict == "lost" and later.conflicts[0]["latest_date"] == "2020-01-01"  # not even a later one
    [alone] = [r for r in compile_rules([dated], other=other) if (r.info_kind, r.event) == pair]
    assert alone.verdict == "kept"  # where the OCG is silent, another ruleset's ruling decides
    # an exception (但是…) never decides, even the OCG's against another ruleset's rule
    exception = replace(ocg, statements=[Statement("flip_summoned", "temp_banish", "kept", basis="exception",
                                                   dates=("2020-01-01",))])
    rule = replace(edison[0], statements=[Statement("flip_summoned", "temp_banish", "lost")])
    [ruled] = [r for r in compile_rules([exception, rule], other=other) if (r.info_kind, r.event) == pair]
    assert ruled.verdict == "lost" and [c["verdict"] for c in ruled.conflicts] == ["kept"]
