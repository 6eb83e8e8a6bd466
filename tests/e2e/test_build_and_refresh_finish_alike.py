"""What a build and a refresh share (pipeline/finish.py): the rule for a page
that shrinks, the compile step's errors, and a refresh's writer that commits
only when told (the engine is staged before it)."""

from __future__ import annotations

import duckdb
import pytest

from pipeline import finish
from pipeline.errors import CompileError, GenerateError
from pipeline.finish import PREVIOUS_BUILD, STORED, compile_all, kept_warning, shrunk
from pipeline.load import RefreshData, RefreshWriter, create_schema

RUN = {"run_id": 2, "kind": "refresh", "started_at": "2026-01-01T00:00:00", "ended_at": "2026-01-01T00:00:01",
       "tried": 0, "unchanged": 0, "changed": 0, "failed": 0, "details": "{}"}


@pytest.mark.parametrize("earlier", [PREVIOUS_BUILD, STORED])
def test_a_page_that_shrinks_is_named_in_the_same_words_by_a_build_and_a_refresh(earlier):
    why = shrunk({"records": 250, "statements": 66}, {"records": 1, "statements": 0}, {}, {}, 0.5, earlier)
    assert why == f"gives 1 records where {earlier} stored 250 (more than 50% fewer: a markup change?)"
    assert kept_warning("page-a", 250, why, earlier) == (f"page-a: {why}; kept 250 records of {earlier} "
                                                         "(--max-shrink 1 accepts the page)")
    assert shrunk({"records": 250}, {"records": 1}, {}, {}, 1.0, earlier) is None  # --max-shrink 1 takes any page
    assert shrunk({}, {"records": 1}, {}, {}, 0.5, earlier) is None  # nothing stored: always taken


def test_a_section_that_loses_its_statements_is_the_same_rule():
    why = shrunk({"records": 10, "statements": 72}, {"records": 10, "statements": 36}, {"A / x": 36, "A / y": 36},
                 {"A / x": 36}, 0.5, STORED)
    assert why == ("gives 0 statements in section 'A / y' (was 36, more than 50% fewer; the section is gone) "
                   "against the database (a markup change?)")


def test_a_fault_compile_did_not_foresee_is_a_compile_error_for_both_runs(monkeypatch):
    def broken(*args):
        raise ValueError("a bug")

    monkeypatch.setattr(finish, "compile_rules", broken)
    with pytest.raises(CompileError, match=r"^\[compile\] rules table: unexpected ValueError: a bug$"):
        compile_all([], [], {}, {})


def test_a_fault_in_the_engine_tables_is_a_generate_error(monkeypatch):
    def broken(*args):
        raise KeyError("r1")

    monkeypatch.setattr(finish, "engine_tables", broken)
    with pytest.raises(GenerateError, match=r"^\[generate\] engine tables: unexpected KeyError"):
        compile_all([], [], {}, {})


def _runs(db) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]


def test_a_refresh_writer_stores_nothing_until_it_commits(tmp_path):
    db = tmp_path / "r.duckdb"
    with duckdb.connect(str(db)) as con:
        create_schema(con)
    with RefreshWriter(db, RefreshData(RUN)) as writer:  # left without commit: an engine that could not be staged
        assert writer.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1  # the card table sees the rows
    assert _runs(db) == 0
    renamed = []
    with RefreshWriter(db, RefreshData(RUN)) as writer:
        assert writer.commit(then=lambda: renamed.append(_runs(db))) == []
    assert renamed == [1] and _runs(db) == 1  # the engine is renamed once the run is committed
    assert [p.name for p in tmp_path.iterdir()] == ["r.duckdb"]  # no work folder left


def test_finish_stages_the_engine_before_the_commit_and_discards_it_when_the_commit_fails(tmp_path):
    compiled = compile_all([], [], {}, {})  # every rule unknown: a real engine to render
    engine = tmp_path / "e.py"

    def commit(then):
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == []  # staged, hidden
        assert any(p.name.startswith(".") for p in tmp_path.iterdir())
        raise OSError("the commit failed")

    with pytest.raises(OSError, match="the commit failed"):
        finish.finish(compiled, engine, lambda: "", commit)
    assert list(tmp_path.iterdir()) == []  # nothing staged is left
