"""Figure 4: a refresh with nothing changed, as a fraction of a full build.

The corpus is copied and served from a local HTTP server on 127.0.0.1
(standard library: ``Last-Modified`` and 304 on ``If-Modified-Since``), every
manifest URL pointing at it and every source fetchable. Then, each in a fresh
process (``bench.child``, imports left out of both timings): a full build, a
first refresh (every page fetched once, hashes equal to the build's), and
the measured refresh, which gets 304s and re-processes nothing. The
politeness delay of a real run (``--rate-limit``, 1 request per second per
host by default) is waiting, not work, and is switched off here.
"""

from __future__ import annotations

import csv
import functools
import shutil
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

from pipeline.corpus import DATA_FORMATS, MANIFEST_NAME


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def serving(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 for the duration; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def local_corpus(src: Path, dest: Path, base_url: str) -> int:
    """Copy the corpus ``src`` to ``dest`` with every source fetchable from
    ``base_url``; returns the number of sources."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("snapshots"))
    manifest = dest / MANIFEST_NAME
    with manifest.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    sources = [row for row in rows if not (row["id"] or "").lstrip().startswith("#")]  # a comment row is no source
    for row in sources:
        row["url"], row["fetch"] = f"{base_url}/{row['path']}", "yes"
        if row["format"] in DATA_FORMATS:  # the card texts come from the data set's published file, not a page: not fetched here
            row["fetch"] = "no"
    sources = [row for row in sources if row["format"] not in DATA_FORMATS]
    with manifest.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t", quoting=csv.QUOTE_NONE,
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(sources)
