"""The worker processes that read pages, for a build and a refresh.

Takes a function of one page's job (a tuple, its source first: the build's
:func:`pipeline.run._page_job`, the refresh's :func:`pipeline.refresh._refresh_job`)
and the jobs; gives their outcomes in the jobs' order (:func:`read_pages`),
whatever order the workers finish in, so the output does not depend on
timing. One process per usable core (:func:`default_workers`), ``fork``
where the platform has it: what every page needs (spaCy's pipelines, the
card index, the card texts) is loaded before the workers start
(:func:`_warm_up`) and shared. A page over its time limit, the run's
deadline, Ctrl-C or SIGTERM end the workers at once (:class:`_Workers`);
a worker that dies raises LoadError.
"""

from __future__ import annotations

import gc
import importlib
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Callable, Iterator

from .cards import CardIndex, card_index, card_index_built, use_card_index
from .cardtables import packed_rows, use_card_table_rows
from .cardtext import card_texts, card_texts_file
from .errors import LoadError, NormalizeError
from .effectrulings import load_terms as load_effect_terms
from .match import pipeline_for
from .schema import info_kinds

# Pages handed to the workers and not yet taken by the build, per worker: a page read out
# of turn waits in the build process's memory with its rows (about three times its bytes).
AHEAD_PER_WORKER = 32


def default_workers(pages: int) -> int:
    """One worker per usable core, none (the build's own process) below 4 pages."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 1 if pages < 4 else max(1, min(cores, pages))


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
    # What the workers share with this process stays shared: a full collection here would write to
    # every object's header (spaCy's, the card index's) and copy their pages, 25-45 MB at a 2,000-page build.
    gc.freeze()
    try:
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
    finally:
        gc.unfreeze()  # the workers are gone: what was frozen may be collected again (a later build, tests)


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
    """The outcomes of ``fn`` (one page's job) for ``jobs``, in
    their order, with at most ``ahead`` (at least 1) jobs handed out whose
    outcome the build has not taken: the one it waits for and those after
    it. ``pool.map`` hands out every job at once: behind a slow page (a
    20 MB page takes seconds), every page read meanwhile would wait in
    memory with its rows. 64 for two workers cost no measurable time
    (1,000-page builds, two of each in turns). ``timeout``, ``deadline``,
    ``failed``: see :func:`read_pages` (``pool`` is then a :class:`_Workers`)."""
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


# The modules the per-page work imports where it first needs them (the page readers by format, the
# statement readers by language and the card_text readers), so that a command reading no such page never
# loads them: BeautifulSoup with the HTML reader alone is 0.6 G instructions, as much as reading 0.4 MB of pages.
PAGE_MODULES = ("pipeline.htmlpage", "pipeline.textpages", "pipeline.pdftext", "pipeline.statements_en",
                "pipeline.cardrulings", "pipeline.carddenials")


def load_page_work() -> None:
    """Load what the work on any page needs, once: spaCy's pipelines, the
    information kinds and :data:`PAGE_MODULES` (before the workers fork, no
    worker imports them on its first page; ``python -m bench.instructions``
    loads the same before it counts)."""
    pipeline_for("zh"), pipeline_for("en"), info_kinds()
    for name in PAGE_MODULES:
        importlib.import_module(name)
    load_effect_terms()  # the rows of a page read its rulings on card effects (pipeline.load.effect_ruling_rows)


def _warm_up(context: multiprocessing.context.BaseContext) -> None:
    """Load what every page needs before the workers fork, so that they share
    it: spaCy's pipelines and the page readers (:func:`load_page_work`) here
    while a helper process builds the card index (about a second each, where
    one after the other left a core idle; the
    index comes back pickled in 0.1 s). A helper that dies leaves the index
    to be built here."""
    card_texts()  # the card texts the workers read (pipeline.cardrulings), shared like the rest
    if card_index_built():  # an earlier build in this process
        load_page_work()
        return
    # A second helper reads every card's effects for the card tables (a second of CPU the commit then saves);
    # they come back packed (pipeline.cardtables.packed_rows): the workers never read them.
    with ProcessPoolExecutor(2, mp_context=context, initializer=_worker_init, initargs=(os.getpid(),)) as helper:
        index = helper.submit(CardIndex)
        card_rows = helper.submit(packed_rows, card_texts_file())
        load_page_work()
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
    _bound_free_memory()
    gc.freeze()  # what the worker inherited (spaCy, the card index) is never garbage: keep it out of collections

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


# glibc's malloc options (malloc.h): M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _bound_free_memory(trim: int = 4 << 20, mmap: int = 1 << 20) -> None:
    """Fixed malloc thresholds in a worker (glibc; elsewhere nothing): by
    default glibc raises them to the largest block freed (up to 32 MB and
    64 MB), so after one large page a worker keeps tens of MB of freed heap
    for good. With these, 8-10 MB less per worker at the same pages (2,000-page
    corpus), for about 140 more page faults a page (under 0.1 % of its CPU)."""
    import ctypes  # here: only worker processes need it

    try:
        mallopt = ctypes.CDLL(None).mallopt  # this process's own symbols: the C library's
    except (OSError, AttributeError):  # no mallopt (macOS)
        return
    mallopt(_M_TRIM_THRESHOLD, trim)
    mallopt(_M_MMAP_THRESHOLD, mmap)
