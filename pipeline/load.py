"""Stage 3, load: records, rules and provenance -> a DuckDB database.

The schema is ``schema/ddl.sql``. A build writes a new database file next to
the target (:class:`DatabaseWriter`) and renames it over the target only when
every table is loaded, so a build killed at any point leaves the previous
database intact. Rows are loaded in bulk, never row by row: they are written
as newline-delimited JSON (in the build's worker processes, one file per page
and table) and read with DuckDB's ``read_json`` in one ``INSERT ... SELECT``
per batch of pages. Batches are committed to the temporary file as they come
(an open transaction holds its rows in memory); the rename is what makes a
build all or nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import duckdb
import orjson

from .cards import card_index
from .compile import ProceduralRule, Rule
from .corpus import Source
from .errors import LoadError
from .extract import Record
from .normalize import name_key, to_simplified

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"

# Column types for read_json, in table order (must match schema/ddl.sql).
COLUMNS: dict[str, dict[str, str]] = {
    "sources": {"source_id": "VARCHAR", "url": "VARCHAR", "language": "VARCHAR", "script": "VARCHAR",
                "region": "VARCHAR", "format": "VARCHAR", "licence": "VARCHAR", "path": "VARCHAR",
                "fetchable": "BOOLEAN", "notes": "VARCHAR"},
    "runs": {"run_id": "INTEGER", "kind": "VARCHAR", "started_at": "TIMESTAMP", "ended_at": "TIMESTAMP",
             "tried": "INTEGER", "unchanged": "INTEGER", "changed": "INTEGER", "failed": "INTEGER",
             "details": "VARCHAR"},
    "snapshots": {"source_id": "VARCHAR", "content_hash": "VARCHAR", "bytes": "BIGINT", "fetched_at": "TIMESTAMP",
                  "http_status": "INTEGER", "etag": "VARCHAR", "last_modified": "VARCHAR", "run_id": "INTEGER",
                  "in_force": "BOOLEAN"},
    "records": {"record_id": "VARCHAR", "source_id": "VARCHAR", "seq": "INTEGER", "block": "INTEGER",
                "section_path": "VARCHAR", "role": "VARCHAR", "channel": "VARCHAR", "status": "VARCHAR",
                "text": "VARCHAR", "norm_text": "VARCHAR", "snapshot_hash": "VARCHAR",
                "first_seen_run": "INTEGER", "retired_run": "INTEGER"},
    "record_changes": {"run_id": "INTEGER", "record_id": "VARCHAR", "source_id": "VARCHAR", "change": "VARCHAR"},
    "record_dates": {"record_id": "VARCHAR", "ord": "INTEGER", "raw": "VARCHAR", "date": "DATE",
                     "valid": "BOOLEAN", "reason": "VARCHAR", "from_heading": "BOOLEAN", "faq_id": "VARCHAR",
                     "faq_url": "VARCHAR"},
    "card_mentions": {"record_id": "VARCHAR", "ord": "INTEGER", "name": "VARCHAR", "norm_name": "VARCHAR",
                      "match_key": "VARCHAR", "url": "VARCHAR", "passcode": "INTEGER", "name_en": "VARCHAR",
                      "linked_by": "VARCHAR"},
    "statements": {"record_id": "VARCHAR", "info_kind": "VARCHAR", "event": "VARCHAR", "verdict": "VARCHAR",
                   "condition": "VARCHAR", "basis": "VARCHAR", "principle_id": "VARCHAR"},
    "rules": {"info_kind": "VARCHAR", "event": "VARCHAR", "verdict": "VARCHAR", "condition": "VARCHAR",
              "latest_date": "DATE", "changed_on": "DATE", "record_ids": "VARCHAR[]", "dates": "DATE[]",
              "conflicts": "VARCHAR"},
    "rule_citations": {"info_kind": "VARCHAR", "event": "VARCHAR", "record_id": "VARCHAR", "role": "VARCHAR",
                       "verdict": "VARCHAR", "date": "DATE", "source_id": "VARCHAR"},
    "procedural_rules": {"rule_id": "VARCHAR", "summary": "VARCHAR", "record_ids": "VARCHAR[]"},
    "build_info": {"key": "VARCHAR", "value": "VARCHAR"},
}


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


# --------------------------------------------------------------------------- rows

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
            "status": r.status, "text": r.text, "norm_text": r.norm, "snapshot_hash": snapshot_of.get(r.source_id),
            "first_seen_run": run_id, "retired_run": None})
        faq: dict[str, list[tuple[str, str]]] = {}  # the same date may link two FAQ entries: keep both, in order
        for raw, fid, url in r.faq:
            faq.setdefault(raw, []).append((fid, url))
        for i, d in enumerate(r.dates):
            fid, url = faq[d.raw].pop(0) if faq.get(d.raw) else (None, None)
            rows["record_dates"].append({
                "record_id": r.id, "ord": i, "raw": d.raw, "date": d.iso, "valid": d.valid,
                "reason": d.reason or None, "from_heading": d.start < 0, "faq_id": fid, "faq_url": url})
        source = source_of.get(r.source_id)
        for i, c in enumerate(r.cards):
            link = cards.link(c.name)
            norm = c.norm_name or (to_simplified(c.name, source.script, source.region) if source else c.name)
            rows["card_mentions"].append({
                "record_id": r.id, "ord": i, "name": c.name, "norm_name": norm, "match_key": name_key(norm, "Hans"),
                "url": c.url, "passcode": link.passcode, "name_en": link.name_en, "linked_by": link.linked_by})
        for st in r.statements:
            rows["statements"].append({
                "record_id": r.id, "info_kind": st.info_kind, "event": st.event, "verdict": st.verdict,
                "condition": st.condition, "basis": st.basis, "principle_id": st.principle_id or None})
    return rows


def _rows(data: BuildData) -> dict[str, list[dict]]:
    run_id = data.run["run_id"]
    rows: dict[str, list[dict]] = {name: [] for name in COLUMNS}
    rows["sources"] = [{"source_id": s.id, "url": s.url, "language": s.language, "script": s.script,
                        "region": s.region, "format": s.format, "licence": s.licence, "path": s.path,
                        "fetchable": s.fetch, "notes": s.notes} for s in data.sources]
    rows["runs"] = [data.run]
    rows["snapshots"] = [{"source_id": s.source_id, "content_hash": s.content_hash, "bytes": s.size,
                          "fetched_at": s.fetched_at, "http_status": s.http_status, "etag": s.etag,
                          "last_modified": s.last_modified, "run_id": run_id, "in_force": True}
                         for s in data.snapshots]
    rows.update(record_rows(data.records, {s.source_id: s.content_hash for s in data.snapshots}, run_id,
                            {s.id: s for s in data.sources}))
    for rule in data.rules:
        rows["rules"].append({
            "info_kind": rule.info_kind, "event": rule.event, "verdict": rule.verdict, "condition": rule.condition,
            "latest_date": rule.latest_date, "changed_on": rule.changed_on, "record_ids": rule.record_ids,
            "dates": rule.dates, "conflicts": json.dumps(rule.conflicts, ensure_ascii=False, sort_keys=True)})
        for c in rule.citations:
            rows["rule_citations"].append({
                "info_kind": rule.info_kind, "event": rule.event, "record_id": c.record_id, "role": c.role,
                "verdict": c.verdict, "date": c.dates[-1] if c.dates else None, "source_id": c.source_id})
    rows["procedural_rules"] = [{"rule_id": p.rule_id, "summary": p.summary, "record_ids": list(p.record_ids)}
                                for p in data.procedural]
    rows["build_info"] = [{"key": k, "value": v} for k, v in sorted(data.info.items())]
    return rows


def table_rows(data: BuildData) -> dict[str, list[dict]]:
    """The rows ``data`` gives each table, keyed by table name (columns of
    :data:`COLUMNS`); used by a refresh to write only what changed."""
    return _rows(data)


def ndjson(rows: list[dict]) -> bytes:
    """Rows as newline-delimited JSON (UTF-8), the form :func:`bulk_insert`
    reads; orjson, since serializing is a third of the load's time."""
    return b"".join(orjson.dumps(row, default=str, option=orjson.OPT_APPEND_NEWLINE) for row in rows)


# --------------------------------------------------------------------------- writing

def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute((SCHEMA_DIR / "ddl.sql").read_text(encoding="utf-8"))


def bulk_insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict], workdir: Path,
                files: Sequence[Path] = ()) -> None:
    """Insert ``rows`` and the NDJSON ``files`` (rows :func:`ndjson` wrote
    earlier, e.g. in the build's worker processes) into ``table`` in one
    statement (``read_json`` over all the files)."""
    paths = [str(f) for f in files]
    if rows:
        path = workdir / f"{table}.ndjson"
        path.write_bytes(ndjson(rows))
        paths.append(str(path))
    if not paths:
        return
    columns = COLUMNS[table]
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    names = ", ".join(columns)
    con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, format='newline_delimited', "
                f"columns={spec}, maximum_object_size={MAX_ROW_BYTES})", [paths])


class DatabaseWriter:
    """A new database, written to a temporary file next to ``db_path`` and
    renamed over ``db_path`` by :meth:`commit`; a writer left without commit
    (an error, a kill) leaves ``db_path`` as it was.

    Rows can come early (:meth:`insert_files`, while a build still reads
    pages) and at the end (:meth:`commit`). DuckDB's memory is capped at
    ``memory_limit`` (it spills to disk beyond): a build's memory must not
    grow with the corpus. Use as a context manager.
    """

    def __init__(self, db_path: Path, memory_limit: str = "128MB"):
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{self.db_path.name}.", suffix=".tmp", dir=self.db_path.parent)
        os.close(fd)
        os.unlink(tmp_name)  # DuckDB wants to create the file itself
        self.tmp = Path(tmp_name)
        self._workdir = tempfile.TemporaryDirectory(prefix="rulings-load-")
        # One thread: the build's workers have the other cores.
        self.con = duckdb.connect(str(self.tmp), config={"memory_limit": memory_limit, "threads": 1})
        try:
            create_schema(self.con)
            self.con.execute("BEGIN TRANSACTION")
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> DatabaseWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def insert_files(self, files: dict[str, list[Path]]) -> None:
        """Insert NDJSON files of :func:`ndjson` rows (table -> files) and
        commit them to the temporary file: DuckDB holds an open transaction's
        rows in memory, so a build loads in batches (the rename is what makes
        the build all or nothing). Raises LoadError naming the table when
        DuckDB refuses the rows."""
        for table, paths in files.items():
            if paths:
                self._insert(table, [], paths)
        self.con.execute("COMMIT")
        self.con.execute("BEGIN TRANSACTION")

    def _insert(self, table: str, rows: list[dict], files: list[Path]) -> None:
        try:
            bulk_insert(self.con, table, rows, Path(self._workdir.name), files)
        except duckdb.Error as exc:
            raise LoadError(f"table {table}: {exc}", place=str(self.db_path)) from exc

    def commit(self, data: BuildData) -> None:
        """Insert ``data``, commit and rename the file over ``db_path``."""
        rows = _rows(data)
        for table in COLUMNS:
            self._insert(table, rows[table], [])
        self.con.execute("COMMIT")
        self.con.execute("CHECKPOINT")
        self.con.close()
        self.con = None
        os.replace(self.tmp, self.db_path)
        self.close()

    def close(self) -> None:
        """Close the connection and remove whatever was not renamed (idempotent)."""
        if self.con is not None:
            self.con.close()
            self.con = None
        self._workdir.cleanup()
        for leftover in (self.tmp, Path(str(self.tmp) + ".wal")):
            if leftover.exists():
                leftover.unlink()


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- reading back

def read_snapshot_infos(db_path: Path) -> dict[str, SnapshotInfo]:
    """The snapshot in force for each source in an earlier database."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        rows = con.execute("SELECT source_id, content_hash, bytes, fetched_at, http_status, etag, last_modified "
                           "FROM snapshots WHERE in_force").fetchall()
    finally:
        con.close()
    return {r[0]: SnapshotInfo(r[0], r[1], r[2], str(r[3]) if r[3] else None, r[4], r[5], r[6]) for r in rows}


def read_records(db_path: Path, source_ids: list[str] | None = None, include_retired: bool = False) -> list[Record]:
    """Records stored by an earlier run, with their dates, cards and statements,
    as :class:`~pipeline.extract.Record` objects (text offsets of dates and cards
    are not stored: ``start`` is 0, or -1 for a yearly log's heading date).

    Used to keep a page's earlier records when the page fails now, and to
    recompile rules from unchanged pages without re-extracting them.
    """
    from .dates import RulingDate
    from .extract import CardMention, Statement

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        where, params = [], []
        if source_ids is not None:
            where.append("source_id IN (SELECT unnest(?))")
            params.append(list(source_ids))
        if not include_retired:
            where.append("retired_run IS NULL")
        sql = ("SELECT record_id, source_id, seq, block, section_path, role, channel, status, text, norm_text "
               "FROM records" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY source_id, seq")
        records = {}
        for rid, sid, seq, block, section, role, channel, status, text, norm in con.execute(sql, params).fetchall():
            records[rid] = Record(rid, sid, seq, block, tuple(section.split(" / ")) if section else (), role,
                                  channel or "", status, text, norm)
        if not records:
            return []
        ids = list(records)
        for rid, raw, date, valid, reason, from_heading, fid, url in con.execute(
                "SELECT record_id, raw, date, valid, reason, from_heading, faq_id, faq_url FROM record_dates "
                "WHERE record_id IN (SELECT unnest(?)) ORDER BY record_id, ord", [ids]).fetchall():
            start = -1 if from_heading else 0
            rec = records[rid]
            rec.dates.append(RulingDate(raw, start, start, date.isoformat() if date else None, valid, reason or ""))
            rec.date_from_heading = rec.date_from_heading or bool(from_heading)
            if fid:
                rec.faq.append((raw, fid, url))
        for rid, name, url, norm_name in con.execute(
                "SELECT record_id, name, url, norm_name FROM card_mentions WHERE record_id IN (SELECT unnest(?)) "
                "ORDER BY record_id, ord", [ids]).fetchall():
            records[rid].cards.append(CardMention(name, 0, 0, url, norm_name or ""))
        for rid, kind, event, verdict, condition, basis, principle in con.execute(
                "SELECT record_id, info_kind, event, verdict, condition, basis, principle_id FROM statements "
                "WHERE record_id IN (SELECT unnest(?))", [ids]).fetchall():
            records[rid].statements.append(Statement(kind, event, verdict, condition or "", basis, principle or ""))
        for rule_id, record_ids in con.execute("SELECT rule_id, record_ids FROM procedural_rules").fetchall():
            for rid in record_ids:
                if rid in records:
                    records[rid].procedural.append(rule_id)
        for rec in records.values():
            rec.statements.sort(key=lambda s: (s.basis, s.info_kind, s.event, s.verdict, s.condition, s.principle_id))
        return list(records.values())
    finally:
        con.close()


# --------------------------------------------------------------------------- SQL helpers

def _sql_name_key(name: str) -> str:
    return name_key(name)


def register_sql_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Add the SQL functions of ad-hoc queries (``rulings sql``) to ``con``:
    ``name_key(name)`` is the card-name key of :func:`pipeline.chinese.name_key`
    (Simplified or Traditional script, full- or half-width, regional terms
    folded), to compare with ``card_mentions.match_key``."""
    try:
        con.create_function("name_key", _sql_name_key)
    except duckdb.CatalogException:
        pass  # connections to one file in one process share the database and its functions
