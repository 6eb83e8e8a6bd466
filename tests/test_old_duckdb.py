"""Issue 37 item 5: the database a build writes opens in DuckDB 1.x (the
storage version of database.STORAGE_VERSION), checked with DuckDB
1.1.3 in a throwaway virtualenv: ``.ci/run`` makes it and names its Python
in RULINGS_DUCKDB1_PYTHON (without it the test is skipped; with
RULINGS_REQUIRE_OLD_DUCKDB set it fails instead)."""

from __future__ import annotations

import json
import os
import subprocess

import duckdb
import pytest

from pipeline.database import OLDEST_DUCKDB, STORAGE_VERSION, columns

OLD_PYTHON = os.environ.get("RULINGS_DUCKDB1_PYTHON")

# Every table's rows counted, and the rules table's values (lists and structs included) as text.
QUERY = ("SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in sorted(columns())) + ", "
         "(SELECT string_agg(info_kind || ' ' || event || ' ' || verdict || ' ' || CAST(record_ids AS VARCHAR) || ' ' "
         "|| CAST(len(conflicts) AS VARCHAR) || ' ' || CAST(len(cases) AS VARCHAR), '; ' ORDER BY info_kind, event) "
         "FROM rules)")


def test_the_header_is_the_storage_version_of_duckdb_1_1(built):
    with open(built[1], "rb") as fh:
        head = fh.read(16)
    assert head[8:12] == b"DUCK" and head[12] == 64  # DuckDB 1.0 and 1.1's storage version
    assert STORAGE_VERSION == "v1.1.0" and OLDEST_DUCKDB == "1.1"


def test_duckdb_1_reads_the_database_as_duckdb_2_does(built):
    if not OLD_PYTHON:
        if os.environ.get("RULINGS_REQUIRE_OLD_DUCKDB"):
            pytest.fail("RULINGS_DUCKDB1_PYTHON must name a Python with duckdb 1.x (.ci/run makes one)")
        pytest.skip("no DuckDB 1.x Python (RULINGS_DUCKDB1_PYTHON; .ci/run makes one)")
    code = ("import duckdb, json, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
            "print(json.dumps([duckdb.__version__, list(con.execute(sys.argv[2]).fetchone())]))")
    out = subprocess.run([OLD_PYTHON, "-c", code, str(built[1]), QUERY], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    version, old_row = json.loads(out.stdout)
    assert version.startswith("1.")
    with duckdb.connect(str(built[1]), read_only=True) as con:
        new_row = list(con.execute(QUERY).fetchone())
    assert old_row == new_row and old_row[-1].count(";") > 100
