"""The load stage: every write to the DuckDB database, for a build and a refresh.

The schema is ``schema/ddl.sql``; :func:`columns` reads each table's columns
from it, and one row builder per table (:func:`record_rows`,
:func:`rule_rows`, :func:`source_rows`, :func:`snapshot_row`) fills them, checked
against the DDL (:func:`check_row`). A build writes a new database file next to
the target (:class:`DatabaseWriter`) and renames it over the target only when
every table is loaded, so a build killed at any point leaves the previous
database intact. Rows are loaded in bulk, never row by row: they are written
as JSON (the build's worker processes make one array per page and table, which
the build process appends to one file per table and batch, :class:`RowBatch`;
rows made at the end are streamed as newline-delimited JSON) and read with
DuckDB's ``read_json`` in one ``INSERT ... SELECT`` per batch of pages, all in one
transaction on the temporary file; the rename is what makes a build all or
nothing. A refresh writes in place, in one transaction (:func:`write_refresh`).
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, Sequence

import duckdb
import orjson
from filelock import FileLock, Timeout

from .cards import CardLink, card_entries, card_index, card_name_key, loose_key
from .cardtables import insert_card_texts
from .chinese import name_key, to_simplified
from .compile import ProceduralRule, Reviewed, Rule, RuleChange
from .corpus import Source
from .database import (STORAGE_VERSION, SCHEMA_VERSION, build_schema_info, columns, ForeignFile, UnusableDatabase, connect, duckdb_path, file_problem,
                       open_database, unreadable)
from .dates import RulingDate
from .errors import BusyError, LoadError, UsageError
from .generate import check_replaceable
from .records import CardMention, Record, Statement, section_key
from .schema import ddl
from .simulators import table_rows as simulator_rows
from .stopping import deferred, remove, temp_path, track, untrack

# What every error of a build's writing says: nothing of the previous outputs was touched.
KEPT = "the previous database and engine stay"


def check_row(table: str, row: dict) -> None:
    """Raise LoadError when a row builder's ``row`` has not exactly the
    columns of ``table`` in ``schema/ddl.sql`` (a column added to the DDL
    must be filled by its row builder, or it would load as NULL unnoticed)."""
    expected = columns()[table]
    if row.keys() != expected.keys():
        missing = [c for c in expected if c not in row]
        extra = [c for c in row if c not in expected]
        raise LoadError(f"rows of table {table} do not match schema/ddl.sql: missing {missing}, unknown {extra}",
                        place="pipeline/load.py")


@dataclass
class SnapshotInfo:
    """What is known of a source's snapshot in force."""

    source_id: str
    content_hash: str
    size: int
    fetched_at: str | None = None
    http_status: int | None = None
    etag: str | None = None
    last_modified: str | None = None


@dataclass
class BuildData:
    """Everything one build writes."""

    sources: list[Source]
    snapshots: list[SnapshotInfo]
    records: list[Record]
    rules: list[Rule]
    procedural: list[ProceduralRule]
    run: dict
    info: dict[str, str] = field(default_factory=dict)
    rule_changes: list[RuleChange] = field(default_factory=list)


# --------------------------------------------------------------------------- rows

UNLINKED = CardLink(None, None, None)
RECORD_TABLES = ("records", "record_dates", "card_mentions", "statements")
# The longest row: a record holds at most two texts (text, norm_text) of at most
# 1,000,000 characters (extract's sentence limit), at most 6 bytes each in JSON
# (a control character is escaped as \u0000). DuckDB's JSON reader keeps a
# buffer of twice this per thread, so it is not set higher than rows need.
MAX_ROW_BYTES = 16 * 1024 * 1024


def record_rows(records: list[Record], snapshot_of: dict[str, str], run_id: int,
                source_of: dict[str, Source]) -> dict[str, list[dict]]:
    """The rows of :data:`RECORD_TABLES` for ``records``: card mentions are
    linked to passcodes here (:func:`pipeline.cards.card_index`).
    ``snapshot_of`` maps source id -> content hash of its snapshot."""
    rows: dict[str, list[dict]] = {name: [] for name in RECORD_TABLES}
    cards = card_index()
    for r in records:
        rows["records"].append({
            "record_id": r.id, "source_id": r.source_id, "seq": r.seq, "block": r.block,
            "section_path": " / ".join(r.section), "role": r.role, "channel": r.channel or None,
            "status": r.status, "withdrawn": r.withdrawn, "parent_id": r.parent_id or None, "text": r.text,
            "cells": r.cells or None, "norm_text": r.norm, "snapshot_hash": snapshot_of.get(r.source_id),
            "first_seen_run": run_id, "retired_run": None})
        faq: dict[str, list[tuple[str, str]]] = {}  # the same date may link two FAQ entries: keep both, in order
        for raw, fid, url in r.faq:
            faq.setdefault(raw, []).append((fid, url))
        for i, d in enumerate(r.dates):
            fid, url = faq[d.raw].pop(0) if faq.get(d.raw) else (None, None)
            rows["record_dates"].append({
                "record_id": r.id, "ord": i, "raw": d.raw, "date": d.iso, "valid": d.valid,
                "reason": d.reason or None, "from_heading": d.start < 0, "kind": d.kind, "faq_id": fid,
                "faq_url": url})
        source = source_of.get(r.source_id)
        for i, c in enumerate(r.cards):
            link = cards.link(c.name) if c.kind == "card" else UNLINKED
            norm = c.norm_name or (to_simplified(c.name, source.script, source.region) if source else c.name)
            rows["card_mentions"].append({
                "record_id": r.id, "ord": i, "name": c.name, "norm_name": norm, "match_key": name_key(norm, "Hans"),
                "url": c.url, "passcode": link.passcode, "name_en": link.name_en, "linked_by": link.linked_by,
                "name_source": link.name_source, "kind": c.kind, "quote": c.quote, "konami_id": link.konami_id})
        for st in r.statements:
            rows["statements"].append({
                "record_id": r.id, "info_kind": st.info_kind, "event": st.event, "verdict": st.verdict,
                "condition": st.condition, "basis": st.basis, "principle_id": st.principle_id or None,
                "dates": list(st.dates), "reading": st.reading, "effect": st.effect or None,
                "passcode": st.passcode})
    for table, table_rows in rows.items():
        if table_rows:
            check_row(table, table_rows[0])
    return rows


def source_rows(sources: list[Source]) -> list[dict]:
    return [{"source_id": s.id, "url": s.url, "language": s.language, "script": s.script, "region": s.region,
             "format": s.format, "licence": s.licence, "path": s.path, "fetchable": s.fetch, "notes": s.notes}
            for s in sources]


def snapshot_row(s: SnapshotInfo, run_id: int, in_force: bool = True) -> dict:
    return {"source_id": s.source_id, "content_hash": s.content_hash, "bytes": s.size, "fetched_at": s.fetched_at,
            "http_status": s.http_status, "etag": s.etag, "last_modified": s.last_modified, "run_id": run_id,
            "in_force": in_force}


def rule_rows(rules: list[Rule], procedural: list[ProceduralRule], changes: list[RuleChange] = (),
              run_id: int = 1) -> dict[str, Iterable[dict]]:
    """Rows of ``rules``, ``rule_citations`` (a generator: one row per
    citation, made as they are written), ``procedural_rules``,
    ``rule_changes`` (``changes`` of run ``run_id``) and
    ``simulator_verdicts`` (the rules against schema/simulators/*.json)."""
    def citations() -> Iterator[dict]:
        for rule in rules:
            for c in rule.citations:
                yield {"info_kind": rule.info_kind, "event": rule.event, "record_id": c.record_id, "role": c.role,
                       "verdict": c.verdict, "date": c.dates[-1] if c.dates else None, "source_id": c.source_id,
                       "dates": list(c.dates)}

    return {
        "rules": [{"info_kind": rule.info_kind, "event": rule.event, "verdict": rule.verdict,
                   "condition": rule.condition, "latest_date": rule.latest_date, "changed_on": rule.changed_on,
                   "record_ids": rule.record_ids, "dates": rule.dates, "conflicts": rule.conflicts,
                   "disputed_by": rule.disputed_by,
                   "cases": [{"case_id": c.case_id, "fact": c.fact, "values": [_fact_text(v) for v in c.values],
                              "verdict": c.verdict, "record_ids": list(c.record_ids), "condition": c.condition,
                              "disputed_by": list(c.disputed_by)}
                             for c in rule.cases]}
                  for rule in rules],
        "rule_citations": citations(),
        "procedural_rules": [{"rule_id": p.rule_id, "summary": p.summary, "record_ids": list(p.record_ids)}
                             for p in procedural],
        "rule_changes": [{"run_id": run_id, "info_kind": c.info_kind, "event": c.event, "case_id": c.case_id,
                          "change": c.change, "old_verdict": c.old_verdict, "new_verdict": c.new_verdict,
                          "record_ids": list(c.record_ids)} for c in changes],
        "simulator_verdicts": simulator_rows(rules),
    }


def _fact_text(value) -> str:
    """A case's fact value as SQL text: JSON's ``true`` / ``false`` for booleans."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@lru_cache(maxsize=1)
def card_name_rows() -> tuple[tuple[int | None, int, str, str, str, str], ...]:
    """Rows of ``card_names`` (passcode, konami_id, language, name,
    name_key, loose_key): every name of every card of ``corpus/data/card-names.tsv.gz``
    (:func:`pipeline.cards.card_entries`), once per passcode of the card
    (passcode None for a card without one), with its key
    (:func:`pipeline.cards.card_name_key`; a Chinese name's as the card
    index computed it). About 90,000 rows: computed once per process."""
    zh_keys = card_index().zh_keys  # made with the index, in a build's helper process (1 s of OpenCC)

    def key(language: str, name: str) -> str:
        known = zh_keys.get(name) if language.startswith("zh") else None
        return known if known is not None else card_name_key(language, name)

    rows = []
    for kid, entry in sorted(card_entries().items()):
        names = sorted(set(entry.names.items()) | set(entry.also))
        for passcode in sorted(entry.passcodes) or [None]:
            rows += [(passcode, kid, language, name, k, loose_key(k))
                     for language, name in names for k in (key(language, name),)]
    return tuple(rows)


def insert_card_names(con: duckdb.DuckDBPyConnection) -> None:
    """Fill ``card_names`` from :func:`card_name_rows`, handed to DuckDB as
    NumPy columns (a replacement scan: 0.1 s, where NDJSON took 0.8 s; a
    missing passcode goes as -1 and is stored as NULL)."""
    import numpy as np  # only a build's final commit needs it

    rows = card_name_rows()
    columns_ = {"passcode": np.array([-1 if r[0] is None else r[0] for r in rows], dtype=np.int32),
                "konami_id": np.array([r[1] for r in rows], dtype=np.int32)}
    for i, name in enumerate(("language", "name", "name_key", "loose_key"), start=2):
        columns_[name] = np.array([r[i] for r in rows], dtype=object)
    con.register("card_name_columns", columns_)
    try:
        con.execute("INSERT INTO card_names SELECT nullif(passcode, -1), konami_id, language, name, name_key, loose_key "
                    "FROM card_name_columns")
    finally:
        con.unregister("card_name_columns")


def _rows(data: BuildData) -> dict[str, list[dict]]:
    """Every table's rows for a build (record rows included when
    ``data.records`` holds any); :func:`bulk_insert` checks each table's
    first row against the DDL."""
    run_id = data.run["run_id"]
    rows: dict[str, list[dict]] = {name: [] for name in columns()}
    rows["sources"] = source_rows(data.sources)
    rows["runs"] = [data.run]
    rows["snapshots"] = [snapshot_row(s, run_id) for s in data.snapshots]
    rows.update(record_rows(data.records, {s.source_id: s.content_hash for s in data.snapshots}, run_id,
                            {s.id: s for s in data.sources}))
    rows.update(rule_rows(data.rules, data.procedural, data.rule_changes, data.run["run_id"]))
    info = {**data.info, "schema_version": str(SCHEMA_VERSION),  # what database.open_database checks
            **build_schema_info()}
    rows["build_info"] = [{"key": k, "value": v} for k, v in sorted(info.items())]
    return rows


def json_array(rows: list[dict]) -> bytes:
    """Rows as one JSON array (UTF-8): the build's workers hand back a
    page's rows so, and :class:`RowBatch` joins them into a batch's files.
    One ``orjson.dumps`` of the whole list takes a fifth of the time of one
    call per row (the call's own cost dominates for rows of a few fields)."""
    return orjson.dumps(rows, default=str)


# --------------------------------------------------------------------------- writing

def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables of ``schema/ddl.sql`` that ``con`` lacks."""
    con.execute(ddl())


def check_unique_records(con: duckdb.DuckDBPyConnection, place: str) -> None:
    """Raise LoadError when two rows of ``records`` share a record id. The
    table has no primary key: its index grew about 44 bytes a record inside
    DuckDB's memory cap (a 4,000-page build ran out of memory); one GROUP BY
    after the load checks the same thing (0.4 s for 2.4 million records)."""
    dup = con.execute("SELECT record_id, count(*) FROM records GROUP BY record_id HAVING count(*) > 1 "
                      "ORDER BY record_id LIMIT 3").fetchall()
    if dup:
        shown = ", ".join(f"{rid} ({n} rows)" for rid, n in dup)
        raise LoadError(f"table records: record ids are not unique: {shown}", place=place)


def check_columns(con: duckdb.DuckDBPyConnection, db_path: Path) -> None:
    """Raise LoadError when a table of the database has other columns or
    column types than ``schema/ddl.sql`` (a database an older version built,
    e.g. with ``rules.conflicts`` as JSON text): a refresh cannot write into
    it, and says to rebuild."""
    found: dict[str, dict[str, str]] = {}
    for table, column, kind in con.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                                           "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
                                           ).fetchall():
        found.setdefault(table, {})[column] = kind
    for table, expected in columns().items():
        have = found.get(table, {})
        for column, kind in expected.items():
            if have.get(column) != kind:
                now = f"is {have[column]}" if column in have else "is missing"
                raise LoadError(f"{table}.{column} {now}, this version writes {kind}: the database was built by "
                                "another version; run `rulings build` to rebuild it from the corpus",
                                place=str(db_path))


def write_ndjson(path: Path, rows: Iterable[dict], table: str) -> int:
    """Write ``rows`` to ``path`` as NDJSON one row at a time (no row list
    or joined bytes held in memory: the rule citations of a large corpus are
    hundreds of thousands of rows), checking the first row's columns
    (:func:`check_row`). Returns the number of rows."""
    n = 0
    with open(path, "wb", buffering=1 << 20) as fh:
        for row in rows:
            if n == 0:
                check_row(table, row)
            fh.write(orjson.dumps(row, default=str, option=orjson.OPT_APPEND_NEWLINE))
            n += 1
    return n


def bulk_insert(con: duckdb.DuckDBPyConnection, table: str, rows: Iterable[dict], workdir: Path,
                files: Sequence[Path] = ()) -> None:
    """Insert the row ``files`` (each one JSON array: a batch of pages'
    rows, :class:`RowBatch`), then ``rows`` (a list or any iterable,
    streamed to an NDJSON file under ``workdir`` and deleted once read),
    into ``table``: one ``read_json`` a form."""
    if files:
        _read_json_into(con, table, [str(f) for f in files], "array")
    path = workdir / f"{table}.ndjson"
    try:
        if write_ndjson(path, rows, table):  # (workers' rows: checked by record_rows)
            _read_json_into(con, table, [str(path)], "newline_delimited")
    finally:
        path.unlink(missing_ok=True)


class RowBatch:
    """Pages' rows (:func:`json_array`, one array per table and page)
    appended as they come to one JSON array file per table under a folder,
    until :meth:`close`. On disk, not in memory: a build's batch is 32 MB of
    rows. One file a table and batch, not one a page: DuckDB's
    ``read_json`` costs about a millisecond a file whatever its size, and
    creating a file about 0.6 ms of CPU on this machine's disk (4,000 files
    of 1 KB: 3.3 s; on tmpfs 0.4 s)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.files: dict[str, BinaryIO] = {}
        self.bytes = 0

    def add(self, arrays: dict[str, bytes]) -> None:
        """Append one page's ``arrays`` (table -> JSON array). Raises
        LoadError naming the table for bytes that are no JSON array (and
        then adds none of the page's rows), or when the file cannot be
        written (a full disk: the build stops, the previous database stays)."""
        for table, data in arrays.items():
            if data[:1] != b"[" or data[-1:] != b"]":
                raise LoadError(f"table {table}: a page's rows are not a JSON array (cut short?)",
                                place=str(self.folder))
        for table, data in arrays.items():
            inner = memoryview(data)[1:-1]
            if inner:
                try:
                    self._append(table, inner)
                except OSError as exc:
                    raise LoadError(f"table {table}: cannot write the batch of rows: {exc.strerror or exc}; {KEPT}",
                                    place=str(exc.filename or self.folder)) from exc
                self.bytes += len(inner)

    def _append(self, table: str, inner: memoryview) -> None:
        fh = self.files.get(table)
        if fh is None:
            fh = self.files[table] = open(self.folder / f"{table}.json", "wb")
            fh.write(b"[")
        else:
            fh.write(b",")
        fh.write(inner)

    def close(self) -> dict[str, Path]:
        """End each file's array and close it; returns table -> file (the
        caller deletes them). The batch is empty again, even when a file
        cannot be written: LoadError then (its files are left in the folder)."""
        files, self.files, self.bytes = self.files, {}, 0
        failed = None
        for table, fh in files.items():
            try:
                try:
                    fh.write(b"]")
                finally:
                    fh.close()
            except OSError as exc:
                failed = failed or (table, exc)
        if failed:
            table, exc = failed
            raise LoadError(f"table {table}: cannot write the batch of rows: {exc.strerror or exc}; {KEPT}",
                            place=str(exc.filename or self.folder)) from exc
        return {table: Path(fh.name) for table, fh in files.items()}

    def discard(self) -> None:
        """Close and delete the files of an unfinished batch; never raises
        (it runs while an error is on its way)."""
        files, self.files, self.bytes = self.files, {}, 0
        for fh in files.values():
            with suppress(OSError):
                fh.close()
            with suppress(OSError):
                Path(fh.name).unlink(missing_ok=True)


def _read_json_into(con: duckdb.DuckDBPyConnection, table: str, paths: list[str], form: str) -> None:
    """``INSERT INTO table SELECT ... FROM read_json(paths)``, each column
    read as its DDL type; ``form``: ``array`` or ``newline_delimited``."""
    types = columns()[table]
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in types.items()) + "}"
    names = ", ".join(types)
    con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, format='{form}', "
                f"columns={spec}, maximum_object_size={MAX_ROW_BYTES})", [paths])


class DatabaseWriter:
    """A new database, written to a temporary file next to ``db_path`` and
    renamed over ``db_path`` by :meth:`commit`; a writer left without commit
    (an error, a kill) leaves ``db_path`` as it was.

    Rows can come early (:meth:`add_rows` and :meth:`insert_batch`, while a build still reads
    pages) and at the end (:meth:`commit`), all in one transaction: DuckDB
    writes the full row groups of a transaction's inserts straight to the
    file, where a commit per batch logged them to the write-ahead log and
    wrote them again at each checkpoint (a quarter more of DuckDB's time).
    DuckDB's memory is capped at ``memory_limit`` (it spills to disk
    beyond): a build's memory must not grow with the corpus. 64 MB: a
    4,000-page build peaked at 447 MB with it and 503 MB with 128 MB, no
    slower (``bench``). Use as a context manager.
    """

    def __init__(self, db_path: Path, memory_limit: str = "64MB"):
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.con: duckdb.DuckDBPyConnection | None = None
        self._batch: RowBatch | None = None
        self.tmp = self._wal = self._workdir = None
        try:
            self._open(memory_limit)
        except BaseException as exc:  # a stop signal held back by _open() included: nothing stays
            self.close()
            if isinstance(exc, (OSError, duckdb.Error)):
                raise _write_error("cannot create the new database", exc, self.tmp or self.db_path) from exc
            raise

    def _open(self, memory_limit: str) -> None:
        """Name, track and create the temporary database and the work
        folder. Every path is named and tracked (:mod:`pipeline.stopping`)
        before it exists, and a stop signal waits until all are known to
        :meth:`close`: a build stopped at any line leaves none behind."""
        with deferred():
            self.tmp = temp_path(self.db_path.parent, f".{self.db_path.name}.", ".tmp")  # DuckDB creates it
            self._wal = Path(f"{self.tmp}.wal")
            track(self._wal)
            # Beside the database, not in the system's temporary folder: a killed build's leftovers
            # are then the next build's to clean (clean_leftovers), under the database's lock.
            self._workdir = temp_path(self.db_path.parent, work_prefix(self.db_path, "load"))
            self._workdir.mkdir()
            self._batch = RowBatch(self._workdir)
            # One thread: the build's workers have the other cores. What DuckDB spills goes in the work folder.
            self.con = connect(self.tmp, config={"memory_limit": memory_limit, "threads": 1,
                                                 "temp_directory": str(self._workdir / "spill"),
                                                 "storage_compatibility_version": STORAGE_VERSION})  # DuckDB 1.4+ opens it
            create_schema(self.con)
            self.con.execute("BEGIN TRANSACTION")

    def __enter__(self) -> DatabaseWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def add_rows(self, arrays: dict[str, bytes]) -> int:
        """Add one page's rows (table -> JSON array of :func:`json_array`) to
        the batch that :meth:`insert_batch` loads; returns the batch's size
        in bytes so far."""
        self._batch.add(arrays)
        return self._batch.bytes

    def insert_batch(self) -> None:
        """Insert the batch of :meth:`add_rows` into the build's transaction
        (committed by :meth:`commit`) and delete its files. Raises LoadError
        naming the table when DuckDB refuses the rows."""
        files = self._batch.close()
        try:
            for table, path in files.items():
                self._insert(table, [], [path])
        finally:
            for path in files.values():
                path.unlink(missing_ok=True)

    def _insert(self, table: str, rows: list[dict], files: list[Path]) -> None:
        try:
            bulk_insert(self.con, table, rows, self._workdir, files)
        except (duckdb.Error, OSError) as exc:
            raise _write_error(f"table {table}", exc, self.tmp) from exc

    def texts(self, record_ids: list[str]) -> dict[str, str]:
        """The texts of ``record_ids`` among the rows inserted so far."""
        try:
            return dict(self.con.execute("SELECT record_id, text FROM records WHERE record_id IN (SELECT unnest(?))",
                                         [record_ids]).fetchall())
        except duckdb.Error as exc:
            raise LoadError(f"reading back the cited rulings: {exc}", place=str(self.tmp)) from exc

    def commit(self, data: BuildData, then: Callable[[], None] | None = None) -> list[str]:
        """Insert ``data``, commit and rename the file over ``db_path``, then
        call ``then`` (the build renames its engine there: a stop signal waits
        for both renames); returns warnings (a write-ahead log a killed run
        left beside the old database is merged into it first, so no stale WAL
        ever sits beside the new one). LoadError naming the file, saying that
        the previous database and engine stay, when DuckDB or the system
        cannot write (a full disk, a file-size limit) or rename."""
        self.insert_batch()  # pages' rows added since the last batch
        rows = _rows(data)
        for table in columns():
            self._insert(table, rows[table], [])
        # At the commit, not while the workers read pages: its rows and DuckDB's copy
        # of them would add about 40 MB to the build's peak memory.
        try:
            insert_card_names(self.con)
        except duckdb.Error as exc:
            raise _write_error("table card_names", exc, self.tmp) from exc
        try:
            insert_card_texts(self.con)
        except duckdb.Error as exc:
            raise _write_error("tables card_texts, card_effects, effect_dependencies", exc, self.tmp) from exc
        try:
            check_unique_records(self.con, str(self.db_path))
            self.con.execute("COMMIT")
            self.con.execute("CHECKPOINT")
            self.con.close()
        except duckdb.Error as exc:
            raise _write_error("cannot write the new database", exc, self.tmp) from exc
        self.con = None
        with deferred():
            try:
                warning = merge_leftover_wal(self.db_path)
                os.replace(self.tmp, self.db_path)
            except (OSError, duckdb.Error) as exc:
                raise _write_error("cannot put the new database in place", exc, self.db_path) from exc
            untrack(self.tmp)
            if then is not None:
                then()
        self.close()
        return [warning] if warning else []

    def close(self) -> None:
        """Close the connection and remove whatever was not renamed
        (idempotent). Never raises: it runs while an error is on its way,
        and what it cannot remove the next build does (:func:`clean_leftovers`);
        a stop signal that came meanwhile is raised once all is removed."""
        with deferred():  # a stop signal must not cut the cleanup short
            if self.con is not None:
                self.con, con = None, self.con
                with suppress(duckdb.Error):  # the file is deleted below anyway
                    con.close()  # before the files go: a connection left open could write them again
            if self._batch is not None:
                self._batch.discard()
            remove(*(p for p in (self._workdir, self.tmp, self._wal) if p is not None))


def _write_error(what: str, exc: BaseException, path: Path) -> LoadError:
    """One LoadError line for a failed write of a build: ``what`` failed,
    the file (the OSError's own, else ``path``), the system's or DuckDB's
    words, and that the previous database and engine stay."""
    if isinstance(exc, OSError):
        return LoadError(f"{what}: {exc.strerror or exc}; {KEPT}", place=str(exc.filename or path))
    detail = " ".join(str(exc).split())  # DuckDB's message may span lines
    return LoadError(f"{what}: {detail}; {KEPT}", place=str(path))


# --------------------------------------------------------------------------- the output files

SIDE_FILES = (".wal", ".lock")


def output_paths(db_path: Path, engine_out: Path) -> tuple[Path, Path]:
    """The database and engine paths with symlinks resolved (a symlinked
    ``--db`` writes its target, and the lock is the target's); UsageError
    when the two outputs, or one and the other's WAL or lock, are one file,
    when ``--db`` is a file but no DuckDB database, or when an engine file
    there is not one the generator wrote (:func:`~pipeline.generate.check_replaceable`)."""
    duckdb_path(db_path)  # UsageError for a path DuckDB would read as another
    try:
        db, engine = Path(db_path).resolve(), Path(engine_out).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UsageError(f"an output path cannot be resolved: {exc}", place="--db / --engine-out") from None
    taken = {db: "--db"} | {Path(f"{db}{side}"): f"--db's {side[1:]} file" for side in SIDE_FILES}
    if engine in taken:
        raise UsageError(f"{engine_out} is the same file as {taken[engine]} ({engine}); give the engine and the "
                         "database different paths", place="--engine-out")
    if db.is_dir() or engine.is_dir():
        folder = db if db.is_dir() else engine
        raise UsageError(f"{folder} is a folder; give a file path", place="--db" if folder == db else "--engine-out")
    for path, option in ((db, "--db"), (engine, "--engine-out")):
        if path.exists() and not path.is_file():  # a device, a FIFO, a socket: the build would replace it
            raise UsageError(f"{path} is not a regular file; give a file path", place=option)
    if db.is_file() and db.stat().st_size and not _is_duckdb_file(db):
        raise UsageError(f"{db} exists and is not a DuckDB database; the build would replace it (give another path "
                         "or remove the file)", place="--db")
    check_replaceable(engine)
    return db, engine


def _is_duckdb_file(path: Path) -> bool:
    """Whether ``path`` starts with DuckDB's file header (:func:`pipeline.database.file_problem`)."""
    try:
        return file_problem(path) is None
    except OSError:
        return True  # unreadable: the build's own error names it


@contextmanager
def database_lock(db_path: Path, wait: bool = False, can_wait: bool = True) -> Iterator[None]:
    """Hold ``<db>.lock``, the lock every writer of ``db_path`` takes (a
    build, a refresh, ``rulings sql --write``; give the resolved path, as
    :func:`output_paths` does, so that a symlink and its target share one
    lock). BusyError when another holds it, unless ``wait``: then wait for it
    (``can_wait``: the command has a ``--wait`` to name in the error)."""
    lock = FileLock(f"{db_path}.lock")
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout:
        raise BusyError(f"a refresh or build is running on {db_path} (or a `rulings sql --write`: lock "
                        f"{lock.lock_file} is held); try again later" + (" or pass --wait" if can_wait else ""),
                        place=str(db_path)) from None
    try:
        yield
    finally:
        lock.release()


def merge_leftover_wal(db_path: Path) -> str | None:
    """A write-ahead log left beside ``db_path`` by a writer killed after
    its COMMIT holds committed data: merge it into the database (DuckDB
    replays it on open; CHECKPOINT writes it in). One that cannot be merged
    is moved aside to ``<db>.wal.stale`` so the database opens, and the
    returned warning says so; None when there was no WAL."""
    wal = Path(f"{db_path}.wal")
    if not wal.exists():
        return None
    try:
        con = connect(db_path)
        try:
            con.execute("CHECKPOINT")
        finally:
            con.close()
    except duckdb.Error as exc:
        stale = Path(f"{db_path}.wal.stale")
        os.replace(wal, stale)
        return f"{db_path}: a write-ahead log left by a killed run could not be merged ({exc}); moved to {stale}"
    if wal.exists():  # DuckDB removes it on a clean close; it must not outlive the merge
        wal.unlink()
    return f"{db_path}: merged the write-ahead log a killed run left"


# The work folders of builds and refreshes ("build": row files of versions before 2026-12-01, still cleaned).
WORK_KINDS = ("build", "load", "refresh")


def work_prefix(db_path: Path, kind: str) -> str:
    """The name prefix of a working folder that a ``kind`` (one of
    :data:`WORK_KINDS`) of run of ``db_path`` makes beside it: named after
    the database, so that cleaning one database's leftovers never touches
    the folders of a run on another database in the same folder."""
    return f".{Path(db_path).name}.{kind}-"


def clean_leftovers(db_path: Path) -> list[str]:
    """Remove what killed builds and refreshes of ``db_path`` left in its
    folder (temporary databases, their WALs, row and load folders). Call it
    holding :func:`database_lock`: nothing of a running build is there then.
    Returns the removed paths."""
    folder = Path(db_path).parent
    removed = []
    patterns = (f".{Path(db_path).name}.*.tmp", f".{Path(db_path).name}.*.tmp.wal",
                *(work_prefix(db_path, kind) + "*" for kind in WORK_KINDS))
    for pattern in patterns:
        for path in folder.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(str(path))
    return removed


# --------------------------------------------------------------------------- a refresh, in place

@dataclass
class PageUpdate:
    """A page a refresh found changed and processed cleanly: its new
    snapshot, its records, and the record ids added, changed and retired
    against the stored ones."""

    source: Source
    snapshot: SnapshotInfo
    records: list[Record]
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)


@dataclass
class RefreshData:
    """Everything one refresh writes: its ``runs`` row, the changed pages,
    the snapshots stored but refused (``refused``: not in force), the
    unchanged snapshots whose ETag / Last-Modified changed (``validators``),
    and the recompiled rules (``rules`` None: the rules stay)."""

    run: dict
    updates: list[PageUpdate] = field(default_factory=list)
    refused: list[SnapshotInfo] = field(default_factory=list)
    validators: list[SnapshotInfo] = field(default_factory=list)
    rules: list[Rule] | None = None
    procedural: list[ProceduralRule] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    rule_changes: list[RuleChange] = field(default_factory=list)
    card_texts: Path | None = None  # a card-texts file the refresh rewrote: its tables are written anew


def write_refresh(db_path: Path, data: RefreshData) -> None:
    """Write ``data`` into the database in place, in ONE transaction: a
    refresh killed half-way leaves the database as the last completed run
    left it. Changed pages get their snapshot in force, their source row and
    their records (ids kept; ``first_seen_run`` kept for records seen
    before; vanished ones retired, never deleted) and the change log.

    Raises LoadError (the database unchanged) when DuckDB refuses."""
    try:
        con = connect(db_path)
    except duckdb.Error as exc:
        raise LoadError(f"cannot open the database for writing (in use by another program?): {exc}",
                        place=str(db_path)) from None
    run_id = data.run["run_id"]
    workdir = temp_path(Path(db_path).parent, work_prefix(db_path, "refresh"))  # tracked before it exists
    try:
        con.execute("BEGIN TRANSACTION")
        create_schema(con)  # tables added since the database was built
        check_columns(con, db_path)
        workdir.mkdir()
        _write_refresh(con, data, workdir)
        con.execute("COMMIT")
    except BaseException as exc:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        if isinstance(exc, (duckdb.Error, OSError)):
            where = str(exc.filename) if isinstance(exc, OSError) and exc.filename else str(db_path)
            detail = exc.strerror or exc if isinstance(exc, OSError) else " ".join(str(exc).split())
            raise LoadError(f"refresh run {run_id} not stored, the database and engine are unchanged: {detail}",
                            place=where) from exc
        raise
    finally:
        with deferred():
            con.close()
            remove(workdir)


def _write_refresh(con: duckdb.DuckDBPyConnection, data: RefreshData, workdir: Path) -> None:
    run_id = data.run["run_id"]
    for s in data.validators:
        # fetched_at and http_status stay those of the first fetch of this content
        con.execute("UPDATE snapshots SET etag = ?, last_modified = ?, fetched_at = coalesce(fetched_at, ?), "
                    "http_status = coalesce(http_status, ?) WHERE source_id = ? AND content_hash = ?",
                    [s.etag, s.last_modified, s.fetched_at, s.http_status, s.source_id, s.content_hash])
    source_ids = [u.source.id for u in data.updates]
    con.execute("UPDATE snapshots SET in_force = false WHERE source_id IN (SELECT unnest(?))", [source_ids])
    snapshots = [(s, False) for s in data.refused] + [(u.snapshot, True) for u in data.updates]
    if snapshots:  # the same content fetched again replaces its row
        con.executemany("DELETE FROM snapshots WHERE source_id = ? AND content_hash = ?",
                        [[s.source_id, s.content_hash] for s, _ in snapshots])
    rows = {"runs": [data.run], "snapshots": [snapshot_row(s, run_id, in_force) for s, in_force in snapshots]}
    if data.updates:
        rows.update(_page_update_rows(con, data.updates, run_id))
    if data.rules is not None:
        for table in ("rules", "rule_citations", "procedural_rules", "simulator_verdicts"):
            con.execute(f"DELETE FROM {table}")
        rows.update(rule_rows(data.rules, data.procedural, data.rule_changes, run_id))
        con.executemany("INSERT OR REPLACE INTO build_info VALUES (?, ?)", sorted(data.info.items()))
    for table, table_rows in rows.items():
        bulk_insert(con, table, table_rows, workdir)
    if data.card_texts is not None:
        for table in ("card_texts", "card_effects", "effect_dependencies"):
            con.execute(f"DELETE FROM {table}")
        insert_card_texts(con, data.card_texts)
    if data.updates:
        check_unique_records(con, "refresh")


def _page_update_rows(con: duckdb.DuckDBPyConnection, updates: list[PageUpdate], run_id: int) -> dict[str, list]:
    """Rows of the changed pages; deletes the rows they replace and retires
    the records gone from their page."""
    source_ids = [u.source.id for u in updates]
    rows = record_rows([r for u in updates for r in u.records], {u.source.id: u.snapshot.content_hash for u in updates},
                       run_id, {u.source.id: u.source for u in updates})
    ids = [row["record_id"] for row in rows["records"]]
    first_seen = dict(con.execute("SELECT record_id, first_seen_run FROM records WHERE retired_run IS NULL AND "
                                  "record_id IN (SELECT unnest(?))", [ids]).fetchall())
    for row in rows["records"]:
        row["first_seen_run"] = first_seen.get(row["record_id"], run_id)
    con.execute("DELETE FROM sources WHERE source_id IN (SELECT unnest(?))", [source_ids])
    for table in RECORD_TABLES:
        con.execute(f"DELETE FROM {table} WHERE record_id IN (SELECT unnest(?))", [ids])
    retired = [rid for u in updates for rid in u.retired]
    con.execute("UPDATE records SET retired_run = ? WHERE record_id IN (SELECT unnest(?))", [run_id, retired])
    rows["sources"] = source_rows([u.source for u in updates])
    rows["record_changes"] = [{"run_id": run_id, "record_id": rid, "source_id": u.source.id, "change": change}
                              for u in updates for change in ("added", "changed", "retired")
                              for rid in getattr(u, change)]
    return rows


# --------------------------------------------------------------------------- reading back

@dataclass
class StoredState:
    """What a database holds before a refresh: the snapshot in force per
    source, the last run id, the rules hash, and each source's (URL, licence)."""

    snapshots: dict[str, SnapshotInfo]
    last_run: int
    rules_hash: str | None
    source_info: dict[str, tuple[str, str]]


def read_state(db_path: Path) -> StoredState:
    """The :class:`StoredState` of ``db_path``; LoadError (UsageError for a
    file that is no rulings database) when it cannot be opened or read, or is
    of another schema (:func:`pipeline.database.open_database`)."""
    con = open_database(db_path)
    try:
        snapshots = _snapshot_infos(con)
        last_run = con.execute("SELECT coalesce(max(run_id), 0) FROM runs").fetchone()[0]
        row = con.execute("SELECT value FROM build_info WHERE key = 'rules_hash'").fetchone()
        info = {sid: (url or "", licence or "") for sid, url, licence in
                con.execute("SELECT source_id, url, licence FROM sources").fetchall()}
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None
    finally:
        con.close()
    return StoredState(snapshots, last_run, row[0] if row else None, info)


def _snapshot_infos(con: duckdb.DuckDBPyConnection) -> dict[str, SnapshotInfo]:
    rows = con.execute("SELECT source_id, content_hash, bytes, fetched_at, http_status, etag, last_modified "
                       "FROM snapshots WHERE in_force").fetchall()
    return {r[0]: SnapshotInfo(r[0], r[1], r[2], str(r[3]) if r[3] else None, r[4], r[5], r[6]) for r in rows}



@dataclass
class PreviousBuild:
    """The database a build replaces, as far as the build may use it:
    ``path`` (None: there is none, or it is not used), the shrink guard's
    ``counts`` (:func:`previous_counts`) and ``sections``
    (:func:`previous_section_statements`), its ``rules`` to review the
    build's against (:func:`previous_rules`), and the ``warning`` saying
    why it is not used."""

    path: Path | None = None
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    warning: str | None = None
    sections: dict[str, dict[str, int]] = field(default_factory=dict)  # :func:`previous_section_statements`
    rules: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = field(default_factory=dict)  # :func:`previous_rules`


def previous_build(db_path: Path) -> PreviousBuild:
    """What a build may read of the database it replaces at ``db_path``
    (the shrink guard's counts, a failed page's records). Nothing when there
    is none (no file, an empty one); nothing and a warning for one that is
    damaged, of another schema or in use: it is never trusted, the build
    goes on without it and replaces it. UsageError for a DuckDB database
    that rulings did not write (its tables are someone's data)."""
    if not Path(db_path).is_file() or Path(db_path).stat().st_size == 0:
        return PreviousBuild()
    try:
        counts, sections = previous_counts(db_path), previous_section_statements(db_path)
        rules = previous_rules(db_path)
    except ForeignFile as exc:
        raise UsageError(f"{db_path} {exc.problem}; the build would replace it (give another path or remove the "
                         "file)", place="--db") from None
    except UnusableDatabase as exc:
        return PreviousBuild(warning=f"{db_path}: the previous database is not used ({exc.problem}): no failing "
                                     "page keeps earlier records and no page is checked against it for shrinking")
    return PreviousBuild(Path(db_path), counts, sections=sections, rules=rules)


def previous_counts(db_path: Path) -> dict[str, dict[str, int]]:
    """Per source of an earlier database: its current ``records``,
    ``statements``, ``dated_records`` and ``card_mentions`` (the shrink
    guard compares a page with them). Errors of
    :func:`pipeline.database.open_database`; UnusableDatabase when a block
    cannot be read."""
    con = open_database(db_path)
    try:
        rows = con.execute("""
            WITH current AS (SELECT record_id, source_id FROM records WHERE retired_run IS NULL),
                 per_record AS (
                     SELECT c.source_id,
                            (SELECT count(*) FROM statements s WHERE s.record_id = c.record_id) AS statements,
                            c.record_id IN (SELECT record_id FROM record_dates
                                            WHERE valid AND kind <> 'reference') AS dated,
                            (SELECT count(*) FROM card_mentions m WHERE m.record_id = c.record_id) AS cards
                     FROM current c)
            SELECT source_id, count(*), sum(statements), count(*) FILTER (WHERE dated), sum(cards)
            FROM per_record GROUP BY source_id""").fetchall()
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None
    finally:
        con.close()
    return {sid: {"records": n, "statements": s, "dated_records": d, "card_mentions": m}
            for sid, n, s, d, m in rows}


def previous_rules(db_path: Path) -> dict[tuple[str, str], Reviewed]:
    """The rules an earlier database holds, as ``(info kind, event) ->
    (verdict, disputed_by, {case id: (verdict, disputed_by)})``: what
    :func:`pipeline.compile.review` compares a build's or refresh's rules
    with. Errors of :func:`pipeline.database.open_database`;
    UnusableDatabase when a block cannot be read."""
    con = open_database(db_path)
    try:
        rows = con.execute("SELECT info_kind, event, verdict, disputed_by, cases FROM rules").fetchall()
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None
    finally:
        con.close()
    return {(kind, event): (verdict, tuple(disputed or ()),
                            {c["case_id"]: (c["verdict"], tuple(c["disputed_by"] or ())) for c in cases or ()})
            for kind, event, verdict, disputed, cases in rows}


def previous_section_statements(db_path: Path) -> dict[str, dict[str, int]]:
    """Per source of an earlier database: the statements of its current
    records per section (:func:`pipeline.records.section_key` of
    ``records.section_path`` -> count, sections with statements only), what
    the per-section shrink guard compares a page with. Errors of
    :func:`pipeline.database.open_database`; UnusableDatabase when a block
    cannot be read."""
    con = open_database(db_path)
    try:
        rows = con.execute("""
            SELECT r.source_id, coalesce(r.section_path, ''), count(*)
            FROM records r JOIN statements s USING (record_id)
            WHERE r.retired_run IS NULL GROUP BY ALL""").fetchall()
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None
    finally:
        con.close()
    sections: dict[str, dict[str, int]] = {}
    for sid, path, n in rows:
        per_source = sections.setdefault(sid, {})
        key = section_key(path)
        per_source[key] = per_source.get(key, 0) + n
    return sections


def read_snapshot_infos(db_path: Path) -> dict[str, SnapshotInfo]:
    """The snapshot in force for each source in an earlier database;
    errors of :func:`pipeline.database.open_database`."""
    con = open_database(db_path)
    try:
        return _snapshot_infos(con)
    finally:
        con.close()


def read_records(db_path: Path, source_ids: list[str] | None = None, include_retired: bool = False) -> list[Record]:
    """Records stored by an earlier run, with their dates, cards and statements,
    as :class:`~pipeline.records.Record` objects (text offsets of dates and cards
    are not stored: ``start`` is 0, or -1 for a yearly log's heading date).

    Used to keep a page's earlier records when the page fails now, and to
    recompile rules from unchanged pages without re-extracting them.
    Errors of :func:`pipeline.database.open_database`.
    """
    con = open_database(db_path)
    try:
        where, params = [], []
        if source_ids is not None:
            where.append("source_id IN (SELECT unnest(?))")
            params.append(list(source_ids))
        if not include_retired:
            where.append("retired_run IS NULL")
        sql = ("SELECT record_id, source_id, seq, block, section_path, role, channel, status, text, norm_text, "
               "withdrawn, parent_id, cells FROM records" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY source_id, seq")
        records = {}
        for (rid, sid, seq, block, section, role, channel, status, text, norm, withdrawn,
             parent_id, cells) in con.execute(sql, params).fetchall():
            records[rid] = Record(rid, sid, seq, block, tuple(section.split(" / ")) if section else (), role,
                                  channel or "", status, text, norm, withdrawn=withdrawn or "",
                                  parent_id=parent_id or "", cells=list(cells or []))
        if not records:
            return []
        ids = list(records)
        for rid, raw, date, valid, reason, from_heading, kind, fid, url in con.execute(
                "SELECT record_id, raw, date, valid, reason, from_heading, kind, faq_id, faq_url FROM record_dates "
                "WHERE record_id IN (SELECT unnest(?)) ORDER BY record_id, ord", [ids]).fetchall():
            start = -1 if from_heading else 0
            rec = records[rid]
            rec.dates.append(RulingDate(raw, start, start, date.isoformat() if date else None, valid, reason or "",
                                        kind or "own"))
            rec.date_from_heading = rec.date_from_heading or bool(from_heading)
            if fid:
                rec.faq.append((raw, fid, url))
        for rid, name, url, norm_name, kind, quote in con.execute(
                "SELECT record_id, name, url, norm_name, kind, quote FROM card_mentions "
                "WHERE record_id IN (SELECT unnest(?)) ORDER BY record_id, ord", [ids]).fetchall():
            records[rid].cards.append(CardMention(name, 0, 0, url, norm_name or "", kind or "card", quote or "「」"))
        for rid, kind, event, verdict, condition, basis, principle, dates, reading, effect, passcode in con.execute(
                "SELECT record_id, info_kind, event, verdict, condition, basis, principle_id, dates, reading, effect, "
                "passcode FROM statements WHERE record_id IN (SELECT unnest(?))", [ids]).fetchall():
            records[rid].statements.append(Statement(kind, event, verdict, condition or "", basis, principle or "",
                                                     tuple(d.isoformat() for d in dates or ()), reading or "",
                                                     effect or "", passcode))
        for rule_id, record_ids in con.execute("SELECT rule_id, record_ids FROM procedural_rules").fetchall():
            for rid in record_ids:
                if rid in records:
                    records[rid].procedural.append(rule_id)
        for rec in records.values():
            rec.statements.sort(key=lambda s: (s.basis, s.info_kind, s.event, s.verdict, s.condition, s.principle_id,
                                               s.dates))
        return list(records.values())
    finally:
        con.close()
