"""The build: normalize -> extract per page, then compile -> generate; load writes each step's output.

Takes a corpus folder (``manifest.tsv`` and its pages); gives a new database
and engine files in place of the old ones, and a :class:`BuildResult`
(counts, timings, page errors and warnings).

Pages are independent until compile, so a corpus of several pages is spread
over worker processes (one per core by default, ``fork`` where the platform
has it, results taken in manifest order so the output does not depend on
timing). A worker normalizes and extracts its page and hands back the
page's record rows (one JSON array per table, which the load appends to a
batch's files and reads in bulk) and only the records compile needs (those
stating something, pickled; they wait in a temporary file until compile), so
memory while pages are read does not grow with the corpus. Pages read while the build waits for an earlier, slower one wait in
memory with their rows (about three times their bytes), so the workers are
handed at most :data:`~pipeline.workers.AHEAD_PER_WORKER` pages each that the build has not taken.

One broken page never stops a build: its error (stage, source id, place) is
collected, the page keeps the records the previous database holds for it, and
the other pages go on. So does a page over the bounds of
:class:`~pipeline.limits.PageLimits` (nesting, attributes, records, checked
while it is read; its time, by killing the worker process reading it: pages
are read in worker processes, :mod:`pipeline.workers`, whenever a page
timeout or a deadline is set). A page that shrinks keeps its stored records
too, with a warning (:func:`pipeline.finish.shrunk`: the rule a refresh
follows). The build ends as a refresh does (:func:`pipeline.finish.finish`):
the database and the engine files are each written to a temporary file and
renamed, the engine right after the database, so an interrupted build
leaves the previous ones intact.
"""

from __future__ import annotations

import gc
import pickle
import tempfile
import time
from collections import Counter
from contextlib import closing, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .cardtext import card_texts_file, texts_file, use_card_texts
from .compile import for_compile
from .corpus import BUNDLED_CORPUS, DEFAULT_MAX_PAGE_BYTES, Source, content_hash, load_manifest, read_snapshot
from .database import UnusableDatabase, one_line
from .errors import CorpusError, ExtractError, GenerateError, LoadError, NormalizeError, RulingsError, stage_errors
from .extract import extract, layout_warnings
from .finish import compile_all, finish, kept_warning, shrunk, timer
from .limits import DEFAULT_LIMITS, PageLimits
from .load import RECORD_TABLES, BuildData, DatabaseWriter, record_rows
from .locks import clean_leftovers, database_lock, output_paths
from .normalize import normalize
from .paths import DEFAULT_DB, DEFAULT_ENGINE
from .records import Record, page_counts, section_statements, utc_now
from .review import Reviewed, RuleChange
from .rowfiles import KEPT, json_array
from .schema import check_all, info_kinds
from .stored import SnapshotInfo, previous_build, read_records, read_snapshot_infos
from .workers import default_workers, read_pages

STAGES = ("normalize", "extract", "compile", "load", "generate")
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
    with stage_errors(NormalizeError, source.id, source.path):
        page = normalize(data, source, None, limits)
    t1, c1 = time.perf_counter(), time.process_time()
    with stage_errors(ExtractError, source.id, source.path):
        records = extract(page, info_kinds())
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
    files (:class:`~pipeline.rowfiles.RowBatch`), not written to files of
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
    pickled: the build keeps these bytes in a file (:class:`SpilledRecords`)
    while the other pages are read, and makes them objects again only once
    the workers are gone."""
    return pickle.dumps(for_compile(records), protocol=pickle.HIGHEST_PROTOCOL)


def unpack_for_compile(packed: Iterable[bytes]) -> list[Record]:
    """The records of :func:`pack_for_compile` for every page, in page order,
    their values shared (:func:`_shared`)."""
    known: dict = {}
    return [_shared(record, known) for blob in packed for record in pickle.loads(blob)]


# The fields of a slim record (pipeline.records.compile_view) that compile never reads: always empty.
_UNREAD = ("faq", "cards", "links", "sentences", "struck", "cells")


def _shared(record: Record, known: dict) -> Record:
    """``record`` (a slim copy, read back) holding one object for each value
    equal across records (``known``: value -> that object): its words
    (role, status, source, section), its statements and dates, as tuples,
    and one empty tuple for each list compile never reads (:data:`_UNREAD`).
    Each page is unpickled on its own, so equal values of different pages
    were different objects: 2.2 kB a record, about 150 MB at 8,000 pages,
    where shared they take about a quarter of it (0.6 kB a record). Compile and the engine tables only
    read these records (tuples: a change would raise)."""
    share = known.setdefault
    record.source_id, record.role = share(record.source_id, record.source_id), share(record.role, record.role)
    record.channel, record.status = share(record.channel, record.channel), share(record.status, record.status)
    record.section, record.norm_section = share(record.section, record.section), share(record.norm_section,
                                                                                       record.norm_section)
    statements = tuple(share(s, s) for s in record.statements)
    dates = tuple(share(d, d) for d in record.dates)
    procedural = tuple(share(p, p) for p in record.procedural)
    record.statements, record.dates = share(statements, statements), share(dates, dates)
    record.procedural = share(procedural, procedural)
    for name in _UNREAD:
        setattr(record, name, ())
    return record


class SpilledRecords:
    """Every page's :func:`pack_for_compile` bytes, in page order, in an
    unnamed temporary file in ``folder`` (none is left behind, even by a
    killed build) rather than in the build's memory while the workers read
    pages: they grow with the corpus (26 MB at 8,000 pages). Iterate to
    read them back; LoadError when the file cannot be written (a full disk)."""

    def __init__(self, folder: Path):
        self._folder, self._file = folder, tempfile.TemporaryFile(dir=folder)
        self._sizes: list[int] = []

    def append(self, packed: bytes) -> None:
        try:
            self._file.write(packed)
        except OSError as exc:
            raise LoadError(f"cannot write the records compile needs: {exc.strerror or exc}; {KEPT}",
                            place=str(self._folder)) from exc
        self._sizes.append(len(packed))

    def __iter__(self) -> Iterator[bytes]:
        self._file.seek(0)
        for size in self._sizes:
            yield self._file.read(size)

    def close(self) -> None:
        self._file.close()


def _outcomes(sources: list[Source], max_page_bytes: int, workers: int, limits: PageLimits = DEFAULT_LIMITS,
              deadline: float | None = None) -> Iterator[PageOutcome]:
    """Page outcomes in manifest order, from ``workers`` processes (:func:`read_pages`)."""
    jobs = [(s, max_page_bytes, limits) for s in sources]
    yield from read_pages(_page_job, jobs, workers, limits.timeout, deadline, _failed_outcome)


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
    records, with a warning (:func:`pipeline.finish.shrunk`, the rule of a
    refresh too); 1.0 accepts any page. ``limits``: what one page
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
    clock = timer(result.timings, result.cpu)
    with DatabaseWriter(db_path) as writer, closing(SpilledRecords(db_path.parent)) as packed:
        snapshots, counts = [], Counter()
        for outcome in _outcomes(sources, max_page_bytes, result.workers, limits, deadline):
            source = outcome.source
            if progress:
                progress(source.id)
            for stage, seconds in outcome.timings.items():
                result.timings[stage] += seconds
                result.cpu[stage] += outcome.cpu[stage]
            why = None if outcome.error else shrunk(previous.counts.get(source.id), outcome.counts,
                                                    previous.sections.get(source.id), outcome.sections, max_shrink)
            kept = False
            if outcome.error or why:
                if outcome.error:
                    result.errors.append(outcome.error)
                kept = _keep_previous(outcome, previous.path, result.warnings, why)
                if not kept and outcome.error:
                    continue
            if not kept:
                result.pages_ok += 1
                result.input_bytes += outcome.snapshot.size
                result.warnings.extend(outcome.warnings)
            snapshots.append(outcome.snapshot)
            packed.append(outcome.compile_records)
            counts.update(outcome.counts)
            with clock("load"):
                batch_bytes = writer.add_rows(outcome.rows)
                outcome.rows = {}
                if batch_bytes >= FLUSH_BYTES:  # load while the workers go on
                    writer.insert_batch()
        with clock("load"):
            writer.insert_batch()
        _finish(result, corpus_dir, sources, snapshots, packed, writer, started, previous.rules)
    result.records, result.dated_records = counts["records"], counts["dated_records"]
    result.card_mentions, result.linked_mentions = counts["card_mentions"], counts["linked_mentions"]
    result.statements = counts["statements"]
    return result


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
    """Give a failed (or ``shrunk``: :func:`pipeline.finish.shrunk`) page's
    outcome the records an earlier build stored for it (rows, compile
    records, snapshot); False when there are none."""
    kept = _previous_page(db_path, outcome.source, warnings)
    if kept is None:
        return False
    warnings.append(kept_warning(outcome.source.id, len(kept.records), shrunk))
    outcome.counts.clear()
    outcome.rows = page_rows(kept.records, kept.snapshot.content_hash, outcome.source, outcome.counts)
    outcome.snapshot = kept.snapshot
    outcome.compile_records = pack_for_compile(kept.records)
    return True


def _card_table(writer: DatabaseWriter) -> str:
    """The engines' card table (pipeline/cardengine.py) from the rows inserted so far (every page's) and
    the card texts this build reads (the rows its commit writes, computed once)."""
    from .cardengine import card_table, card_table_text
    from .cardtables import card_table_rows

    return card_table_text(card_table(writer.con, card_table_rows(card_texts_file())))


def _finish(result: BuildResult, corpus_dir: Path, sources: list[Source], snapshots: list[SnapshotInfo],
            packed: Iterable[bytes], writer: DatabaseWriter, started: str,
            before: dict[tuple[str, str], Reviewed]) -> None:
    """The build's finish (:mod:`pipeline.finish`: compile -> generate ->
    commit): the engine is staged, the database committed and renamed, then
    the engine renamed. ``before``: the rules of the database being
    replaced, to review against."""
    clock = timer(result.timings, result.cpu)
    with clock("compile"):
        records = unpack_for_compile(packed)  # the workers are gone: the records may be objects again
    compiled = compile_all(records, sources, before, {s.id: (s.url, s.licence) for s in sources}, writer.texts, clock)
    result.rule_changes, result.rules_hash = compiled.changes, compiled.rules_hash
    run = {"run_id": 1, "kind": "build", "started_at": started, "ended_at": utc_now(), "tried": len(sources),
           "unchanged": 0, "changed": len(snapshots), "failed": len(sources) - len(snapshots),
           "details": "; ".join(result.errors)}
    info = {"rules_hash": result.rules_hash, "corpus": str(Path(corpus_dir).resolve()), "built_at": utc_now()}
    data = BuildData(sources, snapshots, [], compiled.rules, compiled.procedural, run, info, result.rule_changes)
    result.warnings.extend(finish(compiled, result.engine_path, lambda: _card_table(writer),
                                  lambda then: writer.commit(data, then=then), kept_after=ENGINE_AFTER_DATABASE,
                                  clock=clock))
    result.rules_by_verdict = dict(Counter(r.verdict for r in compiled.rules))
    result.procedural_rules = len(compiled.procedural)
