"""Issue 37 item 6: ``--json`` errors are one JSON object on stderr with the
exit code of the text error; the help's examples run in an installed copy;
the README's console examples of the main commands run in order as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from conftest import ROOT

RULINGS = [sys.executable, "-m", "pipeline.cli"]


def _run(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(RULINGS + args, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)})


# Each command that takes --json, given input it refuses: (arguments, exit code, error type).
FAILING = {
    "build": (["build", "--corpus", "{tmp}/none", "--db", "{tmp}/x.duckdb", "--engine-out", "{tmp}/e.py"], 1,
              "CorpusError"),
    "refresh": (["refresh", "--corpus", "{tmp}/none", "--db", "{tmp}/x.duckdb", "--engine-out", "{tmp}/e.py"], 1,
                "CorpusError"),
    "ask": (["ask", "no_such_kind", "face_down", "--db", "{db}"], 2, "UsageError"),
    "sql": (["sql", "SELEC 1", "--db", "{db}"], 2, "SQLError"),
    "evaluate": (["evaluate", "--db", "{db}"], 2, "UsageError"),
    "scenario": (["scenario", "{tmp}/bad.json"], 2, "UsageError"),
    "show": (["show", "r0000000000000000", "--db", "{db}"], 2, "UsageError"),
    "changes": (["changes", "--since", "99", "--db", "{db}"], 2, "UsageError"),
    "vocabulary": (["vocabulary", "--no-such-option"], 2, "UsageError"),  # click refuses the command line
    "card": (["card", "no card is named this", "--db", "{db}"], 2, "UsageError"),
    "report": (["report", "{tmp}/site", "--db", "{tmp}/missing.duckdb"], 2, "UsageError"),
    "export": (["export", "{tmp}/out", "--format", "xml", "--db", "{db}"], 2, "UsageError"),
    "simulators": (["simulators", "--db", "{tmp}/missing.duckdb"], 2, "UsageError"),
}


def test_every_json_command_is_listed():
    with_json = sorted(name for name, command in main.all_commands().items()
                       if any(p.name == "as_json" for p in command.params))
    assert with_json == sorted(FAILING)


@pytest.mark.parametrize("command", sorted(FAILING))
def test_a_json_error_is_one_json_object_on_stderr_with_the_text_errors_exit_code(built, tmp_path, command):
    args, code, kind = FAILING[command]
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    args = [a.format(tmp=tmp_path, db=built[1]) for a in args]
    text = CliRunner().invoke(main, args)
    as_json = CliRunner().invoke(main, args + ["--json"])
    assert text.exit_code == as_json.exit_code == code, (text.stderr, as_json.stderr)
    assert as_json.stdout == ""  # stdout holds results only
    [line] = as_json.stderr.splitlines()
    error = json.loads(line)
    assert set(error) >= {"error", "type", "place", "exit_code"}
    assert error["type"] == kind and error["exit_code"] == code and error["error"]
    # the same words as the text error, which is one "Error: ..." line (click adds its usage lines)
    assert "Error: " in text.stderr and error["error"].splitlines()[0].split(": ")[-1] in text.stderr


def test_a_card_error_names_its_place_and_the_did_you_mean(built, tmp_path):
    out = _run(["card", "ash blossom", "--db", str(built[1]), "--json"], tmp_path)
    error = json.loads(out.stderr)
    assert out.returncode == 2 and error["place"] == "NAME"
    assert error["error"].startswith("no card named 'ash blossom' (did you mean 'Ash Blossom & Joyous Spring', ")


def _typical_use() -> list[str]:
    """The example command lines of ``rulings --help``."""
    help_text = _run(["--help"], ROOT).stdout
    block = help_text.split("Typical use:")[1].split("\n\n")[0]
    return [line.split("#")[0].strip() for line in block.strip().splitlines()]


def test_the_help_examples_run_where_no_checkout_is(built, tmp_path):
    """Each example of ``rulings --help`` (but the build, which the session's
    build stands for) runs from an empty folder with the data folder an
    installed copy uses, and no help names a file of the checkout's tests/."""
    examples = _typical_use()
    assert examples[0] == "rulings build" and len(examples) >= 5
    data = tmp_path / "data"
    data.mkdir()
    shutil.copyfile(built[1], data / "rulings.duckdb")
    cwd = tmp_path / "anywhere"
    cwd.mkdir()
    for line in examples[1:]:
        out = _run(shlex.split(line)[1:], cwd, {"RULINGS_DATA": str(data)})
        assert out.returncode == 0, (line, out.stderr)
        assert out.stdout.strip(), line
    for name in main.all_commands():
        assert not re.search(r"(?m)^\s*rulings .*tests/", CliRunner().invoke(main, [name, "--help"]).stdout), name


# The README's sections whose console examples a user types first, in order.
README_SECTIONS = ("### Ask the rules table", "### Query the rulings with SQL",
                   "### Export the tables (Parquet, CSV, JSON Lines)", "### Ruling history and provenance")


def _readme_commands() -> list[str]:
    """The command lines of the README's ``sh`` and ``console`` blocks in
    :data:`README_SECTIONS`, in the README's order (``$ `` prompts dropped,
    output lines left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for title in README_SECTIONS:
        section = text.split(title + "\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        for kind, body in re.findall(r"```(sh|console)\n(.*?)```", section, re.S):
            for line in body.splitlines():
                if kind == "console":
                    if not line.startswith("$ "):
                        continue
                    line = line[2:]
                line = line.strip()
                if line and not line.startswith("#"):
                    commands.append(line)
    return commands


def test_the_readmes_examples_run_in_order_as_written(built, tmp_path):
    """Every command line of the README's first sections runs as written
    (``rulings``; ``duckdb -c`` through DuckDB's Python module where the
    DuckDB command line is missing; ``python -c`` when its imports are
    installed) against a copy of the bundled build, one after the other in
    one folder: the export example reads the Parquet files it wrote."""
    commands = _readme_commands()
    assert any(c.startswith("rulings export out/") for c in commands) and len(commands) >= 15
    data = tmp_path / "data"
    data.mkdir()
    shutil.copyfile(built[1], data / "rulings.duckdb")
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = {"RULINGS_DATA": str(data)}
    ran = 0
    for line in commands:
        argv = shlex.split(line, comments=True)
        if argv[0] == "rulings":
            out = _run(argv[1:], cwd, env)
        elif argv[0] == "duckdb" and shutil.which("duckdb") is None:
            code = f"import duckdb; print(duckdb.sql({argv[argv.index('-c') + 1]!r}).fetchall())"
            out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
        elif argv[0] == "python":
            module = re.match(r"import (\w+)", argv[2]).group(1)
            if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
                continue  # pandas is no dependency of the project
            out = subprocess.run([sys.executable, *argv[1:]], cwd=cwd, capture_output=True, text=True)
        else:
            out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        assert out.returncode == 0, (line, out.stderr[-2000:])
        ran += 1
    assert ran >= 15
    assert sorted(p.name for p in (cwd / "out").iterdir())[:2] == ["build_info.parquet", "card_effects.parquet"]
