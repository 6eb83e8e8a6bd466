"""The structure the stages rely on: one schema loader that validates,
record types without spaCy, the engine's vocabulary generated from
``schema/``, load's row builders checked against the DDL."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import cardlinks, load, schema
from pipeline.cli import main
from pipeline.compile import ProceduralRule, compile_rules
from pipeline.corpus import load_manifest
from pipeline.dates import RulingDate
from pipeline.errors import LoadError
from pipeline.generate import vocabulary_tables
from pipeline.load import BuildData
from pipeline.records import CardMention, Record, Statement
from pipeline.review import review
from pipeline.stored import SnapshotInfo
from conftest import ROOT

RUNTIME = ROOT / "engine" / "runtime.py"
LOADERS = (schema.vocabulary, schema.retention_terms, schema.procedural_grammar, schema.procedural_rules,
           schema.markers, schema.channel_labels, schema.mediawiki_sites, schema.ddl, schema.retention_terms_en,
           schema.rulesets, schema.scenario_schema, schema.scenario_format)


# --------------------------------------------------------------------------- the engine's vocabulary


def _runtime_code() -> ast.Module:
    text = RUNTIME.read_text(encoding="utf-8")
    return ast.parse(text.split("# ==== RUNTIME ====\n", 1)[1])


def _first_string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Tuple) and node.elts:
        node = node.elts[0]
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def test_every_id_the_runtime_names_exists_in_the_schema():
    kinds, gains = set(schema.info_kinds()), set(schema.vocabulary()["scenario"]["gains"])
    named_kinds, named_gains, rule_ids = set(), set(), set()
    for node in ast.walk(_runtime_code()):
        # info kinds: keys of the monster's info, because and retention lookups
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            owner = node.func.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if node.func.attr in ("get", "setdefault") and owner_name in ("info", "because", "_RETENTION"):
                value = _first_string(node.args[0])
                if value is not None:
                    named_kinds.add(value)
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "GAINS":
            value = _first_string(node.slice)
            if value is not None:
                named_gains.add(value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                r"(position|battle)\.[a-z_]+", node.value):
            rule_ids.add(node.value)
    assert named_kinds == {"position_change_restrictions", "attack_declared"}  # the test sees what it checks
    assert named_kinds <= kinds
    assert named_gains and named_gains <= gains
    assert len(rule_ids) >= 8 and rule_ids <= set(schema.procedural_rules()), rule_ids - set(schema.procedural_rules())


# --------------------------------------------------------------------------- one schema loader, validated

@pytest.fixture
def schema_copy(tmp_path, monkeypatch):
    """A copy of schema/ that the loaders read instead of the project's."""
    copy = tmp_path / "schema"
    shutil.copytree(ROOT / "schema", copy)
    monkeypatch.setattr(schema, "SCHEMA_DIR", copy)
    for loader in LOADERS:
        loader.cache_clear()
    yield copy
    monkeypatch.undo()
    for loader in LOADERS:
        loader.cache_clear()


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_a_renamed_verdict_fails_the_build_with_one_line_naming_file_and_key(schema_copy, tmp_path):
    _edit_json(schema_copy / "retention_terms.json",
               lambda d: d["verdicts"].__setitem__("kep", d["verdicts"].pop("kept")))
    result = CliRunner().invoke(main, ["build", "--db", str(tmp_path / "out/db.duckdb"),
                                       "--engine-out", str(tmp_path / "out/e.py")])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {schema_copy / 'retention_terms.json'}: verdicts.kep is not a verdict "
                      "(known: kept, lost, not_applicable)"]
    assert "Traceback" not in result.output
    assert not (tmp_path / "out/db.duckdb").exists()


@pytest.mark.parametrize("file, edit, message", [
    ("retention_terms.json", lambda d: d["topics"]["里侧·一时除外"]["指示物"].__setitem__("default", "counter"),
     "topics.里侧·一时除外.指示物.default is not an info kind"),
    ("retention_terms.json", lambda d: d["events"].__setitem__("face_up", ["表侧"]), "events.face_up is not an event"),
    ("retention_terms.json", lambda d: d.pop("hypothetical"), "hypothetical is missing"),
    ("procedural_rules.json", lambda d: d["rules"].append(dict(d["rules"][0])),
     "rules[14].id 'position.manual_change_main_phase_only' is a duplicate"),
    ("procedural_rules.json", lambda d: d["patterns"]["ONCE"].insert(0, "ONCE_WORD PER TURNS"),
     "patterns.ONCE[0] names 'TURNS', which is no word group"),
    ("procedural_rules.json", lambda d: d["rules"][0]["readings"][0]["all"].append("MAIN_PHASES"),
     "rules[0].readings[0].all is not a feature with patterns"),
    ("procedural_rules.json", lambda d: d["rules"][2]["readings"][0].__setitem__("polarity", "MUST"),
     "rules[2].readings[0].polarity is not a polarity"),
    ("vocabulary.json", lambda d: d["scenario"]["take_control_modes"].__setitem__("temporary", "control_temp"),
     "scenario.take_control_modes.temporary is not an info kind"),
    ("markers.json", lambda d: d.__setitem__("example_labels", []), "example_labels must be a non-empty list"),
    ("scenario.schema.json", lambda d: d["$defs"]["summon_method"]["enum"].remove("link"),
     "$defs.summon_method.enum must list the vocabulary's ids"),
    ("scenario.schema.json", lambda d: d["$defs"]["ask"]["oneOf"][0]["required"].remove("info_kind"),
     "$defs.ask.oneOf questions and required fields differ"),
    ("scenario.schema.json", lambda d: d["$defs"]["event"]["oneOf"][4]["properties"].__setitem__("x", {"$ref": "#/$defs/y"}),
     "$defs.event.oneOf[4].properties.x refers to #/$defs/y"),
    ("vocabulary.json", lambda d: d["scenario"]["gains"].pop("pledge_other"),
     "scenario.gains has no entry 'pledge_other'"),
    ("vocabulary.json", lambda d: d["scenario"]["gains"].pop("gain_protection"),
     "scenario.gains has no entry for the event 'gain_protection' of scenario.schema.json"),
])
def test_each_schema_file_is_checked_key_by_key(schema_copy, file, edit, message):
    _edit_json(schema_copy / file, edit)
    with pytest.raises(schema.SchemaError) as info:
        schema.check_all()
    assert str(info.value).startswith(f"{schema_copy / file}: {message}")


def test_a_tsv_without_its_columns_and_broken_json_are_named(schema_copy):
    path = schema_copy / "channels.tsv"
    path.write_text(path.read_text(encoding="utf-8").replace("label\tchannel", "labels\tchannel", 1), encoding="utf-8")
    with pytest.raises(schema.SchemaError, match=r"channels.tsv: header lacks the columns \['label'\]"):
        schema.check_all()
    schema.channel_labels.cache_clear()
    schema.markers.cache_clear()
    path.write_text("label\tchannel\n", encoding="utf-8")
    (schema_copy / "markers.json").write_text("{", encoding="utf-8")
    with pytest.raises(schema.SchemaError, match=r"markers.json: not JSON: .* line 1"):
        schema.check_all()


def test_only_schema_py_opens_schema_files():
    """No module but schema.py names the folder (SCHEMA_DIR, or a path joined with "schema"); the checks
    of schemavocab / schematerms / schemarules take the parsed files, and errors.py names the error's stage."""
    offenders = [p.name for p in (ROOT / "pipeline").glob("*.py")
                 if p.name != "schema.py" and re.search(r"SCHEMA_DIR|/\s*[\"']schema[\"']|[\"']schema/",
                                                        p.read_text(encoding="utf-8"))]
    assert offenders == []


# --------------------------------------------------------------------------- light record types

@pytest.mark.parametrize("module", ["pipeline.compile", "pipeline.generate", "pipeline.load", "pipeline.records",
                                    "pipeline.cli", "pipeline.refresh", "pipeline.run", "pipeline.queries"])
def test_no_stage_but_extract_loads_spacy(module):
    code = f"import sys, {module}; print('spacy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_extract_loads_spacy_when_it_reads_a_page():
    code = "import sys; from pipeline.match import pipeline_for; pipeline_for('zh'); print('spacy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "True"


# The modules a read command never needs: the scraping, parsing, building and report stages, and the
# libraries only they use (the bench's cli_start figures measure what this keeps out).


# --------------------------------------------------------------------------- load: rows against the DDL

def _sample_data() -> BuildData:
    source = load_manifest()[0]
    record = Record("r1", source.id, 0, 0, ("指示物",), "principle", "", "current", "「月之书」仍然是。16/1/8",
                    "「月之书」仍然是。16/1/8", dates=[RulingDate("16/1/8", 10, 16, "2016-01-08", True, "")],
                    cards=[CardMention("月之书", 1, 4, None, "月之书")],
                    statements=[Statement("counters", "face_down", "kept")])
    effect_text = "「急袭猛禽-穿刺伯劳」变成里侧再反转，②效果可以发动。"  # a ruling on a card's effect: effect_rulings
    on_effect = Record("r2", source.id, 1, 0, ("指示物",), "principle", "", "current", effect_text, effect_text,
                       cards=[CardMention("急袭猛禽-穿刺伯劳", 1, 10, None, "急袭猛禽-穿刺伯劳")])
    rules = compile_rules([record])
    procedural = [ProceduralRule("battle.attack_once_per_turn", "once", ("r1",), ("2016-01-08",))]
    changes = review({("counters", "face_down"): ("lost", ())}, rules)  # the database before said lost
    return BuildData([source], [SnapshotInfo(source.id, "0" * 64, 10)], [record, on_effect], rules, procedural,
                     {"run_id": 1, "kind": "build", "started_at": "2026-01-01T00:00:00",
                      "ended_at": "2026-01-01T00:00:01", "tried": 1, "unchanged": 0, "changed": 1, "failed": 0,
                      "details": ""}, {"rules_hash": "x"}, changes)


def test_the_row_builders_fill_every_column_of_the_ddl():
    rows = {table: list(table_rows) for table, table_rows in load._rows(_sample_data()).items()}
    filled = {table for table, table_rows in rows.items() if table_rows}
    # a build starts the change log empty; card_names is filled by insert_card_names, the card-text
    # tables by cardtables.insert_card_texts (in the columns it names)
    from pipeline import cardtables

    assert filled == set(load.columns()) - {"record_changes", "card_names", *cardtables.COLUMNS}
    for table in filled:
        assert list(rows[table][0]) == list(load.columns()[table]), table
    for table, names in cardtables.COLUMNS.items():
        assert list(names) == list(load.columns()[table]), table


def test_card_names_hold_every_name_with_the_key_card_mentions_use():
    import duckdb

    from pipeline.chinese import name_key

    con = duckdb.connect()
    load.create_schema(con)
    cardlinks.insert_card_names(con)
    assert con.execute("SELECT count(*) FROM card_names").fetchone()[0] == len(cardlinks.card_name_rows()) > 80000
    assert con.execute("SELECT DISTINCT passcode FROM card_names WHERE name_key = ?",
                       [name_key("月之書")]).fetchall() == [(14087893,)]
    assert con.execute("SELECT name_key FROM card_names WHERE passcode = 14087893 AND language = 'zh-TW'"
                       ).fetchone()[0] == name_key("月之书")


def test_card_name_rows_key_each_name_as_card_name_key_does():
    from pipeline.cards import card_loose_key, card_name_key

    rows = cardlinks.card_name_rows()  # (passcode, konami_id, language, name, name_key, loose_key)
    assert sum(1 for r in rows if r[2].startswith("zh")) > 30000
    assert [r[4] for r in rows] == [card_name_key(r[2], r[3]) for r in rows]
    assert [r[5] for r in rows] == [card_loose_key(r[2], r[3]) for r in rows]


def test_a_column_added_to_the_ddl_is_caught_when_its_builder_misses_it(monkeypatch):
    ddl = schema.ddl() + "\nALTER TABLE statements ADD COLUMN confidence DOUBLE;\n"
    monkeypatch.setattr(load, "ddl", lambda: ddl)
    monkeypatch.setattr(schema, "ddl", lambda: ddl)  # database.columns reads the DDL through schema
    load.columns.cache_clear()
    try:
        assert "confidence" in load.columns()["statements"]
        with pytest.raises(LoadError, match=r"rows of table statements do not match schema/ddl.sql: "
                                            r"missing \['confidence'\]"):
            load._rows(_sample_data())
    finally:
        monkeypatch.undo()
        load.columns.cache_clear()
