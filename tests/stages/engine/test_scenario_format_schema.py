"""schema/scenario.schema.json: the scenario format as a JSON Schema, the
public scenarios valid against it, and validate() agreeing with it."""

import json

import jsonschema
import pytest

from conftest import GOLD, ROOT

SCHEMA = json.loads((ROOT / "schema" / "scenario.schema.json").read_text("utf-8"))
SCENARIOS = json.loads((GOLD / "scenarios_public.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_every_public_scenario_is_valid(scenario):
    VALIDATOR.validate(scenario)


def test_a_file_of_scenarios_is_valid_as_a_list():
    VALIDATOR.validate(SCENARIOS)


def test_the_schema_documents_the_turn_player_convention():
    assert "odd turns are A's" in SCHEMA["description"] and "A takes the first turn" in SCHEMA["$defs"]["player"]["description"]
