"""One build or refresh in a fresh process:
``python -m bench.child build|refresh CORPUS DB ENGINE [WORKERS]``.

Prints one JSON object: the build's (or refresh's) summary, ``input_bytes``,
``wall_s`` (the ``build()`` or ``refresh()`` call alone, imports excluded)
``cpu_total_s`` (user + system CPU of this process and its reaped workers,
the imports excepted), ``cpu_s`` per stage (CPU of the process that did the
work) and ``peak_rss_mb``, the build's peak memory: the larger of this process's
own peak RSS (exact) and the peak of the proportional set size (PSS) of this
process plus its worker processes, sampled every 0.1 s (Linux ``/proc``; a
sum of RSS would count the pages forked workers share with this process once
per process). Elsewhere: this process's peak plus the largest worker's peak
times the number of workers, an upper bound. With ``BENCH_MEMORY_TRACE=FILE``
in the environment, every sample goes to FILE (:class:`TreeSampler`): which
phase peaks (pages read: workers' columns; the finish: none).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from pathlib import Path
from typing import TextIO


def _max_rss_mb(who: int) -> float:
    rss = resource.getrusage(who).ru_maxrss
    return rss / 1024 / 1024 if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB elsewhere


def _pss_mb(pid: int | str) -> float:
    """Proportional set size of a process (Linux ``smaps_rollup``): pages
    shared with other processes, such as what forked workers share with the
    build process, count once across them. 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(parent: int | None = None) -> list[int]:
    """Pids of the children of ``parent`` (default: this process), a scan of
    ``/proc/*/stat`` (Linux)."""
    parent = os.getpid() if parent is None else parent
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent:  # state, ppid, ...
            pids.append(int(pid))
    return pids


class TreeSampler(threading.Thread):
    """Samples the memory (PSS) of this process plus its live children;
    with ``trace``, writes each sample to it as a line: seconds since the
    start, the sum, this process's PSS, then each child's (MB, tab-separated;
    the workers' columns show when pages are read, the finish has none)."""

    def __init__(self, interval: float = 0.1, trace: TextIO | None = None):
        super().__init__(daemon=True)
        self.interval, self.peak, self.stopped, self.trace = interval, 0.0, threading.Event(), trace

    def run(self) -> None:
        started = time.perf_counter()
        while not self.stopped.wait(self.interval):
            own, kids = _pss_mb("self"), [_pss_mb(pid) for pid in children()]
            total = own + sum(kids)
            self.peak = max(self.peak, total)
            if self.trace is not None:
                cells = (time.perf_counter() - started, total, own, *kids)
                self.trace.write("\t".join(f"{x:.1f}" for x in cells) + "\n")


def _refresh(corpus: Path, db: Path, engine: Path) -> dict:
    from pipeline.fetch import FetchConfig
    from pipeline.refresh import refresh

    started = time.perf_counter()
    result = refresh(corpus, db, engine, config=FetchConfig(rate_limit=0))
    wall = time.perf_counter() - started
    return {"wall_s": wall, "reprocessed": len(result.reprocessed), "unchanged": result.count("unchanged"),
            "failed": result.count("failed")}


def main(argv: list[str]) -> None:
    mode, corpus, db, engine = argv[0], *map(Path, argv[1:4])
    if mode == "refresh":
        json.dump(_refresh(corpus, db, engine), sys.stdout)
        return
    from pipeline.run import build

    # CPU of the imports, taken off the total (the build's own CPU is what scales)
    import_cpu = sum(getattr(resource.getrusage(resource.RUSAGE_SELF), f) for f in ("ru_utime", "ru_stime"))

    workers = int(argv[4]) if len(argv) > 4 else None
    trace_path = os.environ.get("BENCH_MEMORY_TRACE")  # a file for every memory sample (TreeSampler)
    trace = open(trace_path, "w", encoding="ascii", buffering=1) if trace_path else None
    sampler = TreeSampler(trace=trace)
    if Path("/proc/self/smaps_rollup").is_file():
        sampler.start()
    started = time.perf_counter()
    result = build(corpus, db, engine, workers=workers)
    wall = time.perf_counter() - started
    sampler.stopped.set()
    if trace is not None:
        sampler.join()
        trace.close()
    own = _max_rss_mb(resource.RUSAGE_SELF)
    if sampler.ident is not None:
        peak, how = max(own, sampler.peak), ("the larger of the build process's peak RSS and the PSS of it and its "
                                             "workers, sampled every 0.1 s")
    else:
        peak = own + (result.workers * _max_rss_mb(resource.RUSAGE_CHILDREN) if result.workers > 1 else 0)
        how = "build process + workers x largest worker, an upper bound"
    out = result.summary()
    cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    out.update(input_bytes=result.input_bytes, wall_s=wall, timings_s=dict(result.timings), cpu_s=dict(result.cpu),
               cpu_total_s=cpu - import_cpu, workers=result.workers, peak_rss_mb=peak, peak_rss_how=how)
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1:])
