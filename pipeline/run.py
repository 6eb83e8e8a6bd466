"""The build: normalize -> extract -> compile -> load -> generate, page by page.

One broken page never stops a build: its error (stage, source id, place) is
collected, the page keeps the records the previous database holds for it, and
the other pages go on. The database and the engine module are each written to
a temporary file and renamed, the engine right after the database, so an
interrupted build leaves the previous ones intact.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .compile import compile_procedural, compile_rules, info_kinds
from .corpus import BUNDLED_CORPUS, DEFAULT_MAX_PAGE_BYTES, Source, content_hash, load_manifest, read_snapshot
from .errors import ExtractError, NormalizeError, RulingsError
from .extract import Record, extract
from .generate import commit_engine, discard_engine, engine_tables, render, rules_hash, stage_engine
from .load import BuildData, SnapshotInfo, now_iso, read_records, read_snapshot_infos, write_database
from .normalize import normalize
from .paths import DEFAULT_DB, DEFAULT_ENGINE, PROJECT_ROOT  # noqa: F401 (re-exported)

STAGES = ("normalize", "extract", "compile", "load", "generate")


@dataclass
class PageResult:
    source: Source
    records: list[Record]
    snapshot: SnapshotInfo
    warnings: list[str]
    kept_from_previous: bool = False


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
    timings: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        return {
            "database": str(self.db_path), "engine": str(self.engine_path), "sources": self.sources,
            "pages_built": self.pages_ok, "records": self.records, "dated_records": self.dated_records,
            "card_mentions": self.card_mentions, "card_mentions_linked": self.linked_mentions,
            "statements": self.statements, "rules_by_verdict": dict(sorted(self.rules_by_verdict.items())),
            "procedural_rules": self.procedural_rules, "rules_hash": self.rules_hash,
            "errors": self.errors, "warnings": self.warnings,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
        }


def process_page(source: Source, timings: dict[str, float], max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
                 data: bytes | None = None) -> PageResult:
    """One page through normalize and extract. Raises RulingsError for a bad page."""
    t0 = time.perf_counter()
    data = read_snapshot(source, max_page_bytes) if data is None else data
    page = _guarded(NormalizeError, source, normalize, data, source)
    t1 = time.perf_counter()
    records = _guarded(ExtractError, source, extract, page, info_kinds())
    t2 = time.perf_counter()
    timings["normalize"] += t1 - t0
    timings["extract"] += t2 - t1
    return PageResult(source, records, SnapshotInfo(source.id, content_hash(data), len(data)), page.warnings)


def _guarded(error: type[RulingsError], source: Source, stage, *args):
    """Run one stage on one page. An exception no check foresaw (a bug, a
    page unlike any seen) becomes the stage's error naming the source, so one
    page never stops the build."""
    try:
        return stage(*args)
    except RulingsError:
        raise
    except Exception as exc:
        raise error(f"unexpected {type(exc).__name__}: {exc}", source_id=source.id, place=source.path) from exc


def _previous_page(db_path: Path, source: Source) -> PageResult | None:
    """The records and snapshot an earlier build stored for ``source``, if any:
    a page that fails now keeps what earlier runs stored."""
    if not db_path.is_file():
        return None
    try:
        snapshot = read_snapshot_infos(db_path).get(source.id)
        records = read_records(db_path, [source.id])
    except Exception:  # an unreadable old database keeps nothing, it never stops the build
        return None
    if snapshot is None or not records:
        return None
    return PageResult(source, records, snapshot, [], kept_from_previous=True)


def build(corpus_dir: Path = BUNDLED_CORPUS, db_path: Path = DEFAULT_DB, engine_out: Path = DEFAULT_ENGINE,
          progress: Callable[[str], None] | None = None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES) -> BuildResult:
    """Build the database and the engine from every page of ``corpus_dir``.

    ``progress`` is called with each source id as its page is processed.
    Raises CorpusError when the manifest itself is unusable; page errors are
    collected in ``BuildResult.errors``.
    """
    result = BuildResult(Path(db_path), Path(engine_out))
    started = now_iso()
    sources = load_manifest(corpus_dir)
    result.sources = len(sources)
    pages: list[PageResult] = []
    for source in sources:
        if progress:
            progress(source.id)
        try:
            page = process_page(source, result.timings, max_page_bytes)
        except RulingsError as exc:
            result.errors.append(str(exc))
            kept = _previous_page(Path(db_path), source)
            if kept is not None:
                result.warnings.append(f"{source.id}: kept {len(kept.records)} records of the previous build")
                pages.append(kept)
            continue
        pages.append(page)
        result.warnings.extend(page.warnings)
        result.input_bytes += page.snapshot.size
    records = [r for p in pages for r in p.records]
    result.pages_ok = len(pages) - sum(1 for p in pages if p.kept_from_previous)

    t0 = time.perf_counter()
    rules = compile_rules(records)
    procedural = compile_procedural(records)
    t1 = time.perf_counter()
    result.timings["compile"] += t1 - t0

    tables = engine_tables(rules, procedural, records, {s.id: (s.url, s.licence) for s in sources})
    result.rules_hash = rules_hash(tables)
    run = {"run_id": 1, "kind": "build", "started_at": started, "ended_at": now_iso(), "tried": len(sources),
           "unchanged": 0, "changed": len(pages), "failed": len(sources) - len(pages),
           "details": "; ".join(result.errors)}
    info = {"rules_hash": result.rules_hash, "corpus": str(Path(corpus_dir).resolve()), "built_at": now_iso()}
    # The engine is written in full before the database is replaced and renamed
    # right after it, so a killed build leaves both files as they were (but for
    # the instant between the two renames, when the database is the new one).
    staged = stage_engine(Path(engine_out), render(tables))
    t2 = time.perf_counter()
    result.timings["generate"] += t2 - t1
    try:
        counts = write_database(Path(db_path), BuildData(sources, [p.snapshot for p in pages], records, rules,
                                                         procedural, run, info))
    except BaseException:
        discard_engine(staged)
        raise
    commit_engine(staged, Path(engine_out))
    result.linked_mentions = counts["card_mentions_linked"]
    result.timings["load"] += time.perf_counter() - t2

    result.records = len(records)
    result.dated_records = sum(1 for r in records if any(d.valid for d in r.dates))
    result.card_mentions = sum(len(r.cards) for r in records)
    result.statements = sum(len(r.statements) for r in records)
    result.rules_by_verdict = dict(Counter(r.verdict for r in rules))
    result.procedural_rules = len(procedural)
    return result
