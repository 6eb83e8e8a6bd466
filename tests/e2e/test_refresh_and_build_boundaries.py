"""Boundaries of a refresh and a build (issue 32, items 6, 7 and 16).

* The corpus folder is a boundary for the snapshot store: a symlink out of
  it at any level (``snapshots/``, ``snapshots/<source>/``, a snapshot
  file) stops the run with one error naming the path, nothing written outside.
* A 304 answers a conditional request only; a 304 to an unconditional one,
  a 304 naming validators no stored snapshot has, and any status the
  fetcher does not expect fail that source, and the run is recorded.
* A build stopped by SIGTERM at any point leaves no temporary file, and a
  full disk gives one line naming the file, the previous outputs unchanged.

The HTTP server runs on 127.0.0.1 only; every URL of the test manifests points at it.
"""

from __future__ import annotations

import errno
import hashlib
import json
from types import SimpleNamespace
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from conftest import ROOT, make_corpus
from corpus_kit import db_fingerprint
from pipeline import rowfiles
from pipeline.cli import main
from pipeline.corpus import BUNDLED_CORPUS
from pipeline.errors import CorpusError
from pipeline.fetch import FetchConfig
from pipeline.generate import engine_paths
from pipeline.refresh import engine_rules_hash, refresh
from pipeline.run import build

FACE_DOWN = "ocg-rule-c03-face-down-temp-banish"
PLEDGES = "ocg-rule-c03-pledges"
SOURCES = [FACE_DOWN, PLEDGES]
PATH = {FACE_DOWN: "/face-down", PLEDGES: "/pledges"}
STORED_LM = "Sat, 01 Jun 2024 00:00:00 GMT"
ENOSPC = "No space left on device"


# --------------------------------------------------------------------------- the server

def etag_of(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


@dataclass
class Site:
    """Pages with ETag / Last-Modified (304 to a matching If-None-Match), or
    a scripted answer per path: (status, headers, body)."""

    url: str = ""
    pages: dict[str, bytes] = field(default_factory=dict)
    answers: dict[str, tuple[int, dict, bytes]] = field(default_factory=dict)
    requests: list[tuple[str, dict]] = field(default_factory=list)

    def reset(self) -> None:
        self.answers.clear(), self.requests.clear()
        for sid, path in PATH.items():
            self.pages[path] = page_bytes(sid)


def page_bytes(source_id: str) -> bytes:
    rel = next(line.split("\t")[7] for line in (BUNDLED_CORPUS / "manifest.tsv").read_text(encoding="utf-8")
               .splitlines() if line.split("\t")[0] == source_id)
    return (BUNDLED_CORPUS / rel).read_bytes()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        site: Site = self.server.site
        site.requests.append((self.path, dict(self.headers)))
        if self.path == "/robots.txt":
            return self._send(404, {}, b"")
        if self.path in site.answers:
            return self._send(*site.answers[self.path])
        body = site.pages[self.path]
        if self.headers.get("If-None-Match") == etag_of(body):
            return self._send(304, {"ETag": etag_of(body)}, b"")
        return self._send(200, {"ETag": etag_of(body), "Last-Modified": STORED_LM}, body)

    def _send(self, status: int, headers: dict, body: bytes) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if status not in (204, 304):
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status not in (204, 304):
            self.wfile.write(body)


@pytest.fixture(scope="module")
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.site = Site(url=f"http://127.0.0.1:{server.server_address[1]}")
    server.site.reset()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.site
    server.shutdown()
    server.server_close()


def site_corpus(dest: Path, site: Site) -> Path:
    """make_corpus of SOURCES, each fetchable from its path on the local server."""
    corpus = make_corpus(dest, SOURCES)
    lines = (corpus / "manifest.tsv").read_text(encoding="utf-8").splitlines()
    rows = [lines[0]]
    for line in lines[1:]:
        cols = line.split("\t")
        cols[1], cols[8] = site.url + PATH[cols[0]], "yes"
        rows.append("\t".join(cols))
    (corpus / "manifest.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return corpus


def config() -> FetchConfig:
    return FetchConfig(rate_limit=0, timeout=5.0, retries=0, backoff=0.01, sleep=lambda s: None)


@dataclass
class Env:
    corpus: Path
    db: Path
    engine: Path

    def refresh(self, **kw):
        return refresh(self.corpus, self.db, self.engine, config=config(), **kw)

    def sql(self, query: str, params=None) -> list[tuple]:
        con = duckdb.connect(str(self.db), read_only=True)
        try:
            return con.execute(query, params or []).fetchall()
        finally:
            con.close()

    def snapshots(self, source_id: str) -> list[tuple]:
        return self.sql("SELECT content_hash, in_force, etag FROM snapshots WHERE source_id = ? ORDER BY ALL",
                        [source_id])

    def cli(self, *extra: str):
        return CliRunner().invoke(main, ["refresh", "--corpus", str(self.corpus), "--db", str(self.db),
                                         "--engine-out", str(self.engine), "--rate-limit", "0", "--retries", "0",
                                         *extra])


    def state(self) -> tuple:
        """Everything a refresh could change: runs, snapshots, the database fingerprint, the engine's bytes."""
        return (self.sql("SELECT * FROM runs ORDER BY run_id"), self.sql("SELECT * FROM snapshots ORDER BY ALL"),
                db_fingerprint(self.db), self.engine.read_bytes())


def messages(out) -> list[str]:
    """The CLI's stderr lines but its progress (``  fetching ID``)."""
    return [line for line in out.stderr.splitlines() if not line.startswith("  fetching ")]


@pytest.fixture(autouse=True)
def signal_handlers():
    """The CLI sets SIGTERM and SIGINT handlers: give the test process its own back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


@pytest.fixture(scope="module")
def base(site, tmp_path_factory):
    """A corpus whose database knows neither source's validators (a build),
    and one refreshed once (snapshots with ETag and Last-Modified)."""
    site.reset()
    root = tmp_path_factory.mktemp("base")
    built = Env(site_corpus(root / "built" / "corpus", site), root / "built" / "rulings.duckdb",
                root / "built" / "ocg_rules.py")
    build(built.corpus, built.db, built.engine)
    fetched = Env(site_corpus(root / "fetched" / "corpus", site), root / "fetched" / "rulings.duckdb",
                  root / "fetched" / "ocg_rules.py")
    fetched.refresh()  # the same pages as the build's, now with an ETag and Last-Modified
    assert {sid: fetched.snapshots(sid)[0][2] for sid in SOURCES} == {
        sid: etag_of(page_bytes(sid)) for sid in SOURCES}
    return built, fetched


def copy_env(env: Env, dest: Path) -> Env:
    dest = dest.resolve()
    shutil.copytree(env.corpus, dest / "corpus", symlinks=True)
    shutil.copyfile(env.db, dest / "rulings.duckdb")
    for key, path in engine_paths(env.engine).items():  # .py, .json, .mjs, .d.mts
        shutil.copyfile(path, engine_paths(dest / "ocg_rules.py")[key])
    return Env(dest / "corpus", dest / "rulings.duckdb", dest / "ocg_rules.py")


@pytest.fixture
def built_env(base, site, tmp_path):
    """A copy of the built state: the next fetch of each source is unconditional."""
    site.reset()
    return copy_env(base[0], tmp_path)


@pytest.fixture
def fetched_env(base, site, tmp_path):
    """A copy of the refreshed state: the next fetch of each source is conditional."""
    site.reset()
    return copy_env(base[1], tmp_path)


def outcome(result, source_id: str):
    return next(o for o in result.outcomes if o.source_id == source_id)


def recorded(env: Env, run_id: int, source_id: str) -> dict:
    details = env.sql("SELECT details FROM runs WHERE run_id = ?", [run_id])[0][0]
    return {s["source_id"]: s for s in json.loads(details)["sources"]}[source_id]


# --------------------------------------------------------------------------- item 7: what a 304 answers

UNEXPECTED = {
    "304 without validators": ((304, {}, b""), "HTTP 304 Not Modified to a request that sent no If-None-Match / "
                               "If-Modified-Since (a 304 only answers a conditional request); no snapshot stored"),
    "304 with an ETag": ((304, {"ETag": '"abc"', "Last-Modified": STORED_LM}, b""),
                         "HTTP 304 Not Modified to a request that sent no If-None-Match"),
    "204": ((204, {}, b""), "HTTP 204 No Content: the fetcher expects 200 with the page (or 304 to a conditional "
            "request); no snapshot stored"),
    "206": ((206, {"Content-Range": "bytes 0-9/100"}, b"<html>part"), "HTTP 206 Partial Content: the fetcher expects "
            "200"),
    "302 without Location": ((302, {}, b""), "HTTP 302 Found without a Location header to follow"),
    "307 without Location": ((307, {}, b""), "HTTP 307 Temporary Redirect without a Location header to follow"),
}


@pytest.mark.parametrize("case", sorted(UNEXPECTED))
def test_an_unexpected_answer_to_an_unconditional_request_fails_that_source(built_env, site, case):
    answer, reason = UNEXPECTED[case]
    site.answers[PATH[FACE_DOWN]] = answer
    before = built_env.snapshots(FACE_DOWN)
    result = built_env.refresh()
    sent = dict(site.requests)[PATH[FACE_DOWN]]
    assert "If-None-Match" not in sent and "If-Modified-Since" not in sent  # the request was unconditional
    failed = outcome(result, FACE_DOWN)
    assert failed.outcome == "failed" and reason in failed.reason
    assert failed.reason.startswith(f"[fetch] {FACE_DOWN}, {site.url}{PATH[FACE_DOWN]}: HTTP ")
    assert outcome(result, PLEDGES).outcome == "unchanged"  # the run went on
    assert built_env.snapshots(FACE_DOWN) == before  # no snapshot recorded for the failed source
    assert not (built_env.corpus / "snapshots" / FACE_DOWN).exists()
    assert reason in recorded(built_env, result.run_id, FACE_DOWN)["reason"]
    assert built_env.sql("SELECT tried, changed, failed FROM runs WHERE run_id = ?", [result.run_id]) == [(2, 0, 1)]


def test_the_cli_lists_the_failed_source_and_exits_1(built_env, site):
    site.answers[PATH[FACE_DOWN]] = (304, {}, b"")
    out = built_env.cli()
    assert out.exit_code == 1, out.output
    line = next(l for l in out.stdout.splitlines() if FACE_DOWN in l)
    assert line.split()[0] == "failed" and "HTTP 304 Not Modified to a request that sent no If-None-Match" in line
    assert built_env.sql("SELECT failed FROM runs ORDER BY run_id DESC LIMIT 1") == [(1,)]


MISMATCHED = {
    "another ETag": ({"ETag": '"not-the-stored-one"'}, "HTTP 304 Not Modified with ETag '\"not-the-stored-one\"', "
                     "not the '{etag}' sent in If-None-Match: it matches no stored snapshot"),
    "a weak other ETag": ({"ETag": 'W/"0123"'}, "HTTP 304 Not Modified with ETag 'W/\"0123\"', not the"),
    "a later Last-Modified": ({"Last-Modified": "Sun, 02 Jun 2024 00:00:00 GMT"},
                              "HTTP 304 Not Modified with Last-Modified 'Sun, 02 Jun 2024 00:00:00 GMT', later than "
                              f"the '{STORED_LM}' sent in If-Modified-Since: it matches no stored snapshot"),
}


@pytest.mark.parametrize("case", sorted(MISMATCHED))
def test_a_304_naming_validators_no_stored_snapshot_has_fails_that_source(fetched_env, site, case):
    headers, reason = MISMATCHED[case]
    etag = etag_of(site.pages[PATH[FACE_DOWN]])
    site.answers[PATH[FACE_DOWN]] = (304, headers, b"")
    before = fetched_env.snapshots(FACE_DOWN)
    result = fetched_env.refresh()
    sent = dict(site.requests)[PATH[FACE_DOWN]]
    assert (sent["If-None-Match"], sent["If-Modified-Since"]) == (etag, STORED_LM)  # conditional, stored validators
    failed = outcome(result, FACE_DOWN)
    assert failed.outcome == "failed" and reason.format(etag=etag) in failed.reason
    assert f"snapshot {before[0][0][:12]} stays in force" in failed.reason
    assert outcome(result, PLEDGES).outcome == "unchanged" and outcome(result, PLEDGES).http_status == 304
    assert fetched_env.snapshots(FACE_DOWN) == before


@pytest.mark.parametrize("headers", [{}, {"ETag": "W/{etag}"}, {"Last-Modified": STORED_LM},
                                     {"Last-Modified": "Fri, 31 May 2024 00:00:00 GMT"}])
def test_a_304_that_matches_the_request_is_unchanged(fetched_env, site, headers):
    etag = etag_of(site.pages[PATH[FACE_DOWN]])
    site.answers[PATH[FACE_DOWN]] = (304, {k: v.format(etag=etag) for k, v in headers.items()}, b"")
    result = fetched_env.refresh()
    assert (outcome(result, FACE_DOWN).outcome, outcome(result, FACE_DOWN).reason) == ("unchanged",
                                                                                     "not modified (HTTP 304)")


# --------------------------------------------------------------------------- item 6: the snapshot store stays in the corpus

def _link_store(env: Env, outside: Path, layout: str) -> Path:
    """Plant a symlink of ``layout`` out of the corpus; returns the symlink's path."""
    store = env.corpus / "snapshots"
    if layout == "snapshots":
        shutil.rmtree(store, ignore_errors=True)
        link, target = store, outside
    elif layout == "source folder":
        shutil.rmtree(store / FACE_DOWN, ignore_errors=True)
        store.mkdir(exist_ok=True)
        link, target = store / FACE_DOWN, outside
    elif layout == "source folder, relative":
        shutil.rmtree(store / FACE_DOWN, ignore_errors=True)
        store.mkdir(exist_ok=True)
        link, target = store / FACE_DOWN, Path(os.path.relpath(outside, store))
    else:  # the file the next fetch would write, dangling: its target does not exist yet
        body = site_page_edited(FACE_DOWN)
        folder = store / FACE_DOWN
        folder.mkdir(parents=True, exist_ok=True)
        link, target = folder / f"{hashlib.sha256(body).hexdigest()}.html", outside / "stolen.html"
    link.symlink_to(target)
    return link


def site_page_edited(source_id: str) -> bytes:
    return page_bytes(source_id).replace("仍然是S召唤的怪兽".encode(), "不再是S召唤的怪兽".encode())


@pytest.mark.parametrize("layout", ["snapshots", "source folder", "source folder, relative", "snapshot file"])
def test_a_snapshot_store_that_leads_out_of_the_corpus_stops_the_run(fetched_env, site, tmp_path, layout):
    outside = tmp_path / "outside"
    outside.mkdir()
    link = _link_store(fetched_env, outside, layout)
    site.pages[PATH[FACE_DOWN]] = site_page_edited(FACE_DOWN)  # a new page the run would store
    before = fetched_env.state()
    with pytest.raises(CorpusError) as err:
        fetched_env.refresh()
    assert err.value.place == str(link) and err.value.source_id == FACE_DOWN
    assert "leads out of the corpus folder" in err.value.message and "nothing is written there" in err.value.message
    assert list(outside.iterdir()) == []
    assert fetched_env.state() == before
    if layout != "snapshot file":  # found before any request
        assert site.requests == []
    out = fetched_env.cli()
    assert out.exit_code == 1 and list(outside.iterdir()) == []
    assert messages(out) == [f"Error: [corpus] {FACE_DOWN}, {link}: leads out of the corpus folder "
                                       f"{fetched_env.corpus.resolve()} (a symlink to "
                                       f"{(link.parent / os.readlink(link)).resolve()}); nothing is written there "
                                       "and the run stops"]


def test_a_snapshot_store_linked_inside_the_corpus_is_used(fetched_env, site):
    store = fetched_env.corpus / "snapshots"
    shutil.move(store, fetched_env.corpus / "store")
    store.symlink_to("store")
    site.pages[PATH[FACE_DOWN]] = site_page_edited(FACE_DOWN)
    result = fetched_env.refresh()
    assert outcome(result, FACE_DOWN).outcome == "changed"
    digest = hashlib.sha256(site.pages[PATH[FACE_DOWN]]).hexdigest()
    assert (fetched_env.corpus / "store" / FACE_DOWN / f"{digest}.html").read_bytes() == site.pages[PATH[FACE_DOWN]]


# --------------------------------------------------------------------------- item 16: stopped or out of space

def temp_files(folder: Path) -> list[str]:
    """What a build or refresh leaves in ``folder`` besides its outputs and its lock."""
    outputs = {"rulings.duckdb", "rulings.duckdb.lock", "ocg_rules.py", "ocg_rules.json", "ocg_rules.mjs", "ocg_rules.d.mts",
               "corpus"}
    return sorted(p.name for p in folder.iterdir() if p.name not in outputs and not p.name.startswith("copy"))


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    """A small corpus built once: (corpus, out folder)."""
    root = tmp_path_factory.mktemp("small")
    corpus = make_corpus(root / "corpus", ["seed-000-battle-position", "seed-004-face-down-temp-banish"])
    build(corpus, root / "out" / "rulings.duckdb", root / "out" / "ocg_rules.py")
    return corpus, root / "out"


@pytest.fixture
def previous(small_build, tmp_path):
    """A copy of the small build, and its corpus edited so that the next build differs:
    (corpus, db, engine, fingerprint, engine bytes)."""
    corpus, out = small_build
    corpus = Path(shutil.copytree(corpus, tmp_path / "corpus"))
    page = corpus / "pages/seeds/004-face-down-temp-banish.txt"
    page.write_text(page.read_text(encoding="utf-8").replace("仍然是S召唤的怪兽", "不再是S召唤的怪兽"), encoding="utf-8")
    dest = tmp_path / "out"
    shutil.copytree(out, dest)
    db, engine = dest / "rulings.duckdb", dest / "ocg_rules.py"
    return corpus, db, engine, db_fingerprint(db), engine.read_bytes()


# The child runs the real command and sends itself SIGTERM when the build reaches a point.
STOPPER = r"""
import os, signal, sys
from pathlib import Path
import duckdb
import pipeline.generate as generate
import pipeline.load as load
import pipeline.stopping as stopping
from pipeline.cli import main

point = sys.argv[1]

def stop(name):
    if name == point:
        os.kill(os.getpid(), signal.SIGTERM)

real_temp, real_connect, real_insert = stopping.temp_path, duckdb.connect, load.bulk_insert
real_stage, real_replace = generate.stage_engine, os.replace

def temp_path(folder, prefix, suffix=""):
    path = real_temp(folder, prefix, suffix)
    stop("named:" + prefix)  # named, not yet created
    return path

def connect(database=":memory:", *args, **kw):
    con = real_connect(database, *args, **kw)
    stop("connected:" + Path(str(database)).suffix)  # the temporary database file exists
    return con

def bulk_insert(con, table, rows, workdir, files=()):
    real_insert(con, table, rows, workdir, files)
    stop("inserted:" + table)

def stage_engine(path, source, kept=generate.KEPT):
    staged = real_stage(path, source, kept)
    stop("staged:" + Path(path).name)
    return staged

def replace(src, dst, **kw):
    stop("rename:" + Path(dst).name)
    return real_replace(src, dst, **kw)

load.temp_path = generate.temp_path = temp_path
duckdb.connect, load.bulk_insert, generate.stage_engine, os.replace = connect, bulk_insert, stage_engine, replace
sys.argv = ["rulings", "build", *sys.argv[2:]]
main()
"""

POINTS = ["named:.rulings.duckdb.", "connected:.tmp", "named:.rulings.duckdb.load-", "named:.ocg_rules.mjs.", "inserted:records", "inserted:card_names",
          "staged:ocg_rules.json", "staged:ocg_rules.py", "rename:rulings.duckdb", "rename:ocg_rules.py"]


def run_build(corpus: Path, db: Path, engine: Path, script: str | None = None, *args: str) -> subprocess.Popen:
    command = ["-c", script, *args] if script else ["-m", "pipeline.cli", "build"]
    return subprocess.Popen([sys.executable, *command, "--corpus", str(corpus), "--db", str(db),
                             "--engine-out", str(engine)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=ROOT)


@pytest.mark.slow  # a real build signalled at many points: make test-slow, CI
@pytest.mark.parametrize("point", POINTS)
def test_sigterm_at_any_point_of_a_build_leaves_no_temporary_file(previous, point):
    corpus, db, engine, fingerprint, module = previous
    child = run_build(corpus, db, engine, STOPPER, point)
    _, err = child.communicate(timeout=300)
    assert child.returncode == 143, err.decode()
    assert temp_files(db.parent) == []
    if point.startswith("rename:"):  # the signal waits until both renames are done
        assert db_fingerprint(db) != fingerprint and engine.read_bytes() != module
        assert engine_rules_hash(engine) == db_fingerprint(db)[2]
    else:
        assert (db_fingerprint(db), engine.read_bytes()) == (fingerprint, module)


@pytest.mark.slow  # a real build signalled at many points: make test-slow, CI
@pytest.mark.parametrize("delays", [(0.4, 0.9, 1.4), (0.7, 1.2, 2.0), (0.9, 2.5, 3.5)])
def test_sigterm_timed_across_a_build_leaves_no_temporary_file(previous, delays):
    """No hook: the real command, one SIGTERM at each delay, then two in quick succession."""
    corpus, db, engine, fingerprint, module = previous
    for delay in delays:
        child = run_build(corpus, db, engine)
        time.sleep(delay)
        for _ in range(2):  # a second signal must not cut the cleanup short
            child.send_signal(signal.SIGTERM)
            time.sleep(0.01)
        _, err = child.communicate(timeout=300)
        assert child.returncode in (143, -signal.SIGTERM, 0), err.decode("utf-8", "replace")[-3000:]
        assert temp_files(db.parent) == []
        assert (db_fingerprint(db) == fingerprint) == (engine.read_bytes() == module)
        assert engine_rules_hash(engine) == db_fingerprint(db)[2]


def full_disk(*args, **kw):
    raise OSError(errno.ENOSPC, ENOSPC)


def build_cli(corpus: Path, db: Path, engine: Path):
    """``rulings build --json`` (no progress lines), its error (one JSON
    object on stderr) given back as the ``Error: ...`` line it is without --json."""
    out = CliRunner().invoke(main, ["build", "--corpus", str(corpus), "--db", str(db), "--engine-out", str(engine),
                                    "--workers", "1", "--json"])
    if not out.stderr.startswith("{"):
        return out
    error = json.loads(out.stderr)
    assert error["exit_code"] == out.exit_code and len(out.stderr.splitlines()) == 1
    return SimpleNamespace(exit_code=out.exit_code, stdout=out.stdout, stderr=f"Error: {error['error']}\n")


def test_a_full_disk_while_writing_the_engine_names_the_file(previous, monkeypatch):
    corpus, db, engine, fingerprint, module = previous
    monkeypatch.setattr(os, "fsync", full_disk)  # the engine's files are synced before their rename
    out = build_cli(corpus, db, engine)
    assert out.exit_code == 1
    assert out.stderr.splitlines() == [f"Error: [generate] {engine.with_suffix('.json')}: cannot write the engine "
                                       f"file: {ENOSPC}; the previous database and engine stay"]
    assert (db_fingerprint(db), engine.read_bytes(), temp_files(db.parent)) == (fingerprint, module, [])


def test_a_full_disk_at_the_database_rename_names_the_file(previous, monkeypatch):
    corpus, db, engine, fingerprint, module = previous
    real = os.replace

    def replace(src, dst, **kw):
        if Path(dst) == db:
            raise OSError(errno.ENOSPC, ENOSPC, str(src), None, str(dst))
        return real(src, dst, **kw)

    monkeypatch.setattr(os, "replace", replace)
    out = build_cli(corpus, db, engine)
    assert out.exit_code == 1
    [line] = out.stderr.splitlines()
    assert line.startswith(f"Error: [load] {db.parent}/.rulings.duckdb.") and line.endswith(
        f".tmp: cannot put the new database in place: {ENOSPC}; the previous database and engine stay")
    assert (db_fingerprint(db), engine.read_bytes(), temp_files(db.parent)) == (fingerprint, module, [])


def test_a_full_disk_at_the_database_commit_names_the_file(previous, monkeypatch):
    corpus, db, engine, fingerprint, module = previous
    real = duckdb.connect

    class FullDiskAtCommit:
        """A connection whose COMMIT fails as DuckDB's does on a full disk."""

        def __init__(self, con):
            self.con = con

        def __getattr__(self, name):
            return getattr(self.con, name)

        def execute(self, query, *args):
            if query == "COMMIT":
                raise duckdb.IOException(f'IO Error: Could not write file "{self.path}": {ENOSPC}\nat commit')
            return self.con.execute(query, *args)

    def connect(database=":memory:", *args, **kw):
        con = real(database, *args, **kw)
        if not str(database).endswith(".tmp"):
            return con
        wrapped = FullDiskAtCommit(con)
        wrapped.path = database
        return wrapped

    monkeypatch.setattr(duckdb, "connect", connect)
    out = build_cli(corpus, db, engine)
    assert out.exit_code == 1
    [line] = out.stderr.splitlines()
    tmp = line.split("Error: [load] ")[1].split(": ")[0]
    assert Path(tmp).parent == db.parent and Path(tmp).name.startswith(".rulings.duckdb.") and tmp.endswith(".tmp")
    assert line == (f'Error: [load] {tmp}: cannot write the new database: IO Error: Could not write file "{tmp}": '
                    f"{ENOSPC} at commit; the previous database and engine stay")
    assert (db_fingerprint(db), engine.read_bytes(), temp_files(db.parent)) == (fingerprint, module, [])


def test_a_full_disk_while_loading_rows_names_the_file(previous, monkeypatch):
    corpus, db, engine, fingerprint, module = previous

    def write_ndjson(path, rows, table):
        raise OSError(errno.ENOSPC, ENOSPC, str(path))

    monkeypatch.setattr(rowfiles, "write_ndjson", write_ndjson)
    out = build_cli(corpus, db, engine)
    assert out.exit_code == 1
    [line] = out.stderr.splitlines()
    assert line.startswith(f"Error: [load] {db.parent}/.rulings.duckdb.load-") and line.endswith(
        f"/records.ndjson: table records: {ENOSPC}; the previous database and engine stay")
    assert (db_fingerprint(db), engine.read_bytes(), temp_files(db.parent)) == (fingerprint, module, [])


def test_a_full_disk_while_storing_a_snapshot_names_it(fetched_env, site, monkeypatch):
    site.pages[PATH[FACE_DOWN]] = site_page_edited(FACE_DOWN)
    before = fetched_env.state()
    real = os.fdopen

    class FullFile:
        """A snapshot file on a full disk: every write fails."""

        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        write = staticmethod(full_disk)

    def fdopen(fd, mode="r", *args, **kw):
        fh = real(fd, mode, *args, **kw)
        return FullFile(fh) if mode == "wb" else fh

    monkeypatch.setattr(os, "fdopen", fdopen)
    out = fetched_env.cli()
    digest = hashlib.sha256(site.pages[PATH[FACE_DOWN]]).hexdigest()
    folder = fetched_env.corpus.resolve() / "snapshots" / FACE_DOWN
    assert out.exit_code == 1
    assert messages(out) == [f"Error: [corpus] {FACE_DOWN}, {folder / (digest + '.html')}: cannot write the "
                                       f"snapshot: {ENOSPC}; nothing of this run is stored, the database and engine "
                                       "stay as they were"]
    assert fetched_env.state() == before
    assert sorted(p.name for p in folder.iterdir()) == [f"{hashlib.sha256(page_bytes(FACE_DOWN)).hexdigest()}.html"]


def test_a_full_disk_while_a_refresh_writes_the_engine_stores_nothing(fetched_env, site, monkeypatch):
    """A refresh stages its engine before it commits, as a build does (pipeline.finish)."""
    site.pages[PATH[FACE_DOWN]] = site_page_edited(FACE_DOWN)
    module = fetched_env.engine.read_bytes()
    runs = len(fetched_env.sql("SELECT run_id FROM runs"))
    monkeypatch.setattr(os, "fsync", full_disk)
    out = fetched_env.cli()
    assert out.exit_code == 1
    assert messages(out) == [f"Error: [generate] {fetched_env.engine.with_suffix('.json')}: cannot write the "
                                       f"engine file: {ENOSPC}; refresh run {runs + 1} not stored, the database and "
                                       "engine are unchanged"]
    assert fetched_env.engine.read_bytes() == module and temp_files(fetched_env.db.parent) == []
    assert len(fetched_env.sql("SELECT run_id FROM runs")) == runs
    monkeypatch.undo()
    assert fetched_env.refresh().engine_written and fetched_env.engine.read_bytes() != module


@pytest.mark.parametrize("error", [RuntimeError("Query interrupted"), duckdb.InterruptException("INTERRUPT Error")])
def test_a_stop_signal_duckdb_turns_into_its_own_error_still_ends_the_run_as_the_signal_asks(monkeypatch, tmp_path,
                                                                                            error):
    """SIGTERM while DuckDB runs a query reaches the handler inside DuckDB, which
    turns the handler's SystemExit into its own error: the run still exits 143
    with no traceback and no `Error:` line (a timed SIGTERM hit this 1 time in 3)."""
    import pipeline.cli as cli
    import pipeline.stopping as stopping

    def interrupted(*args, **kwargs):
        monkeypatch.setattr(stopping, "_signum", signal.SIGTERM)  # what the handler records as it raises
        raise error

    monkeypatch.setattr("pipeline.run.build", interrupted)  # the build command imports it as it runs
    out = CliRunner().invoke(cli.main, ["build", "--db", str(tmp_path / "r.duckdb"),
                                        "--engine-out", str(tmp_path / "e" / "ocg_rules.py")])
    assert out.exit_code == 143 and "Error" not in out.output and out.exception.__class__ is SystemExit
