"""card_text statements from a ruling that says in the effect's own words
that it no longer does (or still does) what its text says after a retention
event (pipeline/carddenials.py), and from a sequel flip (之后再反转) in a ruling
that names no other event (pipeline/cardrulings.py); both scripts."""

from __future__ import annotations

import pytest

from pipeline.chinese import convert
from pipeline.compile import info_kinds
from pipeline.extract import extract
from pipeline.page import Block, Line, Page
from test_card_texts import NAME, PASSCODE, CardText, our_card  # noqa: F401 (a fixture)

# A card of our own: its ② rests on its own procedure (the ① no-tribute Summon).
PROCEDURE_JA = ("①：このカードはリリースなしで召喚できる。"
                "②：このカードの①の方法で召喚したこのカードの元々の攻撃力は半分になり、エンドフェイズに破壊される。")
PROCEDURE_ZH = ("①：这张卡可以不用解放作召唤。"
                "②：这张卡的①的方法召唤的这张卡的原本攻击力变成一半，结束阶段破坏。")
# Its ② is a pledge: "this card cannot use this effect next turn".
PLEDGE_JA = "②：自分フィールドのモンスター１体を除外する。次のターン、このカードはこの効果を使用できない。"
PLEDGE_ZH = "②：选自己场上1只怪兽除外。下个回合，这张卡不能使用这个效果。"


def card(ja: str, zh: str) -> CardText:
    return CardText(PASSCODE, None, {"zh-community": NAME, "ja": NAME}, {"ja": ja, "zh-community": zh},
                    card_type="Monster")


def statements(line: str, script: str) -> set[tuple]:
    text = convert(line, "s2twp") if script == "Hant" else line
    page = Page("case", "zh", script, "TW" if script == "Hant" else "CN", "", [Block(0, ("21/12",), [Line(text)])])
    return {(s.info_kind, s.event, s.verdict, s.effect) for r in extract(page, info_kinds())
            for s in r.statements if s.basis == "card_text"}


BOTH = pytest.mark.parametrize("script", ["Hans", "Hant"])


@BOTH
def test_a_ruling_denying_what_the_effect_does_says_its_information_lost(our_card, script):
    our_card[PASSCODE] = card(PROCEDURE_JA, PROCEDURE_ZH)
    line = f"通过自身①的方法召唤的「{NAME}」被一时除外，当回合回到场上后，结束阶段不会破坏。"
    assert statements(line, script) == {("summoned_by_own_procedure", "temp_banish", "lost", "②")}


@BOTH
def test_a_ruling_saying_the_effect_still_does_it_says_its_information_kept(our_card, script):
    our_card[PASSCODE] = card(PROCEDURE_JA, PROCEDURE_ZH)
    line = f"通过自身①的方法召唤的「{NAME}」变成里侧表示后再反转的场合，结束阶段也会破坏。"
    assert statements(line, script) == {("summoned_by_own_procedure", "face_down", "kept", "②")}


@BOTH
def test_a_denial_in_words_the_effect_does_not_use_says_nothing(our_card, script):
    our_card[PASSCODE] = card(PROCEDURE_JA, PROCEDURE_ZH)
    # 不会被战斗破坏: 结束阶段 + 被战斗破坏 is not the effect's text
    assert statements(f"「{NAME}」被一时除外，回到场上后，这个回合不会被战斗破坏。", script) == set()
    # the event happens to another card named before it
    line = f"「{NAME}」的效果适用后，「黑魔术师」被一时除外，回到场上后，结束阶段不会破坏。"
    assert statements(line, script) == set()
    # no event: nothing
    assert statements(f"「{NAME}」在结束阶段不会破坏。", script) == set()


@BOTH
def test_a_sequel_flip_is_the_event_only_where_the_ruling_names_no_other(our_card, script):
    our_card[PASSCODE] = card(PLEDGE_JA, PLEDGE_ZH)
    used = (f"「{NAME}」的②效果发动时，连锁发动「月之书」把这只「{NAME}」盖放，再处理「{NAME}」的②效果，"
            "之后再反转的场合，下个回合不能再次发动②效果。")
    assert statements(used, script) == {("pledge_self", "flip_face_up", "kept", "②")}
    # 变成里侧…再反转: the case is the face-down; the flip is only how it came back
    face_down = f"「{NAME}」的②效果发动并适用后，因卡的效果变成里侧表示再反转的场合，下个回合可以再次发动②效果。"
    assert statements(face_down, script) == {("pledge_self", "face_down", "lost", "②")}


# A Trap of our own: it needs the materials the monster was Synchro Summoned with.
STRIKE_JA = "シンクロ召喚したモンスター１体の攻撃力はエンドフェイズ時まで、シンクロ素材にしたモンスターの数×５００ポイントアップする。"
STRIKE_ZH = "同调召唤的1只怪兽的攻击力直到结束阶段时上升作为同调素材的怪兽数量×500的数值。"


def trap(ja: str, zh: str) -> CardText:
    return CardText(PASSCODE, None, {"zh-community": NAME, "ja": NAME}, {"ja": ja, "zh-community": zh},
                    card_type="Trap")


@BOTH
def test_a_card_that_cannot_be_activated_on_the_monster_says_what_it_needs_lost(our_card, script):
    our_card[PASSCODE] = trap(STRIKE_JA, STRIKE_ZH)
    assert statements(f"S怪兽被一时除外后，不能对其发动「{NAME}」。", script) == {
        ("summon_materials", "temp_banish", "lost", "")}
    assert statements(f"S怪兽变成里侧表示后再反转的场合，也可以对其发动「{NAME}」。", script) == {
        ("summon_materials", "face_down", "kept", "")}


@BOTH
def test_an_activation_without_an_event_or_of_a_card_needing_nothing_says_nothing(our_card, script):
    our_card[PASSCODE] = trap(STRIKE_JA, STRIKE_ZH)
    assert statements(f"S怪兽不能对其发动「{NAME}」。", script) == set()
    our_card[PASSCODE] = trap("モンスター１体の攻撃力は５００ポイントアップする。", "1只怪兽的攻击力上升500。")
    assert statements(f"S怪兽被一时除外后，不能对其发动「{NAME}」。", script) == set()


# A Link Monster of our own: its materials line needs a Normal Summoned monster.
LINK_JA = "通常召喚された攻撃力１０００以下のモンスター１体\n①：このカードをリリースして発動できる。自分はデッキから１枚ドローする。"
LINK_ZH = "通常召唤的攻击力1000以下的怪兽1只\n①：把这张卡解放才能发动。自己从卡组抽1张。"


@BOTH
def test_being_material_for_a_card_says_what_its_materials_line_needs(our_card, script):
    our_card[PASSCODE] = card(LINK_JA, LINK_ZH)
    line = f"作为通常召唤把怪兽盖放，那之后再变成表侧表示的场合，也可以成为「{NAME}」的连接素材。"
    assert statements(line, script) == {("normal_summoned", "flip_face_up", "kept", "")}
    line = f"通常召唤的怪兽被一时除外，回到场上后，不能成为「{NAME}」的连接素材。"
    assert statements(line, script) == {("normal_summoned", "temp_banish", "lost", "")}


@BOTH
def test_being_material_for_a_card_needing_nothing_or_without_an_event_says_nothing(our_card, script):
    our_card[PASSCODE] = card(LINK_JA, LINK_ZH)
    assert statements(f"通常召唤的怪兽可以成为「{NAME}」的连接素材。", script) == set()
    our_card[PASSCODE] = card("効果モンスター２体\n①：自分はデッキから１枚ドローする。", "效果怪兽2只\n①：自己从卡组抽1张。")
    line = f"通常召唤的怪兽被一时除外，回到场上后，不能成为「{NAME}」的连接素材。"
    assert statements(line, script) == set()


# A Trap of our own: it destroys monsters in the End Phase of the turn they were Summoned or Flip Summoned.
PIT_JA = "フィールド上に表側表示で存在する全てのレベル３以下のモンスターは、召喚・反転召喚したターンのエンドフェイズ時に破壊される。"
PIT_ZH = "场上表侧表示存在的全部3星以下的怪兽在召唤·反转召唤的回合的结束阶段时破坏。"


@BOTH
def test_no_longer_affected_by_a_cards_effect_says_what_it_needs_lost_of_the_kinds_the_ruling_names(our_card, script):
    our_card[PASSCODE] = trap(PIT_JA, PIT_ZH)
    # it needs flip_summoned and summoned_this_turn: the ruling names the Flip Summon; the flip after the
    # face-down is how the monster came back, no event of its own
    line = (f"等级3以下的怪兽反转召唤后，先因「月之书」的效果变成里侧表示再因「停战协定」的效果反转的场合，"
            f"结束阶段不会被「{NAME}」的效果破坏。")
    assert statements(line, script) == {("flip_summoned", "face_down", "lost", "")}
    # naming none of them: what the card needs, of several those of lost_first (its turn)
    line = f"等级3以下的怪兽被一时除外，回到场上后，结束阶段不会被「{NAME}」的效果破坏。"
    assert statements(line, script) == {("summoned_this_turn", "temp_banish", "lost", "")}


@BOTH
def test_affected_by_a_card_that_needs_nothing_or_without_an_event_says_nothing(our_card, script):
    our_card[PASSCODE] = trap(PIT_JA, PIT_ZH)
    assert statements(f"反转召唤的怪兽在结束阶段会被「{NAME}」的效果破坏。", script) == set()
    our_card[PASSCODE] = trap("モンスター１体を破壊する。", "选1只怪兽破坏。")
    assert statements(f"怪兽被一时除外，回到场上后，不会被「{NAME}」的效果破坏。", script) == set()
