"""Issue 34: every ruling of every page is read for statements, wherever it
names a retention event; the phrasings that reader takes (pipeline/reading.py
and schema/retention_terms.json), each with sentences that state it and
sentences that must not, in Simplified and Traditional script; the site gold
and the several-file evaluation."""

from __future__ import annotations


import pytest

from pipeline.chinese import convert
from pipeline.extract import extract
from pipeline.page import Block, Line, Page
from pipeline.schema import info_kinds

YEARLY = ("23/03", "3/19")  # a day of a yearly log: no retention topic section
TOPIC_POSITIONS = ("里侧·一时除外", "表示形式")


def read(text: str, script: str = "Hans", section=YEARLY) -> set:
    """The (kind, event, verdict) statements of one ruling, written in ``script``
    (Traditional: the Simplified text through OpenCC s2twp, as a Taiwan page writes it)."""
    region = "TW" if script == "Hant" else "CN"
    def written(words: str) -> str:
        return convert(words, "s2twp") if script == "Hant" else words

    headings = tuple(written(h) for h in section)
    page = Page("p", "zh", script, region, "", [Block(0, headings, [Line(written(text))])])
    [record] = extract(page, info_kinds())
    return {(s.info_kind, s.event, s.verdict) for s in record.statements if s.basis != "withdrawn"}


BOTH = pytest.mark.parametrize("script", ["Hans", "Hant"])


@BOTH
def test_a_banish_and_return_written_apart_is_a_temporary_banish(script):
    said = read("「忍法 影缝之术」把攻击了的怪兽除外，这个战斗阶段内被破坏让那个怪兽回到场上的场合，可以攻击。23/3/19", script)
    assert said == {("attack_declared", "temp_banish", "lost")}
    # a banish with no return is no retention event
    assert read("「忍法 影缝之术」把攻击了的怪兽除外的场合，这个回合可以攻击。", script) == set()
    # the monster that returns is named before it leaves: one event only
    assert read("攻击了的怪兽被「亚空间物质传送装置」除外再回到场上的场合，可以攻击。", script) == {
        ("attack_declared", "temp_banish", "lost")}


@BOTH
def test_a_word_that_names_its_kind_speaks_of_it(script):
    text = ("当回合召唤·反转召唤·特殊召唤·盖放·表示形式已经变更过·攻击宣言过的怪兽，被「亚空间物质回送装置」的①效果"
            "除外再回到场上的场合，玩家可以按照自己的意志把这只怪兽的表示形式变更。")
    assert read(text, script) == {("position_change_restrictions", "temp_banish", "lost")}
    # in the topic section 表示形式 too (its default kind), not the turn the monsters were summoned
    assert read(text, script, TOPIC_POSITIONS) == {("position_change_restrictions", "temp_banish", "lost")}
    kept = "当回合召唤的怪兽因卡的效果变成里侧表示，玩家也不能按照自己的意志把这只怪兽反转。"
    assert read(kept, script) == {("position_change_restrictions", "face_down", "kept")}
    # no event: nothing, whatever the words
    assert read("玩家可以按照自己的意志把这只怪兽的表示形式变更。", script) == set()


@BOTH
def test_control_that_is_not_given_back_is_kept(script):
    text = "通过「装弹枪管龙」的③效果得到控制权的怪兽被一时除外的场合，回到场上后，不会归还控制权。23/8/17"
    assert read(text, script) == {("control_permanent", "temp_banish", "kept")}
    assert read("通过「装弹枪管龙」的③效果得到控制权的怪兽，结束阶段不会归还控制权。", script) == set()


@BOTH
def test_a_fact_that_does_not_change_is_kept(script):
    text = "即使被「月之书」的效果变成里侧守备表示，那是这个回合召唤的怪兽的事实不会改变，可以发动「穿刺的落穴」"
    assert read(text, script) == {("summoned_this_turn", "face_down", "kept")}
    lost = "召唤的怪兽被「月之书」的效果变成里侧守备表示的时点，就不再是这个回合召唤的怪兽。"
    assert read(lost, script) == {("summoned_this_turn", "face_down", "lost")}
    assert read("那是这个回合召唤的怪兽的事实不会改变。", script) == set()  # no event


@BOTH
def test_a_parenthesis_after_the_ruling_states_what_it_says(script):
    text = ("连锁3发动「灵摆返场」把「DD 狮鹫」P召唤后，变成里侧表示再反转的场合，连锁处理后「DD 狮鹫」也可以发动②效果。"
            "（这时已经不是P召唤的怪兽）")
    assert read(text, script) == {("pendulum_summoned", "face_down", "lost")}
    # the ability alone says nothing of how it was summoned (a generic kind, no quoted effect)
    assert read("「DD 狮鹫」P召唤后，变成里侧表示再反转的场合，也可以发动②效果。", script) == set()


@BOTH
def test_a_quoted_effect_says_what_information_it_needs(script):
    head = "融合召唤的「冰剑龙 幻冰龙」因「月之书」的效果变成里侧守备表示后，被对方的「雷击」的效果破坏的场合，那只「冰剑龙 幻冰龙」"
    able = head + "可以发动『③：融合召唤的这张卡因对方从场上离开的场合才能发动』效果。"
    assert read(able, script) == {("fusion_summoned", "face_down", "kept")}
    unable = head + "不能发动『③：融合召唤的这张卡因对方从场上离开的场合才能发动』效果。"
    assert read(unable, script) == {("fusion_summoned", "face_down", "lost")}
    # the quoted effect needs nothing the event could take: no statement
    assert read(head + "可以发动『③：这张卡因对方从场上离开的场合才能发动』效果。", script) == set()
    # a quoted effect that is not the one activated (no 效果 after it) names nothing
    assert read(head + "可以发动②效果，『③：融合召唤的这张卡…』不适用。", script) != {
        ("fusion_summoned", "face_down", "kept")}


@BOTH
def test_a_summon_kind_with_its_turn_names_both(script):
    text = "通过自身①的方法特殊召唤的回合被一时除外再回到场上的场合，情报不丢失。"
    assert read(text, script) == {("summoned_by_own_procedure", "temp_banish", "kept"),
                                  ("summoned_this_turn", "temp_banish", "kept")}
    assert read("通过自身①的方法特殊召唤的「雷仙神」被一时除外的场合，情报不丢失。", script) == {
        ("summoned_by_own_procedure", "temp_banish", "kept")}


@BOTH
def test_an_effect_activated_this_turn_is_lost_when_it_can_be_activated_again(script):
    text = ("「卡通黑魔术师」已经发动过③效果的回合，因其他效果变成里侧守备表示后再回到表侧表示，或者暂时除外后回到怪兽区域的场合，"
            "可以再次发动③效果。")
    # its ③ is 1回合1次 (the card text, basis card_text): used before, its count is lost too
    assert read(text, script) == {("effect_activated", "face_down", "lost"), ("effect_activated", "temp_banish", "lost"),
                                  ("effect_count", "face_down", "lost"), ("effect_count", "temp_banish", "lost")}
    kept = "「卡通黑魔术师」已经发动过③效果的回合，被一时除外后回到场上的场合，也不能再发动③效果。"
    assert read(kept, script) >= {("effect_activated", "temp_banish", "kept")}
    # 不当做 is 不当作 in other words
    text = "「银河眼光子龙」发动了②效果把自身一时除外后，战斗阶段结束时回到场上的场合，不当做这个回合发动过效果的怪兽。"
    assert read(text, script) == {("effect_activated", "temp_banish", "lost")}


@BOTH
def test_a_properly_summoned_monster_is_no_kind_of_the_vocabulary(script):
    text = "这些怪兽因「月之书」等效果变成里侧，之后反转召唤被无效的场合，仍然是用正规手续特殊召唤的怪兽。"
    assert read(text, script) == set()
    assert read("这些怪兽因「月之书」等效果变成里侧的场合，仍然是特殊召唤的怪兽。", script) == {
        ("special_summoned", "face_down", "kept")}


@BOTH
def test_a_heading_that_quotes_the_effect_says_what_it_needs(script):
    text = "因此，融合召唤的这张卡，在被变成里侧表示，或者一时除外后回到场上，再因对方从场上离开的场合，也能发动这个效果。"
    quoted = ("冰剑龙 幻冰龙", "③效果", "『融合召唤的这张卡』")
    assert read(text, script, quoted) == {("fusion_summoned", "face_down", "kept"), ("fusion_summoned", "temp_banish", "kept")}
    # the same ruling under a heading that quotes nothing: a generic kind alone says nothing
    assert read(text, script, ("冰剑龙 幻冰龙", "③效果")) == set()
    # a heading quoting another kind: nothing either
    assert read(text, script, ("冰剑龙 幻冰龙", "③效果", "『这张卡召唤的回合』")) == set()


@BOTH
def test_a_grant_named_after_a_flip_still_holds(script):
    text = ("「魔女术的合作」效果处理时对象怪兽变成里侧表示的场合，这个效果正常适用，那个怪兽翻开后可以作2次攻击，"
            "直到伤害步骤结束时对方不能发动魔法·陷阱卡。19/3/4")
    assert read(text, script) == {("applied_protection", "flip_face_up", "kept")}
    assert read("里侧表示的怪兽不会被战斗·效果破坏。", script) == set()  # no event
    # 翻开 of cards (not of a monster) is no flip
    assert read("「名推理」的效果翻开后可以作2次攻击。", script) == set()


@BOTH
def test_a_quoted_condition_before_its_effect_word(script):
    head = "「X」被「亚空间物质传送装置」除外，结束阶段回到场上的场合，"
    assert read(head + "不能发动『这张卡特殊召唤的回合』的效果。", script) == {("summoned_this_turn", "temp_banish", "lost")}
    assert read("上级召唤的「X」被一时除外，回到场上后不能发动『上级召唤的这张卡』的效果。", script) == {
        ("tribute_summoned", "temp_banish", "lost")}


@BOTH
def test_control_not_given_back_needs_control_taken_for_good(script):
    # a monster whose control passes later: no word of control taken, no statement of that kind
    assert read("召唤的「太阳神之翼神龙-球体形」被一时除外，回到场上后不会归还控制权。17/3/24", script) == set()
    # control taken for a time
    assert read("用「精神操作」直到结束阶段得到控制权的怪兽被一时除外的场合，不会归还控制权。", script) == set()
    # control given back: lost, of control taken for a time only
    assert read("用「精神操作」直到结束阶段得到控制权的怪兽被一时除外的场合，回到场上后控制权立即归还。", script) == {
        ("control_temporary", "temp_banish", "lost")}
    assert read("通过「大逮捕」效果获得控制权的怪兽之后变成里侧守备表示的场合，控制权归还。", script) == set()


@BOTH
def test_counters_removed_and_attacks_again(script):
    text = "放置了指示物的怪兽离开怪兽区域或变成里侧表示时，指示物会全部取除。"
    assert read(text, script) == {("counters", "face_down", "lost")}
    assert read("放置了指示物的怪兽离开怪兽区域时，指示物会全部取除。", script) == set()  # leaving for good
    assert read("已经攻击过的怪兽被一时除外再回到场上后，可以再次攻击。", script) == {("attack_declared", "temp_banish", "lost")}
    assert read("攻击过的「X」被一时除外再回到场上后，这个回合不能再进行攻击。", script) == {
        ("attack_declared", "temp_banish", "kept")}
    # a grant to attack again names no information the event took
    assert read("「X」被一时除外再回到场上后，这个回合可以再次攻击。", script) == set()


def read_block(lines: list[str], script: str = "Hans") -> list[set]:
    """The statements of each ruling of one block of a yearly log."""
    region = "TW" if script == "Hant" else "CN"
    written = [convert(t, "s2twp") if script == "Hant" else t for t in lines]
    page = Page("p", "zh", script, region, "", [Block(0, YEARLY, [Line(t) for t in written])])
    return [{(s.info_kind, s.event, s.verdict) for s in r.statements} for r in extract(page, info_kinds())]


@BOTH
def test_the_ruling_just_before_on_the_same_card_gives_the_kind(script):
    first = "「贤者的圣杯」的效果特殊召唤的「X」变成里侧表示的场合，不再是『这个效果特殊召唤的怪兽』。"
    same = "「X」被一时除外的场合，回到场上后仍然适用结束阶段的处理。"
    other = "「Y」被一时除外的场合，回到场上后仍然适用结束阶段的处理。"
    assert read_block([first, same], script) == [{("summoned_by_specific_effect", "face_down", "lost")},
                                                 {("summoned_by_specific_effect", "temp_banish", "kept")}]
    assert read_block([first, other], script)[1] == set()  # another card: another case
    assert read_block([same], script) == [set()]  # alone it names no kind
    # one ruling back only
    between = "「X」的②效果可以在对方回合发动。"
    assert read_block([first, between, same], script)[2] == set()


@BOTH
def test_staying_face_up_until_later_is_lost_on_both_events_anywhere(script):
    text = "自身①的方法特殊召唤的「异次元的精灵」在到下次的准备阶段持续在怪兽区域表侧表示的状况才会发动②效果。17/9/23"
    assert read(text, script) == {("summoned_by_own_procedure", "face_down", "lost"),
                                  ("summoned_by_own_procedure", "temp_banish", "lost")}
    # a generic kind says nothing; a negator says it need not stay
    assert read("上级召唤的「嵌合蝎尾狮」在到下次的自己准备阶段持续在怪兽区域表侧表示的状况才会发动①效果。", script) == set()
    assert read("自身①的方法特殊召唤的「X」不需要持续在怪兽区域表侧表示，也会发动②效果。", script) == set()


@BOTH
def test_values_back_to_the_card_and_a_quoted_summon_by_an_effect(script):
    text = ("因各种不是持续适用的效果，导致怪兽的攻击力·守备力与卡片下方记载的数值不同的场合，那个怪兽在变成里侧表示或被一时除外后，"
            "回到卡片记载的数值。")
    assert read(text, script) == {("stat_changes", "face_down", "lost"), ("stat_changes", "temp_banish", "lost")}
    assert read("发动「X」的场合，攻击力回到卡片记载的数值。", script) == set()  # no event
    text = ("「混沌No.1000 梦幻虚神 原数天灵」的效果特殊召唤的「X」因卡的效果变成里侧表示时，"
            "不再是『「混沌No.1000 梦幻虚神 原数天灵」的效果特殊召唤』的卡。")
    assert read(text, script) == {("summoned_by_own_procedure", "face_down", "lost")}


@BOTH
def test_this_effect_points_back_at_the_sentence_before(script):
    text = ("『不会被战斗·效果破坏』的效果处理时，对象怪兽变成里侧的场合，这个效果仍然适用。"
            "若这个效果已经适用，再变成里侧的时点不再适用。")
    assert read(text, script) == {("applied_protection", "face_down", "lost")}
    # no pointing word: the second sentence names nothing
    text = ("『不会被战斗·效果破坏』的效果处理时，对象怪兽变成里侧的场合，这个效果仍然适用。"
            "若已经适用，再变成里侧的时点不再适用。")
    assert read(text, script) == set()
    # 由于离场 (because it left the field) keeps a ruling elliptical
    block = read_block(["『这个效果发动的回合，这张卡○○』适用后，发动效果的卡片变成里侧的场合不再适用。",
                        "一时除外的场合由于离场也不适用。"], script)
    assert block == [{("pledge_self", "face_down", "lost")}, {("pledge_self", "temp_banish", "lost")}]


@BOTH
def test_an_ability_on_this_kind_of_effect_speaks_of_the_quoted_one(script):
    text = "当回合反转的怪兽，持有『反转的回合』发动的效果时，在发动这类效果前，被一时除外的场合，回到场上后不能再发动这类效果。"
    assert read(text, script) == {("flipped", "temp_banish", "lost")}
    # no quote: the generic kind of its subject says nothing
    assert read("当回合反转的怪兽被一时除外的场合，回到场上后不能再发动这类效果。", script) == set()


EXAM = ["关于下例状况中的行为，以下说明正确的是？",
        "A.召唤的怪兽被「月之书」的效果变成里侧守备表示的时点，就不再是这个回合召唤的怪兽，因此「穿刺的落穴」不能发动",
        "B.其他4项说明均不正确",
        "C.「X」的效果适用",
        "D.「Y」的效果适用",
        "E.即使被「月之书」的效果变成里侧守备表示，那是这个回合召唤的怪兽的事实不会改变，可以发动「穿刺的落穴」",
        "关于下例状况中的行为，以下说明不正确的是？",
        "A.「X」的效果适用",
        "B.从额外卡组特殊召唤的怪兽变成里侧守备表示的场合，不再当作从额外卡组特殊召唤的怪兽。",
        "C.「Y」的效果适用",
        "D.「Z」的效果适用",
        "E.从额外卡组特殊召唤的怪兽变成里侧守备表示的场合，仍然当作从额外卡组特殊召唤的怪兽。"]


@pytest.mark.parametrize("key, expected", [
    # only the key's answer to the question asking what is right; question 2 asks for the wrong one
    (["1-2 EE"], {"E.即使": {("summoned_this_turn", "face_down", "kept")}}),
    (["1-2 AE"], {"A.召唤": {("summoned_this_turn", "face_down", "lost")}}),  # the key decides, not the words
    (["1-1 E"], {}),  # a key that does not answer every question: no option says anything
    ([], {}),  # no key: no option says anything
])
def test_an_exam_option_states_only_as_the_keys_right_answer(key, expected):
    page = Page("p", "zh", "Hans", "CN", "", [Block(0, ("2019年游戏王OCG规则检定测试", "应用部分"), [Line(t) for t in EXAM]),
                                             Block(1, ("2019年游戏王OCG规则检定测试", "答案"), [Line(t) for t in key])])
    said = {r.text[:4]: {(s.info_kind, s.event, s.verdict) for s in r.statements}
            for r in extract(page, info_kinds()) if r.statements}
    assert said == expected


@BOTH
def test_regarded_as_is_a_verdict_word(script):
    # 仍然视为 / 不再视为: the kind named after it is kept / lost
    kept = "从额外卡组直接盖放的「娱乐伙伴 天空之魔术师」之后变成表侧表示的场合，也仍然视为是“从额外卡组特殊召唤的怪兽”。"
    assert read(kept, script) == {("summoned_from_location", "flip_face_up", "kept")}
    lost = "「娱乐伙伴 飞毯鼯鼠」变成里侧守备表示之际，就不再视为从额外卡组特殊召唤的怪兽。"
    assert read(lost, script) == {("summoned_from_location", "face_down", "lost")}
    # 视为 alone says how a card is treated, not that anything was kept
    assert read("「娱乐伙伴 飞毯鼯鼠」被一时除外后，视为从额外卡组特殊召唤的怪兽。", script) == set()


@BOTH
def test_a_proviso_states_nothing(script):
    # 只要没有…丢失: "as long as it is not lost" says what holds meanwhile, not that it is lost
    proviso = "各种出场方式的情报只要没有因为变成里侧表示或从怪兽区域离开等状况丢失，就可以相互叠加。"
    assert read(proviso, script) == set()
    assert read("从额外卡组特殊召唤的怪兽变成里侧表示的场合，不再是从额外卡组特殊召唤的怪兽。", script) == {
        ("summoned_from_location", "face_down", "lost")}
