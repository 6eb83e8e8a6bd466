"""The command line end to end (click's CliRunner, real database and engine)."""

import json

import pytest
from click.testing import CliRunner

from conftest import GOLD, make_corpus
from pipeline.cli import main

COMMANDS = sorted(main.all_commands())


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_and_is_documented(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert len(result.output.splitlines()) > 5
    readme = (GOLD.parent.parent / "README.md").read_text(encoding="utf-8")
    assert f"rulings {command}" in readme


@pytest.mark.parametrize("argv, loaded, not_loaded", [
    (["--version"], [], ["duckdb", "pipeline.cli_common", "pipeline.cli_read", "pipeline.cli_write", "pipeline.cli_check"]),
    (["sql", "SELECT 42", "--db", "DB"], ["duckdb", "pipeline.cli_read"], ["pipeline.cli_write", "pipeline.cli_check"]),
    (["scenario", "--help"], ["pipeline.cli_check"], ["pipeline.cli_read", "pipeline.cli_write"]),
    (["--help"], ["pipeline.cli_read", "pipeline.cli_write", "pipeline.cli_check"], []),
])
def test_a_command_line_imports_only_its_commands_module(built, argv, loaded, not_loaded):
    """cli.COMMANDS: the group imports the module of the command named (all of them for --help)."""
    import ast
    import subprocess
    import sys

    argv = [str(built[1]) if a == "DB" else a for a in argv]
    code = ("import sys\nfrom pipeline.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\nprint(sorted(sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         cwd=GOLD.parent.parent)
    assert out.returncode == 0, out.stderr
    modules = set(ast.literal_eval(out.stderr.strip().splitlines()[-1]))  # the list printed last
    assert [m for m in loaded if m not in modules] == [] and [m for m in not_loaded if m in modules] == []
    assert out.stdout.strip()


def test_build_prints_summary_and_writes_outputs(tmp_path):
    corpus = make_corpus(tmp_path / "c", ["seed-000-battle-position", "seed-004-face-down-temp-banish"])
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    result = run("build", "--corpus", corpus, "--db", db, "--engine-out", engine)
    assert result.exit_code == 0, result.output
    assert "records          225 (" in result.output
    assert "rules            105:" in result.output
    assert db.is_file() and engine.is_file()
    data = json.loads(run("build", "--corpus", corpus, "--db", db, "--engine-out", engine, "--json").output)
    assert data["sources"] == 2 and data["records"] == 225 and data["errors"] == []


def test_ask_text_and_json(built):
    _, db, _ = built
    out = run("ask", "synchro_summoned", "face_down", "--db", db)
    assert out.exit_code == 0
    assert out.output.splitlines()[0] == "synchro_summoned on face_down: kept"
    assert "2016-01-08" in out.output and "仍然是S召唤的怪兽" in out.output
    data = json.loads(run("ask", "pendulum_summoned", "face_down", "--db", db, "--json").output)
    assert data["verdict"] == "lost" and data["citations"][0]["dates"] == ["2014-11-14"]


def test_ask_prints_a_list_item_under_its_lead_in(built):
    _, db, _ = built
    lines = run("ask", "synchro_summoned", "face_down", "--db", db).output.splitlines()
    at = lines.index("      A monster flipped face-down remembers:")
    assert lines[at + 1] == "        that it was Normal / Flip / Tribute / Ritual / Fusion / Synchro / Special Summoned."
    data = json.loads(run("ask", "synchro_summoned", "face_down", "--db", db, "--json").output)
    leads = {c["record_id"]: c["lead_in"] for c in data["citations"]}
    assert leads["r79c9d63814bf95c"] == "A monster flipped face-down remembers:"
    assert sum(lead is None for lead in leads.values()) >= 2  # a Chinese ruling hangs under no lead-in


def test_ask_unknown_name_is_a_clear_error(built):
    _, db, _ = built
    out = CliRunner().invoke(main, ["ask", "synchro_sumoned", "face_down", "--db", str(db)])
    assert out.exit_code == 2
    assert "Error: unknown info kind 'synchro_sumoned' (did you mean 'synchro_summoned'?)" in out.output


def test_ask_with_its_two_names_swapped_says_so(built):
    _, db, _ = built
    out = CliRunner().invoke(main, ["ask", "face_down", "synchro_summoned", "--db", str(db)])
    assert out.exit_code == 2
    assert out.output.strip() == ("Error: 'face_down' is an event and 'synchro_summoned' an info kind: the info kind "
                                  "comes first (rulings ask synchro_summoned face_down)")


def test_show_an_id_cut_short_or_mistyped_suggests_the_record(built):
    _, db, _ = built
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        [(record_id,)] = con.execute("SELECT min(record_id) FROM records").fetchall()
    for given in (record_id[:-1], record_id[:-1] + ("0" if record_id[-1] != "0" else "1")):
        out = CliRunner().invoke(main, ["show", given, "--db", str(db)])
        assert out.exit_code == 2 and out.output.strip() == f"Error: no record {given!r} (did you mean {record_id!r}?)"
    out = CliRunner().invoke(main, ["show", "zzz", "--db", str(db)])
    assert out.exit_code == 2 and out.output.strip() == "Error: no record 'zzz'"


def test_ask_name_with_no_close_match_lists_the_known_ones(built):
    _, db, _ = built
    out = CliRunner().invoke(main, ["ask", "zzz", "face_down", "--db", str(db)])
    assert out.exit_code == 2
    assert "Error: unknown info kind 'zzz'; known: " in out.output and "synchro_summoned" in out.output


def test_sql_table_marks_cut_text(built):
    _, db, _ = built
    out = run("sql", "SELECT repeat('x', 100) AS long, 'short' AS s", "--db", db)
    assert "x" * 79 + "…" in out.output and "x" * 80 not in out.output
    # CJK characters take two terminal columns: cut at 39 of them, rows aligned.
    out = run("sql", "SELECT * FROM (VALUES (repeat('龙', 50), 1), ('星尘龙', 2)) t(name, n) ORDER BY n", "--db", db)
    lines = out.output.splitlines()
    assert lines[2] == "龙" * 39 + "… " + " | 1"  # 78 columns, the mark, one space of padding
    assert lines[3] == "星尘龙" + " " * 74 + " | 2"


def test_ask_binds_input_as_parameters(built):
    _, db, _ = built
    out = CliRunner().invoke(main, ["ask", "x' OR '1'='1", "face_down", "--db", str(db)])
    assert out.exit_code == 2 and "unknown info kind" in out.output


def test_sql_readme_queries(built):
    _, db, _ = built
    dated = json.loads(run("sql", "SELECT count(DISTINCT record_id) AS n FROM record_dates WHERE date = DATE '2017-03-24'",
                           "--db", db, "--json").output)
    assert dated[0]["n"] > 50
    moon = json.loads(run("sql", "SELECT DISTINCT r.record_id FROM records r JOIN card_mentions c USING (record_id) "
                                 "WHERE c.norm_name = '月之书'", "--db", db, "--json").output)
    assert len(moon) >= 10
    table = run("sql", "SELECT info_kind, event, verdict FROM rules ORDER BY ALL", "--db", db)
    assert "(105 rows)" in table.output


def test_sql_is_read_only_by_default(built):
    _, db, _ = built
    out = CliRunner().invoke(main, ["sql", "DELETE FROM rules", "--db", str(db)])
    assert out.exit_code == 2 and "read-only" in out.output.lower()


def test_evaluate_last_line(built):
    _, db, _ = built
    out = run("evaluate", "--gold", GOLD / "retention_public.csv", "--db", db)
    assert out.output.splitlines()[-1] == "30/30 verdicts correct"


def test_scenario_command(built, tmp_path):
    _, _, engine = built
    out = run("scenario", GOLD / "scenarios_public.json", "--engine-out", engine, "--json")
    assert out.exit_code == 0
    answers = {r["id"]: r["answer"] for r in json.loads(out.output)}
    expected = {s["id"]: s["expect"] for s in json.loads((GOLD / "scenarios_public.json").read_text())}
    assert answers == expected
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "oops", "events": [{"turn": 1, "do": "dance"}],
                                "ask": {"turn": 1, "question": "has", "info_kind": "counters"}},
                               json.loads((GOLD / "scenarios_public.json").read_text())[0]]))
    out = CliRunner().invoke(main, ["scenario", str(bad), "--engine-out", str(engine)])
    assert out.exit_code == 2
    assert out.output.count("scenario 'oops': field 'events[0].do'") == 1  # said once, as the error
    assert "ns-same-turn: false" in out.output


def test_show_record_provenance(built):
    _, db, _ = built
    rid = json.loads(run("sql", "SELECT d.record_id FROM record_dates d JOIN records r USING (record_id) "
                         "WHERE d.faq_id = '11586' AND r.source_id = 'ocg-rule-c03-face-down-temp-banish' LIMIT 1",
                         "--db", db, "--json").output)[0]["record_id"]
    data = json.loads(run("show", rid, "--db", db, "--json").output)
    assert data["source_id"] == "ocg-rule-c03-face-down-temp-banish"
    assert data["url"].startswith("https://ocg-rule.readthedocs.io/")
    assert len(data["snapshot_hash"]) == 64
    assert data["dates"][0]["faq_id"] == "11586" and data["dates"][0]["date"] == "2017-03-24"
    assert "星尘龙" in [c["name"] for c in data["cards"]]


def test_missing_database_is_a_clear_error(tmp_path):
    out = CliRunner().invoke(main, ["ask", "counters", "face_down", "--db", str(tmp_path / "none.duckdb")])
    assert out.exit_code == 2 and "run `rulings build` first" in out.output


def test_build_refuses_to_run_while_the_database_is_locked(tmp_path):
    from filelock import FileLock

    corpus = make_corpus(tmp_path / "c", ["seed-000-battle-position"])
    db = tmp_path / "r.duckdb"
    with FileLock(f"{db}.lock"):
        out = CliRunner().invoke(main, ["build", "--corpus", str(corpus), "--db", str(db),
                                        "--engine-out", str(tmp_path / "e.py")])
    assert out.exit_code == 1 and "is running" in out.output and not db.exists()


def test_sql_prints_lists_dates_and_maps_readably(built):
    out = run("sql", "SELECT [DATE '2019-03-04', NULL] AS d, ['a', 'b'] AS l, {'k': DATE '2020-01-02'} AS m, "
                     "TIMESTAMP '2020-01-01 10:00:00' AS t", "--db", built[1])
    row = out.output.splitlines()[2]
    assert "[2019-03-04, NULL]" in row and "[a, b]" in row and "{k: 2020-01-02}" in row
    assert "2020-01-01 10:00:00" in row and "datetime" not in out.output


def test_vocabulary_lists_every_identifier_with_its_meaning(engine_module):
    from pipeline.schema import events, info_kinds, verdicts

    data = json.loads(run("vocabulary", "--json").output)
    assert [k["id"] for k in data["info_kinds"]] == info_kinds()
    assert [e["id"] for e in data["events"]] == events() and [v["id"] for v in data["verdicts"]] == verdicts()
    assert all(k["meaning"] and k["group"] for k in data["info_kinds"])
    # the questions are the engine's own, with the fields it requires
    assert {q["id"]: set(q["fields"]) for q in data["questions"]} == {
        q: set(fields) for q, fields in engine_module.SCENARIO_QUESTIONS.items()}
    assert [e["do"] for e in data["scenario_events"]] == list(engine_module.SCENARIO_EVENTS)
    [summon] = [e for e in data["scenario_events"] if e["do"] == "summon"]
    assert summon["fields"]["own_procedure"] == {"required": False, "allowed": "boolean"}
    assert summon["fields"]["by"] == {"required": True, "allowed": ["A", "B"]}
    text = run("vocabulary").output
    assert "synchro_summoned" in text and "can_conduct_battle_phase" in text and "not_applicable" in text


@pytest.mark.parametrize("error, shown", [
    (FileNotFoundError(2, "No such file or directory", "/x/card-names.tsv"),
     "Error: /x/card-names.tsv: No such file or directory"),
    (PermissionError(13, "Permission denied", "/out/ocg_rules.py"), "Error: /out/ocg_rules.py: Permission denied"),
    (OSError(28, "No space left on device"), "Error: No space left on device"),
], ids=["a file missing", "a file not writable", "no space"])
def test_a_file_system_error_names_the_file_in_the_systems_words(capsys, error, shown):
    from pipeline.cli_common import _exit_codes

    def command():
        raise error

    with pytest.raises(SystemExit) as exit_info:
        _exit_codes(command)()
    assert exit_info.value.code == 1
    assert capsys.readouterr().err.strip() == shown


@pytest.mark.parametrize("args, message", [
    (["card", "\udcff"], "Error: NAME|PASSCODE: b'\\xff' is not valid UTF-8"),
    (["ask", "counters", "face_down\udce9"], "Error: EVENT: b'face_down\\xe9' is not valid UTF-8"),
    (["sql", "SELECT 1", "--db", "db_\udcff"], "Error: --db: b'db_\\xff' is not valid UTF-8"),
    (["build", "--corpus", "c\udcff"], "Error: --corpus: b'c\\xff' is not valid UTF-8"),
])
def test_arguments_that_are_not_utf8_give_one_error_line(args, message):
    """Bytes that are not UTF-8 reach Python as lone surrogates (a file name
    in another encoding, a terminal in Latin-1): one line and exit 2, never a
    traceback from DuckDB or the JSON encoder."""
    out = run(*args)
    assert out.exit_code == 2 and out.output.strip() == message
