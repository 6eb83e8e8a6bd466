"""The generated engine's validate() and schema/scenario.schema.json agree:
they reject the same scenarios and accept an event of every kind."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import ROOT


SCHEMA = json.loads((ROOT / "schema" / "scenario.schema.json").read_text("utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

BAD = [
    {"events": [], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 0, "do": "battle"}], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "dance"}], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "summon", "by": "A"}], "ask": {"turn": 1, "question": "has",
                                                                         "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "summon", "method": "normal", "by": "C"}],
     "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "summon", "method": "normal", "by": "A", "face_down": "no"}],
     "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "change_position", "by": "A"}],
     "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "take_control", "mode": "forever", "by": "B"}],
     "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "activate_effect", "pledge": "all"}],
     "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "synchro"}},
    {"id": "x", "events": [], "ask": {"turn": 1, "question": "can_declare_attack", "player": "A"}},
    {"id": "x", "events": [], "ask": {"turn": 1, "question": "can_declare_attack", "phase": "main3", "player": "A"}},
    {"id": "x", "events": [], "ask": {"turn": 2, "question": "what"}},
    {"id": "x", "events": [], "ask": {"question": "can_conduct_battle_phase", "player": "A"}},
    {"id": "x", "events": {}, "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [{"turn": 1, "do": "summon", "method": "special", "by": "A", "own_procdure": True}],
     "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "counters", "player": "A"}},
    {"id": "x\r\ny: true", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
    {"id": "x\x1b[2J", "events": [], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
]



@pytest.mark.parametrize("scenario", BAD, ids=[str(i) for i in range(len(BAD))])
def test_validate_and_the_schema_reject_the_same_scenarios(engine_module, scenario):
    assert not VALIDATOR.is_valid(scenario)
    with pytest.raises(engine_module.ScenarioError):
        engine_module.validate(scenario)


def test_events_of_every_kind_of_the_format_are_valid_both_ways(engine_module):
    """Every do and every optional field value the engine accepts, the schema accepts."""
    from test_generated_engine import _minimal_events

    for event in _minimal_events(engine_module):
        scenario = {"id": "ok", "events": [event], "ask": {"turn": 1, "question": "has", "info_kind": "counters"}}
        engine_module.validate(scenario)
        VALIDATOR.validate(scenario)
