"""The scheduled refresh: fetch every fetchable source again and re-process
only what changed.

Takes a corpus folder and a database a build wrote; gives the database
updated in place, the engine files when the rules changed, and a
:class:`RefreshResult` (per-source outcomes, warnings, rule changes).

One run, under the file lock next to the database (``<db>.lock``) that
builds take too:

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
   ``runs`` row (tried, unchanged, changed, failed, per-source details), and
   the run finishes as a build does (:mod:`pipeline.finish`: the engine
   staged before the commit, renamed right after it), so a refresh killed
   half-way leaves the database and engine as the last completed run left
   them; a later run regenerates the engine if its rules hash does not match
   the database.

A source that fails (DNS, timeout, HTTP error, truncated or oversized body,
robots.txt refusal, malformed page) is recorded in the run's details and
skipped: its last good snapshot stays in force. A page that shrinks is not
taken, as in a build (:mod:`pipeline.finish`): its stored records stay, a
warning names it, the source counts as unchanged. When no database exists
yet, the run first builds one from the bundled pages (``rulings build``),
then refreshes it.

Heavy modules (spaCy, OpenCC) are imported only when a page changed, so a
refresh that finds nothing new costs little more than its HTTP requests.
"""

from __future__ import annotations

import difflib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from .cardrefresh import refresh_data_sources
from .corpus import BUNDLED_CORPUS, Source, check_snapshot_store, load_data_sources, load_manifest, store_snapshot
from .errors import CorpusError, FetchError, RulingsError, UsageError
from .fetch import FetchConfig, Fetcher, FetchResult
from .finish import STORED, Compiled, compile_all, finish, kept_warning, shrunk, timer
from .enginefile import engine_rules_hash
from .generate import engine_paths
from .limits import DEFAULT_LIMITS, PageLimits
from .load import PageUpdate, RefreshData, RefreshWriter
from .locks import database_lock, output_paths
from .paths import DEFAULT_DB, DEFAULT_ENGINE
from .records import Record, page_counts, section_statements, utc_now as _now
from .review import RuleChange
from .run import build, process_page
from .schema import check_all
from .stored import SnapshotInfo, StoredState, previous_rules, read_records, read_state
from .workers import default_workers, read_pages

# The stamp of each generated file: the .py module, the .mjs module, the .json data.
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
    rule_changes: list[RuleChange] = field(default_factory=list)  # against the rules stored before the run

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
            "rule_changes": [asdict(c) for c in self.rule_changes],
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
class _Update:
    """A changed source that processed cleanly."""

    source: Source
    fetched: FetchResult
    digest: str
    records: list[Record]
    diff: RecordDiff

    def page_update(self) -> PageUpdate:
        return PageUpdate(self.source, _snapshot_info(self.source.id, self.digest, self.fetched), self.records,
                          self.diff.added, self.diff.changed, self.diff.retired)


def _snapshot_info(source_id: str, digest: str, fetched: FetchResult) -> SnapshotInfo:
    return SnapshotInfo(source_id, digest, len(fetched.data or b""), fetched.fetched_at, fetched.status,
                        fetched.etag, fetched.last_modified)


# --------------------------------------------------------------------------- record diff

def _signature(record) -> tuple:
    """What a reader of a record sees, besides its id and position."""
    return (record.role, record.channel, record.status, record.withdrawn, record.parent_id, tuple(record.cells),
            record.text,
            tuple(record.section),
            tuple((d.raw, d.iso, d.valid, d.start < 0, d.kind) for d in record.dates), tuple(sorted(record.faq)),
            tuple((c.name, c.url, c.kind, c.quote) for c in record.cards),
            tuple(sorted(s.key + (s.dates,) for s in record.statements)),
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
            progress: Callable[[str], None] | None = None, max_shrink: float = 0.5,
            limits: PageLimits = DEFAULT_LIMITS) -> RefreshResult:
    """Refresh the database ``db_path`` and the engine ``engine_out`` from the
    sources' URLs (all fetchable sources, or ``source_ids``).

    ``max_shrink``: a changed page with fewer records than ``1 - max_shrink``
    of its stored ones (or none) is not taken, its stored records stay, with
    a warning (:func:`pipeline.finish.shrunk`: the rule of a build): a markup
    change is likelier than a mass withdrawal of rulings. 1.0 accepts any page. (A page
    whose headings were renamed keeps its size: its records are retired and
    added again under their new section paths.) ``limits``: what one page
    may cost (:class:`~pipeline.limits.PageLimits`); the changed pages are
    read in worker processes, each within ``limits.timeout`` seconds, all
    within the run's deadline (``config.deadline`` seconds from the start:
    pages not read by then fail, what was done is stored).

    Raises BusyError (a RefreshError) when another refresh or build holds
    the lock (unless ``wait``), UsageError when the outputs overlap, UsageError for an unknown or frozen source id, CorpusError for
    an unusable manifest, for a snapshot store (``snapshots/``, a source's
    folder in it, a snapshot file) that leads out of the corpus folder (before
    any request when it does at the start) or a snapshot that cannot be written, LoadError when the database refuses the update (it
    is then left as it was). Source failures do not raise: they are in
    ``RefreshResult.failed``.
    """
    db_path, engine_out = output_paths(db_path, engine_out)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with database_lock(db_path, wait):
        return _refresh_locked(Path(corpus_dir), db_path, engine_out, source_ids, config or FetchConfig(),
                               progress, max_shrink, limits)


def select_sources(sources: list[Source], source_ids: list[str] | None) -> list[Source]:
    """The fetchable sources, or the named ones; UsageError for unknown or frozen ids."""
    if not source_ids:
        return [s for s in sources if s.fetch]
    by_id = {s.id: s for s in sources}
    chosen = []
    for sid in source_ids:
        if sid not in by_id:
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
                    max_shrink: float, limits: PageLimits = DEFAULT_LIMITS) -> RefreshResult:
    deadline = time.monotonic() + config.deadline  # the whole run's: fetching (the Fetcher's own) and reading
    check_all()
    sources = load_manifest(corpus_dir)
    data_sources = [s for s in load_data_sources(corpus_dir) if s.fetch]
    data_ids = {s.id for s in data_sources}
    page_ids = [i for i in source_ids if i not in data_ids] if source_ids else None
    selected = select_sources(sources, page_ids) if page_ids or not source_ids else []
    data_selected = [s for s in data_sources if not source_ids or s.id in source_ids]
    for source in selected:  # a snapshot store that leads out of the corpus stops the run before any request
        check_snapshot_store(corpus_dir, source)
    built_first = not db_path.is_file()
    if built_first:
        built = build(corpus_dir, db_path, engine_out, max_page_bytes=config.max_page_bytes, locked=True,
                      limits=limits, deadline=deadline)
        initial_warnings = [f"initial build: {e}" for e in built.errors]
    else:
        initial_warnings = []
    state = read_state(db_path)
    result = RefreshResult(state.last_run + 1, db_path, engine_out, _now(), built_first=built_first,
                           warnings=initial_warnings)

    t0 = time.perf_counter()
    candidates, validator_updates = _fetch_all(corpus_dir, selected, state, config, result, progress)
    card_texts = refresh_data_sources(data_selected, db_path, config, lambda sid, outcome, reason: (
        result.outcomes.append(SourceOutcome(sid, outcome, reason))))
    result.timings["fetch"] += time.perf_counter() - t0

    updates, bad_snapshots = [], []
    if candidates:
        updates, bad_snapshots = _process(candidates, db_path, state, config, result, max_shrink, limits, deadline)
    compiled = _compile(db_path, engine_out, sources, state, updates, result)
    result.ended_at = _now()
    data = RefreshData(
        _run_row(result), [u.page_update() for u in updates],
        [_snapshot_info(source.id, digest, fetched) for source, fetched, digest in bad_snapshots], validator_updates,
        compiled.rules if result.recompiled else None, compiled.procedural if result.recompiled else [],
        {"rules_hash": compiled.rules_hash, "refreshed_at": _now()} if result.recompiled else {},
        result.rule_changes, card_texts)
    _finish(db_path, engine_out, data, compiled, result)
    return result


def _fetch_all(corpus_dir: Path, selected: list[Source], state: StoredState, config: FetchConfig,
               result: RefreshResult, progress) -> tuple[list[tuple[Source, FetchResult, str]], list[SnapshotInfo]]:
    """Fetch every selected source; returns the changed ones (source, fetch result,
    sha256) and validator updates for unchanged snapshots."""
    candidates, validator_updates = [], []
    with Fetcher(config) as fetcher:
        for source in selected:
            if progress:
                progress(source.id)
            prev = state.snapshots.get(source.id)
            try:
                source.check_readable()
                fetched = fetcher.fetch(source, prev.etag if prev else None, prev.last_modified if prev else None)
            except (CorpusError, FetchError) as exc:
                result.outcomes.append(SourceOutcome(source.id, "failed", _kept(str(exc), prev)))
                continue
            except Exception as exc:  # noqa: BLE001 - a bug or a server unlike any seen fails this source only
                reason = f"[fetch] {source.id}: unexpected {type(exc).__name__}: {exc}"
                result.outcomes.append(SourceOutcome(source.id, "failed", _kept(reason, prev)))
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
                    validator_updates.append(_snapshot_info(source.id, digest, fetched))
                result.outcomes.append(outcome)
                continue
            outcome.outcome = "changed"
            result.outcomes.append(outcome)
            candidates.append((source, fetched, digest))
    return candidates, validator_updates


def _kept(reason: str, prev: SnapshotInfo | None) -> str:
    if prev is None:
        return f"{reason}; no earlier snapshot"
    return f"{reason}; snapshot {prev.content_hash[:12]} stays in force"


def _process(candidates, db_path: Path, state: StoredState, config: FetchConfig, result: RefreshResult,
             max_shrink: float, limits: PageLimits = DEFAULT_LIMITS,
             deadline: float | None = None) -> tuple[list[_Update], list[tuple]]:
    """Normalize, extract and diff the changed pages, read in worker
    processes (:func:`pipeline.workers.read_pages`: each within
    ``limits.timeout`` seconds, all by ``deadline``). A page that fails, is
    over a limit or is not read by the deadline turns its outcome to
    failed; so does an unexpected error, since
    one odd page must not stop an unattended run. A page that shrinks
    (:func:`pipeline.finish.shrunk`) keeps its stored records, with a warning."""
    outcome_of = {o.source_id: o for o in result.outcomes}
    old_by_source: dict[str, list] = {}
    for r in read_records(db_path, [s.id for s, _, _ in candidates]):
        old_by_source.setdefault(r.source_id, []).append(r)
    updates, bad = [], []
    jobs = [(source, config.max_page_bytes, limits, fetched.data) for source, fetched, _ in candidates]
    read = read_pages(_refresh_job, jobs, default_workers(len(jobs)), limits.timeout, deadline, _refresh_failed)
    for (source, fetched, digest), (page, error, timings) in zip(candidates, read):
        outcome = outcome_of[source.id]
        result.reprocessed.append(source.id)
        old = old_by_source.get(source.id, [])
        for stage, seconds in timings.items():
            result.timings[stage] += seconds
        try:
            if error:
                raise _Failed(error)
            why = shrunk(page_counts(old), page_counts(page.records), section_statements(old),
                         section_statements(page.records), max_shrink, STORED)
            diff = diff_records(old, page.records)
        except Exception as exc:  # noqa: BLE001 (see the docstring)
            message = (str(exc) if isinstance(exc, (RulingsError, _Failed))
                       else f"unexpected {type(exc).__name__}: {exc}")
            outcome.outcome = "failed"
            outcome.reason = _kept(f"page {digest[:12]} refused: {message}", state.snapshots.get(source.id))
            bad.append((source, fetched, digest))
            continue
        if why:  # the rule of a build (pipeline.finish): the stored records stay, a warning names the page
            outcome.outcome = "unchanged"
            outcome.reason = _kept(f"page {digest[:12]} not taken: {why}", state.snapshots.get(source.id))
            result.warnings.append(kept_warning(source.id, len(old), why, STORED))
            bad.append((source, fetched, digest))
            continue
        result.warnings.extend(page.warnings)
        outcome.added, outcome.changed, outcome.retired = len(diff.added), len(diff.changed), len(diff.retired)
        outcome.reason = "new content"
        updates.append(_Update(source, fetched, digest, page.records, diff))
    return updates, bad


def _refresh_job(job: tuple) -> tuple:
    """(page, None, timings) of one changed page read in a worker process
    (:func:`~pipeline.run.process_page` of its fetched bytes), or (None,
    its error line, timings): a line, not the exception, which the
    process's pipe may not carry back."""
    source, max_page_bytes, limits, data = job
    timings = {"normalize": 0.0, "extract": 0.0}
    try:
        return process_page(source, timings, max_page_bytes, data=data, limits=limits), None, timings
    except Exception as exc:  # noqa: BLE001 - handed back to the run, which records it
        return None, str(exc) if isinstance(exc, RulingsError) else f"unexpected {type(exc).__name__}: {exc}", timings


def _refresh_failed(job: tuple, message: str) -> tuple:
    """The outcome of a page whose worker was ended (its time limit, the run's deadline)."""
    return None, message, {}


class _Failed(Exception):
    """A page's error line, made where the page was given up."""


# --------------------------------------------------------------------------- compile

def _compile(db_path: Path, engine_out: Path, sources: list[Source], state: StoredState, updates: list[_Update],
             result: RefreshResult) -> Compiled | None:
    """Rules and engine tables (:func:`pipeline.finish.compile_all`) from
    every non-retired record, the updated pages' new records and the others
    read back from the database: when a record changed (``result.recompiled``:
    the rules are stored anew), or when the engine module on disk is missing
    or does not match the database (e.g. a run killed after its commit: the
    engine alone is written). None when neither."""
    result.recompiled = any(u.diff for u in updates)
    result.rules_hash = state.rules_hash or ""
    if not result.recompiled and result.rules_hash and all(
            engine_rules_hash(p) == result.rules_hash for p in engine_paths(engine_out).values()):
        return None
    updated = {u.source.id for u in updates}
    others = sorted(set(state.source_info) - updated)
    records = read_records(db_path, others) + [r for u in updates for r in u.records]
    order = {s.id: i for i, s in enumerate(sources)}
    records.sort(key=lambda r: (order.get(r.source_id, len(order)), r.source_id, r.seq))  # build's order
    info = dict(state.source_info)
    info.update({s.id: (s.url, s.licence) for s in sources})
    compiled = compile_all(records, sources, previous_rules(db_path) if result.recompiled else {}, info,
                           clock=timer(result.timings))
    if result.recompiled:
        result.rule_changes, result.rules_hash = compiled.changes, compiled.rules_hash
    elif compiled.rules_hash != result.rules_hash:
        result.warnings.append("the rules compiled from the stored records differ from the database's rules "
                               "(the pipeline changed since the last build?); run `rulings build`")
    return compiled


def _finish(db_path: Path, engine_out: Path, data: RefreshData, compiled: Compiled | None,
            result: RefreshResult) -> None:
    """Write the run in one transaction and, when there is an engine to
    write, finish as a build does (:func:`pipeline.finish.finish`: the
    card table from the transaction, the engine staged, the database
    committed, the engine renamed)."""
    clock = timer(result.timings)
    with clock("load"):
        writer = RefreshWriter(db_path, data)
    with writer:
        if compiled is None:
            with clock("load"):
                writer.commit()
            return
        finish(compiled, engine_out, lambda: _card_table(writer), writer.commit,
               kept=f"refresh run {result.run_id} not stored, the database and engine are unchanged",
               kept_after=f"refresh run {result.run_id} is stored in the database, the previous engine file stays "
                          "(the next refresh writes it again)", clock=clock)
    result.engine_written = True


def _card_table(writer: RefreshWriter) -> str:
    """The engines' card table (pipeline/cardengine.py) from the refresh's
    transaction; UnusableDatabase naming the file when DuckDB finds a
    damaged block there (the refresh then stores nothing)."""
    import duckdb

    from .cardengine import card_table, card_table_text
    from .database import unreadable

    try:
        return card_table_text(card_table(writer.con))
    except duckdb.Error as exc:
        raise unreadable(exc, writer.db_path) from None


# --------------------------------------------------------------------------- the run's row

def _run_row(result: RefreshResult) -> dict:
    """The ``runs`` row of a refresh (details: per-source outcomes as JSON)."""
    summary = result.summary()
    details = {k: summary[k] for k in ("sources", "reprocessed", "recompiled", "rules_hash", "built_first", "warnings")}
    return {"run_id": result.run_id, "kind": "refresh", "started_at": result.started_at, "ended_at": result.ended_at,
            "tried": summary["tried"], "unchanged": summary["unchanged"], "changed": summary["changed"],
            "failed": summary["failed"], "details": json.dumps(details, ensure_ascii=False)}
