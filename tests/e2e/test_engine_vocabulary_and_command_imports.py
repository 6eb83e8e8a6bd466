"""The generated engine of the bundled build carries the schema's vocabulary and
answers every scenario event; the read commands import no build stage."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from conftest import ROOT
from pipeline import schema
from pipeline.generate import vocabulary_tables


HEAVY = ("pipeline.fetch", "pipeline.normalize", "pipeline.extract", "pipeline.segment", "pipeline.annotate",
         "pipeline.match", "pipeline.statements", "pipeline.reader", "pipeline.run", "pipeline.refresh",
         "pipeline.load", "pipeline.report", "pipeline.compile", "pipeline.generate", "pipeline.cards",
         "pipeline.htmlpage", "pipeline.htmlwalk", "pipeline.textpages", "pipeline.reportdata", "pipeline.reportfolder",
         "pipeline.enginejs",
         "httpx", "bs4", "lxml", "jinja2", "spacy", "opencc", "numpy", "filelock", "orjson")


def take_control(mode: str) -> dict:
    return {"id": f"tc-{mode}", "events": [{"turn": 1, "do": "summon", "method": "normal", "by": "A"},
                                           {"turn": 2, "do": "take_control", "mode": mode, "by": "B"}],
            "ask": {"turn": 2, "question": "has", "info_kind": schema.vocabulary()["scenario"]["take_control_modes"][mode]}}



@pytest.mark.parametrize("mode", ["permanent", "temporary", "continuous_target", "delayed"])
def test_take_control_gives_the_vocabularys_control_kind_with_a_reason(engine_module, mode):
    result = engine_module.answer(take_control(mode))
    assert result["answer"] is True
    assert result["because"][0] == {"rule": "history",
                                    "summary": f"events[1] (turn 2: take_control {mode}) gives "
                                               f"{schema.vocabulary()['scenario']['take_control_modes'][mode]}"}


def test_has_says_when_no_event_gives_the_kind(engine_module):
    scenario = take_control("permanent")
    scenario["ask"]["info_kind"] = "control_by_continuous_target"
    result = engine_module.answer(scenario)
    assert result["answer"] is False
    assert result["because"][0]["summary"] == "no event of the scenario gives control_by_continuous_target"


def test_the_runtime_refuses_a_kind_it_does_not_know(engine_module):
    monster = engine_module._Monster()
    with pytest.raises(ValueError, match="unknown info kind 'control_continuous_target'"):
        monster.gain("control_continuous_target", 1)


def test_the_engine_carries_the_schemas_vocabulary_tables(engine_module):
    for name, value in vocabulary_tables().items():
        assert getattr(engine_module, name) == value, name
    scenario = schema.vocabulary()["scenario"]
    assert engine_module.CONTROL_KINDS == scenario["take_control_modes"]
    assert set(engine_module.PROCEDURAL_IDS) == set(schema.procedural_rules())


def test_every_scenario_event_replays(engine_module):
    """Each ``do`` of the scenario format has a branch or a GAINS entry."""
    extra = {"summon": {"method": "synchro", "by": "A", "from": "extra_deck"}, "set": {"by": "A"},
             "flip_summon": {"by": "A"}, "change_position": {"by": "manual"},
             "take_control": {"mode": "temporary", "by": "B"}}
    for do in engine_module.SCENARIO_EVENTS:
        scenario = {"id": do, "events": [{"turn": 1, "do": "summon", "method": "normal", "by": "A"},
                                         {"turn": 3, "do": do, **extra.get(do, {})}],
                    "ask": {"turn": 3, "question": "has", "info_kind": "counters"}}
        assert engine_module.answer(scenario)["answer"] in (True, False, "unknown"), do


@pytest.mark.parametrize("argv", [["--version"], ["ask", "synchro_summoned", "face_down"], ["card", "14087893"],
                                  ["ask", "--card", "19048328", "face_down,flip_face_up"], ["card", "19048328"],
                                  ["card", "Book of Moon"], ["show", "RECORD"], ["sql", "SELECT count(*) FROM rules"],
                                  ["changes"], ["changes", "--rules"], ["vocabulary"]])
def test_the_read_commands_import_no_stage_they_do_not_use(built, argv):
    """``rulings ask``, ``card``, ``show``, ``sql`` ... run without importing
    the pipeline's other stages (pipeline/cli.py imports them inside the
    commands that use them): the modules loaded after the command ran."""
    import duckdb

    db = built[1]
    with duckdb.connect(str(db), read_only=True) as con:
        record = con.execute("SELECT min(record_id) FROM records").fetchone()[0]
    argv = [record if a == "RECORD" else a for a in argv] + ([] if argv[0] in ("--version", "vocabulary")
                                                            else ["--db", str(db)])
    if argv[0] in ("ask", "card"):  # these load the engine too (a card's effects)
        argv += ["--engine-out", str(built[2])]
    code = ("import sys\nfrom pipeline.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{sorted({h.split('.')[0] for h in HEAVY})!r} or m in {list(HEAVY)!r}), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    loaded = ast.literal_eval(out.stderr.strip().splitlines()[-1])  # the list printed last
    assert [m for m in loaded if m in HEAVY or m.split(".")[0] in HEAVY] == []


# What `rulings ask`, `show`, `sql` and `card` load of the pipeline, exactly (bench.cli's cli_start figures: these
# start within 1.5 times a process that imports duckdb): the read path, the schema check's DDL, and for a card
# the engine module's loader. difflib loads only for an unknown name, pipeline.stopping (signal) only in a build.
READ_PATH = ["pipeline", "pipeline.cli", "pipeline.cli_common", "pipeline.cli_read", "pipeline.database",
             "pipeline.errors", "pipeline.paths", "pipeline.queries", "pipeline.schema", "pipeline.schemacheck",
             "pipeline.schemarules", "pipeline.schematerms", "pipeline.schemavocab", "pipeline.terminal"]
CARD_PATH = ["pipeline.cardask", "pipeline.enginefile", "pipeline.userfiles"]


@pytest.mark.parametrize("argv, extra", [(["ask", "synchro_summoned", "face_down"], []), (["show", "RECORD"], []),
                                         (["sql", "SELECT count(*) FROM rules"], []), (["card", "14087893"], CARD_PATH),
                                         (["ask", "--card", "19048328", "face_down"], CARD_PATH)])
def test_the_fast_read_commands_load_only_their_path(built, argv, extra):
    import duckdb

    _, db, engine = built
    with duckdb.connect(str(db), read_only=True) as con:
        record = con.execute("SELECT min(record_id) FROM records").fetchone()[0]
    options = ["--db", str(db)] + (["--engine-out", str(engine)] if argv[0] in ("ask", "card") else [])
    argv = [record if a == "RECORD" else a for a in argv] + options
    code = ("import sys\nfrom pipeline.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pipeline', 'difflib')), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert ast.literal_eval(out.stderr.strip().splitlines()[-1]) == sorted(READ_PATH + extra)


# The console script (pipeline.cli:run) under a hook that reports whether Python's shutdown ran (atexit).
CONSOLE = ("import atexit, sys\natexit.register(lambda: print('shutdown ran', file=sys.stderr))\n"
           "from pipeline.cli import run\nrun()")


def console(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CONSOLE, *argv], capture_output=True, text=True, cwd=ROOT, **kwargs)


@pytest.mark.parametrize("argv, code, out, shutdown", [
    (["sql", "SELECT 42 AS answer", "--db", "DB"], 0, "42", False),
    (["ask", "synchro_summoned", "face_down", "--db", "DB", "--json"], 0, '"verdict"', False),
    (["ask", "no_such_kind", "face_down", "--db", "DB"], 2, "", False),
    (["show", "r0", "--db", "DB", "--json"], 2, "", False),
    (["--version"], 0, "version", True),
    (["scenario", "--help"], 0, "Usage", True)])
def test_a_read_command_ends_once_its_output_is_flushed(built, argv, code, out, shutdown):
    """pipeline/cli.py run(): after a read command the process ends without Python's shutdown (only
    freeing objects: about 15 % of a command), with the command's exit code and all its output; any
    other command (a write, --version, help) ends the usual way."""
    result = console([str(built[1]) if a == "DB" else a for a in argv])
    assert result.returncode == code, result.stderr
    assert out in result.stdout
    assert ("shutdown ran" in result.stderr) == shutdown, result.stderr
    if code:  # the error is there, one line (plain or JSON), no traceback
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith('{"error": "no record' if "show" in argv else "Error: unknown info kind")


# The console script under a hook that reports, as a command's own code starts, whether the collector is on.
COLLECTOR = ("import click, gc, sys\ninvoke = click.Command.invoke\n"
             "def report(self, ctx):\n    if not isinstance(self, click.Group):\n"
             "        print('collector on:', gc.isenabled(), file=sys.stderr)\n    return invoke(self, ctx)\n"
             "click.Command.invoke = report\nfrom pipeline.cli import run\nrun()")


@pytest.mark.parametrize("argv, on", [
    (["sql", "SELECT 1", "--db", "DB"], False),
    (["card", "14087893", "--db", "DB"], False),
    (["vocabulary", "--json"], False),
    (["export", "OUT", "--db", "DB"], True)])
def test_only_a_read_command_runs_without_the_garbage_collector(built, tmp_path, argv, on):
    """pipeline/cli.py run(): a read command runs with Python's cyclic collector off (the process ends
    with it; a collection walks all of duckdb's and click's objects); any other command, a build or an
    export, with it on."""
    argv = [str(built[1]) if a == "DB" else str(tmp_path / "out") if a == "OUT" else a for a in argv]
    result = subprocess.run([sys.executable, "-c", COLLECTOR, *argv], capture_output=True, text=True, cwd=ROOT)
    assert f"collector on: {on}" in result.stderr.splitlines(), result.stderr
    assert result.returncode == 0, result.stderr


def test_a_read_commands_long_output_arrives_whole_through_a_pipe(built):
    """Every row of a result larger than a pipe's buffer (64 KiB) reaches the reader before the fast exit."""
    result = console(["sql", "SELECT range AS n, repeat('x', 40) AS pad FROM range(5000)", "--max-rows", "5000",
                      "--json", "--db", str(built[1])])
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 5000 and rows[-1] == {"n": 4999, "pad": "x" * 40}


def test_a_reader_that_stops_early_gets_no_error(built):
    """`rulings sql ... | head -c 100`: exit 0 and no traceback, as before the fast exit."""
    proc = subprocess.Popen([sys.executable, "-c", CONSOLE, "sql", "SELECT range FROM range(200000)", "--max-rows",
                             "200000", "--db", str(built[1])], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    head = proc.stdout.read(100)
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert len(head) == 100
    assert proc.returncode == 0 and b"Traceback" not in err and b"Exception ignored" not in err, err
