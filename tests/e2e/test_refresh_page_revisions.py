"""Twelve successive revisions of the live face-down page (2025-04 to
2026-08, ``cases/revisions/``), served in order from a local HTTP server to
``rulings refresh``: after each run the stored rulings are the page's, and
the change log lists exactly the rulings that changed, computed here from the
pages alone (:func:`corpus_kit.ruling_lines`)."""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from corpus_kit import ruling_lines
from pipeline import queries
from pipeline.fetch import FetchConfig
from pipeline.refresh import refresh
from pipeline.run import build
from conftest import CASES

REVISIONS = sorted((CASES / "revisions" / "c03-face-down-temp-banish").glob("*.html"))
SOURCE = "ocg-rule-c03-face-down-temp-banish"
PATH = "/c03/face-down.html"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = self.server.page if self.path == PATH else b"not found"
        self.send_response(200 if self.path == PATH else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.page = b""
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _stored(db: Path) -> Counter:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return Counter(t for (t,) in con.execute("SELECT text FROM records WHERE source_id = ? AND retired_run IS NULL",
                                                 [SOURCE]).fetchall())
    finally:
        con.close()


def _changes(db: Path, run_id: int) -> dict[str, Counter]:
    con = queries.connect(db)
    try:
        _, rows = queries.list_changes(con, run_id - 1)
    finally:
        con.close()
    out = {"added": Counter(), "changed": Counter(), "retired": Counter()}
    for row in rows:
        assert row["run_id"] == run_id
        out[row["change"]][row["text"]] += 1
    return out


@pytest.mark.slow  # twelve refreshes one after the other: make test-slow, CI
def test_a_refresh_per_revision_records_exactly_the_rulings_that_changed(server, tmp_path):
    assert len(REVISIONS) == 12
    corpus = tmp_path / "corpus"
    (corpus / "pages").mkdir(parents=True)
    (corpus / "pages" / "face-down.html").write_bytes(REVISIONS[0].read_bytes())
    (corpus / "manifest.tsv").write_text(
        "id\turl\tlanguage\tscript\tregion\tformat\tlicence\tpath\tfetch\tnotes\n"
        f"{SOURCE}\thttp://127.0.0.1:{server.server_address[1]}{PATH}\tzh\tHans\tCN\thtml\tCC BY-SA 4.0\t"
        "pages/face-down.html\tyes\trevisions of the face-down page\n", encoding="utf-8")
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(corpus, db, engine).errors == []
    before = Counter(ruling_lines(REVISIONS[0].read_bytes()))
    assert _stored(db) == before and sum(before.values()) > 240
    config = FetchConfig(rate_limit=0, timeout=5, retries=0, respect_robots=False)
    seen = {"added": 0, "retired": 0, "changed": 0}
    for revision in REVISIONS[1:]:
        server.page = revision.read_bytes()
        result = refresh(corpus, db, engine, config=config)
        assert [o.outcome for o in result.outcomes] == ["changed"], revision.name
        now = Counter(ruling_lines(server.page))
        assert _stored(db) == now, revision.name
        changes = _changes(db, result.run_id)
        # A ruling that moved keeps its text: compare what the log adds and retires, net.
        assert changes["added"] - changes["retired"] == now - before, revision.name
        assert changes["retired"] - changes["added"] == before - now, revision.name
        if now == before:  # the same rulings: a date link or card link was edited
            assert changes["changed"], revision.name
        for change in seen:
            seen[change] += sum(changes[change].values())
        before = now
    assert seen["added"] >= 15 and seen["retired"] >= 8 and seen["changed"] >= 1
