"""What a build and a refresh share: the rule for a page that shrinks, and
the finish (compile -> generate -> commit).

**A page that shrinks.** A page that reads cleanly but now gives fewer than
``1 - max_shrink`` of the records, statements, dated rulings or card
mentions the database stores for it, or more than ``1 / (1 - max_shrink)``
times its records, or one of whose sections keeps fewer than
``1 - max_shrink`` of its statements (:func:`shrunk`: a markup change is
likelier than a mass withdrawal of rulings) is not taken, in a build as in a
refresh: the page keeps the records and the snapshot in force the database
stores for it, and the run warns, naming the page, the figures and
``--max-shrink 1`` (which takes the page whatever it gives). It is not an
error: a build exits 0 for it, a refresh counts the source unchanged (the new
snapshot is stored, not in force, for a look). A page the database stores
nothing for is always taken.

**The finish.** Takes the records compile needs (a build's slim copies of
every page's records, whose texts it reads back from the rows it wrote; a
refresh's stored records with the changed pages' new ones), the sources and
the rules the database held before; gives :class:`Compiled` (rules,
procedural rules, their review, the engine tables and their hash:
:func:`compile_all`), then :func:`finish` makes the engines' card table from
the run's open database transaction, stages the engine files, commits the
database and renames the engine files right after it. So in both runs a
compile fault is a CompileError, an engine that cannot be written leaves the
database as it was, and a killed run leaves both files as they were (but for
the instant between the two renames).
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterator

from .compile import ProceduralRule, Rule, cite_once, compile_procedural, compile_rules, other_rulesets
from .corpus import Source
from .errors import CompileError, GenerateError, stage_errors
from .generate import KEPT, commit_engines, discard_engines, engine_parts, engine_tables, rules_hash, stage_engines
from .memory import give_back_memory
from .records import Record, section_shrinkage, shrinkage
from .review import Reviewed, RuleChange, review

# What a build's and a refresh's warnings call the database they compare a page with.
PREVIOUS_BUILD = "the previous build"
STORED = "the database"


def shrunk(before: dict[str, int], after: dict[str, int], sections_before: dict[str, int],
           sections_after: dict[str, int], max_shrink: float, earlier: str = PREVIOUS_BUILD) -> str | None:
    """Why a page that read cleanly is not taken (see the module docstring),
    or None: the whole page first (``before`` / ``after``: the counts of
    :func:`pipeline.records.page_counts`, :func:`pipeline.records.shrinkage`),
    then its sections' statements (``sections_*``: :func:`pipeline.records.section_statements`,
    :func:`pipeline.records.section_shrinkage`). ``earlier`` names what the
    page is compared with in the words returned."""
    change = shrinkage(before or {}, after, max_shrink)
    if change is not None:
        return (f"gives {change.after} {change.label} where {earlier} stored {change.before} "
                f"({change.bound(max_shrink)}: a markup change?)")
    lost = section_shrinkage(sections_before or {}, sections_after, max_shrink)
    if lost is not None:
        return f"gives {lost.describe(max_shrink)} against {earlier} (a markup change?)"
    return None


def kept_warning(source_id: str, kept: int, why: str | None = None, earlier: str = PREVIOUS_BUILD) -> str:
    """The warning of a page that keeps ``kept`` stored records: it failed,
    or it shrank (``why``: :func:`shrunk`)."""
    reason = f"{why}; " if why else ""
    accept = " (--max-shrink 1 accepts the page)" if why else ""
    return f"{source_id}: {reason}kept {kept} records of {earlier}{accept}"


# --------------------------------------------------------------------------- the finish

@dataclass
class Compiled:
    """What compile and generate make of a run's records: the ``rules``,
    ``procedural`` rules, the ``changes`` against the rules stored before
    (:func:`pipeline.review.review`), the engine ``tables`` and their
    ``rules_hash`` (:func:`pipeline.generate.rules_hash`)."""

    rules: list[Rule]
    procedural: list[ProceduralRule]
    changes: list[RuleChange]
    tables: dict = field(default_factory=dict)
    rules_hash: str = ""


def timer(timings: dict[str, float], cpu: dict[str, float] | None = None) -> Callable[[str], ContextManager]:
    """A clock for :func:`compile_all`: ``clock(stage)`` adds the wall
    seconds of its block to ``timings[stage]`` (and the CPU seconds to
    ``cpu[stage]``)."""
    @contextmanager
    def clock(stage: str) -> Iterator[None]:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0
            if cpu is not None:
                cpu[stage] = cpu.get(stage, 0.0) + time.process_time() - c0
    return clock


def compile_all(records: list[Record], sources: list[Source], before: dict[tuple[str, str], Reviewed],
                source_info: dict[str, tuple[str, str]], texts: Callable[[list[str]], dict[str, str]] | None = None,
                clock: Callable[[str], ContextManager] = lambda stage: nullcontext()) -> Compiled:
    """Compile ``records`` (in the build's page order; emptied here once the
    engine tables hold what they cite) into rules and procedural rules,
    review them against ``before`` (the stored rules,
    :func:`pipeline.stored.previous_rules`), and make the engine tables
    (``source_info``: source id -> (URL, licence); ``texts``: where the
    cited records' texts come from when ``records`` are slim copies,
    :func:`pipeline.generate.engine_tables`). ``clock(stage)`` times the
    compile and generate steps. CompileError / GenerateError for a fault no
    check foresaw, naming the step."""
    with clock("compile"):
        cited, frozen = cite_once(records, sources)
        with stage_errors(CompileError, place="rules table"):
            rules = compile_rules(cited, frozen, other_rulesets(sources))
        with stage_errors(CompileError, place="procedural rules"):
            procedural = compile_procedural(cited)
        compiled = Compiled(rules, procedural, review(before, rules))
    with clock("generate"):
        with stage_errors(GenerateError, place="engine tables"):
            compiled.tables = engine_tables(rules, procedural, cited, source_info, texts)
        del cited
        records.clear()  # the engine tables hold what they cite, the commit needs none
        give_back_memory()
        compiled.rules_hash = rules_hash(compiled.tables)
    return compiled


def finish(compiled: Compiled, engine_path, card_table: Callable[[], str],
           commit: Callable[[Callable[[], None]], list[str]], kept: str = KEPT, kept_after: str = KEPT,
           clock: Callable[[str], ContextManager] = lambda stage: nullcontext()) -> list[str]:
    """Generate and commit: the engines' card table (``card_table()``, read
    from the run's database transaction), the engine files rendered and
    staged beside ``engine_path`` (``kept``: what an error there says
    stays), then ``commit(then)``: the run's writer commits and renames the
    database (:meth:`pipeline.load.DatabaseWriter.commit`,
    :meth:`pipeline.load.RefreshWriter.commit`) and calls ``then``, which
    renames the engine files (``kept_after``: what stays when that fails).
    Returns the commit's warnings; the staged files are removed when
    anything fails."""
    with clock("generate"):
        with stage_errors(GenerateError, place="card table"):
            cards = card_table()
        staged = stage_engines(engine_path, engine_parts(compiled.tables, compiled.rules_hash, cards), kept)
        del cards  # the commit's card tables and DuckDB's work come next: what is freed here they reuse
        give_back_memory()
    with clock("load"):
        try:  # the engine is renamed right after the database, a stop signal waiting for both
            return commit(lambda: commit_engines(staged, kept_after))
        except BaseException:
            discard_engines(staged)
            raise
