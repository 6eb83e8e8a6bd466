"""The generated JavaScript module (engine/ocg_rules.mjs) against the Python
module: Node's built-in test runner compares their answers on every public
scenario, a scenario per (event, question) of the format, malformed
scenarios, every (kind, event) pair and every citation."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import CASES, GOLD, HERE
from test_generated_engine import _minimal_events


NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None and not os.environ.get("RULINGS_REQUIRE_NODE"),
                                reason="Node.js is not installed (CI installs it and sets RULINGS_REQUIRE_NODE)")

QUESTIONS = [{"question": "can_change_position_manually", "phase": "main1", "player": "B"},
             {"question": "can_change_position_manually", "phase": "main2", "player": "A"},
             {"question": "can_declare_attack", "phase": "battle", "player": "B"},
             {"question": "can_declare_attack", "phase": "battle", "player": "A"},
             {"question": "can_conduct_battle_phase", "player": "B"}]


def _scenarios(engine) -> list[dict]:
    """The public scenarios, then for each event of the format: a monster
    summoned, that event, turned face-down, flipped, temporarily banished,
    asked every question (and `has` of every kind) on turns 2 and 3."""
    out = json.loads((GOLD / "scenarios_public.json").read_text(encoding="utf-8"))
    out += json.loads((CASES / "scenarios_cases.json").read_text(encoding="utf-8"))  # conditional rules by case
    for n, event in enumerate(_minimal_events(engine)):
        event = {**event, "turn": 2}
        histories = {
            "plain": [event],
            "down": [event, {"turn": 2, "do": "turn_face_down"}],
            "down-up": [event, {"turn": 2, "do": "turn_face_down"}, {"turn": 3, "do": "flip_face_up"}],
            "banish": [event, {"turn": 3, "do": "temp_banish"}],
        }
        for name, history in histories.items():
            events = [{"turn": 1, "do": "summon", "method": "synchro", "by": "A", "from": "extra_deck"}, *history]
            for turn in (2, 3) if name == "plain" else (3,):
                asks = [{"turn": turn, "question": "has", "info_kind": k} for k in engine.INFO_KINDS]
                asks += [{"turn": turn, **q} for q in QUESTIONS]
                out += [{"id": f"e{n}-{name}-t{turn}-{i}", "events": events, "ask": ask} for i, ask in enumerate(asks)]
    out.append({"id": "no-events", "events": [], "ask": {"turn": 2, "question": "can_declare_attack", "phase": "battle",
                                                          "player": "B"}})
    out.append({"id": "float-turn", "events": [{"turn": 1.0, "do": "summon", "method": "xyz", "by": "A"}],
                "ask": {"turn": 2.0, "question": "has", "info_kind": "xyz_summoned"}})
    out.append({"id": "summoned-again", "events": [{"turn": 1, "do": "summon", "method": "synchro", "by": "A"},
                                                   {"turn": 3, "do": "summon", "method": "normal", "by": "A"}],
                "ask": {"turn": 3, "question": "has", "info_kind": "synchro_summoned"}})
    return out


MALFORMED = [
    "not a scenario",
    {"events": []},
    {"id": "a", "events": {}},
    {"id": "b", "events": [{"turn": 0, "do": "battle"}], "ask": {}},
    {"id": "c", "events": [{"turn": 2, "do": "battle"}, {"turn": 1, "do": "battle"}], "ask": {}},
    {"id": "d", "events": [{"turn": 1, "do": "summon", "by": "A"}], "ask": {}},
    {"id": "e", "events": [{"turn": 1, "do": "summon", "method": "synchro", "by": "C"}], "ask": {}},
    {"id": "f", "events": [{"turn": 1, "do": "summon", "method": "synchro", "by": "A", "face_down": 1}], "ask": {}},
    {"id": "g", "events": [{"turn": 1, "do": "activate_effect", "pledge": "both"}], "ask": {}},
    {"id": "h", "events": [], "ask": {"turn": 1, "question": "has"}},
    {"id": "i", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "synchro"}},
    {"id": "j", "events": [], "ask": {"turn": True, "question": "can_conduct_battle_phase", "player": "A"}},
    {"id": "k", "events": [{"turn": 3, "do": "battle"}], "ask": {"turn": 2, "question": "can_conduct_battle_phase",
                                                                  "player": "A"}},
    {"id": "l", "events": [], "ask": {"turn": 1, "question": "can_declare_attack", "phase": "main3", "player": "A"}},
    {"id": "m", "events": [{"turn": 1, "do": "summon", "method": "special", "by": "A", "own_procdure": True}], "ask": {}},
    {"id": "n", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "counters", "phase": "main1"}},
    {"id": "o", "events": [], "ask": {"turn": 2 ** 53 + 1, "question": "can_conduct_battle_phase", "player": "A"}},
    {"id": "p\x1b[31m", "events": [], "ask": {"turn": 1, "question": "can_conduct_battle_phase", "player": "A"}},
    {"id": "q\u202e\U0001f319", "events": [], "ask": {"turn": 1, "question": "can_conduct_battle_phase", "player": "A"}},
    {"id": "twice", "events": [], "ask": {"turn": 1, "question": "can_conduct_battle_phase", "player": "A"}},
    {"id": "twice", "events": [], "ask": {"turn": 2, "question": "can_conduct_battle_phase", "player": "B"}},
]


def test_the_javascript_engine_answers_as_the_python_engine(built, engine_module, tmp_path):
    assert NODE, "Node.js is required (RULINGS_REQUIRE_NODE is set)"
    scenarios = _scenarios(engine_module)
    cases = {
        "rules_hash": engine_module.RULES_HASH,
        "info_kinds": list(engine_module.INFO_KINDS),
        "events": list(engine_module.EVENTS),
        "retains": [engine_module.retains(k, e)._asdict() for k in engine_module.INFO_KINDS
                    for e in engine_module.EVENTS],
        "scenarios": scenarios,
        "answers": [engine_module.answer(s) for s in scenarios],
        "malformed": MALFORMED,
        "malformed_answers": engine_module.answer_all(MALFORMED),
        "citations": [engine_module.citation(rid) for rid in sorted(engine_module.CITATIONS)],
    }
    assert {a["answer"] for a in cases["answers"]} == {True, False, "unknown"}
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "ENGINE_MJS": str(built[2].with_suffix(".mjs")), "CASES": str(path)}
    out = subprocess.run([NODE, "--test", str(HERE / "js" / "equivalence.test.mjs")], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "# pass 6" in out.stdout and "# fail 0" in out.stdout


def test_the_javascript_module_is_byte_stable_and_standalone(built, tmp_path):
    """Same tables, same bytes; the module imports nothing (no import
    statement), so a copy works anywhere Node or a browser runs."""
    from pipeline.enginejs import render_js
    from pipeline.generate import vocabulary_tables

    mjs = built[2].with_suffix(".mjs").read_text(encoding="utf-8")
    assert "\nimport " not in mjs and "require(" not in mjs
    assert mjs.isascii()
    tables = {**vocabulary_tables(), "RULES": (), "CITATIONS": {}, "SOURCES": {}, "PROCEDURAL": {}}
    assert render_js(tables, "0" * 64) == render_js(dict(tables), "0" * 64)


def test_the_json_rules_follow_their_schema_and_hold_the_python_tables(built, engine_module):
    import jsonschema

    schema = json.loads((HERE.parent / "schema" / "ocg_rules.schema.json").read_text(encoding="utf-8"))
    data = json.loads(built[2].with_suffix(".json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["rules_hash"] == engine_module.RULES_HASH
    assert len(data["rules"]) == len(engine_module.RULES) and set(data["citations"]) == set(engine_module.CITATIONS)
    for rule in data["rules"]:
        assert rule == json.loads(json.dumps(engine_module.retains(rule["info_kind"], rule["event"])._asdict()))
    bad = {**data, "rules": [{**data["rules"][0], "verdict": "maybe"}]}
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


CARD_EVENTS = ["face_down", "temp_banish", "flip_face_up", "face_down,flip_face_up", "temp_banish,flip_face_up"]


def test_the_javascript_card_answers_are_the_python_ones_for_every_card(built, engine_module, tmp_path):
    """``card_answer`` of both engines: every card of the card table after
    each event and sequence, and a few cards with facts told."""
    assert NODE, "Node.js is required (RULINGS_REQUIRE_NODE is set)"
    cards = sorted(int(p) for p in engine_module._card_data()["cards"])
    assert len(cards) > 1000
    questions = [{"card": c, "events": ev, "facts": None} for c in cards for ev in CARD_EVENTS]
    questions += [{"card": c, "events": ev, "facts": facts} for c in cards[:200] for ev in ("face_down", "temp_banish")
                  for facts in ({"summon_this_turn": "flip", "count_scope": "whole_turn"},
                                {"summon_this_turn": "special", "can_normal_summon": False,
                                 "count_scope": "from_activation"})]
    answers = [engine_module.card_answer(q["card"], q["events"], q["facts"]) for q in questions]
    assert {e["works"] for a in answers for e in a["effects"]} == {True, False, None}
    assert {e["decided_by"] for a in answers for e in a["effects"]} == {"card_ruling", "general_rule", "no_dependency"}
    refused = [{"card": 14087893, "events": "face_down", "facts": None, "error": "KeyError"},
               {"card": cards[0], "events": "face_dow", "facts": None, "error": "ValueError"},
               {"card": cards[0], "events": "face_down", "facts": {"count_scope": "forever"}, "error": "ValueError"},
               {"card": cards[0], "events": "face_down", "facts": {"turn": 1}, "error": "ValueError"},
               {"card": [cards[0]], "events": "face_down", "facts": None, "error": "TypeError"},
               {"card": cards[0], "events": 3, "facts": None, "error": "TypeError"}]
    for bad in refused:
        with pytest.raises({"KeyError": KeyError, "ValueError": ValueError, "TypeError": TypeError}[bad["error"]]):
            engine_module.card_answer(bad["card"], bad["events"], bad["facts"])
    path = tmp_path / "cards.json"
    path.write_text(json.dumps({"questions": questions, "answers": answers, "refused": refused}, ensure_ascii=False),
                    encoding="utf-8")
    env = {**os.environ, "ENGINE_MJS": str(built[2].with_suffix(".mjs")), "CASES": str(path)}
    out = subprocess.run([NODE, "--test", str(HERE / "js" / "cards.test.mjs")], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "# pass 2" in out.stdout and "# fail 0" in out.stdout
