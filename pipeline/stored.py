"""The read side of a build and a refresh: what an earlier run stored, read back.

Takes the path of a database a build or refresh wrote; gives what the next
run may use of it: the snapshot in force per source, the last run and rules
hash (:func:`read_state`, before a refresh), what a build may use of the
database it replaces (:func:`previous_build`: the shrink guard's counts
and section statements, the rules to review against), and the stored
records themselves as :class:`~pipeline.records.Record` values
(:func:`read_records`: a failed page keeps them, a refresh recompiles from
them). Nothing here writes (:mod:`pipeline.load` does); every function
opens the file through :func:`pipeline.database.open_database` and closes
it before returning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from .database import ForeignFile, UnusableDatabase, open_database, unreadable
from .dates import RulingDate
from .errors import UsageError
from .queries import build_value
from .records import CardMention, Record, Statement, section_key

if TYPE_CHECKING:
    from .review import Reviewed


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
        rules_hash = build_value(con, "rules_hash")
        info = {sid: (url or "", licence or "") for sid, url, licence in
                con.execute("SELECT source_id, url, licence FROM sources").fetchall()}
    except duckdb.Error as exc:
        raise unreadable(exc, db_path) from None
    finally:
        con.close()
    return StoredState(snapshots, last_run, rules_hash, info)


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
    :func:`pipeline.review.review` compares a build's or refresh's rules
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
