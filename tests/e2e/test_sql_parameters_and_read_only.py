"""SQL: every command binds user input as parameters; only `rulings sql` runs
the user's own SQL, on a read-only connection unless --write is given."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from click.testing import CliRunner

from corpus_kit import db_fingerprint
from pipeline.cli import main

INJECTIONS = ["x' OR '1'='1", "'; DROP TABLE rules; --", "counters' UNION SELECT 1,2,3,4,5 --", '"; DELETE FROM records; --']


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def db_copy(built, tmp_path):
    """A private copy of the bundled build's database (tests here may try to change it)."""
    copy = tmp_path / "rulings.duckdb"
    shutil.copyfile(built[1], copy)
    return copy


@pytest.mark.parametrize("text", INJECTIONS)
def test_ask_and_show_bind_their_arguments(db_copy, text):
    before = db_fingerprint(db_copy)
    for args in (["ask", text, "face_down"], ["ask", "counters", text], ["show", text]):
        out = invoke(*args, "--db", db_copy)
        assert out.exit_code == 2, out.output
        assert f"{text!r}" in out.output  # the input is echoed back as a name, not run
    assert db_fingerprint(db_copy) == before


def test_evaluate_binds_gold_values(db_copy, tmp_path):
    gold = tmp_path / "gold.csv"
    with gold.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["info_kind", "event", "verdict", "dates"])
        writer.writerows([[text, text, "kept", ""] for text in INJECTIONS] + [["counters", "face_down", "lost", ""]])
    before = db_fingerprint(db_copy)
    out = invoke("evaluate", "--gold", gold, "--db", db_copy, "--json")
    error = json.loads(out.stderr)  # --json: the error is one JSON object on stderr
    assert out.exit_code == 2 and error["place"].endswith("gold.csv:2") and error["error"].startswith(
        "unknown info kind")  # names the vocabulary does not know
    # below the command's check, the comparison binds the values: nothing runs as SQL
    from pipeline import evaluation, queries
    with queries.connect(db_copy) as con:
        data = evaluation.compare_verdicts(con, [{"info_kind": t, "event": t, "verdict": "kept"} for t in INJECTIONS]
                                        + [{"info_kind": "counters", "event": "face_down", "verdict": "lost"}])
    assert [r["got"] for r in data["rows"]] == ["unknown"] * len(INJECTIONS) + ["lost"]
    assert db_fingerprint(db_copy) == before


@pytest.mark.parametrize("statement", [
    "DELETE FROM rules",
    "UPDATE records SET text = 'x'",
    "DROP TABLE records",
    "CREATE TABLE notes (x INTEGER)",
    "INSERT INTO build_info VALUES ('k', 'v')",
    "SELECT 1; DELETE FROM rules",
    "ALTER TABLE rules RENAME TO r2",
])
def test_sql_is_read_only_unless_write(db_copy, statement):
    before = db_fingerprint(db_copy)
    out = invoke("sql", statement, "--db", db_copy)
    assert out.exit_code == 2 and "read-only" in out.output.lower()
    assert db_fingerprint(db_copy) == before


def test_sql_write_flag_opens_read_write(db_copy):
    assert invoke("sql", "CREATE TABLE notes (x INTEGER)", "--db", db_copy, "--write").exit_code == 0
    out = invoke("sql", "SELECT count(*) AS n FROM notes", "--db", db_copy, "--json")
    assert json.loads(out.output) == [{"n": 0}]


def test_sql_cannot_reattach_the_database_read_write(db_copy):
    out = invoke("sql", f"ATTACH '{db_copy}' AS w (READ_WRITE); DELETE FROM w.rules", "--db", db_copy)
    assert out.exit_code == 2
    assert db_fingerprint(db_copy)[0][4] == 105
