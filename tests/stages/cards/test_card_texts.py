"""Card texts: effects split by number, what each depends on, and the
card_text statements a ruling about a named card's effect makes."""

from __future__ import annotations

import gzip
import json

import pytest

from pipeline import cards as cards_module
from pipeline import cardtext
from pipeline.cardtext import CardText, card_effects, load_card_texts, read_dependencies, split_effects, write_bundle
from pipeline.cards import CardLink
from pipeline.compile import info_kinds
from pipeline.extract import extract
from pipeline.page import Block, Line, Page

# A card of our own (no such card exists): its ① needs "this card, Synchro Summoned".
PASSCODE = 99990001
NAME = "星辰试验龙"
SYNCHRO_JA = "①：Ｓ召喚したこのカードが戦闘で破壊された場合に発動できる。自分はデッキから１枚ドローする。"
SYNCHRO_ZH = "①：同调召唤的这张卡被战斗破坏的场合才能发动。自己从卡组抽1张。"
TURN_JA = "①：このカードが召喚・特殊召喚に成功したターンのエンドフェイズに発動できる。自分はデッキから１枚ドローする。"
TURN_ZH = "①：这张卡召唤·特殊召唤的回合的结束阶段才能发动。自己从卡组抽1张。"
PLAIN_JA = "①：このカードが戦闘で破壊された場合に発動できる。自分はデッキから１枚ドローする。"
PLAIN_ZH = "①：这张卡被战斗破坏的场合才能发动。自己从卡组抽1张。"
RULING = f"「{NAME}」变成里侧后，被战斗破坏的场合，可以发动①效果。21/12/6"
UNABLE = f"「{NAME}」被一时除外，回到场上后，不能发动①效果。21/12/6"


def own_card(ja: str, zh: str) -> CardText:
    head_ja, head_zh = "チューナー＋チューナー以外のモンスター１体以上\n", "调整＋调整以外的怪兽1只以上\n"
    return CardText(PASSCODE, None, {"zh-community": NAME, "ja": NAME}, {"ja": head_ja + ja, "zh-community": head_zh + zh},
                    card_type="Monster")


# --------------------------------------------------------------------------- splitting

def test_a_numbered_text_is_cut_at_its_circled_numbers_and_keeps_its_head():
    text = ("このカード名の①②の効果はそれぞれ１ターンに１度しか使用できない。"
            "①：このカードが召喚に成功した場合に発動できる。②：①の効果を発動したターンに発動できる。")
    assert split_effects(text) == [
        ("", "このカード名の①②の効果はそれぞれ１ターンに１度しか使用できない。"),
        ("①", "このカードが召喚に成功した場合に発動できる。"),
        ("②", "①の効果を発動したターンに発動できる。"),  # ①の効果 is a reference, not an effect
    ]


def test_a_text_without_numbers_is_one_effect_and_an_empty_text_none():
    assert split_effects("このカードは通常召喚できない。") == [("", "このカードは通常召喚できない。")]
    assert split_effects("  ") == []


def test_a_pendulum_monster_has_its_pendulum_effects_apart():
    card = CardText(1, 2, {}, {"ja": "①：モンスター効果。②：もう一つ。", "zh-community": "①：怪兽效果。②：另一个。"},
                    {"ja": "①：Ｐ効果。", "zh-community": "①：灵摆效果。"}, "Monster")
    got = [(e.part, e.effect, e.texts["ja"], e.texts["zh-community"]) for e in card_effects(card)]
    assert got == [("monster", "①", "モンスター効果。", "怪兽效果。"), ("monster", "②", "もう一つ。", "另一个。"),
                   ("pendulum", "①", "Ｐ効果。", "灵摆效果。")]


def test_english_goes_with_a_single_effect_only():
    one = CardText(1, 2, {}, {"ja": "このカードは攻撃できない。", "en": "This card cannot attack."})
    two = CardText(1, 2, {}, {"ja": "①：あ。②：い。", "en": "A. B."})
    assert card_effects(one)[0].texts["en"] == "This card cannot attack."
    assert all("en" not in e.texts for e in card_effects(two))


# --------------------------------------------------------------------------- dependencies

def kinds(text: str, language: str) -> list[str]:
    return [d.info_kind for d in read_dependencies(text, language)]


@pytest.mark.parametrize("text, language, expected", [
    ("Ｓ召喚したこのカードが破壊された場合に発動できる。", "ja", ["synchro_summoned"]),
    ("同调召唤的这张卡被破坏的场合才能发动。", "zh-community", ["synchro_summoned"]),
    ("同步召唤的此卡被破坏的情况下可以发动。", "zh-CN", ["synchro_summoned"]),
    ("同步召喚的這張卡被破壞的場合才能發動。", "zh-TW", ["synchro_summoned"]),
    ("このカードが召喚・特殊召喚に成功したターンのエンドフェイズに発動できる。", "ja", ["summoned_this_turn"]),
    ("这张卡召唤·特殊召唤的回合的结束阶段才能发动。", "zh-community", ["summoned_this_turn"]),
    ("這張卡召喚·特殊召喚的回合的結束階段才能發動。", "zh-TW", ["summoned_this_turn"]),
    ("ＥＸデッキから特殊召喚されたこのカードが存在する限り", "ja", ["summoned_from_location"]),
    ("从额外卡组特殊召唤的这张卡在怪兽区域存在的场合", "zh-community", ["summoned_from_location"]),
    ("「ヒートライオ」を素材としてＬ召喚されている場合、発動できる。", "ja", ["summon_materials"]),
    ("１ターンに１度、発動できる。", "ja", ["effect_count"]),
    ("1回合1次，才能发动。", "zh-community", ["effect_count"]),
    ("このカード名の①の効果は１ターンに１度しか使用できない。", "ja", []),  # counted by name, not by the card
    ("这个卡名的①的效果1回合只能使用1次。", "zh-community", []),
    ("この効果を発動するターン、自分はモンスターを特殊召喚できない。", "ja", ["pledge_other"]),
    ("このカードが戦闘で相手モンスターを破壊したターンのエンドフェイズに発動する。", "ja", ["destroyed_by_battle"]),
])
def test_what_an_effect_depends_on_is_read_in_japanese_and_both_chinese_scripts(text, language, expected):
    assert kinds(text, language) == expected


def test_whose_information_the_words_speak_of():
    deps = {d.info_kind: d.subject for d in read_dependencies(
        "デッキからモンスター１体を特殊召喚する。この効果で特殊召喚したモンスターはエンドフェイズに破壊される。", "ja")}
    assert deps == {"summoned_by_specific_effect": "other"}
    deps = {d.info_kind: d.subject for d in read_dependencies(
        "このカードが①の方法で特殊召喚されたターンのエンドフェイズに発動する。", "ja")}
    assert deps == {"summoned_by_own_procedure": "this_card", "summoned_this_turn": "this_card"}


def test_a_more_specific_kind_leaves_the_general_one_out():
    assert kinds("ＥＸデッキから特殊召喚されたこのカードが破壊された場合", "ja") == ["summoned_from_location"]
    assert kinds("特殊召喚されたこのカードが破壊された場合", "ja") == ["special_summoned"]


def test_the_effects_of_a_card_join_every_language_by_number():
    effects = card_effects(own_card(SYNCHRO_JA, SYNCHRO_ZH))
    assert [(e.effect, e.kinds) for e in effects] == [("", []), ("①", ["synchro_summoned"])]
    assert {d.language for d in effects[1].depends_on} == {"ja", "zh-community"}


# --------------------------------------------------------------------------- card_text statements

@pytest.fixture
def our_card(monkeypatch):
    """Make the bundled texts hold only our card and link its name to it."""
    real = cards_module.card_index()

    class Index:
        def __getattr__(self, name):
            return getattr(real, name)

        def link(self, name):
            return CardLink(PASSCODE, "Test Dragon", "exact", "official") if name == NAME else real.link(name)

    monkeypatch.setattr(cards_module, "card_index", lambda: Index())
    holder = {}
    monkeypatch.setattr(cardtext, "load_card_texts", lambda path=None: holder)
    return holder


def card_text_statements(line: str) -> set[tuple]:
    page = Page("case", "zh", "Hans", "CN", "", [Block(0, ("21/12",), [Line(line)])])
    return {(s.info_kind, s.event, s.verdict, s.effect, s.passcode) for r in extract(page, info_kinds())
            for s in r.statements if s.basis == "card_text"}


def test_changing_an_effects_condition_changes_the_statement_read_from_a_ruling_about_it(our_card):
    our_card[PASSCODE] = own_card(SYNCHRO_JA, SYNCHRO_ZH)
    assert card_text_statements(RULING) == {("synchro_summoned", "face_down", "kept", "①", PASSCODE)}
    our_card[PASSCODE] = own_card(TURN_JA, TURN_ZH)
    assert card_text_statements(RULING) == {("summoned_this_turn", "face_down", "kept", "①", PASSCODE)}
    our_card[PASSCODE] = own_card(PLAIN_JA, PLAIN_ZH)  # depends on nothing: the ruling says nothing of a kind
    assert card_text_statements(RULING) == set()


def test_unable_to_use_the_effect_says_the_information_lost(our_card):
    our_card[PASSCODE] = own_card(TURN_JA, TURN_ZH)
    assert card_text_statements(UNABLE) == {("summoned_this_turn", "temp_banish", "lost", "①", PASSCODE)}


@pytest.mark.parametrize("text, language", [
    ("①：同调召唤的这张卡这个回合没有进行过战斗的场合才能发动。自己从卡组抽1张。", "zh-community"),
    ("①：同調召喚的這張卡這個回合沒有進行過戰鬥的場合才能發動。自己從卡組抽1張。", "zh-TW"),
    ("①：同调召唤的这张卡未进行过战斗的场合才能发动。自己从卡组抽1张。", "zh-community"),
])
def test_a_negated_condition_is_no_dependency_the_effect_needs_kept(text, language):
    """『这张卡没有进行过战斗的』 needs the information absent: losing it would
    free the effect, so a ruling that it cannot be used says nothing of it."""
    kinds = {d.info_kind for d in read_dependencies(text, language)}
    assert "synchro_summoned" in kinds and "battled" not in kinds
    positive = text.replace("没有", "").replace("沒有", "").replace("未", "")
    assert "battled" in {d.info_kind for d in read_dependencies(positive, language)}


def test_an_event_that_happens_to_another_card_says_nothing_of_this_ones_effect(our_card):
    our_card[PASSCODE] = own_card(SYNCHRO_JA, SYNCHRO_ZH)
    line = f"「{NAME}」攻击里侧守备表示的「黑魔术师」，「黑魔术师」反转后，可以发动①效果。"
    assert card_text_statements(line) == set()


def test_a_count_of_uses_is_read_only_for_an_effect_used_before_the_event(our_card):
    once = "①：１ターンに１度、自分メインフェイズに発動できる。自分はデッキから１枚ドローする。"
    our_card[PASSCODE] = own_card(once, "①：1回合1次，自己主要阶段才能发动。自己从卡组抽1张。")
    used = f"「{NAME}」已经发动过①效果的回合，变成里侧守备表示后再反转的场合，可以再次发动①效果。"
    assert card_text_statements(used) == {("effect_count", "face_down", "lost", "①", PASSCODE)}
    assert card_text_statements(f"「{NAME}」变成里侧守备表示后再反转的场合，可以发动①效果。") == set()


# --------------------------------------------------------------------------- the bundle and the build

def test_the_bundle_keeps_the_chosen_cards_languages_and_is_reproducible(tmp_path):
    cards = [{"konami_id": 1, "password": 10, "name": {"en": "A", "ko": "가"}, "text": {"ja": "①：あ。", "ko": "①: 아."},
              "card_type": "Monster", "atk": 100},
             {"konami_id": 2, "password": 20, "name": {"en": "B"}, "text": {"ja": "い。"}}]
    out = tmp_path / "t.jsonl.gz"
    assert write_bundle(cards, {10}, out) == 1
    first = out.read_bytes()
    rows = [json.loads(x) for x in gzip.decompress(first).decode().splitlines()]
    assert rows == [{"card_type": "Monster", "konami_id": 1, "name": {"en": "A"}, "password": 10,
                     "text": {"ja": "①：あ。"}}]
    write_bundle(cards, {10}, out)
    assert out.read_bytes() == first
    assert list(load_card_texts(out)) == [10]


def test_the_bundled_texts_cover_the_cards_the_corpus_names():
    texts = load_card_texts()
    assert len(texts) > 4000
    chaofeng = texts[19048328]  # Chaofeng, Phantom of the Yang Zing: ② needs "this card, Synchro Summoned"
    assert {e.effect: e.kinds for e in chaofeng.effects}["②"] == ["synchro_summoned"]


def test_a_pattern_is_tried_only_on_texts_with_its_literal():
    from pipeline.cardtext import literal_gate

    assert literal_gate("(?:S|シンクロ)召喚(?:した|された)このカード") == "このカード"
    assert literal_gate("カウンターを(?:[0-9]+つ)?取り除") == "カウンターを"
    assert literal_gate("下(?:个|一)?回合[，,](?:这张|此)卡") == "回合"
    assert literal_gate("召唤成?功") == "召唤"  # a quantified last character is not required
    assert literal_gate("甲|乙") is None and literal_gate(r"\d回合") is None


def test_the_manifest_keeps_data_rows_apart_from_the_pages():
    from pipeline.corpus import load_data_sources, load_manifest

    assert "yaml-yugi-card-texts" not in {s.id for s in load_manifest()}
    [data] = load_data_sources()
    assert (data.id, data.format, data.fetch, data.problem) == ("yaml-yugi-card-texts", "card-texts", True, "")
    assert data.snapshot.name == "card-texts.jsonl.gz" and data.snapshot.is_file()


def test_a_quoted_effect_text_cites_the_numbered_effect_that_holds_it(our_card):
    our_card[PASSCODE] = own_card(SYNCHRO_JA, SYNCHRO_ZH)
    # the ability word after the quote: the statement reader (which reads 可以发动『…』的效果 from the
    # quote's own words, basis stated) leaves it to the card text
    line = f"「{NAME}」变成里侧后，被战斗破坏的场合，『同调召唤的这张卡被战斗破坏的场合才能发动』的效果可以发动。"
    assert card_text_statements(line) == {("synchro_summoned", "face_down", "kept", "①", PASSCODE)}
    our_card[PASSCODE] = own_card(TURN_JA, TURN_ZH)  # no effect of the card holds the quote
    assert card_text_statements(line) == set()
