"""The build: normalize -> extract per page, then compile -> generate; load writes each step's output.

Pages are independent until compile, so a corpus of several pages is spread
over worker processes (one per core by default, ``fork`` where the platform
has it, results taken in manifest order so the output does not depend on
timing). A worker normalizes and extracts its page and hands back the
page's record rows (one JSON array per table, which the load appends to a
batch's files and reads in bulk) and only the records compile needs (those
stating something), so memory stays bounded by the statements, not by the
corpus. Pages read while the build waits for an earlier, slower one wait in
memory with their rows (about three times their bytes), so the workers are
handed at most :data:`AHEAD_PER_WORKER` pages each that the build has not taken.

One broken page never stops a build: its error (stage, source id, place) is
collected, the page keeps the records the previous database holds for it, and
the other pages go on. So does a page over the bounds of
:class:`~pipeline.limits.PageLimits` (nesting, attributes, records, checked
while it is read; its time, by killing the worker process reading it: pages
are read in worker processes whenever a page timeout or a deadline is set).
The database and the engine module are each written to a temporary file and
renamed, the engine right after the database, so an
interrupted build leaves the previous ones intact.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
import tempfile
import threading
import time
from collections import Counter, deque
from contextlib import contextmanager, nullcontext
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator

from .cards import CardIndex, card_index, card_index_built, use_card_index
from .cardtables import use_card_table_rows, versioned_rows
from .cardtext import card_texts, card_texts_file, texts_file, use_card_texts
from .compile import RuleChange, cite_once, compile_procedural, compile_rules, for_compile, other_rulesets, review
from .corpus import BUNDLED_CORPUS, DEFAULT_MAX_PAGE_BYTES, Source, content_hash, load_manifest, read_snapshot
from .database import UnusableDatabase, one_line
from .errors import CompileError, CorpusError, ExtractError, GenerateError, LoadError, NormalizeError, RulingsError
from .extract import extract, layout_warnings
from .match import pipeline_for
from .generate import commit_engines, discard_engines, engine_tables, render_all, rules_hash, stage_engines
from .limits import DEFAULT_LIMITS, PageLimits
from .load import (RECORD_TABLES, BuildData, DatabaseWriter, SnapshotInfo, clean_leftovers, database_lock, json_array,
                   output_paths, previous_build, read_records, read_snapshot_infos, record_rows)
from .normalize import normalize
from .paths import DEFAULT_DB, DEFAULT_ENGINE
from .records import Record, page_counts, section_shrinkage, section_statements, shrinkage, utc_now
from .schema import check_all, info_kinds

STAGES = ("normalize", "extract", "compile", "load", "generate")
# Pages handed to the workers and not yet taken by the build, per worker: a page read out
# of turn waits in the build process's memory with its rows (about three times its bytes).
AHEAD_PER_WORKER = 32
# What stays when an engine file cannot be renamed into place (the database was, just before).
ENGINE_AFTER_DATABASE = ("the new database is in place, the previous engine file stays (its RULES_HASH differs from "
                         "build_info.rules_hash); `rulings build` writes it again")
# Row bytes (JSON) written to a batch's files between two loads into the database: about 11 MB of pages.
FLUSH_BYTES = 32 * 1024 * 1024


@dataclass
class PageResult:
    source: Source
    records: list[Record]
    snapshot: SnapshotInfo
    warnings: list[str]


@dataclass
class BuildResult:
    """What a build did: counts for the summary, timings per stage (seconds)."""

    db_path: Path
    engine_path: Path
    sources: int = 0
    pages_ok: int = 0
    records: int = 0
    dated_records: int = 0
    card_mentions: int = 0
    linked_mentions: int = 0
    statements: int = 0
    rules_by_verdict: dict[str, int] = field(default_factory=dict)
    procedural_rules: int = 0
    rules_hash: str = ""
    input_bytes: int = 0
    workers: int = 1
    timings: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    # CPU seconds per stage, of the process that did the work (the workers'
    # summed for the per-page stages): what the bench reports as CPU
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rule_changes: list[RuleChange] = field(default_factory=list)  # against the database this build replaces

    def summary(self) -> dict:
        return {
            "rule_changes": [asdict(c) for c in self.rule_changes],
            "database": str(self.db_path), "engine": str(self.engine_path), "sources": self.sources,
            "pages_built": self.pages_ok, "records": self.records, "dated_records": self.dated_records,
            "card_mentions": self.card_mentions, "card_mentions_linked": self.linked_mentions,
            "statements": self.statements, "rules_by_verdict": dict(sorted(self.rules_by_verdict.items())),
            "procedural_rules": self.procedural_rules, "rules_hash": self.rules_hash, "workers": self.workers,
            "errors": self.errors, "warnings": self.warnings,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "cpu_s": {k: round(v, 3) for k, v in self.cpu.items()},
        }


def process_page(source: Source, timings: dict[str, float], max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
                 data: bytes | None = None, cpu: dict[str, float] | None = None,
                 limits: PageLimits = DEFAULT_LIMITS) -> PageResult:
    """One page through normalize and extract; adds the wall seconds of each
    stage to ``timings`` and the CPU seconds to ``cpu``. Raises RulingsError
    for a bad page, and for a page over ``limits`` (nesting, attributes,
    records; its time is bounded by the caller, :func:`read_pages`)."""
    t0, c0 = time.perf_counter(), time.process_time()
    source.check_readable()
    data = read_snapshot(source, max_page_bytes) if data is None else data
    page = _guarded(NormalizeError, source.id, source.path, normalize, data, source, None, limits)
    t1, c1 = time.perf_counter(), time.process_time()
    records = _guarded(ExtractError, source.id, source.path, extract, page, info_kinds())
    if len(records) > limits.max_records:
        raise ExtractError(f"{len(records)} records, over the limit of {limits.max_records} (--max-page-records)",
                           source_id=source.id, place="whole page")
    page.warnings.extend(layout_warnings(records, source.id))
    t2, c2 = time.perf_counter(), time.process_time()
    timings["normalize"] += t1 - t0
    timings["extract"] += t2 - t1
    if cpu is not None:
        cpu["normalize"] += c1 - c0
        cpu["extract"] += c2 - c1
    return PageResult(source, records, SnapshotInfo(source.id, content_hash(data), len(data)), page.warnings)


def _guarded(error: type[RulingsError], source_id: str | None, place: str, stage, *args):
    """Run one stage (on one page, or compile and generate on the whole
    corpus). An exception no check foresaw (a bug, a page unlike any seen)
    becomes the stage's error naming the source or place, so one page never
    stops the build and a compile fault is reported as one."""
    try:
        return stage(*args)
    except RulingsError:
        raise
    except Exception as exc:
        raise error(f"unexpected {type(exc).__name__}: {exc}", source_id=source_id, place=place) from exc


def _previous_page(db_path: Path | None, source: Source, warnings: list[str]) -> PageResult | None:
    """The records and snapshot an earlier build stored for ``source``, if any
    (``db_path`` None: no usable earlier database, :func:`previous_build`):
    a page that fails now keeps what earlier runs stored. A warning in
    ``warnings`` when they cannot be read."""
    if db_path is None:
        return None
    try:
        snapshot = read_snapshot_infos(db_path).get(source.id)
        records = read_records(db_path, [source.id])
    except Exception as exc:  # a damaged old database keeps nothing, it never stops the build
        warnings.append(f"{source.id}: the previous build's records cannot be read, none kept: "
                        f"{exc.problem if isinstance(exc, UnusableDatabase) else one_line(exc)}")
        return None
    if snapshot is None or not records:
        return None
    return PageResult(source, records, snapshot, [])


# --------------------------------------------------------------------------- pages, in workers

@dataclass
class PageOutcome:
    """What one page gives the build: its record rows (a JSON array per
    table: :func:`page_rows`), the records compile needs (pickled:
    :func:`pack_for_compile`), counts, timings, or the error."""

    source: Source
    error: str = ""
    snapshot: SnapshotInfo | None = None
    warnings: list[str] = field(default_factory=list)
    rows: dict[str, bytes] = field(default_factory=dict)
    compile_records: bytes = b""
    counts: Counter = field(default_factory=Counter)
    sections: dict[str, int] = field(default_factory=dict)  # statements per section: section_statements
    timings: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))


def page_rows(records: list[Record], snapshot_hash: str, source: Source, counts: Counter) -> dict[str, bytes]:
    """The record rows of one page, a JSON array (UTF-8) per table of
    :data:`~pipeline.load.RECORD_TABLES` that has any; adds record, date,
    card and statement counts to ``counts``.

    Handed back to the build process, which appends them to its batch's
    files (:class:`~pipeline.load.RowBatch`), not written to files of
    their own: four files a page, each created at about 0.6 ms of CPU on
    this machine's disk, cost a 1,000-page build 2.8 s of its workers' CPU
    and 1 s of the build process's to read them back."""
    rows = record_rows(records, {source.id: snapshot_hash}, 1, {source.id: source})
    counts.update(page_counts(records))  # records, statements, dated records, card mentions: the shrink guard's
    counts["linked_mentions"] += sum(1 for row in rows["card_mentions"] if row["konami_id"] is not None)
    return {table: json_array(rows[table]) for table in RECORD_TABLES if rows[table]}


@contextmanager
def _collect_after():
    """No cyclic garbage collection while a page is read, one of the young
    objects after it: a page makes hundreds of thousands of objects, and
    the collector's passes over them cost about a fifth of a page's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect(0)
        if enabled:
            gc.enable()


def _page_job(job: tuple[Source, int, PageLimits]) -> PageOutcome:
    """One page through normalize and extract, its rows made; runs in a
    worker process (or in the build's own when no page timeout is set and
    one process reads the pages)."""
    with _collect_after():
        return _read_page(*job)


def _failed_outcome(job: tuple, message: str) -> PageOutcome:
    """The outcome of a page whose worker was ended (:func:`read_pages`): ``message``, its error."""
    return PageOutcome(job[0], error=message)


def _read_page(source: Source, max_page_bytes: int, limits: PageLimits = DEFAULT_LIMITS) -> PageOutcome:
    """The outcome of the page of ``source``: its rows, or the error naming it."""
    outcome = PageOutcome(source)
    try:
        page = process_page(source, outcome.timings, max_page_bytes, cpu=outcome.cpu, limits=limits)
    except RulingsError as exc:
        outcome.error = str(exc)
        return outcome
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        outcome.rows = page_rows(page.records, page.snapshot.content_hash, source, outcome.counts)
        outcome.sections = section_statements(page.records)
    except Exception as exc:  # a bug, a value JSON cannot hold: this page fails, the others go on
        outcome.error = str(LoadError(f"making the page's rows: {type(exc).__name__}: {exc}", source_id=source.id,
                                      place=source.path))
        outcome.counts.clear()
        return outcome
    outcome.timings["load"] += time.perf_counter() - t0
    outcome.cpu["load"] += time.process_time() - c0
    outcome.snapshot, outcome.warnings = page.snapshot, page.warnings
    outcome.compile_records = pack_for_compile(page.records)
    return outcome


def pack_for_compile(records: list[Record]) -> bytes:
    """The records of a page that compile needs (:func:`~pipeline.compile.for_compile`),
    pickled: the build holds these bytes while the other pages are read, about
    a fifth of the memory the objects take (their strings and small objects),
    and makes them objects again only once the workers are gone."""
    return pickle.dumps(for_compile(records), protocol=pickle.HIGHEST_PROTOCOL)


def unpack_for_compile(packed: list[bytes]) -> list[Record]:
    """The records of :func:`pack_for_compile` for every page, in page order."""
    return [record for blob in packed for record in pickle.loads(blob)]


def default_workers(pages: int) -> int:
    """One worker per usable core, none (the build's own process) below 4 pages."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 1 if pages < 4 else max(1, min(cores, pages))


def _outcomes(sources: list[Source], max_page_bytes: int, workers: int, limits: PageLimits = DEFAULT_LIMITS,
              deadline: float | None = None) -> Iterator[PageOutcome]:
    """Page outcomes in manifest order, from ``workers`` processes (:func:`read_pages`)."""
    jobs = [(s, max_page_bytes, limits) for s in sources]
    yield from read_pages(_page_job, jobs, workers, limits.timeout, deadline, _failed_outcome)


def read_pages(fn: Callable, jobs: list, workers: int, timeout: float | None = None, deadline: float | None = None,
               failed: Callable | None = None) -> Iterator:
    """``fn(job)`` for each of ``jobs`` (a page each, the source first), in
    their order, from ``workers`` processes (at least one); in this process
    when there is one worker and neither ``timeout`` nor ``deadline``.

    A page whose outcome the build has waited ``timeout`` seconds for (it
    is running by then: pages are handed out in order) is given up: every
    worker is killed (a parser stuck in C code never returns to Python),
    the page's outcome is ``failed(job, message)`` naming the limit, and the
    pages the other workers were reading are handed to new workers. At
    ``deadline`` (``time.monotonic()``) the workers are killed and every
    page not read is ``failed(job, message)``. Ctrl-C, SIGTERM or an error
    kill the workers at once, and a worker that dies by itself (out of
    memory, killed) raises LoadError: nothing is written then."""
    if workers <= 1 and timeout is None and deadline is None:
        yield from map(fn, jobs)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    _warm_up(context)
    # An executor, not a Pool: a worker that dies (out of memory, killed)
    # raises BrokenProcessPool here instead of hanging the build.
    pool = _Workers(max(1, workers), context)
    try:
        yield from _in_order(pool, jobs, AHEAD_PER_WORKER * max(1, workers), fn, timeout, deadline, failed)
    except BrokenProcessPool as exc:
        pool.end()
        raise LoadError("a worker process died while reading pages (out of memory? killed?); nothing was "
                        "written. `rulings build --workers 1` names the page if one page causes it",
                        place="worker processes") from exc
    except BaseException:  # Ctrl-C, SIGTERM, an error, the build loop closing this generator
        pool.end()  # the pages being read are killed, even one stuck in C code; the rest never start
        raise
    pool.shutdown()


class _Workers:
    """The worker processes (a ProcessPoolExecutor) that can be ended at
    once, and started again."""

    def __init__(self, count: int, context) -> None:
        self.count, self.context = count, context
        self.pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.count, mp_context=self.context, initializer=_worker_init,
                                   initargs=(os.getpid(),))

    def submit(self, fn, job):
        return self.pool.submit(fn, job)

    def end(self) -> None:
        """Kill the workers (SIGKILL: one stuck in C code ignores anything
        else) and wait until the executor has settled every page handed
        out: done, or failed with BrokenProcessPool, or cancelled."""
        for process in list((getattr(self.pool, "_processes", None) or {}).values()):
            try:
                process.kill()
            except (OSError, ValueError, AttributeError):  # already gone, or closed
                pass
        self.pool.shutdown(wait=True, cancel_futures=True)

    def renew(self) -> None:
        """:meth:`end`, then new workers."""
        self.end()
        self.pool = self._start()

    def shutdown(self) -> None:
        self.pool.shutdown()


def _in_order(pool, jobs: list, ahead: int, fn: Callable | None = None, timeout: float | None = None,
              deadline: float | None = None, failed: Callable | None = None) -> Iterator:
    """The outcomes of ``fn`` (default :func:`_page_job`) for ``jobs``, in
    their order, with at most ``ahead`` (at least 1) jobs handed out whose
    outcome the build has not taken: the one it waits for and those after
    it. ``pool.map`` hands out every job at once: behind a slow page (a
    20 MB page takes seconds), every page read meanwhile would wait in
    memory with its rows. 64 for two workers cost no measurable time
    (1,000-page builds, two of each in turns). ``timeout``, ``deadline``,
    ``failed``: see :func:`read_pages` (``pool`` is then a :class:`_Workers`)."""
    fn = fn or _page_job
    queued = iter(jobs)
    pending = deque((job, pool.submit(fn, job)) for job in islice(queued, max(1, ahead)))
    while pending:
        job, future = pending[0]
        wait = _wait_for(timeout, deadline)
        by_deadline = deadline is not None and (timeout is None or wait < timeout)  # what bounds this wait
        try:
            outcome = future.result(wait)
        except TimeoutError:
            if future.done():  # done just now
                continue
            if by_deadline:
                pool.end()
                yield from _after_deadline(pending, queued, failed)
                return
            pool.renew()
            pending.popleft()
            pending = deque((j, f if _kept(f) else pool.submit(fn, j)) for j, f in pending)
            for extra in islice(queued, 1):
                pending.append((extra, pool.submit(fn, extra)))
            yield failed(job, _page_error(job, f"reading the page took over {timeout:g} s, over the limit "
                                               "(--page-timeout); its worker process was ended"))
            continue
        pending.popleft()
        for job in islice(queued, 1):
            pending.append((job, pool.submit(fn, job)))
        yield outcome


def _after_deadline(pending: deque, queued: Iterator, failed: Callable) -> Iterator:
    """At the deadline, the workers killed: the outcomes of the pages read
    by then, and every other page failed."""
    for job, future in pending:
        yield future.result() if _kept(future) else failed(job, _page_error(job, DEADLINE_MESSAGE))
    for job in queued:
        yield failed(job, _page_error(job, DEADLINE_MESSAGE))


DEADLINE_MESSAGE = "not read: the run's deadline was reached (--deadline)"


def _wait_for(timeout: float | None, deadline: float | None) -> float | None:
    """Seconds to wait for one page: ``timeout``, or less to stop at ``deadline``; None: no bound."""
    if deadline is None:
        return timeout
    left = max(0.0, deadline - time.monotonic())
    return left if timeout is None else min(timeout, left)


def _kept(future) -> bool:
    """Whether a page handed out before its workers were killed was read (else it is handed out again)."""
    return future.done() and not future.cancelled() and future.exception() is None


def _page_error(job: tuple, message: str) -> str:
    """The error line of the page of ``job`` (its source first)."""
    source = job[0]
    return str(NormalizeError(message, source_id=source.id, place=source.path))


def _warm_up(context: multiprocessing.context.BaseContext) -> None:
    """Load what every page needs before the workers fork, so that they share
    it: spaCy's pipelines here while a helper process builds the card index
    (about a second each, where one after the other left a core idle; the
    index comes back pickled in 0.1 s). A helper that dies leaves the index
    to be built here."""
    card_texts()  # the card texts the workers read (pipeline.cardrulings), shared like the rest
    if card_index_built():  # an earlier build in this process
        pipeline_for("zh"), pipeline_for("en"), info_kinds()
        return
    # A second helper reads every card's effects for the card tables (a second of CPU the commit then saves).
    with ProcessPoolExecutor(2, mp_context=context, initializer=_worker_init, initargs=(os.getpid(),)) as helper:
        index = helper.submit(CardIndex)
        card_rows = helper.submit(versioned_rows, card_texts_file())
        pipeline_for("zh"), pipeline_for("en"), info_kinds()
        try:
            use_card_index(index.result())
            use_card_table_rows(*card_rows.result())
        except BrokenProcessPool:
            pass  # built below, or at the commit
    card_index()


def _worker_init(parent: int, interval: float = 0.5) -> None:
    """Worker initializer. Ctrl-C and SIGTERM are the build process's to
    handle (it kills the workers and cancels the pages not started). A thread ends the worker when
    the build process is gone (killed: nothing else would tell a worker
    blocked on its queue, and a scheduled build must not leave processes
    behind)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the build process's handler, inherited by fork
    gc.freeze()  # what the worker inherited (spaCy, the card index) is never garbage: keep it out of collections

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def build(corpus_dir: Path = BUNDLED_CORPUS, db_path: Path = DEFAULT_DB, engine_out: Path = DEFAULT_ENGINE,
          progress: Callable[[str], None] | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
          workers: int | None = None, locked: bool = False, max_shrink: float = 0.5, wait: bool = False,
          limits: PageLimits = DEFAULT_LIMITS, deadline: float | None = None) -> BuildResult:
    """Build the database and the engine from every page of ``corpus_dir``.

    ``progress`` is called with each source id as its page is done;
    ``workers`` is the number of processes for the pages (default:
    :func:`default_workers`). The build holds ``<db>.lock`` (``locked``: the
    caller, a refresh, already does; ``wait``: wait for another writer to
    release it) and first removes what killed builds left beside the
    database. The database it replaces is read only when it is a rulings
    database of this schema (:func:`previous_build`: a damaged one or one
    of another version is replaced with a warning, a DuckDB database that
    rulings did not write is refused). ``max_shrink``: a page that now gives fewer
    records, statements or dated rulings than ``1 - max_shrink`` of what the
    previous database holds for it (a markup change?) keeps its previous
    records, with a warning; 1.0 accepts any page. ``limits``: what one page
    may cost (:class:`~pipeline.limits.PageLimits`: a page over them fails
    alone); ``deadline`` (``time.monotonic()``): pages not read by then fail. Page errors are collected
    in ``BuildResult.errors``. Raises CorpusError when the manifest itself is
    unusable, UsageError when the outputs overlap, BusyError when another
    writer holds the lock, LoadError or GenerateError (naming the
    folder) when an output folder cannot be written, LoadError when a worker
    process dies; the previous database and engine are then left as they were.
    """
    db_path, engine_out = output_paths(db_path, engine_out)
    check_all()
    sources = load_manifest(corpus_dir)
    use_card_texts(texts_file(corpus_dir))  # the corpus' own card texts (a refresh keeps them current)
    if not sources:  # an emptied manifest must not replace a database with an empty one
        raise CorpusError("the manifest lists no sources; nothing is built (the previous database stays)",
                          place=str(Path(corpus_dir) / "manifest.tsv"))
    _check_writable(db_path.parent, LoadError)
    _check_writable(engine_out.parent, GenerateError)
    with nullcontext() if locked else database_lock(db_path, wait):
        clean_leftovers(db_path)
        return _build_locked(corpus_dir, sources, db_path, engine_out, progress, max_page_bytes, workers, max_shrink,
                             limits, deadline)


def _build_locked(corpus_dir: Path, sources: list[Source], db_path: Path, engine_out: Path,
                  progress: Callable[[str], None] | None, max_page_bytes: int, workers: int | None,
                  max_shrink: float, limits: PageLimits = DEFAULT_LIMITS, deadline: float | None = None) -> BuildResult:
    result = BuildResult(db_path, engine_out)
    started = utc_now()
    result.sources = len(sources)
    result.workers = default_workers(len(sources)) if workers is None else max(1, workers)
    previous = previous_build(db_path)
    result.warnings.extend([previous.warning] if previous.warning else [])
    with DatabaseWriter(db_path) as writer:
        snapshots, packed, counts = [], [], Counter()
        for outcome in _outcomes(sources, max_page_bytes, result.workers, limits, deadline):
            source = outcome.source
            if progress:
                progress(source.id)
            for stage, seconds in outcome.timings.items():
                result.timings[stage] += seconds
                result.cpu[stage] += outcome.cpu[stage]
            shrunk = None if outcome.error else _shrinkage(outcome, previous.counts.get(source.id),
                                                                 previous.sections.get(source.id), max_shrink)
            kept = False
            if outcome.error or shrunk:
                if outcome.error:
                    result.errors.append(outcome.error)
                kept = _keep_previous(outcome, previous.path, result.warnings, shrunk)
                if not kept and outcome.error:
                    continue
            if not kept:
                result.pages_ok += 1
                result.input_bytes += outcome.snapshot.size
                result.warnings.extend(outcome.warnings)
            snapshots.append(outcome.snapshot)
            packed.append(outcome.compile_records)
            counts.update(outcome.counts)
            batch_bytes = _timed(result, "load", writer.add_rows, outcome.rows)
            outcome.rows = {}
            if batch_bytes >= FLUSH_BYTES:  # load while the workers go on
                _timed(result, "load", writer.insert_batch)
        _timed(result, "load", writer.insert_batch)
        _finish(result, corpus_dir, sources, snapshots, packed, writer, started, previous.rules)
    result.records, result.dated_records = counts["records"], counts["dated_records"]
    result.card_mentions, result.linked_mentions = counts["card_mentions"], counts["linked_mentions"]
    result.statements = counts["statements"]
    return result


def _shrinkage(outcome: PageOutcome, before: dict | None, sections_before: dict | None,
               max_shrink: float) -> str | None:
    """Why a page that read cleanly looks broken against what the previous
    database holds for it: the whole page (:func:`pipeline.records.shrinkage`),
    then its sections' statements (:func:`pipeline.records.section_shrinkage`);
    or None."""
    change = shrinkage(before or {}, outcome.counts, max_shrink)
    if change is not None:
        return (f"gives {change.after} {change.label} where the previous build stored {change.before} "
                f"({change.bound(max_shrink)}: a markup change?)")
    lost = section_shrinkage(sections_before or {}, outcome.sections, max_shrink)
    if lost is not None:
        return f"gives {lost.describe(max_shrink)} against the previous build (a markup change?)"
    return None


def _check_writable(folder: Path, error: type[RulingsError]) -> None:
    """Create ``folder`` if needed and write a file in it, before any page
    is read: a build that cannot write its outputs fails at once, naming
    the folder."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise error(f"cannot write in this folder: {exc.strerror or exc}", place=str(folder)) from None


def _keep_previous(outcome: PageOutcome, db_path: Path | None, warnings: list[str], shrunk: str | None = None) -> bool:
    """Give a failed (or ``shrunk``) page's outcome the records an earlier
    build stored for it (rows, compile records, snapshot); False when there
    are none."""
    kept = _previous_page(db_path, outcome.source, warnings)
    if kept is None:
        return False
    why = f"{shrunk}; " if shrunk else ""
    accept = " (--max-shrink 1 accepts the page)" if shrunk else ""
    warnings.append(f"{outcome.source.id}: {why}kept {len(kept.records)} records of the previous build{accept}")
    outcome.counts.clear()
    outcome.rows = page_rows(kept.records, kept.snapshot.content_hash, outcome.source, outcome.counts)
    outcome.snapshot = kept.snapshot
    outcome.compile_records = pack_for_compile(kept.records)
    return True


def _timed(result: BuildResult, stage: str, work, *args):
    """``work(*args)`` run in this process, its wall and CPU seconds added to ``stage``."""
    t0, c0 = time.perf_counter(), time.process_time()
    done = work(*args)
    result.timings[stage] += time.perf_counter() - t0
    result.cpu[stage] += time.process_time() - c0
    return done


def _card_table(writer: DatabaseWriter) -> str:
    """The engines' card table (pipeline/cardengine.py) from the rows inserted so far (every page's) and
    the card texts this build reads (the rows its commit writes, computed once)."""
    from .cardengine import card_table, card_table_text
    from .cardtables import card_table_rows

    return card_table_text(card_table(writer.con, card_table_rows(card_texts_file())))


def _finish(result: BuildResult, corpus_dir: Path, sources: list[Source], snapshots: list[SnapshotInfo],
            packed: list[bytes], writer: DatabaseWriter, started: str,
            before: dict[tuple[str, str], tuple[str, tuple[str, ...]]]) -> None:
    """Compile, generate and load: the engine is staged, the database
    committed and renamed, then the engine renamed. ``before``: the rules
    of the database being replaced, to review against (:func:`review`)."""
    t0, c0 = time.perf_counter(), time.process_time()
    records = unpack_for_compile(packed)  # the workers are gone: the records may be objects again
    packed.clear()
    cited, frozen = cite_once(records, sources)
    rules = _guarded(CompileError, None, "rules table", compile_rules, cited, frozen, other_rulesets(sources))
    procedural = _guarded(CompileError, None, "procedural rules", compile_procedural, cited)
    result.rule_changes = review(before, rules)
    t1, c1 = time.perf_counter(), time.process_time()
    result.timings["compile"] += t1 - t0
    result.cpu["compile"] += c1 - c0

    tables = _guarded(GenerateError, None, "engine tables", engine_tables, rules, procedural, cited,
                      {s.id: (s.url, s.licence) for s in sources}, writer.texts)
    del cited
    records.clear()  # the engine tables hold what they cite, the commit needs none
    result.rules_hash = rules_hash(tables)
    run = {"run_id": 1, "kind": "build", "started_at": started, "ended_at": utc_now(), "tried": len(sources),
           "unchanged": 0, "changed": len(snapshots), "failed": len(sources) - len(snapshots),
           "details": "; ".join(result.errors)}
    info = {"rules_hash": result.rules_hash, "corpus": str(Path(corpus_dir).resolve()), "built_at": utc_now()}
    # The engine is written in full before the database is replaced and renamed
    # right after it, so a killed build leaves both files as they were (but for
    # the instant between the two renames, when the database is the new one).
    cards = _guarded(GenerateError, None, "card table", _card_table, writer)
    staged = stage_engines(result.engine_path, render_all(tables, result.rules_hash, cards))
    t2, c2 = time.perf_counter(), time.process_time()
    result.timings["generate"] += t2 - t1
    result.cpu["generate"] += c2 - c1
    try:  # the engine is renamed right after the database, a stop signal waiting for both
        result.warnings.extend(writer.commit(BuildData(sources, snapshots, [], rules, procedural, run, info,
                                                       result.rule_changes),
                                             then=lambda: commit_engines(staged, ENGINE_AFTER_DATABASE)))
    except BaseException:
        discard_engines(staged)
        raise
    result.timings["load"] += time.perf_counter() - t2
    result.cpu["load"] += time.process_time() - c2
    result.rules_by_verdict = dict(Counter(r.verdict for r in rules))
    result.procedural_rules = len(procedural)
