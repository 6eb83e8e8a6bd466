"""The procedural-rule reader (pipeline/procedural.py): seeds 000 and 003
rewritten in other words (tests/cases/procedural) still state every rule and
still answer every public scenario; the rulebook's PDF text is read as
paragraphs and list items under their lead-in."""

from __future__ import annotations

import json

import pytest

from conftest import CASES, ROOT
from pipeline import procedural
from pipeline.corpus import Source
from pipeline.extract import extract
from pipeline.normalize import normalize
from pipeline.pdftext import normalize_pdf_text, paragraphs
from pipeline.schema import info_kinds, procedural_rules

CASES = CASES / "procedural"
BUNDLED = ROOT / "corpus"
REWRITES = {"a": ("000-rewrite-a.txt", "003-rewrite-a.txt"), "b": ("000-rewrite-b.txt", "003-rewrite-b.txt"),
            "c": ("000-rewrite-c.txt", "003-rewrite-c.txt")}  # c: "switch it by hand", list items with no trigger word


def _source(fmt: str = "text") -> Source:
    return Source(id="t", url="", language="en", script="Latn", region="", format=fmt, licence="", path="",
                  fetch=False, notes="", snapshot=None)


def _rules_of(text: str, fmt: str = "text") -> dict[str, list[str]]:
    records = extract(normalize(text.encode(), _source(fmt)), list(info_kinds()))
    found: dict[str, list[str]] = {}
    for r in records:
        for rule_id in r.procedural:
            found.setdefault(rule_id, []).append(r.text)
    return found


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_rewrites_state_every_rule(name):
    position, battle = (_rules_of((CASES / f).read_text(encoding="utf-8")) for f in REWRITES[name])
    assert sorted(position) == sorted(r for r in procedural_rules() if r.startswith("position."))
    assert sorted(battle) == sorted(r for r in procedural_rules() if r.startswith("battle."))


def test_no_phrase_list_in_schema():
    data = json.loads((ROOT / "schema" / "procedural_rules.json").read_text())
    assert all("phrase_sets" not in rule for rule in data["rules"])
    assert all(len(p.split()) <= 12 for patterns in data["patterns"].values() for p in patterns)


@pytest.mark.parametrize("sentence, expected", [
    ("You cannot change the battle position of a monster if it declared an attack that turn.",
     ["position.not_after_attack_declared"]),
    ("A monster that declared an attack this turn is not allowed to have its battle position changed.",
     ["position.not_after_attack_declared"]),
    ("Once a monster attacks, it may not be changed to Defense Position in the same turn.",
     ["battle.no_defense_change_after_attack"]),
    ("A monster can only attack once per turn.", ["battle.attack_once_per_turn"]),
    ("Each monster may attack only once each turn.", ["battle.attack_once_per_turn"]),
    ("You can change the battle position of a monster with a card effect.", []),
    ("A monster in the Attack Position does not have to attack.", []),
    ("A new monster may be played onto the opponent's side of the field. This causes a Replay.",
     ["battle.replay_on_monster_count_change"]),
    ("A Replay returns play to the beginning of the Battle Step.", []),
])
def test_sentences(sentence, expected):
    assert sorted(_rules_of(f"Rules\n\n{sentence}\n")) == expected


SENTENCES = json.loads((CASES / "sentences.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("rule_id, sentence", SENTENCES["states"])
def test_sentence_in_other_words_states_its_rule(rule_id, sentence):
    assert rule_id in _rules_of(f"Rules\n\n{sentence}\n")


@pytest.mark.parametrize("sentence", SENTENCES["states_nothing"])
def test_sentence_about_something_else_states_nothing(sentence):
    assert _rules_of(f"Rules\n\n{sentence}\n") == {}


def test_every_rule_has_sentences_in_other_words():
    assert {rule_id for rule_id, _ in SENTENCES["states"]} == set(procedural_rules())


def test_list_item_completes_its_lead_in():
    text = "Rules\n\nA monster's battle position cannot be changed manually if it:\n- attacked this turn.\n"
    assert list(_rules_of(text)) == ["position.not_after_attack_declared"]
    assert _rules_of("Rules\n\nThings to remember:\n- attacked this turn.\n") == {}


@pytest.mark.parametrize("lead_in, item, expected", [
    ("There are three cases in which a monster's battle position may not be changed manually:",
     "in the turn in which the turn player Summoned or Set it.", "position.not_if_summoned_or_set_this_turn"),
    ("Three situations rule out switching a monster by hand:",
     "The turn player brought the monster to the field that turn by Summoning it or Setting it.",
     "position.not_if_summoned_or_set_this_turn"),
    ("You may not switch a monster's position yourself:", "in the same turn it was Set.",
     "position.not_if_summoned_or_set_this_turn"),
    ("A monster's battle position cannot be changed by hand if:", "it was already switched once that turn.",
     "position.once_per_turn"),
])
def test_list_item_without_trigger_word_read_with_its_lead_in(lead_in, item, expected):
    assert list(_rules_of(f"Rules\n\n{lead_in}\n- {item}\n")) == [expected]
    assert _rules_of(f"Rules\n\nThings to remember:\n- {item}\n") == {}


def test_pdf_text_paragraphs_and_items():
    text = ("How To Play\n12 13\nYou can change the position of each monster you control, except in\n"
            "three cases. 1. You cannot change the battle position of a monster\nthat was played onto the field "
            "this turn. 2. You cannot change it\nif the monster attacked this turn.\nHow To Play\nAn acti-\n"
            "vated card stays. Quick-\nPlay Spells too.\nHow To Play\n")
    got = [p for p, _ in paragraphs(text)]
    assert got == ["You can change the position of each monster you control, except in three cases. 1. You cannot "
                   "change the battle position of a monster that was played onto the field this turn. 2. You cannot "
                   "change it if the monster attacked this turn.", "An activated card stays. Quick-Play Spells too."]
    page = normalize_pdf_text(text, _source("pdf-text"))
    assert [(b.lines[0].text[:9], b.bullet, b.parent) for b in page.blocks] == [
        ("You can c", False, None), ("1. You ca", True, 0), ("2. You ca", True, 0), ("An activa", False, None)]
    assert sorted(_rules_of(text, "pdf-text")) == ["position.not_after_attack_declared",
                                                   "position.not_if_summoned_or_set_this_turn"]


def test_rulebook_states_its_rules():
    text = (BUNDLED / "pages" / "en" / "konami-tcg-rulebook-v10.txt").read_text(encoding="utf-8")
    assert sorted(_rules_of(text, "pdf-text")) == [
        "battle.attack_once_per_turn", "battle.attackers_face_up_attack_position",
        "battle.attacks_in_own_battle_phase", "battle.no_battle_phase_first_turn",
        "battle.replay_on_monster_count_change", "position.flip_summon_is_manual_change", "position.not_after_attack_declared",
        "position.not_if_summoned_or_set_this_turn", "position.once_per_turn"]


def test_features_polarity_longest_first():
    from pipeline.match import pipeline_for
    nlp = pipeline_for("en")
    assert procedural.features(nlp("It may not be changed.").user_data[procedural.USER_DATA_KEY]).polarity == "CANNOT"
    assert procedural.features(nlp("You CAN change it, not by hand.").user_data[
        procedural.USER_DATA_KEY]).polarity == "CAN"


def test_token_pattern_strings():
    groups = {"CHANGE": ["change", "changed"], "POSITION": ["position"]}
    assert procedural.token_pattern("CHANGE|switch *4 ?battle POSITION *8 turn", groups) == [
        {"LOWER": {"IN": ["change", "changed", "switch"]}}, {"OP": "{0,4}"}, {"LOWER": "battle", "OP": "?"},
        {"LOWER": "position"}, {"OP": "*"}, {"LOWER": "turn"}]


def _one_matcher(nlp):
    """One spaCy ``Matcher`` holding every pattern of the schema, each
    feature filtered ``greedy="LONGEST"``: the reader's reference."""
    from spacy.matcher import Matcher

    from pipeline.schema import procedural_grammar

    grammar = procedural_grammar()
    matcher = Matcher(nlp.vocab)
    for feature, patterns in grammar["patterns"].items():
        matcher.add(feature, [procedural.token_pattern(p, grammar["words"]) for p in patterns], greedy="LONGEST")
    return matcher


def test_reader_finds_what_one_matcher_of_every_pattern_finds():
    """The reader runs each pattern alone, only on sentences holding its
    required words and only over the tokens around its anchor word: the
    same spans per feature, in the same order, as one Matcher of every
    pattern, on the rewrites, the sentence cases, the rulebook's paragraphs and 300 random runs of the
    schema's words (up to 150 tokens: windows inside long sentences)."""
    import random

    from pipeline.match import pipeline_for
    from pipeline.schema import procedural_grammar

    nlp = pipeline_for("en")
    texts = [line for f in sorted(CASES.glob("*.txt")) for line in f.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    texts += [s for _, s in SENTENCES["states"]] + SENTENCES["states_nothing"]
    rulebook = (BUNDLED / "pages/en/konami-tcg-rulebook-v10.txt").read_text(encoding="utf-8")
    texts += [p for p, _ in paragraphs(rulebook)]  # long paragraphs
    grammar = procedural_grammar()
    words = sorted({w for group in grammar["words"].values() for w in group}
                   | {w for patterns in grammar["patterns"].values() for p in patterns for token in p.split()
                      for w in token.lstrip("?").split("|") if not w.isupper() and not w.startswith("*")})
    words += ["the", "a", "it", "monster", ",", "."] * 20
    rnd = random.Random(35)
    texts += [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 150))) for _ in range(300)]
    matcher, differ = _one_matcher(nlp), []
    for doc in nlp.pipe(texts):
        found: dict[str, list[tuple[int, int]]] = {}
        for match_id, start, end in matcher(doc):
            found.setdefault(nlp.vocab.strings[match_id], []).append((start, end))
        if doc.user_data[procedural.USER_DATA_KEY] != found:
            differ.append(doc.text)
    assert not differ, differ[:3]
    assert len(texts) > 500


def test_phrases_of_a_pattern_without_gaps():
    """A pattern without gaps -> every word sequence it matches (the
    PhraseMatcher's share); a pattern with a gap -> None (a Matcher's)."""
    groups = {"CHANGE": ["change", "switch"], "POSITION": ["position"]}
    assert sorted(procedural.phrases(procedural.token_pattern("?battle POSITION CHANGE", groups))) == [
        ("battle", "position", "change"), ("battle", "position", "switch"), ("position", "change"),
        ("position", "switch")]
    assert procedural.phrases(procedural.token_pattern("?only ?once", groups)) == [("only", "once"), ("only",),
                                                                                   ("once",)]
    assert procedural.phrases(procedural.token_pattern("CHANGE *4 POSITION", groups)) is None
    assert procedural.phrases(procedural.token_pattern("CHANGE *8 POSITION", groups)) is None
