"""Database files that are not what a command expects (issue 32, items 1, 5,
11 and 12): a file of another kind, a rulings database of another schema or
damaged, a path DuckDB would read as another file, a build while another
writer holds the database. Each gives one ``Error:`` line naming the file and
what to do, never a traceback, never the network."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from filelock import FileLock, Timeout

from conftest import GOLD, ROOT, make_corpus
from corpus_kit import GOOD_HTML, PageSpec, stored_records, write_corpus
from pipeline import database
from pipeline.cli import main
from pipeline.load import DatabaseWriter, columns
from pipeline.run import build

# Data-safety end to end (every page, refresh and file case): `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow

SOURCES = ["seed-000-battle-position", "seed-004-face-down-temp-banish"]


def run(*args) -> "click.testing.Result":  # noqa: F821
    return CliRunner().invoke(main, [str(a) for a in args])


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error")]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A database of two bundled pages: (corpus, db, a record id)."""
    root = tmp_path_factory.mktemp("small")
    corpus = make_corpus(root / "c", SOURCES)
    db = root / "r.duckdb"
    assert build(corpus, db, root / "e.py").errors == []
    with duckdb.connect(str(db), read_only=True) as con:
        record = con.execute("SELECT min(record_id) FROM records").fetchone()[0]
    return corpus, db, record


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty home folder: DuckDB's extension folder (~/.duckdb) would appear in it."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def read_commands(small, tmp_path) -> dict[str, list]:
    """Every command that reads the database, by name, without --db."""
    corpus, _, record = small
    return {"card": ["card", "14087893"], "ask": ["ask", "counters", "face_down"], "show": ["show", record],
            "report": ["report", tmp_path / "site"], "export": ["export", tmp_path / "export"],
            "evaluate": ["evaluate", "--gold", GOLD / "retention_public.csv"], "changes": ["changes"],
            "sql": ["sql", "SELECT count(*) FROM records"], "simulators": ["simulators"],
            "refresh": ["refresh", "--corpus", corpus, "--engine-out", tmp_path / "e.py", "--deadline", "5"]}


# --------------------------------------------------------------------------- item 1: files of another kind

def sqlite_file(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE records (record_id TEXT, text TEXT)")
    con.execute("INSERT INTO records VALUES ('r1', 'x')")
    con.commit()
    con.close()
    return path


FOREIGN = {
    "sqlite": (sqlite_file, 2, "is a SQLite database, not a DuckDB database; pass the --db that `rulings build` wrote"),
    "text": (lambda p: p.write_text("id,text\n1,hello\n") and p, 2, "is not a DuckDB database (no DuckDB header)"),
    "random": (lambda p: p.write_bytes(hashlib.sha512(b"x").digest() * 64) and p, 2,
               "is not a DuckDB database (no DuckDB header)"),
    "empty": (lambda p: p.touch() or p, 1, "it is an empty file, not a DuckDB database; run `rulings build`"),
    "a duckdb database of other tables": (
        lambda p: duckdb.connect(str(p)).execute("CREATE TABLE sales (id INTEGER)").close() or p, 2,
        "is a DuckDB database that `rulings build` did not write (tables sales)"),
}


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_a_file_of_another_kind_gives_one_error_line_in_every_read_command(kind, small, tmp_path, home):
    make, code, words = FOREIGN[kind]
    path = make(tmp_path / f"{kind.replace(' ', '_')}.db")
    before = path.read_bytes()
    for name, args in read_commands(small, tmp_path).items():
        out = run(*args, "--db", path)
        assert out.exit_code == code, (name, out.output)
        assert error_lines(out) == [line for line in out.output.splitlines() if line], (name, out.output)
        [line] = error_lines(out)
        if name == "refresh" and code == 2 and "DuckDB database that" not in words:  # refresh writes: its guard's words
            words = "exists and is not a DuckDB database; the build would replace it"
        assert str(path) in line and words in line, (name, line)
    out = run("sql", "CREATE TABLE t (x INTEGER)", "--db", path, "--write")
    assert out.exit_code == code and len(error_lines(out)) == 1
    assert path.read_bytes() == before
    lock = [f"{path.name}.lock"] if code == 1 or "DuckDB database that" in words else []  # refresh locks first
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, "home", *lock])  # no output files
    assert list(home.iterdir()) == []  # no ~/.duckdb/extensions: nothing installed or looked for


def test_no_connection_installs_or_loads_an_extension(tmp_path, home, small):
    """DuckDB given a SQLite file or an ``md:`` path itself (past the header
    check) refuses without fetching; every connection, whatever config its
    caller asks, has auto-install and auto-load off."""
    db = sqlite_file(tmp_path / "s.db")
    with pytest.raises(duckdb.Error) as caught:
        database.connect(db, read_only=True)
    assert "sqlite" in str(caught.value).lower()
    con = database.connect(":memory:", config={"autoload_known_extensions": True, "autoinstall_known_extensions": True})
    assert con.execute("SELECT current_setting('autoload_known_extensions'), "
                       "current_setting('autoinstall_known_extensions')").fetchone() == (False, False)
    assert con.execute("SELECT count(*) FROM duckdb_extensions() WHERE loaded AND NOT installed").fetchone()[0] == 0
    con.close()
    writer = DatabaseWriter(tmp_path / "w.duckdb")
    try:
        assert writer.con.execute("SELECT current_setting('autoload_known_extensions')").fetchone() == (False,)
    finally:
        writer.close()
    assert list(home.iterdir()) == []


def test_every_connection_of_the_project_goes_through_one_function():
    offenders = [str(p.relative_to(ROOT)) for folder in ("pipeline", "engine") for p in (ROOT / folder).glob("*.py")
                 if "duckdb.connect(" in p.read_text(encoding="utf-8") and p.name != "database.py"]
    assert offenders == []


@pytest.mark.parametrize("statement", ["SET autoload_known_extensions = true",
                                       "SET autoinstall_known_extensions = true",
                                       "SET allow_community_extensions = true", "INSTALL sqlite", "LOAD sqlite",
                                       "ATTACH '{sqlite}' (TYPE sqlite)"])
def test_read_only_sql_cannot_turn_extensions_back_on(statement, small, tmp_path, home):
    _, db, _ = small
    sqlite = sqlite_file(tmp_path / "s.db")
    out = run("sql", statement.format(sqlite=sqlite), "--db", db)
    assert out.exit_code == 2 and len(error_lines(out)) == 1
    assert ("Cannot change configuration option" in out.output or "disabled" in out.output), out.output
    assert list(home.iterdir()) == []
    settings = run("sql", "SELECT current_setting('autoload_known_extensions') AS a, "
                          "current_setting('autoinstall_known_extensions') AS b", "--db", db, "--json")
    assert json.loads(settings.output) == [{"a": False, "b": False}]


# --------------------------------------------------------------------------- item 11: another schema, damage

DAMAGE = {
    "a dropped column": ("ALTER TABLE records DROP COLUMN cells", "column records.cells is missing"),
    "a dropped table": ("DROP TABLE rule_citations", "table rule_citations is missing"),
    "a renamed table": ("ALTER TABLE rules RENAME TO rules_v0", "table rules is missing"),
    "a changed type": ("ALTER TABLE rules ALTER latest_date TYPE VARCHAR",
                       "column rules.latest_date is VARCHAR, this rulings reads DATE"),
    "a view for a table": ("DROP TABLE procedural_rules; CREATE VIEW procedural_rules AS "
                           "SELECT 'p' AS rule_id, 's' AS summary, ['r'] AS record_ids",
                           "table procedural_rules is missing"),
    "an added column": ("ALTER TABLE sources ADD COLUMN mine INTEGER",
                        "column sources.mine is not in this rulings' schema"),
    "no schema version": ("DELETE FROM build_info WHERE key = 'schema_version'", "it records no schema version"),
    "an older schema version": ("UPDATE build_info SET value = '0' WHERE key = 'schema_version'",
                                "it has schema version '0', built by an older rulings; this rulings reads "
                                "schema version"),
    "a newer schema version": (f"UPDATE build_info SET value = '{database.SCHEMA_VERSION + 1}' "
                               "WHERE key = 'schema_version'", "built by a newer rulings"),
}


def damaged_copy(db: Path, dest: Path, kind: str) -> Path:
    """A copy of ``db`` with one kind of damage: a DAMAGE statement, a cut
    (``cut:N``: the first N bytes; ``cut-end:N``: all but the last N) or a
    flipped bit (``flip:OFFSET``)."""
    shutil.copyfile(db, dest)
    if kind in DAMAGE:
        con = duckdb.connect(str(dest))
        con.execute(DAMAGE[kind][0])
        con.execute("CHECKPOINT")
        con.close()
        return dest
    how, n = kind.split(":")
    data = bytearray(dest.read_bytes())
    if how == "cut":
        data = data[:int(n)]
    elif how == "cut-end":
        data = data[:-int(n)]
    else:
        data[int(n)] ^= 0x10
    dest.write_bytes(bytes(data))
    return dest


BYTE_DAMAGE = {  # kind -> words of the error line
    "cut:100": "the database cannot be read, it is damaged",
    "cut:9000": "the database cannot be read, it is damaged",
    "cut-end:4096": "the database is truncated",
    "cut-end:300000": "the database is truncated",
    "flip:1000": "Corrupt database file",  # the main header
    "flip:4200": "Corrupt database file",  # the first database header
}


@pytest.mark.parametrize("kind", list(DAMAGE) + list(BYTE_DAMAGE))
def test_a_database_of_another_schema_or_damaged_gives_one_error_line(kind, small, tmp_path):
    _, db, _ = small
    path = damaged_copy(db, tmp_path / "damaged.duckdb", kind)
    words = DAMAGE[kind][1] if kind in DAMAGE else BYTE_DAMAGE[kind]
    before = path.read_bytes()
    for name, args in read_commands(small, tmp_path).items():
        out = run(*args, "--db", path)
        assert out.exit_code == 1, (name, out.output)
        lines = [line for line in out.output.splitlines() if line]
        assert lines == error_lines(out) and len(lines) == 1, (name, out.output)
        assert lines[0].startswith(f"Error: [load] {path}: ") and words in lines[0], (name, lines[0])
        assert "run `rulings build` to rebuild it from the corpus" in lines[0], (name, lines[0])
    assert path.read_bytes() == before
    assert not (tmp_path / "export" / "rules.parquet").exists()  # export skips no table: it writes none


def test_a_flipped_bit_in_a_data_block_is_one_error_line_where_it_is_read(small, tmp_path):
    """DuckDB checks a block's checksum when a query reads it: commands that
    read the block say so in one line; export reads every block."""
    _, db, _ = small
    blocks = (db.stat().st_size - database.HEADERS_BYTES) // (256 * 1024)
    detected = 0
    for block in (1, blocks // 2, blocks - 1):
        path = damaged_copy(db, tmp_path / f"flip{block}.duckdb",
                            f"flip:{database.HEADERS_BYTES + block * 256 * 1024 + 5000}")
        for args in read_commands(small, tmp_path).values():
            out = run(*args, "--db", path)
            assert out.exception is None or isinstance(out.exception, SystemExit), out.output
            if out.exit_code:
                assert len(error_lines(out)) == 1 and str(path) in out.output, out.output
        out = run("export", tmp_path / f"x{block}", "--db", path)
        if out.exit_code == 0:
            continue  # the bit was in a block no table uses (the older storage format leaves some free)
        detected += 1
        assert out.exit_code == 1 and error_lines(out) == [line for line in out.output.splitlines() if line]
        assert f"[load] {path}: the database cannot be read, it is damaged" in out.output, out.output
    assert detected >= 2


# The columns the read commands fetch a few rows of by id (schema/ddl.sql, USING COMPRESSION): DuckDB decodes a
# compressed string segment whole for each such fetch.
UNCOMPRESSED = (("records", "text"), ("card_names", "name"), ("card_names", "name_key"))


@pytest.mark.parametrize("table, column", UNCOMPRESSED)
def test_texts_read_by_id_are_stored_uncompressed(table, column, small):
    _, db, _ = small
    with duckdb.connect(str(db), read_only=True) as con:
        kinds = {r[0] for r in con.execute("SELECT compression FROM pragma_storage_info(?) WHERE column_name = ? "
                                           "AND segment_type = 'VARCHAR'", [table, column]).fetchall()}
        other = {r[0] for r in con.execute("SELECT compression FROM pragma_storage_info(?) WHERE column_name <> ? "
                                           "AND segment_type = 'VARCHAR'", [table, column]).fetchall()}
    assert kinds == {"Uncompressed"}
    assert other - {"Uncompressed"}  # the table's other text columns keep DuckDB's own choice


def test_the_schema_version_is_written_and_pinned_to_the_ddl(small):
    """Change schema/ddl.sql's tables or columns and this fails: raise
    database.SCHEMA_VERSION and pin the new fingerprint here."""
    _, db, _ = small
    fingerprint = hashlib.sha256(json.dumps(columns(), sort_keys=True).encode()).hexdigest()
    assert (database.SCHEMA_VERSION, fingerprint[:16]) == (6, "b089fa89a02cf12f")
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT value FROM build_info WHERE key = 'schema_version'").fetchall() == [("6",)]
        blocks, size = con.execute("SELECT total_blocks, block_size FROM pragma_database_size()").fetchone()
    assert db.stat().st_size == database.HEADERS_BYTES + blocks * size  # what the truncation check assumes


def test_a_user_table_beside_the_schema_is_allowed(small, tmp_path):
    _, db, _ = small
    copy = tmp_path / "mine.duckdb"
    shutil.copyfile(db, copy)
    assert run("sql", "CREATE TABLE notes (record_id VARCHAR, note VARCHAR)", "--db", copy, "--write").exit_code == 0
    assert run("ask", "counters", "face_down", "--db", copy).exit_code == 0


# --------------------------------------------------------------------------- item 11: a build's previous database

def page_corpus(root: Path, broken: bool) -> Path:
    """One ruling page (empty when ``broken``: it fails to normalize) and one English page."""
    return write_corpus(root, [PageSpec("ruling-page", "" if broken else GOOD_HTML),
                               PageSpec("other-page", "Battle Position\n\nA monster's position changes once.\n",
                                        format="text", language="en", script="Latn", region="")])


@pytest.mark.parametrize("kind, words", [("a dropped column", "column records.cells is missing"),
                                         ("an older schema version",
                                          "it has schema version '0', built by an older rulings"),
                                         ("flip:4200", "the database cannot be read"),
                                         ("cut-end:4096", "the database is truncated")])
def test_a_build_neither_trusts_nor_stops_on_a_damaged_previous_database(kind, words, tmp_path):
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(page_corpus(tmp_path / "c1", broken=False), db, engine).errors == []
    assert stored_records(db, "ruling-page")
    damaged_copy(db, tmp_path / "d.duckdb", kind)
    os.replace(tmp_path / "d.duckdb", db)
    out = run("build", "--corpus", page_corpus(tmp_path / "c2", broken=True), "--db", db, "--engine-out", engine)
    assert out.exit_code == 1 and "[normalize] ruling-page" in out.output  # the broken page, as ever
    assert f"warning: {db}: the previous database is not used ({words}" in out.output, out.output
    assert "kept" not in out.output and stored_records(db, "ruling-page") == []  # nothing taken from it
    assert run("ask", "counters", "face_down", "--db", db).exit_code == 0  # replaced by a sound one


def test_a_build_keeps_a_failed_pages_records_from_a_sound_previous_database(tmp_path):
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(page_corpus(tmp_path / "c1", broken=False), db, engine).errors == []
    before = stored_records(db, "ruling-page")
    out = run("build", "--corpus", page_corpus(tmp_path / "c2", broken=True), "--db", db, "--engine-out", engine)
    assert out.exit_code == 1
    assert f"warning: ruling-page: kept {len(before)} records of the previous build" in out.output
    assert "previous database is not used" not in out.output and stored_records(db, "ruling-page") == before


def test_a_build_warns_when_a_damaged_block_hides_a_failed_pages_records(tmp_path, monkeypatch):
    from pipeline import run as run_module

    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(page_corpus(tmp_path / "c1", broken=False), db, engine).errors == []

    def damaged(*args, **kwargs):
        raise duckdb.Error("Corrupt database file: computed checksum 1 does not match stored checksum 2")

    monkeypatch.setattr(run_module, "read_records", damaged)
    result = build(page_corpus(tmp_path / "c2", broken=True), db, engine)
    assert any(w.startswith("ruling-page: the previous build's records cannot be read, none kept: Corrupt database")
               for w in result.warnings), result.warnings


def test_a_build_refuses_to_replace_a_duckdb_database_rulings_did_not_write(tmp_path):
    db = tmp_path / "analytics.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE sales AS SELECT range AS id FROM range(10)")
    con.close()
    before = db.read_bytes()
    out = run("build", "--corpus", page_corpus(tmp_path / "c", broken=False), "--db", db, "--engine-out",
              tmp_path / "e.py")
    assert out.exit_code == 2 and error_lines(out) == [
        f"Error: --db: {db} is a DuckDB database that `rulings build` did not write (tables sales); the build would "
        "replace it (give another path or remove the file)"]
    assert db.read_bytes() == before


# --------------------------------------------------------------------------- item 12: paths DuckDB reads otherwise

@pytest.mark.parametrize("name", ["a\\b.duckdb", "sub\\dir\\r.duckdb"])
def test_a_path_with_a_backslash_is_refused_by_every_read_command(name, small, tmp_path, monkeypatch):
    _, db, _ = small
    monkeypatch.chdir(tmp_path)
    other = tmp_path / name.replace("\\", "/")  # what DuckDB would open
    other.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db, other)
    shutil.copyfile(db, tmp_path / name)  # the file the user named
    for cmd, args in read_commands(small, tmp_path).items():
        out = run(*args, "--db", name)
        assert out.exit_code == 2, (cmd, out.output)
        assert error_lines(out) == [f"Error: --db: {name}: DuckDB reads a backslash in a path as '/' (it would use "
                                    f"{other}); give a path without a backslash"], (cmd, out.output)


@pytest.mark.parametrize("name", ["q\\r.duckdb", "out\\x\\r.duckdb"])
def test_a_build_to_a_path_with_a_backslash_is_refused_before_anything_is_written(name, tmp_path, monkeypatch):
    corpus = page_corpus(tmp_path / "c", broken=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    out = run("build", "--corpus", corpus, "--db", name, "--engine-out", "e.py")
    assert out.exit_code == 2 and isinstance(out.exception, SystemExit)
    assert error_lines(out) == [f"Error: --db: {name}: DuckDB reads a backslash in a path as '/' (it would use "
                                f"{work / name.replace(chr(92), '/')}); give a path without a backslash"]
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("name", ["x\\y", "out\\"])
def test_export_into_a_folder_with_a_backslash_is_refused(name, small, tmp_path, monkeypatch):
    _, db, _ = small
    monkeypatch.chdir(tmp_path)
    out = run("export", name, "--db", db)
    assert out.exit_code == 2 and error_lines(out) == [
        f"Error: DIR: {name}: DuckDB reads a backslash in a path as '/' (it would use "
        f"{tmp_path}/{name.replace(chr(92), '/')}); give a path without a backslash"]
    assert not (tmp_path / name).exists() and not (tmp_path / name.split("\\")[0]).exists()


def test_prefixes_duckdb_would_read_are_plain_file_names(tmp_path, monkeypatch, home):
    """``~/``, ``md:`` and ``:memory:`` in a relative --db name a file in the
    current folder, as for every other program, not the home folder, a
    MotherDuck service (an extension fetched) or an in-memory database."""
    corpus = page_corpus(tmp_path / "c", broken=False)
    monkeypatch.chdir(tmp_path)
    for name in ("md:r.duckdb", ":memory:r.duckdb"):
        assert run("build", "--corpus", corpus, "--db", name, "--engine-out", "e.py").exit_code == 0
        assert (tmp_path / name).is_file()
        out = run("ask", "counters", "face_down", "--db", name)
        assert out.exit_code == 0 and out.output.startswith("counters on face_down: lost")
    shutil.copyfile(tmp_path / "md:r.duckdb", home / "r.duckdb")
    out = run("ask", "counters", "face_down", "--db", "~/r.duckdb")  # quoted: no shell expanded it
    assert out.exit_code == 2 and error_lines(out) == ["Error: no database at ~/r.duckdb; run `rulings build` first "
                                                       "(or pass --db)"]
    assert sorted(p.name for p in home.iterdir()) == ["r.duckdb"]  # no .duckdb/extensions


# --------------------------------------------------------------------------- item 5: one writer at a time

def test_a_build_refuses_while_a_writer_holds_the_database_and_waits_with_wait(tmp_path):
    corpus = page_corpus(tmp_path / "c", broken=False)
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(corpus, db, engine).errors == []
    before = db.read_bytes()
    with FileLock(f"{db}.lock"):  # as `rulings sql --write` holds it
        out = run("build", "--corpus", corpus, "--db", db, "--engine-out", engine)
    assert out.exit_code == 1 and error_lines(out) == [
        f"Error: [lock] {db}: a refresh or build is running on {db} (or a `rulings sql --write`: lock {db}.lock is "
        "held); try again later or pass --wait"]
    assert db.read_bytes() == before

    held, released = threading.Event(), []

    def writer() -> None:  # a writer's session: holds the lock, writes, commits, ends
        with FileLock(f"{db}.lock"):
            con = duckdb.connect(str(db))
            held.set()
            con.execute("CREATE TABLE notes AS SELECT 1 AS n")
            time.sleep(1.0)
            con.close()
            released.append(time.monotonic())

    thread = threading.Thread(target=writer)
    thread.start()
    held.wait()
    out = run("build", "--corpus", corpus, "--db", db, "--engine-out", engine, "--wait")
    done = time.monotonic()
    thread.join()
    assert out.exit_code == 0, out.output
    assert released and done >= released[0]
    assert not Path(f"{db}.wal").exists()
    assert run("ask", "counters", "face_down", "--db", db).exit_code == 0


@pytest.mark.parametrize("statement", ["CREATE TABLE notes (n INTEGER)", "DELETE FROM records"])
def test_sql_write_takes_the_lock_and_refuses_while_another_writer_holds_it(statement, small, tmp_path, monkeypatch):
    _, db, _ = small
    copy = tmp_path / "w.duckdb"
    shutil.copyfile(db, copy)
    before = copy.read_bytes()
    with FileLock(f"{copy}.lock"):  # as a build or refresh holds it
        out = run("sql", statement, "--db", copy, "--write")
    assert out.exit_code == 1 and error_lines(out) == [
        f"Error: [lock] {copy}: a refresh or build is running on {copy} (or a `rulings sql --write`: lock "
        f"{copy}.lock is held); try again later"]
    assert copy.read_bytes() == before

    from pipeline import queries

    seen, opened = [], queries.connect

    def connect(*args, **kwargs):  # while sql --write works, is the lock held?
        probe = FileLock(f"{copy}.lock")
        try:
            probe.acquire(timeout=0)
        except Timeout:
            seen.append("held")
        else:
            probe.release()
            seen.append("free")
        return opened(*args, **kwargs)

    monkeypatch.setattr(queries, "connect", connect)
    assert run("sql", statement, "--db", copy, "--write").exit_code == 0
    assert seen == ["held"]
    assert run("sql", "SELECT 1", "--db", copy).exit_code == 0 and seen == ["held", "free"]  # a reader takes none
