"""The scheduled refresh: fetch every fetchable source again and re-process
only what changed.

One run, under a file lock next to the database (``<db>.lock``):

1. fetch each source whose manifest ``fetch`` is ``yes`` (:mod:`pipeline.fetch`),
   conditionally on the ETag / Last-Modified of its snapshot in force;
2. a 304, or a body whose SHA-256 equals the snapshot in force, is
   *unchanged*: nothing else happens for that source;
3. a new body is stored content-addressed as
   ``<corpus>/snapshots/<source_id>/<sha256>.<ext>`` and goes through normalize
   and extract; its records are diffed by ``record_id`` (stable: source,
   section path, normalized text) against the stored ones: new ids are
   *added* (``first_seen_run``), vanished ids are *retired*
   (``retired_run``, never deleted), ids whose status, dates, cards or
   statements differ are *changed*;
4. only if some record changed, the rules are recompiled from every
   non-retired record (unchanged sources are read back from DuckDB, not
   re-extracted) and the engine module is regenerated;
5. everything is written in place in ONE DuckDB transaction together with a
   ``runs`` row (tried, unchanged, changed, failed, per-source details), so a
   refresh killed half-way leaves the database as the last completed run left
   it; the engine is written after the commit (temporary file + rename) and a
   later run regenerates it if its rules hash does not match the database.

A source that fails (DNS, timeout, HTTP error, truncated or oversized body,
robots.txt refusal, malformed page, a page that would lose most of its
records) is recorded in the run's details and skipped: its last good
snapshot stays in force. When no database exists yet, the run first builds
one from the bundled pages (``rulings build``), then refreshes it.

Heavy modules (spaCy, OpenCC) are imported only when a page changed, so a
refresh that finds nothing new costs little more than its HTTP requests.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
from filelock import FileLock, Timeout

from .corpus import BUNDLED_CORPUS, Source, content_hash, load_manifest
from .errors import ExtractError, FetchError, LoadError, RefreshError, RulingsError, UsageError
from .fetch import FetchConfig, Fetcher, FetchResult, utc_now as _now
from .paths import DEFAULT_DB, DEFAULT_ENGINE

SNAPSHOT_DIR = "snapshots"
EXTENSIONS = {"html": "html", "text": "txt", "markdown": "md"}
DDL = Path(__file__).resolve().parent.parent / "schema" / "ddl.sql"
ENGINE_HASH_LINE = re.compile(r"^RULES_HASH = '([0-9a-f]{64})'$", re.M)
PHASES = ("fetch", "normalize", "extract", "compile", "load", "generate")


# --------------------------------------------------------------------------- results

@dataclass
class SourceOutcome:
    """What a run did with one source: ``outcome`` is unchanged, changed or failed."""

    source_id: str
    outcome: str
    reason: str = ""
    http_status: int | None = None
    content_hash: str | None = None
    attempts: int = 0
    added: int = 0
    changed: int = 0
    retired: int = 0


@dataclass
class RefreshResult:
    """One refresh run; ``reprocessed`` lists the sources normalized and
    extracted again, ``timings`` are seconds per phase."""

    run_id: int
    db_path: Path
    engine_path: Path
    started_at: str
    ended_at: str = ""
    outcomes: list[SourceOutcome] = field(default_factory=list)
    reprocessed: list[str] = field(default_factory=list)
    recompiled: bool = False
    engine_written: bool = False
    rules_hash: str = ""
    built_first: bool = False
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes if o.outcome == outcome)

    @property
    def failed(self) -> list[SourceOutcome]:
        return [o for o in self.outcomes if o.outcome == "failed"]

    def summary(self) -> dict:
        return {
            "run_id": self.run_id, "database": str(self.db_path), "engine": str(self.engine_path),
            "started_at": self.started_at, "ended_at": self.ended_at, "tried": len(self.outcomes),
            "unchanged": self.count("unchanged"), "changed": self.count("changed"), "failed": self.count("failed"),
            "sources": [asdict(o) for o in self.outcomes], "reprocessed": self.reprocessed,
            "recompiled": self.recompiled, "engine_written": self.engine_written, "rules_hash": self.rules_hash,
            "built_first": self.built_first, "warnings": self.warnings,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
        }


@dataclass
class RecordDiff:
    """Record ids of one page, old against new."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.retired)


@dataclass
class _InForce:
    content_hash: str
    etag: str | None
    last_modified: str | None


@dataclass
class _State:
    """What the database holds before the run."""

    snapshots: dict[str, _InForce]
    last_run: int
    rules_hash: str | None
    source_info: dict[str, tuple[str, str]]  # source id -> (url, licence)


@dataclass
class _Update:
    """A changed source that processed cleanly."""

    source: Source
    fetched: FetchResult
    digest: str
    records: list  # list[pipeline.extract.Record]
    diff: RecordDiff


# --------------------------------------------------------------------------- snapshot store

def snapshot_path(corpus_dir: Path, source: Source, digest: str) -> Path:
    """``<corpus>/snapshots/<source_id>/<sha256>.<ext>`` (ids are checked by the manifest loader)."""
    return Path(corpus_dir).resolve() / SNAPSHOT_DIR / source.id / f"{digest}.{EXTENSIONS[source.format]}"


def store_snapshot(corpus_dir: Path, source: Source, data: bytes) -> tuple[str, Path]:
    """Write ``data`` to the snapshot store (atomically, once per content); returns (sha256, path)."""
    digest = content_hash(data)
    path = snapshot_path(corpus_dir, source, digest)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return digest, path


# --------------------------------------------------------------------------- record diff

def _signature(record) -> tuple:
    """What a reader of a record sees, besides its id and position."""
    return (record.role, record.channel, record.status, record.text, tuple(record.section),
            tuple((d.raw, d.iso, d.valid, d.start < 0) for d in record.dates), tuple(sorted(record.faq)),
            tuple((c.name, c.url) for c in record.cards),
            tuple(sorted((s.info_kind, s.event, s.verdict, s.condition, s.basis, s.principle_id)
                         for s in record.statements)),
            tuple(sorted(record.procedural)))


def diff_records(old: list, new: list) -> RecordDiff:
    """Diff two record lists of one page by ``record_id``."""
    before = {r.id: r for r in old}
    after = {r.id: r for r in new}
    return RecordDiff(
        added=[rid for rid in after if rid not in before],
        changed=[rid for rid in after if rid in before and _signature(after[rid]) != _signature(before[rid])],
        retired=[rid for rid in before if rid not in after],
    )


# --------------------------------------------------------------------------- the run

def refresh(corpus_dir: Path = BUNDLED_CORPUS, db_path: Path = DEFAULT_DB, engine_out: Path = DEFAULT_ENGINE,
            source_ids: list[str] | None = None, config: FetchConfig | None = None, wait: bool = False,
            progress: Callable[[str], None] | None = None, max_shrink: float = 0.5) -> RefreshResult:
    """Refresh the database ``db_path`` and the engine ``engine_out`` from the
    sources' URLs (all fetchable sources, or ``source_ids``).

    ``max_shrink``: a changed page with fewer records than ``1 - max_shrink``
    of its stored ones (or none) is refused as malformed: a markup change is
    likelier than a mass withdrawal of rulings. 1.0 accepts any page. (A page
    whose headings were renamed keeps its size: its records are retired and
    added again under their new section paths.)

    Raises RefreshError when another refresh holds the lock (unless
    ``wait``), UsageError for an unknown or frozen source id, CorpusError for
    an unusable manifest, LoadError when the database refuses the update (it
    is then left as it was). Source failures do not raise: they are in
    ``RefreshResult.failed``.
    """
    db_path, engine_out = Path(db_path), Path(engine_out)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(f"{db_path}.lock")
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout:
        raise RefreshError(f"another refresh is running (lock {lock.lock_file} is held); try again later or pass "
                           "--wait", place=str(db_path)) from None
    try:
        return _refresh_locked(Path(corpus_dir), db_path, engine_out, source_ids, config or FetchConfig(),
                               progress, max_shrink)
    finally:
        lock.release()


def select_sources(sources: list[Source], source_ids: list[str] | None) -> list[Source]:
    """The fetchable sources, or the named ones; UsageError for unknown or frozen ids."""
    if not source_ids:
        return [s for s in sources if s.fetch]
    by_id = {s.id: s for s in sources}
    chosen = []
    for sid in source_ids:
        if sid not in by_id:
            import difflib

            hint = difflib.get_close_matches(sid, list(by_id), n=1)
            raise UsageError(f"unknown source {sid!r}" + (f" (did you mean {hint[0]!r}?)" if hint else ""),
                             place="--source")
        if not by_id[sid].fetch:
            raise UsageError(f"source {sid!r} is frozen (manifest fetch is not 'yes'); refresh never fetches it",
                             source_id=sid, place="--source")
        if by_id[sid] not in chosen:
            chosen.append(by_id[sid])
    return chosen


def _refresh_locked(corpus_dir: Path, db_path: Path, engine_out: Path, source_ids: list[str] | None,
                    config: FetchConfig, progress: Callable[[str], None] | None,
                    max_shrink: float) -> RefreshResult:
    sources = load_manifest(corpus_dir)
    selected = select_sources(sources, source_ids)
    built_first = not db_path.is_file()
    if built_first:
        from .run import build

        built = build(corpus_dir, db_path, engine_out, max_page_bytes=config.max_page_bytes)
        initial_warnings = [f"initial build: {e}" for e in built.errors]
    else:
        initial_warnings = []
    state = read_state(db_path)
    result = RefreshResult(state.last_run + 1, db_path, engine_out, _now(), built_first=built_first,
                           warnings=initial_warnings)

    t0 = time.perf_counter()
    candidates, validator_updates = _fetch_all(corpus_dir, selected, state, config, result, progress)
    result.timings["fetch"] += time.perf_counter() - t0

    updates, bad_snapshots, compiled = [], [], None
    if candidates:
        updates, bad_snapshots = _process(candidates, db_path, state, config, result, max_shrink)
        if any(u.diff for u in updates):
            compiled = _compile(db_path, sources, state, updates, result)
            result.recompiled = True
    result.rules_hash = compiled.rules_hash if compiled else (state.rules_hash or "")
    result.ended_at = _now()

    t1 = time.perf_counter()
    _write(db_path, result, updates, bad_snapshots, validator_updates, compiled)
    t2 = time.perf_counter()
    result.timings["load"] += t2 - t1
    _ensure_engine(db_path, engine_out, sources, state, result, compiled)
    result.timings["generate"] += time.perf_counter() - t2
    return result


def _fetch_all(corpus_dir: Path, selected: list[Source], state: _State, config: FetchConfig,
               result: RefreshResult, progress) -> tuple[list[tuple[Source, FetchResult, str]], list[tuple]]:
    """Fetch every selected source; returns the changed ones (source, fetch result,
    sha256) and validator updates for unchanged snapshots."""
    candidates, validator_updates = [], []
    with Fetcher(config) as fetcher:
        for source in selected:
            if progress:
                progress(source.id)
            prev = state.snapshots.get(source.id)
            try:
                fetched = fetcher.fetch(source, prev.etag if prev else None, prev.last_modified if prev else None)
            except FetchError as exc:
                result.outcomes.append(SourceOutcome(source.id, "failed", _kept(str(exc), prev)))
                continue
            outcome = SourceOutcome(source.id, "unchanged", http_status=fetched.status, attempts=fetched.attempts)
            if fetched.not_modified:
                outcome.reason = "not modified (HTTP 304)"
                outcome.content_hash = prev.content_hash if prev else None
                result.outcomes.append(outcome)
                continue
            digest, _ = store_snapshot(corpus_dir, source, fetched.data)
            outcome.content_hash = digest
            if prev is not None and digest == prev.content_hash:
                outcome.reason = "same content hash"
                if (fetched.etag, fetched.last_modified) != (prev.etag, prev.last_modified):
                    validator_updates.append((fetched.etag, fetched.last_modified, fetched.fetched_at,
                                              fetched.status, source.id, digest))
                result.outcomes.append(outcome)
                continue
            outcome.outcome = "changed"
            result.outcomes.append(outcome)
            candidates.append((source, fetched, digest))
    return candidates, validator_updates


def _kept(reason: str, prev: _InForce | None) -> str:
    if prev is None:
        return f"{reason}; no earlier snapshot"
    return f"{reason}; snapshot {prev.content_hash[:12]} stays in force"


def _process(candidates, db_path: Path, state: _State, config: FetchConfig, result: RefreshResult,
             max_shrink: float) -> tuple[list[_Update], list[tuple]]:
    """Normalize, extract and diff the changed pages. A page that fails, or
    that would lose too many records, turns its outcome to failed; so does an
    unexpected error, since one odd page must not stop an unattended run."""
    from .load import read_records
    from .run import process_page

    outcome_of = {o.source_id: o for o in result.outcomes}
    old_by_source: dict[str, list] = {}
    for r in read_records(db_path, [s.id for s, _, _ in candidates]):
        old_by_source.setdefault(r.source_id, []).append(r)
    updates, bad = [], []
    for source, fetched, digest in candidates:
        outcome = outcome_of[source.id]
        result.reprocessed.append(source.id)
        old = old_by_source.get(source.id, [])
        try:
            page = process_page(source, result.timings, config.max_page_bytes, data=fetched.data)
            _check_losses(source, old, page.records, max_shrink)
            diff = diff_records(old, page.records)
        except Exception as exc:  # noqa: BLE001 (see the docstring)
            message = str(exc) if isinstance(exc, RulingsError) else f"unexpected {type(exc).__name__}: {exc}"
            outcome.outcome = "failed"
            outcome.reason = _kept(f"page {digest[:12]} refused: {message}", state.snapshots.get(source.id))
            bad.append((source, fetched, digest))
            continue
        result.warnings.extend(page.warnings)
        outcome.added, outcome.changed, outcome.retired = len(diff.added), len(diff.changed), len(diff.retired)
        outcome.reason = "new content"
        updates.append(_Update(source, fetched, digest, page.records, diff))
    return updates, bad


def _check_losses(source: Source, old: list, new: list, max_shrink: float) -> None:
    """Refuse a page that lost all its records, or more than ``max_shrink`` of them."""
    if old and not new and max_shrink < 1:
        raise ExtractError(f"page yields no records where {len(old)} were stored (markup changed?)",
                           source_id=source.id, place="whole page")
    if len(new) < (1 - max_shrink) * len(old):
        raise ExtractError(f"page shrank from {len(old)} to {len(new)} records, more than {max_shrink:.0%} fewer "
                           "(markup changed? --max-shrink 1 accepts it)", source_id=source.id, place="whole page")


# --------------------------------------------------------------------------- compile

@dataclass
class _Compiled:
    rules: list
    procedural: list
    tables: dict
    rules_hash: str


def _compile(db_path: Path, sources: list[Source], state: _State, updates: list[_Update],
             result: RefreshResult) -> _Compiled:
    """Rules and engine tables from every non-retired record: the updated
    pages' new records, the others read back from the database."""
    from .compile import compile_procedural, compile_rules
    from .generate import engine_tables, rules_hash
    from .load import read_records

    t0 = time.perf_counter()
    updated = {u.source.id for u in updates}
    others = sorted(set(state.source_info) - updated)
    records = read_records(db_path, others) + [r for u in updates for r in u.records]
    order = {s.id: i for i, s in enumerate(sources)}
    records.sort(key=lambda r: (order.get(r.source_id, len(order)), r.source_id, r.seq))  # build's order
    rules, procedural = compile_rules(records), compile_procedural(records)
    info = dict(state.source_info)
    info.update({s.id: (s.url, s.licence) for s in sources})
    tables = engine_tables(rules, procedural, records, info)
    result.timings["compile"] += time.perf_counter() - t0
    return _Compiled(rules, procedural, tables, rules_hash(tables))


def engine_rules_hash(path: Path) -> str | None:
    """The rules hash stamped in a generated engine module, or None (missing, not an engine)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(8192)
    except OSError:
        return None
    m = ENGINE_HASH_LINE.search(head)
    return m.group(1) if m else None


def _ensure_engine(db_path: Path, engine_out: Path, sources: list[Source], state: _State, result: RefreshResult,
                   compiled: _Compiled | None) -> None:
    """Write the engine when the rules changed, or when the module on disk is
    missing or does not match the database (e.g. a run killed after its commit)."""
    if compiled is None:
        if result.rules_hash and engine_rules_hash(engine_out) == result.rules_hash:
            return
        compiled = _compile(db_path, sources, state, [], result)
        if compiled.rules_hash != result.rules_hash:
            result.warnings.append("the rules compiled from the stored records differ from the database's rules "
                                   "(the pipeline changed since the last build?); run `rulings build`")
    from .generate import render, write_engine

    write_engine(engine_out, render(compiled.tables, compiled.rules_hash))
    result.engine_written = True


# --------------------------------------------------------------------------- database

def read_state(db_path: Path) -> _State:
    """Snapshots in force, last run id, rules hash and sources of a database."""
    try:
        con = duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error as exc:
        raise LoadError(f"cannot open the database: {exc}", place=str(db_path)) from None
    try:
        snapshots = {sid: _InForce(digest, etag, modified) for sid, digest, etag, modified in con.execute(
            "SELECT source_id, content_hash, etag, last_modified FROM snapshots WHERE in_force").fetchall()}
        last_run = con.execute("SELECT coalesce(max(run_id), 0) FROM runs").fetchone()[0]
        row = con.execute("SELECT value FROM build_info WHERE key = 'rules_hash'").fetchone()
        info = {sid: (url or "", licence or "") for sid, url, licence in
                con.execute("SELECT source_id, url, licence FROM sources").fetchall()}
    except duckdb.Error as exc:
        raise LoadError(f"not a rulings database ({exc}); run `rulings build` first", place=str(db_path)) from None
    finally:
        con.close()
    return _State(snapshots, last_run, row[0] if row else None, info)


def _write(db_path: Path, result: RefreshResult, updates: list[_Update], bad: list[tuple],
           validator_updates: list[tuple], compiled: _Compiled | None) -> None:
    """Everything the run changes, and its ``runs`` row, in one transaction."""
    try:
        con = duckdb.connect(str(db_path))
    except duckdb.Error as exc:
        raise LoadError(f"cannot open the database for writing (in use by another program?): {exc}",
                        place=str(db_path)) from None
    run_id = result.run_id
    try:
        con.execute("BEGIN TRANSACTION")
        con.execute(DDL.read_text(encoding="utf-8"))  # tables added since the database was built
        if validator_updates:
            # fetched_at and http_status stay those of the first fetch of this content
            con.executemany("UPDATE snapshots SET etag = ?, last_modified = ?, fetched_at = coalesce(fetched_at, ?), "
                            "http_status = coalesce(http_status, ?) WHERE source_id = ? AND content_hash = ?",
                            validator_updates)
        for source, fetched, digest in bad:
            _upsert_snapshot(con, source.id, digest, fetched, run_id, in_force=False)
        if updates or compiled:
            with tempfile.TemporaryDirectory(prefix="rulings-refresh-") as workdir:
                _write_updates(con, updates, run_id, compiled, Path(workdir))
        con.execute("INSERT INTO runs (run_id, kind, started_at, ended_at, tried, unchanged, changed, failed, "
                    "details) VALUES (?, 'refresh', ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, result.started_at, result.ended_at, len(result.outcomes), result.count("unchanged"),
                     result.count("changed"), result.count("failed"), json.dumps(_details(result), ensure_ascii=False)])
        con.execute("COMMIT")
    except BaseException as exc:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        if isinstance(exc, duckdb.Error):
            raise LoadError(f"refresh run {run_id} not stored, the database is unchanged: {exc}",
                            place=str(db_path)) from exc
        raise
    finally:
        con.close()


def _details(result: RefreshResult) -> dict:
    summary = result.summary()
    return {k: summary[k] for k in ("sources", "reprocessed", "recompiled", "rules_hash", "built_first", "warnings")}


def _upsert_snapshot(con, source_id: str, digest: str, fetched: FetchResult, run_id: int, in_force: bool) -> None:
    con.execute(
        "INSERT INTO snapshots (source_id, content_hash, bytes, fetched_at, http_status, etag, last_modified, "
        "run_id, in_force) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, content_hash) DO UPDATE SET "
        "bytes = excluded.bytes, fetched_at = excluded.fetched_at, http_status = excluded.http_status, "
        "etag = excluded.etag, last_modified = excluded.last_modified, run_id = excluded.run_id, "
        "in_force = excluded.in_force",
        [source_id, digest, len(fetched.data or b""), fetched.fetched_at, fetched.status, fetched.etag,
         fetched.last_modified, run_id, in_force])


def _write_updates(con, updates: list[_Update], run_id: int, compiled: _Compiled | None, workdir: Path) -> None:
    """Changed pages: snapshot in force, source row, records (ids kept, vanished
    ones retired), the change log; then the recompiled rules."""
    from .load import BuildData, bulk_insert, table_rows

    rows = table_rows(BuildData([u.source for u in updates], [], [r for u in updates for r in u.records],
                                compiled.rules if compiled else [], compiled.procedural if compiled else [],
                                {"run_id": run_id}))
    source_ids = [u.source.id for u in updates]
    snapshot_of = {u.source.id: u.digest for u in updates}
    ids = [row["record_id"] for row in rows["records"]]
    first_seen = dict(con.execute("SELECT record_id, first_seen_run FROM records WHERE retired_run IS NULL AND "
                                  "record_id IN (SELECT unnest(?))", [ids]).fetchall())
    for row in rows["records"]:
        row["first_seen_run"] = first_seen.get(row["record_id"], run_id)
        row["snapshot_hash"] = snapshot_of[row["source_id"]]
    con.execute("UPDATE snapshots SET in_force = false WHERE source_id IN (SELECT unnest(?))", [source_ids])
    for u in updates:
        _upsert_snapshot(con, u.source.id, u.digest, u.fetched, run_id, in_force=True)
    con.execute("DELETE FROM sources WHERE source_id IN (SELECT unnest(?))", [source_ids])
    for table in ("records", "record_dates", "card_mentions", "statements"):
        con.execute(f"DELETE FROM {table} WHERE record_id IN (SELECT unnest(?))", [ids])
    retired = [rid for u in updates for rid in u.diff.retired]
    con.execute("UPDATE records SET retired_run = ? WHERE record_id IN (SELECT unnest(?))", [run_id, retired])
    rows["record_changes"] = [{"run_id": run_id, "record_id": rid, "source_id": u.source.id, "change": change}
                              for u in updates for change in ("added", "changed", "retired")
                              for rid in getattr(u.diff, change)]
    tables = ["sources", "records", "record_dates", "card_mentions", "statements", "record_changes"]
    if compiled:
        for table in ("rules", "rule_citations", "procedural_rules"):
            con.execute(f"DELETE FROM {table}")
        tables += ["rules", "rule_citations", "procedural_rules"]
        con.executemany("INSERT OR REPLACE INTO build_info VALUES (?, ?)",
                        [("rules_hash", compiled.rules_hash), ("refreshed_at", _now())])
    for table in tables:
        bulk_insert(con, table, rows[table], workdir)


# --------------------------------------------------------------------------- the change log

def list_changes(db_path: Path, since: int | None = None) -> tuple[int, list[dict]]:
    """Record changes made by the runs after run ``since`` (default: the
    latest run's changes), oldest run first; returns (since, rows)."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        if since is None:
            since = max(0, con.execute("SELECT coalesce(max(run_id), 0) FROM runs").fetchone()[0] - 1)
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "record_changes" not in tables:
            return since, []
        cur = con.execute(
            """SELECT c.run_id, u.started_at, c.change, c.record_id, c.source_id, r.section_path, r.status, r.text
               FROM record_changes c LEFT JOIN records r USING (record_id) LEFT JOIN runs u USING (run_id)
               WHERE c.run_id > ?
               ORDER BY c.run_id, c.source_id, list_position(['added', 'changed', 'retired'], c.change), r.seq,
                        c.record_id""", [since])
        columns = [d[0] for d in cur.description]
        return since, [dict(zip(columns, row)) for row in cur.fetchall()]
    finally:
        con.close()
