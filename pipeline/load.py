"""The load stage: every write to the DuckDB database, for a build and a refresh.

Takes what a run made (records, rules, snapshots, its ``runs`` row: a
:class:`BuildData` or a :class:`RefreshData`); gives rows in the database,
nothing back (reading is the read side's: :mod:`pipeline.stored`,
:mod:`pipeline.queries`). The schema is ``schema/ddl.sql``; :func:`columns` reads each table's columns
from it, and one row builder per table (:func:`record_rows`,
:func:`rule_rows`, :func:`source_rows`, :func:`snapshot_row`) fills them, checked
against the DDL (:func:`~pipeline.rowfiles.check_row`; card mentions are
linked in :mod:`pipeline.cardlinks`). A build writes a new database file next to
the target (:class:`DatabaseWriter`) and renames it over the target only when
every table is loaded, so a build killed at any point leaves the previous
database intact. Rows are loaded in bulk, never row by row: they are written
as JSON (the build's worker processes make one array per page and table, which
the build process appends to one file per table and batch, :class:`~pipeline.rowfiles.RowBatch`;
rows made at the end are streamed as newline-delimited JSON) and read with
DuckDB's ``read_json`` in one ``INSERT ... SELECT`` per batch of pages, all in one
transaction on the temporary file; the rename is what makes a build all or
nothing. A refresh writes in place, in one transaction (:class:`RefreshWriter`).
"""

from __future__ import annotations

import os
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import duckdb

from .cardlinks import insert_card_names, mention_rows
from .cardtables import insert_card_texts
from .compile import ProceduralRule, Rule
from .corpus import Source
from .database import SCHEMA_VERSION, STORAGE_VERSION, build_schema_info, columns, connect
from .effectrulings import may_rule, read_effect_rulings
from .errors import LoadError
from .locks import merge_leftover_wal, work_prefix
from .memory import give_back_memory
from .records import Record
from .review import RuleChange
from .schema import ddl
from .simulators import table_rows as simulator_rows
from .stopping import deferred, remove, temp_path, track, untrack
from .rowfiles import KEPT, RowBatch, bulk_insert, check_row
from .stored import SnapshotInfo

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

RECORD_TABLES = ("records", "record_dates", "card_mentions", "statements", "effect_rulings")


def record_rows(records: list[Record], snapshot_of: dict[str, str], run_id: int,
                source_of: dict[str, Source]) -> dict[str, list[dict]]:
    """The rows of :data:`RECORD_TABLES` for ``records``: card mentions
    linked to passcodes by :func:`pipeline.cardlinks.mention_rows`, the
    rulings on their effects read with them (:func:`effect_ruling_rows`).
    ``snapshot_of`` maps source id -> content hash of its snapshot."""
    rows: dict[str, list[dict]] = {name: [] for name in RECORD_TABLES}
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
        mentions = mention_rows(r, source_of.get(r.source_id))
        rows["card_mentions"] += mentions
        rows["effect_rulings"] += effect_ruling_rows(r, mentions)
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


def effect_ruling_rows(record: Record, mentions: list[dict]) -> list[dict]:
    """The ``effect_rulings`` rows of ``record``: what
    :func:`pipeline.effectrulings.read_effect_rulings` reads in its
    normalized text with the names of its linked card ``mentions`` (its
    :func:`~pipeline.cardlinks.mention_rows`), dated by the record's latest
    valid own or heading date (``YYYY-MM-DD``; None: undated). Only a
    current record that links a card, names an event and refers to a numbered
    effect (:func:`~pipeline.effectrulings.may_rule`) can have one: the others
    are not read (most records, so a page's cost stays small)."""
    # may_rule first: one regex scan in C fails 12 of 13 current records, a look at the mentions 1 in 20
    if record.status != "current" or not may_rule(record.norm or ""):
        return []
    names = _linked_names(mentions)
    found = read_effect_rulings(record.norm, names, tested=True) if names else []  # each names a linked card
    if not found:
        return []
    date = max((d.iso for d in record.dates if d.valid and d.iso and d.kind in ("own", "heading")), default=None)
    return [{"record_id": record.id, "ord": i, "passcode": f.passcode, "effect": f.effect, "events": list(f.events),
             "flip": f.flip, "can": f.can, "date": date} for i, f in enumerate(found)]


def _linked_names(mentions: list[dict]) -> dict[str, int]:
    """A record's linked card names, as quoted and normalized -> passcode,
    from its ``card_mentions`` rows (in mention order): the first mention of a name wins."""
    out: dict[str, int] = {}
    for m in mentions:
        if m["passcode"] is not None and (m["kind"] or "card") == "card":
            for name in (m["norm_name"], m["name"]):
                if name:
                    out.setdefault(name, m["passcode"])
    return out


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
        """Add one page's rows (table -> JSON array of :func:`~pipeline.rowfiles.json_array`) to
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
        give_back_memory()  # the card rows just inserted: DuckDB's check and checkpoint come on top of what stays
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


class RefreshWriter:
    """``data`` written into the database at ``db_path`` in place, in ONE
    transaction that :meth:`commit` commits: a refresh killed half-way, or
    whose engine cannot be staged, leaves the database as the last completed
    run left it. Changed pages get their snapshot in force, their source row
    and their records (ids kept; ``first_seen_run`` kept for records seen
    before; vanished ones retired, never deleted) and the change log.
    :attr:`con` sees the rows before the commit (the engines' card table is
    made from them). Use as a context manager: leaving it without
    :meth:`commit` rolls back.

    Raises LoadError (the database unchanged) when DuckDB refuses."""

    def __init__(self, db_path: Path, data: RefreshData):
        self.db_path, self.run_id = Path(db_path), data.run["run_id"]
        try:
            self.con: duckdb.DuckDBPyConnection | None = connect(db_path)
        except duckdb.Error as exc:
            raise LoadError(f"cannot open the database for writing (in use by another program?): {exc}",
                            place=str(db_path)) from None
        self._workdir = temp_path(self.db_path.parent, work_prefix(db_path, "refresh"))  # tracked before it exists
        with self._refused():
            self.con.execute("BEGIN TRANSACTION")
            create_schema(self.con)  # tables added since the database was built
            check_columns(self.con, self.db_path)
            self._workdir.mkdir()
            _write_refresh(self.con, data, self._workdir)

    def __enter__(self) -> RefreshWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @contextmanager
    def _refused(self) -> Iterator[None]:
        """Roll back and close on any error; DuckDB's and the system's become
        LoadError saying that nothing of the run is stored."""
        try:
            yield
        except BaseException as exc:
            self.close()
            if isinstance(exc, (duckdb.Error, OSError)):
                where = str(exc.filename) if isinstance(exc, OSError) and exc.filename else str(self.db_path)
                detail = exc.strerror or exc if isinstance(exc, OSError) else " ".join(str(exc).split())
                raise LoadError(f"refresh run {self.run_id} not stored, the database and engine are unchanged: "
                                f"{detail}", place=where) from exc
            raise

    def commit(self, then: Callable[[], None] | None = None) -> list[str]:
        """Commit the transaction, then call ``then`` (the refresh renames
        its engine there: a stop signal waits for the commit and the
        renames); returns warnings (none: the database was written in place)."""
        with self._refused():
            with deferred():
                self.con.execute("COMMIT")
                self.close()
                if then is not None:
                    then()
        return []

    def close(self) -> None:
        """Roll back what is not committed, close the connection and remove
        the work folder (idempotent; never raises)."""
        with deferred():
            if self.con is not None:
                self.con, con = None, self.con
                with suppress(duckdb.Error):
                    con.execute("ROLLBACK")  # an error after COMMIT: nothing open, DuckDB refuses quietly
                with suppress(duckdb.Error):
                    con.close()
            remove(self._workdir)


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
