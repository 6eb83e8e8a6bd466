"""rulings export: every table as Parquet / JSON Lines / CSV, read back equal."""

import json

import duckdb
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.export import export
from pipeline.load import columns


@pytest.fixture(scope="module")
def parquet(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "out"
    summary = export(built[1], str(out), "parquet")
    return built[1], out, summary


def test_every_table_round_trips_through_parquet_with_its_types(parquet):
    db, out, summary = parquet
    assert set(summary.tables) == set(columns())
    con = duckdb.connect(str(db), read_only=True)
    try:
        for table in columns():
            path = str(out / f"{table}.parquet")
            assert [r[:2] for r in con.execute(f"DESCRIBE SELECT * FROM {table}").fetchall()] == \
                [r[:2] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()], table
            for a, b in ((table, "read_parquet(?)"), ("read_parquet(?)", table)):
                extra = con.execute(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})",
                                    [path]).fetchone()[0]
                assert extra == 0, (table, a, b)
            assert con.execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchone()[0] == summary.tables[table]
    finally:
        con.close()


def test_conflicts_are_a_list_of_structs_and_dates_are_dates(parquet):
    _, out, _ = parquet
    con = duckdb.connect()
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))",
                             [str(out / "rules.parquet")]).fetchall())
    assert types["conflicts"] == "STRUCT(verdict VARCHAR, record_ids VARCHAR[], latest_date DATE)[]"
    assert types["latest_date"] == "DATE" and types["record_ids"] == "VARCHAR[]" and types["dates"] == "DATE[]"
    # a rule with a conflict: its overridden verdict is readable as a field, not JSON text
    rows = con.execute("SELECT info_kind, event, conflicts[1].verdict, len(conflicts[1].record_ids) "
                       "FROM read_parquet(?) WHERE len(conflicts) > 0", [str(out / "rules.parquet")]).fetchall()
    assert rows and all(v in ("kept", "lost", "not_applicable") and n >= 1 for _, _, v, n in rows)
    total = con.execute("SELECT count(*) FROM read_parquet(?)", [str(out / "rules.parquet")]).fetchone()[0]
    assert len(rows) < total  # len(conflicts) > 0 is not true of every rule (it was, for JSON text)


def test_the_manifest_names_each_file_with_rows_and_column_types(parquet):
    _, out, summary = parquet
    manifest = json.loads((out / "export.json").read_text(encoding="utf-8"))
    assert manifest["format"] == "parquet" and len(manifest["rules_hash"]) == 64
    assert {t: m["rows"] for t, m in manifest["tables"].items()} == summary.tables
    assert manifest["tables"]["rules"]["columns"][0] == {"name": "info_kind", "type": "VARCHAR"}
    assert not list(out.glob(".*partial"))


def test_jsonl_and_csv_hold_the_same_rows(built, tmp_path):
    db = built[1]
    export(db, str(tmp_path / "j"), "jsonl")
    export(db, str(tmp_path / "c"), "csv")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rules = con.execute("SELECT count(*) FROM rules").fetchone()[0]
    finally:
        con.close()
    lines = (tmp_path / "j" / "rules.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == rules and isinstance(first["record_ids"], list) and isinstance(first["conflicts"], list)
    csv_lines = (tmp_path / "c" / "rules.csv").read_text(encoding="utf-8").splitlines()
    assert csv_lines[0].split(",")[:3] == ["info_kind", "event", "verdict"]


def test_the_same_database_exports_the_same_bytes(built, tmp_path):
    export(built[1], str(tmp_path / "a"), "jsonl")
    export(built[1], str(tmp_path / "b"), "jsonl")
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name


def test_cli_export_errors_and_json(built, tmp_path):
    runner = CliRunner()
    bad = runner.invoke(main, ["export", str(tmp_path / "x"), "--format", "xlsx", "--db", str(built[1])])
    assert bad.exit_code == 2 and "xlsx" in bad.output
    a_file = tmp_path / "file"
    a_file.write_text("keep", encoding="utf-8")
    refused = runner.invoke(main, ["export", str(a_file), "--db", str(built[1])])
    assert refused.exit_code == 2 and "is not a folder" in refused.output and a_file.read_text() == "keep"
    missing = runner.invoke(main, ["export", str(tmp_path / "y"), "--db", str(tmp_path / "none.duckdb")])
    assert missing.exit_code == 2 and "no database" in missing.output
    ok = runner.invoke(main, ["export", str(tmp_path / "z"), "--format", "jsonl", "--json", "--db", str(built[1])])
    assert ok.exit_code == 0 and json.loads(ok.output)["tables"]["rules"] > 0


def test_a_database_of_another_version_is_named_for_rebuild_before_a_refresh_writes(tmp_path):
    from pipeline.errors import LoadError
    from pipeline.load import check_columns, create_schema

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    create_schema(con)
    check_columns(con, path)  # the current schema passes
    con.execute("ALTER TABLE rules DROP COLUMN conflicts")
    con.execute("ALTER TABLE rules ADD COLUMN conflicts VARCHAR")  # JSON text, as version 0.1 wrote it
    with pytest.raises(LoadError, match=r"rules.conflicts is VARCHAR, this version writes STRUCT.*rulings build"):
        check_columns(con, path)
    con.close()


def test_a_new_export_replaces_the_old_ones_files_and_refuses_a_users_folder(built, tmp_path):
    out = tmp_path / "out"
    export(built[1], str(out), "parquet")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    export(built[1], str(out), "jsonl")
    assert not list(out.glob("*.parquet")) and (out / "rules.jsonl").is_file()
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    users = tmp_path / "users"
    users.mkdir()
    (users / "rules.parquet").write_bytes(b"the user's own")
    runner = CliRunner()
    refused = runner.invoke(main, ["export", str(users), "--db", str(built[1])])
    assert refused.exit_code == 2 and "which no export listed" in refused.output
    assert (users / "rules.parquet").read_bytes() == b"the user's own"
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    under_a_file = runner.invoke(main, ["export", str(a_file / "sub"), "--db", str(built[1])])
    assert under_a_file.exit_code == 2 and "cannot make the folder" in under_a_file.output


def test_an_export_json_of_someone_elses_is_no_licence_to_delete(built, tmp_path, monkeypatch):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "export.json").write_text('{"tool": "mine"}', encoding="utf-8")
    (theirs / "sources.csv").write_text("mine", encoding="utf-8")
    refused = CliRunner().invoke(main, ["export", str(theirs), "--db", str(built[1])])
    assert refused.exit_code == 2 and "no export listed" in refused.output
    assert (theirs / "sources.csv").read_text(encoding="utf-8") == "mine"
    assert (theirs / "export.json").read_text(encoding="utf-8") == '{"tool": "mine"}'
    # a leading ~ is the home folder, expanded by us (not by DuckDB, which wrote elsewhere)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    summary = export(built[1], "~/tilde", "jsonl")
    assert summary.out_dir == str(tmp_path / "home" / "tilde") and (tmp_path / "home" / "tilde" / "rules.jsonl").is_file()
