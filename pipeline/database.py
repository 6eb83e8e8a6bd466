"""Opening DuckDB files: every connection the project makes goes through :func:`connect`.

Three things DuckDB would do on its own that a rulings command must not:

- **Fetch code.** Given a file it does not know (a SQLite file), an ``md:``
  or ``s3://`` path, DuckDB downloads and loads an extension. Every
  connection has extension auto-install and auto-load off
  (:data:`SAFE_CONFIG`; ``rulings sql`` without ``--write`` also locks the
  configuration, so SQL cannot turn them back on).
- **Read a path otherwise than the file system does.** DuckDB reads ``\\``
  as ``/``, a leading ``~`` as the home folder, ``:memory:``, ``md:`` or
  ``file:`` prefixes and URLs as what they name. :func:`duckdb_path` hands
  DuckDB an absolute path (so no prefix is read) and refuses a backslash
  (UsageError): there is no way to name such a file to DuckDB.
- **Open a file of another kind or another schema.** :func:`open_database`
  opens only a DuckDB file (its header's magic ``DUCK`` at byte 8) holding
  this version's tables and columns (``schema/ddl.sql``) and its
  ``build_info.schema_version`` (:data:`SCHEMA_VERSION`); anything else is one
  error naming the file and saying what to do.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import duckdb

from .errors import LoadError, UsageError

# The storage format a build writes its database in (DuckDB's storage_compatibility_version, set
# only on the connection that creates the file: DuckDB keeps a file's format when it writes to it
# later, as a refresh or `rulings sql --write` does), and the oldest DuckDB that opens it: DuckDB
# reads the formats of its own and older releases. 1.4 is the 1.x release with long-term support.
# Older formats ran out of memory under the build's 64 MB cap: 1.1's and 1.2's in the load of a
# 500-page corpus; a copy into 1.1's format after the load (COPY FROM DATABASE) at 2,000 pages.
# 1.4's builds peak as 2.0's own do (bench.child, scaled corpora: 497 / 492 MB at 500 pages,
# 511 / 502 MB at 2,000, load CPU 42.8 / 50.7 s).
STORAGE_VERSION = "v1.4.0"
OLDEST_DUCKDB = "1.4.0"
# Merged into every connection's config, last: a caller cannot turn them on.
SAFE_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
               "allow_community_extensions": False, "allow_unsigned_extensions": False}
# The schema a build writes (build_info key 'schema_version'). Raise it with every change of
# schema/ddl.sql's tables or columns, or of what their values mean: a database of another
# version is refused with "run `rulings build`". tests/e2e/test_database_files.py pins it to the DDL.
SCHEMA_VERSION = 6
REBUILD = "run `rulings build` to rebuild it from the corpus"
HEADER_MAGIC = b"DUCK"  # at byte 8 of every DuckDB database file
# A DuckDB file is its main header and two database headers of 4 KiB each, then its blocks
# (tests/e2e/test_database_files.py checks a build's file is exactly this long).
HEADERS_BYTES = 3 * 4096
SQLITE_MAGIC = b"SQLite format 3\x00"


class UnusableDatabase(LoadError):
    """A file that should be a rulings database and cannot be read as one
    (damaged, of another schema, in use); ``problem`` says what is wrong,
    the message adds what to do."""

    def __init__(self, problem: str, place: str, advice: str = REBUILD):
        self.problem = problem
        super().__init__(f"{problem}; {advice}", place=place)


class ForeignFile(UsageError):
    """A file that is no rulings database: not a DuckDB file, or a DuckDB
    database with tables but none of rulings' (someone's own data).
    ``problem`` says what it is."""

    def __init__(self, problem: str, path: Path | str):
        self.problem = problem
        super().__init__(f"{path} {problem}; pass the --db that `rulings build` wrote", place="--db")


def one_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (DuckDB's run over several)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def duckdb_path(path: Path | str, option: str = "--db") -> Path:
    """``path`` made absolute (symlinks resolved), as DuckDB must be given
    it: an absolute path starts with ``/``, so DuckDB reads no ``~``,
    ``:memory:``, ``md:`` or URL prefix in it. UsageError (naming
    ``option``) for a path holding a backslash, which DuckDB reads as ``/``
    (``a\\b.duckdb`` would open ``a/b.duckdb``), or one that cannot be
    resolved (a symlink loop)."""
    try:
        resolved = Path(path).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UsageError(f"{path} cannot be resolved: {exc}", place=option) from None
    if "\\" in str(resolved):
        raise UsageError(f"{path}: DuckDB reads a backslash in a path as '/' (it would use "
                         f"{str(resolved).replace(chr(92), '/')}); give a path without a backslash", place=option)
    return resolved


def connect(path: Path | str, read_only: bool = False, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection to ``path`` (``":memory:"`` for an in-memory
    database) with ``config`` and :data:`SAFE_CONFIG` (extensions never
    installed or loaded on their own). The file is not checked (see
    :func:`open_database`); UsageError for a path DuckDB would misread
    (:func:`duckdb_path`); duckdb.Error when DuckDB cannot open it."""
    target = ":memory:" if str(path) == ":memory:" else str(duckdb_path(path))
    return duckdb.connect(target, read_only=read_only, config={**(config or {}), **SAFE_CONFIG})


def file_problem(path: Path) -> str | None:
    """What the file at ``path`` is when it is no DuckDB database ("is a
    SQLite database, not a DuckDB database"), from its first 16 bytes; None
    for a DuckDB file. OSError when it cannot be read."""
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head[8:12] == HEADER_MAGIC:
        return None
    if not head:
        return "is an empty file, not a DuckDB database"
    if head.startswith(SQLITE_MAGIC):
        return "is a SQLite database, not a DuckDB database"
    return "is not a DuckDB database (no DuckDB header)"


def open_database(db_path: Path | str, read_only: bool = True, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    """A connection (:func:`connect`) to the rulings database at ``db_path``,
    checked: a DuckDB file (ForeignFile, a UsageError, when not; an empty
    file is an UnusableDatabase: a build may write there) holding this
    version's schema (:func:`schema_problem`). UnusableDatabase (a
    LoadError) when DuckDB cannot open or read it or its schema is another;
    ForeignFile for a DuckDB database of someone else's tables."""
    path = check_header(db_path)
    try:
        con = connect(path, read_only=read_only, config=config)
    except duckdb.Error as exc:
        raise open_error(exc, db_path) from None
    try:
        size_problem(con, path, db_path)
        schema_problem(con, db_path)
    except BaseException:
        con.close()
        raise
    return con


def check_header(db_path: Path | str) -> Path:
    """The path to hand DuckDB (:func:`duckdb_path`) of a file that starts
    with DuckDB's header; ForeignFile for any other file, UnusableDatabase
    for an empty one (:func:`file_problem`)."""
    path = duckdb_path(db_path)
    kind = file_problem(path)
    if kind is not None:
        if kind.startswith("is an empty file"):
            raise UnusableDatabase(f"it {kind}", str(db_path), "run `rulings build` to build the database there")
        raise ForeignFile(kind, db_path)
    return path


def open_error(exc: duckdb.Error, db_path: Path | str) -> UnusableDatabase:
    """The error for a database DuckDB refused to open or read: in use by
    another process (its lock), or damaged."""
    if "could not set lock" in str(exc).lower():  # DuckDB: "Could not set lock on file ...: Conflicting lock"
        return UnusableDatabase(f"the database is open in another process ({one_line(exc)})", str(db_path),
                                "try again when it has ended")
    return unreadable(exc, db_path)


def is_damage(exc: duckdb.Error) -> bool:
    """Whether DuckDB raised ``exc`` for bytes of the database it could not
    read (a block whose checksum fails, a block past the end of the file),
    not for the SQL or an output file: DuckDB has no class of its own for
    these, only their words."""
    text = str(exc)
    return "Corrupt database file" in text or "Could not read enough bytes" in text


def unreadable(exc: duckdb.Error, db_path: Path | str | None) -> UnusableDatabase:
    """The error for a database whose bytes DuckDB cannot read (truncated,
    a flipped bit: DuckDB checks each block's checksum)."""
    return UnusableDatabase(f"the database cannot be read, it is damaged or of another DuckDB version "
                            f"({one_line(exc)})", str(db_path or "database"))


def size_problem(con: duckdb.DuckDBPyConnection, path: Path, db_path: Path | str) -> None:
    """UnusableDatabase when the file at ``path`` is shorter than the blocks
    its header counts (a truncated copy: DuckDB reads the missing blocks
    only when a query needs them). The file holds at least its used
    blocks: free blocks at its end are cut off by a checkpoint (a refresh
    that retires rulings frees some). Not checked while a write-ahead log
    lies beside it: the blocks DuckDB replayed from the log are counted but
    live in memory until the next checkpoint writes them."""
    if Path(f"{path}.wal").exists():
        return
    try:
        blocks, block_size = con.execute("SELECT used_blocks, block_size FROM pragma_database_size() "
                                         "WHERE database_name = current_database()").fetchall()[0]
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None
    expected = HEADERS_BYTES + blocks * block_size
    size = path.stat().st_size
    if size < expected:
        raise UnusableDatabase(f"the database is truncated: {size:,} bytes where its header counts {expected:,}",
                               str(db_path))


def _tables(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """Each table of the database's main schema -> its columns and types, in order."""
    found: dict[str, dict[str, str]] = {}
    # duckdb_columns() lists views' columns too: they are left out by name (duckdb_views(), a
    # millisecond), not by a join with duckdb_tables(), which sizes every table (3 ms of each command)
    for table, column, kind in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main' AND table_name NOT IN ("
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main') "
            "ORDER BY table_name, column_index").fetchall():
        found.setdefault(table, {})[column] = kind
    return found


@lru_cache(maxsize=1)
def columns() -> dict[str, dict[str, str]]:
    """Each table of ``schema/ddl.sql`` -> its columns and types in table
    order (``read_json`` reads rows by them), from the DDL itself run on an
    in-memory database: a column added to the DDL is a column here."""
    from .schema import ddl

    con = connect(":memory:")
    try:
        con.execute(ddl())
        # duckdb_columns(): the same names and types as information_schema.columns, in a tenth of the time
        rows = con.execute("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                           "WHERE database_name = current_database() AND schema_name = 'main' "
                           "ORDER BY table_name, column_index").fetchall()
    finally:
        con.close()
    out: dict[str, dict[str, str]] = {}
    for table, column, data_type in rows:
        out.setdefault(table, {})[column] = data_type
    return out


def expected_tables() -> dict[str, dict[str, str]]:
    return columns()


@lru_cache(maxsize=1)
def ddl_fingerprint() -> str:
    """sha256 of ``schema/ddl.sql``: a build stores it in ``build_info`` (key
    ``schema_ddl_sha256``) beside its tables' columns (``schema_columns``,
    JSON of :func:`columns`)."""
    import hashlib

    from .schema import ddl

    return hashlib.sha256(ddl().encode("utf-8")).hexdigest()


def build_schema_info() -> dict[str, str]:
    """The ``build_info`` rows that let :func:`schema_problem` check a
    database without making the DDL's tables on an in-memory database (about
    40 ms of every command's start)."""
    return {"schema_ddl_sha256": ddl_fingerprint(), "schema_columns": json.dumps(columns(), separators=(",", ":"))}


# The build_info keys the schema check reads, in one query (:func:`_build_info`).
_CHECKED_KEYS = ("schema_ddl_sha256", "schema_columns", "schema_version")


def _build_info(con: duckdb.DuckDBPyConnection, found: dict[str, dict[str, str]]) -> dict[str, str] | None:
    """The ``build_info`` values of :data:`_CHECKED_KEYS` (a key unset left
    out); None when the database has no ``build_info`` of this schema's
    columns (``found``: :func:`_tables`)."""
    if found.get("build_info") != {"key": "VARCHAR", "value": "VARCHAR"}:
        return None
    rows = con.execute("SELECT key, value FROM build_info WHERE key IN (?, ?, ?)", list(_CHECKED_KEYS)).fetchall()
    return dict(rows)


def _stored_columns(info: dict[str, str] | None) -> dict | None:
    """The columns the build stored in ``build_info`` (``info``:
    :func:`_build_info`), when it was built from this version's DDL (the
    same :func:`ddl_fingerprint`); else None."""
    if not info or info.get("schema_ddl_sha256") != ddl_fingerprint():
        return None
    try:
        stored = json.loads(info.get("schema_columns") or "")
    except ValueError:
        return None
    return stored if isinstance(stored, dict) and "build_info" in stored else None


def schema_problem(con: duckdb.DuckDBPyConnection, db_path: Path | str) -> None:
    """Raise when the database of ``con`` is not one this version reads:
    ForeignFile when it has tables but no ``build_info`` (not written by
    rulings); UnusableDatabase naming the first difference (no or another
    schema version, a table or column missing, renamed, of another type or
    not in the schema; tables of the user's own are allowed) or when DuckDB
    cannot read its catalog."""
    try:
        found = _tables(con)
        info = _build_info(con, found)
        expected = _stored_columns(info) or expected_tables()
        if not found:
            raise UnusableDatabase("it is a DuckDB database without tables, not a rulings database", str(db_path))
        if "build_info" not in found and found and not set(found) & set(expected):
            raise ForeignFile(f"is a DuckDB database that `rulings build` did not write (tables "
                              f"{', '.join(sorted(found)[:3])}{', ...' if len(found) > 3 else ''})", db_path)
        if found.get("build_info") == expected["build_info"]:
            version_problem((info or {}).get("schema_version"), db_path)
        for table, want in expected.items():
            problem = _table_problem(table, found.get(table), want)
            if problem:
                raise UnusableDatabase(f"{problem}: the database was built by another version of rulings or "
                                       "changed since", str(db_path))
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None


def version_problem(version: str | None, db_path: Path | str) -> None:
    """UnusableDatabase when the database's ``build_info`` schema version
    (``version``, None when it holds none) is not :data:`SCHEMA_VERSION`."""
    if version is None:
        raise UnusableDatabase("it records no schema version (built by a rulings before 2026-12, or not "
                               f"complete); this rulings reads schema version {SCHEMA_VERSION}", str(db_path))
    if version != str(SCHEMA_VERSION):
        older = version.isdigit() and int(version) < SCHEMA_VERSION
        built = "an older" if older else "a newer" if version.isdigit() else "another"
        raise UnusableDatabase(f"it has schema version {version!r}, built by {built} rulings; this rulings reads "
                               f"schema version {SCHEMA_VERSION}", str(db_path))


def _table_problem(table: str, have: dict[str, str] | None, want: dict[str, str]) -> str | None:
    """The first difference of a table's columns (``have``: None when the
    table is missing) from the schema's (``want``), or None."""
    if have is None:
        return f"table {table} is missing"
    for column, kind in want.items():
        if column not in have:
            return f"column {table}.{column} is missing"
        if have[column] != kind:
            return f"column {table}.{column} is {have[column]}, this rulings reads {kind}"
    extra = [c for c in have if c not in want]
    if extra:
        return f"column {table}.{extra[0]} is not in this rulings' schema"
    if list(have) != list(want):
        return f"the columns of table {table} are in another order"
    return None
