"""Benchmark: a refresh that finds nothing changed against a full build.

Copies a corpus (default: the bundled one) to a temporary folder, serves it
from a local HTTP server on 127.0.0.1 (standard library: Last-Modified and
304 on If-Modified-Since), points every manifest URL at it, then times, as
the user would run them (a fresh ``python -m pipeline.cli`` process each):

* ``rulings build`` of the corpus;
* a first ``rulings refresh`` (every page fetched, hashes equal to the build's);
* ``rulings refresh`` with nothing changed (304s), ``--repeat`` times.

and the same two jobs in one warm process (``pipeline.run.build`` against
``pipeline.refresh.refresh``), which leaves interpreter start-up and imports
out. Prints the medians and the refresh/build fraction (issue 6's goal:
under 5%). ``--rate-limit`` defaults to 0 here: the politeness delay of a
real run (1 request per second per host) is waiting, not work, and is
printed separately.

Usage: python scripts/bench_refresh.py [--corpus DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.corpus import BUNDLED_CORPUS, load_manifest  # noqa: E402


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def serve(directory: Path) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def local_corpus(src: Path, dest: Path, base_url: str) -> Path:
    """Copy ``src`` to ``dest`` with every manifest URL on the local server."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("snapshots"))
    manifest = dest / "manifest.tsv"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    rows = [lines[0]]
    for line in lines[1:]:
        cols = line.split("\t")
        cols[1] = f"{base_url}/{cols[7]}"
        rows.append("\t".join(cols))
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return dest


def timed_cli(*args: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", *args], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"rulings {args[0]} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=BUNDLED_CORPUS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rate-limit", default="0", help="passed to rulings refresh (default 0: no politeness delay)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp:
        tmp = Path(tmp)
        server, url = serve(tmp / "corpus")
        corpus = local_corpus(args.corpus, tmp / "corpus", url)
        fetchable = sum(1 for s in load_manifest(corpus) if s.fetch)
        db, engine = tmp / "rulings.duckdb", tmp / "ocg_rules.py"
        common = ["--corpus", str(corpus), "--db", str(db), "--engine-out", str(engine)]
        refresh_args = ["refresh", *common, "--rate-limit", args.rate_limit]

        builds = [timed_cli("build", *common) for _ in range(args.repeat)]
        first = timed_cli(*refresh_args)
        refreshes = [timed_cli(*refresh_args) for _ in range(args.repeat)]

        from pipeline.fetch import FetchConfig
        from pipeline.refresh import refresh
        from pipeline.run import build

        warm_builds, warm_refreshes = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            build(corpus, db, engine)
            warm_builds.append(time.perf_counter() - t0)
        refresh(corpus, db, engine, config=FetchConfig(rate_limit=0))  # the first one after a build
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = refresh(corpus, db, engine, config=FetchConfig(rate_limit=0))
            warm_refreshes.append(time.perf_counter() - t0)
        assert result.reprocessed == [] and result.count("unchanged") == fetchable, result.summary()
        server.shutdown()

    b, r = statistics.median(builds), statistics.median(refreshes)
    wb, wr = statistics.median(warm_builds), statistics.median(warm_refreshes)
    print(f"corpus                      {args.corpus} ({fetchable} fetchable sources, local server {url})")
    print(f"rulings build               {b:7.3f} s   (median of {args.repeat} processes)")
    print(f"rulings refresh, first      {first:7.3f} s   (every page fetched; hashes equal to the build's)")
    print(f"rulings refresh, unchanged  {r:7.3f} s   (median of {args.repeat}; 304s)  = {r / b:6.1%} of a build")
    print(f"in one process: build       {wb:7.3f} s, refresh unchanged {wr:.3f} s = {wr / wb:6.1%} of a build")
    print(f"politeness not counted      a real run waits >= {fetchable} s more "
          f"at the default --rate-limit 1 ({fetchable} pages + robots.txt on one host)")


if __name__ == "__main__":
    main()
