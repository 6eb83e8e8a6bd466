"""The database a build writes opens in DuckDB 1.x (issue 37): the load
creates it in DuckDB 1.4's storage format (database.STORAGE_VERSION, read by
DuckDB 1.4.0 and later, database.OLDEST_DUCKDB), and it keeps that format
when written to later (a refresh, `rulings sql --write`). Checked with
DuckDB 1.4.0 itself in a throwaway virtualenv this test makes (marked slow):
skipped when pip cannot get duckdb==1.4.0, unless RULINGS_REQUIRE_OLD_DUCKDB
is set (.ci/run sets it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.database import OLDEST_DUCKDB, STORAGE_VERSION, columns

# DuckDB's storage version numbers (byte 12 of the file's main header): 1.4's format is 67, 2.0's own is not.
STORAGE_NUMBER = 67

# Every table's rows counted, and the rules and card tables' values (lists and structs included) as text.
QUERY = ("SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in sorted(columns())) + ", "
         "(SELECT string_agg(info_kind || ' ' || event || ' ' || verdict || ' ' || CAST(record_ids AS VARCHAR) || ' ' "
         "|| CAST(len(conflicts) AS VARCHAR) || ' ' || CAST(len(cases) AS VARCHAR), '; ' ORDER BY info_kind, event) "
         "FROM rules), "
         "(SELECT string_agg(DISTINCT CAST(konami_id AS VARCHAR), ',' ORDER BY CAST(konami_id AS VARCHAR)) "
         "FROM card_mentions WHERE name IN ('奥西里斯之天空龙', '黑魔术师', '月之书'))")


def _storage_number(path) -> int:
    with open(path, "rb") as fh:
        head = fh.read(16)
    assert head[8:12] == b"DUCK"
    return head[12]


def test_the_build_writes_duckdb_1_4s_storage_format(built):
    assert STORAGE_VERSION == "v1.4.0" and OLDEST_DUCKDB == "1.4.0"
    assert _storage_number(built[1]) == STORAGE_NUMBER
    assert sorted(p.name for p in built[1].parent.iterdir() if p.name.startswith(f".{built[1].name}.")) == []


def test_a_write_to_the_database_keeps_its_format(built, tmp_path):
    copy = tmp_path / "rulings.duckdb"
    shutil.copyfile(built[1], copy)
    statement = "CREATE TABLE mine AS SELECT record_id, [1, 2] AS l, {'a': 1} AS s FROM records LIMIT 3000"
    assert CliRunner().invoke(main, ["sql", statement, "--db", str(copy), "--write"]).exit_code == 0
    assert _storage_number(copy) == STORAGE_NUMBER
    with duckdb.connect(str(copy), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM mine").fetchone() == (3000,)


@pytest.fixture(scope="module")
def old_python(tmp_path_factory):
    """The Python of a throwaway virtualenv with duckdb==OLDEST_DUCKDB (installed by pip there)."""
    venv = tmp_path_factory.mktemp("duckdb1") / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    python = venv / "bin" / "python"
    got = made.returncode == 0 and subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"duckdb=={OLDEST_DUCKDB}"],
        capture_output=True, text=True, timeout=600).returncode == 0
    if not got:
        if os.environ.get("RULINGS_REQUIRE_OLD_DUCKDB"):
            pytest.fail(f"pip could not install duckdb=={OLDEST_DUCKDB} in a virtualenv")
        pytest.skip(f"pip cannot get duckdb=={OLDEST_DUCKDB} here")
    return python


@pytest.mark.slow
def test_duckdb_1_4_reads_the_database_as_duckdb_2_does(built, old_python):
    code = ("import duckdb, json, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "print(json.dumps([duckdb.__version__, list(con.execute(sys.argv[2]).fetchone())]))")
    out = subprocess.run([str(old_python), "-c", code, str(built[1]), QUERY], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    version, old_row = json.loads(out.stdout)
    assert version == OLDEST_DUCKDB
    with duckdb.connect(str(built[1]), read_only=True) as con:
        new_row = list(con.execute(QUERY).fetchone())
    assert old_row == new_row and old_row[-2].count(";") > 100 and "4999" in old_row[-1].split(",")  # Slifer: no passcode
