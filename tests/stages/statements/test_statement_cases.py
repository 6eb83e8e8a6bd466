"""Statements are what their ruling says (issue 13): negation, no fan-out of
a general sentence, examples that support only what they show, re-publication
days, rules that cannot apply, and the ruling-level gold score."""

from __future__ import annotations


import pytest

from pipeline.compile import compile_rules
from pipeline.extract import extract
from pipeline.page import Block, Line, Page
from pipeline.schema import info_kinds

SECTION = ("里侧·一时除外", "攻守计算")


def statements(lines: list[str], section=SECTION, example_after: int | None = None) -> list[set]:
    """Per record, its (kind, event, verdict) statements; lines from
    ``example_after`` on are examples (after a 例： label)."""
    texts = list(lines)
    if example_after is not None:
        texts.insert(example_after, "例：")
    page = Page("p", "zh", "Hans", "CN", "", [Block(0, section, [Line(t) for t in texts])])
    records = extract(page, info_kinds())
    return [{(s.info_kind, s.event, s.verdict) for s in r.statements if s.basis != "withdrawn"} for r in records]


@pytest.mark.parametrize("text, verdict", [
    ("上升的攻击力在变成里侧后不会复原。", "kept"),
    ("上升的攻击力在变成里侧后会复原。", "lost"),
    ("上升的攻击力在变成里侧后复原。", "lost"),
    ("上升的攻击力变成里侧后没有消失。", "kept"),
    ("上升的攻击力变成里侧后并未消失。", "kept"),
    ("上升的攻击力变成里侧后消失。", "lost"),
    ("上升的攻击力变成里侧后不会丢失。", "kept"),  # a verdict word with its own negation is not flipped
])
def test_negation_is_read_as_such(text, verdict):
    [got] = statements([text])
    assert got == {("stat_changes", "face_down", verdict)}


def test_a_sentence_about_every_kind_stays_on_its_ruling():
    principle = "反转等，里侧的卡片变成表侧的状况，不会丢失任何情报。"
    example = "「甲」的②效果发动后，因卡的效果变成里侧表示时，效果不再适用了。"
    first, second = statements([principle, example], section=("里侧·一时除外", "前言"), example_after=1)
    assert len(first) == len(info_kinds()) - 1 and ("link_summoned", "flip_face_up", "kept") not in first
    assert not any(event == "flip_face_up" for _, event, _ in second)  # not copied onto the example


def test_an_example_supports_only_what_it_shows():
    principle = "S召唤的怪兽变成里侧或被一时除外后，仍然是S召唤的怪兽。16/1/8"
    face_down_example = "「甲」变成里侧后，可以发动②效果。15/2/13"
    banish_example = "「乙」被一时除外后回到场上，可以发动①效果。"
    resolution = "「丙」的效果处理时变成里侧表示的场合，效果正常适用。"
    rows = statements([principle, face_down_example, banish_example, resolution],
                      section=("里侧·一时除外", "出场方式"), example_after=1)
    assert rows[1] == {("synchro_summoned", "face_down", "kept")}
    assert rows[2] == {("synchro_summoned", "temp_banish", "kept")}
    assert rows[3] == set()  # a case at resolution time shows no retained information


def test_a_republication_day_is_no_change_of_ruling():
    old = "P召唤的怪兽变成里侧后，仍然是P召唤的怪兽。14/3/21"
    republished = "P召唤的怪兽变成里侧后，不再是P召唤的怪兽。17/3/24"
    later = "P召唤的怪兽变成里侧后，不再是P召唤的怪兽。18/1/1"
    section = ("里侧·一时除外", "出场方式")

    def rule(lines):
        page = Page("p", "zh", "Hans", "CN", "", [Block(i, section, [Line(t)]) for i, t in enumerate(lines)])
        return next(r for r in compile_rules(extract(page, info_kinds()))
                    if (r.info_kind, r.event) == ("pendulum_summoned", "face_down"))

    assert rule([old, republished]).changed_on is None  # 17/3/24 re-published older rulings
    assert rule([old, later]).changed_on == "2018-01-01"


def test_a_clause_about_a_kind_the_section_does_not_treat_is_not_given_the_sections_kind():
    """Under 何时出场 (default summoned_this_turn), "仍然是「X」的效果特殊召唤的" speaks of how it was
    summoned, not of when: it must not become summoned_this_turn kept (it contradicted 不再持有何时出场的情报).
    What it says of being summoned by 甲's effect is kept: a card's own 『○○的效果特殊召唤的这张卡』
    is filed under summoned_by_own_procedure (like its own procedure, kept on a temporary banish;
    the summoner's 『这个效果特殊召唤的怪兽』 is summoned_by_specific_effect), and a kind named by
    words of its own is read in any topic section."""
    text = ("「甲」的效果特殊召唤的「乙」被一时除外，回到场上后仍然是「甲」的效果特殊召唤的，"
            "但不再持有何时出场的情报。24/5/30")
    [got] = statements([text], section=("里侧·一时除外", "何时出场"))
    assert got == {("summoned_this_turn", "temp_banish", "lost"), ("summoned_by_own_procedure", "temp_banish", "kept")}


# --------------------------------------------------------------------------- every page, every language

OTHER_PAGE = ("2021年", "8月")  # a yearly-log section: no retention topic, no section default


@pytest.mark.parametrize("text, expected", [
    # the kind is what the verdict keeps or loses: stated wherever the ruling stands
    ("从墓地特殊召唤的，因「亚空间物质传送装置」等效果被一时除外后回到场上的怪兽，仍然是从墓地特殊召唤的怪兽。21/8/27",
     {("summoned_from_location", "temp_banish", "kept")}),
    ("从额外卡组特殊召唤的怪兽变成里侧守备表示的场合，从这个时点起不再当作从额外卡组特殊召唤的怪兽。22/4/23",
     {("summoned_from_location", "face_down", "lost")}),
    ("这个回合发动了效果的怪兽，因卡的效果变成里侧表示后再反转成表侧表示的场合，不再当作这个回合发动过效果。",
     {("effect_activated", "face_down", "lost")}),
    # a kind only in the subject says nothing of that kind: the effect stops applying, not the summon
    ("X召唤的「No.39 希望皇 霍普」变成里侧表示后，「No.39 希望皇 霍普」的效果不再适用。", set()),
    # 「名推理」翻开: revealing cards is no flip outside the topic sections
    ("「名推理」翻开「灵兽」怪兽，等级是宣言的等级而送去墓地的场合，这个「灵兽」怪兽不当作特殊召唤过。", set()),
    # the materials, not the Xyz Summon: 为素材X召唤的信息 is summon_materials
    ("「我我我少女」为素材X召唤的「宝石骑士·珍珠」变成里侧表示后，失去用何怪兽为素材X召唤的信息。",
     {("summon_materials", "face_down", "lost")}),
    # negation outside the topic sections too
    ("融合召唤的怪兽，在被变成里侧表示后，并没有丢失融合召唤的怪兽的情报。", {("fusion_summoned", "face_down", "kept")}),
])
def test_rulings_outside_the_topic_sections_state_what_they_name(text, expected):
    assert statements([text], section=OTHER_PAGE) == [expected]


def english(lines: list[str], section=("Book of Moon", "Card Rulings")) -> list[set]:
    page = Page("en-page", "en", "Latn", "", "", [Block(0, section, [Line(t) for t in lines])])
    records = extract(page, info_kinds())
    return [{(s.info_kind, s.event, s.verdict) for s in r.statements} for r in records]


def test_english_lead_in_passes_event_and_verdict_to_its_list():
    got = english(["A monster flipped face-down remembers:",
                   "that it declared an attack this turn.",
                   "that it was Normal / Flip Summoned.",
                   "A monster flipped face-down forgets:",
                   "where it was Summoned from.",
                   "if it had been Flip Summoned.",
                   "If it is flipped face-down by this card, it is NOT banished.",
                   "that it declared an attack this turn."])
    assert got == [set(), {("attack_declared", "face_down", "kept")},
                   {("normal_summoned", "face_down", "kept"), ("flip_summoned", "face_down", "kept")},
                   set(), {("summoned_from_location", "face_down", "lost")},
                   {("flip_summoned", "face_down", "lost")}, set(),
                   set()]  # the list ended at a line naming its own event


IMT = ["A monster removed from play by this effect:",
       "returns to the field in the same Battle Position it was in when it left.",
       "is no longer affected by other (lingering) effects (ex: Summoner of Illusions, Limiter Removal).",
       "remembers it was Flip/Normal Summoned (ex: Temple of the Sun, Spirit monsters).",
       "does not remember that it declared an attack this turn."]


def test_an_english_lead_in_naming_how_a_monster_leaves_and_returns_states_temp_banish():
    got = english(IMT, section=("Interdimensional Matter Transporter", "Card Rulings"))
    assert got == [set(), set(), set(),
                   {("flip_summoned", "temp_banish", "kept"), ("normal_summoned", "temp_banish", "kept")},
                   {("attack_declared", "temp_banish", "lost")}]


@pytest.mark.parametrize("lines", [
    [line for line in IMT if not line.startswith("returns")],  # never said to come back: banished for good
    ["A monster banished by this effect:", "remembers it was Flip Summoned.", "A monster returns to the field:"],
    ["A monster removed from play by this effect:", "is Special Summoned again.", "remembers it was Flip Summoned."],
    ["A monster banished by this card:", "is not returned to the field.", "forgets it was Special Summoned."],
    ["A monster banished by this card:", "cannot return to the field.", "forgets it was Special Summoned."],
    ["A monster banished by this card:", "never returns to the field.", "forgets it was Special Summoned."],
])
def test_a_lead_in_naming_how_a_monster_leaves_states_nothing_unless_its_list_says_it_returns(lines):
    assert all(not statements for statements in english(lines))


def test_a_lead_in_naming_the_event_alone_lets_each_line_give_its_verdict():
    got = english(["A monster flipped face-down:", "remembers that it declared an attack this turn.",
                   "forgets where it was Summoned from.", "that it was Flip Summoned."])
    assert got == [set(), {("attack_declared", "face_down", "kept")}, {("summoned_from_location", "face_down", "lost")},
                   set()]


def test_english_sentences_state_on_their_own_and_read_negation():
    got = english(["A monster flipped face-down does not remember that it declared an attack this turn.",
                   "A temporarily banished monster still remembers that it was Tribute Summoned.",
                   "It remembers that it was Synchro Summoned."])  # no event named, no lead-in: nothing
    assert got == [{("attack_declared", "face_down", "lost")}, {("tribute_summoned", "temp_banish", "kept")}, set()]


@pytest.mark.parametrize("text, expanded", [
    ("that it was Normal / Flip / Tribute Summoned.", "that it was Normal Summoned / Flip Summoned / Tribute Summoned."),
    ("Wheter or not it has been Gemini or Flip Summoned.", "Wheter or not it has been Gemini Summoned / Flip Summoned."),
    ("it was Special Summoned.", "it was Special Summoned."),
])
def test_coordinated_summon_words_are_expanded(text, expanded):
    from pipeline.match import expand_coordination

    assert expand_coordination(text) == expanded
