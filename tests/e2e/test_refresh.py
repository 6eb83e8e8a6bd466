"""`rulings refresh` against a real HTTP server on 127.0.0.1.

The server (standard library, so a test can also cut a body short) serves
the corpus pages with ETag / Last-Modified, a robots.txt, a MediaWiki
api.php, and scripted faults. Traffic never leaves 127.0.0.1: every URL of
the test manifests, frozen sources included, points at it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import duckdb
import pytest
from click.testing import CliRunner
from filelock import FileLock

from conftest import HERE, import_module_from, make_corpus
from pipeline.cli import main
from pipeline.corpus import BUNDLED_CORPUS
from pipeline.errors import RefreshError, UsageError
from pipeline.fetch import FetchConfig, mediawiki_request, parse_retry_after
from pipeline import queries
from pipeline.generate import engine_paths
from pipeline.refresh import engine_rules_hash, refresh
from pipeline.run import build

# Data-safety end to end (every page, refresh and file case): `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow

FACE_DOWN = "ocg-rule-c03-face-down-temp-banish"
PLEDGES = "ocg-rule-c03-pledges"
FROZEN = "seed-000-battle-position"
SOURCES = [FROZEN, FACE_DOWN, PLEDGES]
PAGE = {FACE_DOWN: "/pages/ocg-rule/c03-face-down-temp-banish.html", PLEDGES: "/pages/ocg-rule/c03-pledges.html"}
KEPT_TEXT, LOST_TEXT = "仍然是S召唤的怪兽", "不再是S召唤的怪兽"
KEPT_SENTENCE = "S召唤的怪兽变成里侧或被一时除外后，仍然是S召唤的怪兽。16/1/8"
KEPT_LINE = ('<div class="line">S召唤的怪兽变成里侧或被一时除外后，<strong>仍然是S召唤的怪兽</strong>。<a class="reference '
             'external" href="http://www.db.yugioh-card.com/yugiohdb/faq_search.action?ope=5&amp;fid=18149&amp;keyword='
             '&amp;tag=-1">16/1/8</a></div>')


# --------------------------------------------------------------------------- the server

@dataclass
class Site:
    """What the server serves, what it was asked, and the faults to play next."""

    url: str = ""
    pages: dict[str, bytes] = field(default_factory=dict)          # path -> body
    wiki: dict[str, str] = field(default_factory=dict)             # title -> parsed HTML (api.php)
    faults: dict[str, list] = field(default_factory=lambda: defaultdict(list))  # path -> next behaviours
    robots: str | None = None                                      # None: 404
    validators: bool = True                                        # send ETag / Last-Modified, answer 304
    slow_seconds: float = 1.0
    trickle_seconds: float = 0.2
    requests: list[tuple[str, dict, dict]] = field(default_factory=list)  # (path, query, headers)

    def reset(self) -> None:
        self.pages.clear(), self.wiki.clear(), self.faults.clear(), self.requests.clear()
        self.robots, self.validators = None, True

    def serve_bundled(self, edits: dict[str, list[tuple[str, str]]] | None = None) -> None:
        """Serve the bundled pages of the fetchable sources, optionally edited."""
        for sid, path in PAGE.items():
            text = (BUNDLED_CORPUS / path.lstrip("/")).read_text(encoding="utf-8")
            for old, new in (edits or {}).get(sid, []):
                assert old in text
                text = text.replace(old, new)
            self.pages[path] = text.encode("utf-8")

    def hits(self, path: str) -> list[dict]:
        return [headers for p, _, headers in self.requests if p == path]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        site: Site = self.server.site
        parts = urlsplit(self.path)
        path, query = unquote(parts.path), parse_qs(parts.query)
        site.requests.append((path, query, dict(self.headers)))
        fault = site.faults[path].pop(0) if site.faults.get(path) else None
        try:
            self._answer(site, path, query, fault)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def _answer(self, site: Site, path: str, query: dict, fault) -> None:
        if fault == "timeout":
            time.sleep(site.slow_seconds)
        elif fault in ("500", "404"):
            return self._send(int(fault), b"fault")
        elif isinstance(fault, tuple) and fault[0] == "429":
            return self._send(429, b"slow down", {"Retry-After": fault[1]})
        if path == "/robots.txt":
            return self._send(200, site.robots.encode()) if site.robots is not None else self._send(404, b"")
        if path == "/api.php":
            title = query.get("page", [""])[0]
            if title not in site.wiki:
                return self._send(200, json.dumps({"error": {"code": "missingtitle", "info": "no page"}}).encode())
            answer = {"parse": {"title": title, "pageid": 1, "text": site.wiki[title]}}
            return self._send(200, json.dumps(answer, ensure_ascii=False).encode(), ctype="application/json")
        if isinstance(fault, tuple) and fault[0] == "redirect":
            self.send_response(302)
            self.send_header("Location", fault[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        body = site.pages.get(path)
        if body is None:
            return self._send(404, b"not found")
        if fault == "trickle_headers":  # the headers themselves, one line at a time
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for i in range(50):  # bounded: the client gives up well before
                self.wfile.write(f"X-Slow-{i}: x\r\n".encode())
                self.wfile.flush()
                time.sleep(site.trickle_seconds)
            self.close_connection = True
            return None
        if fault == "trickle":  # a whole body promised, one byte at a time
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(min(len(body), 50)):  # bounded: the client gives up well before
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(site.trickle_seconds)
            self.close_connection = True
            return None
        if isinstance(fault, tuple) and fault[0] == "charset":
            return self._send(200, body, ctype=f"text/html; charset={fault[1]}", raw_ctype=True)
        if fault == "truncate":  # promise the whole body, send half, hang up
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return None
        headers = {}
        if site.validators:
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, b"", {"ETag": etag})
            headers = {"ETag": etag, "Last-Modified": "Sat, 01 Jun 2024 00:00:00 GMT"}
        return self._send(200, body, headers)

    def _send(self, status: int, body: bytes, headers: dict | None = None, ctype: str = "text/html",
              raw_ctype: bool = False) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if status != 304:
            self.send_header("Content-Type", ctype if raw_ctype else f"{ctype}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)


@pytest.fixture(scope="module")
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.site = Site(url=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.site
    server.shutdown()
    server.server_close()


def site_corpus(dest: Path, site: Site) -> Path:
    """make_corpus of SOURCES with every URL on the local server (pages at their manifest path)."""
    corpus = make_corpus(dest, SOURCES)
    lines = (corpus / "manifest.tsv").read_text(encoding="utf-8").splitlines()
    rows = [lines[0]]
    for line in lines[1:]:
        cols = line.split("\t")
        cols[1] = f"{site.url}/{cols[7]}"
        rows.append("\t".join(cols))
    (corpus / "manifest.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return corpus


class Sleeps(list):
    """Stands in for time.sleep: records the waits asked for, waits not at all."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _changes(db: Path, since: int | None = None) -> tuple[int, list[dict]]:
    con = queries.connect(db)
    try:
        return queries.list_changes(con, since)
    finally:
        con.close()


def config(**kw) -> FetchConfig:
    base = dict(rate_limit=0, timeout=2.0, retries=1, backoff=0.01, sleep=Sleeps())
    base.update(kw)
    return FetchConfig(**base)


@dataclass
class Env:
    corpus: Path
    db: Path
    engine: Path

    def refresh(self, **kw):
        cfg = kw.pop("config", None) or config()
        return refresh(self.corpus, self.db, self.engine, config=cfg, **kw)

    def sql(self, query: str, params=None) -> list[tuple]:
        con = duckdb.connect(str(self.db), read_only=True)
        try:
            return con.execute(query, params or []).fetchall()
        finally:
            con.close()

    def in_force(self, source_id: str) -> str:
        return self.sql("SELECT content_hash FROM snapshots WHERE source_id = ? AND in_force", [source_id])[0][0]

    def rules(self) -> list[tuple]:
        return self.sql("SELECT * FROM rules ORDER BY ALL")

    def verdict(self, kind: str, event: str) -> str:
        return self.sql("SELECT verdict FROM rules WHERE info_kind = ? AND event = ?", [kind, event])[0][0]


@pytest.fixture(scope="module")
def first(site, tmp_path_factory):
    """The first refresh of a corpus with no database yet: (result, env, requests)."""
    site.reset()
    site.serve_bundled()
    root = tmp_path_factory.mktemp("first")
    env = Env(site_corpus(root / "corpus", site), root / "rulings.duckdb", root / "ocg_rules.py")
    result = env.refresh()
    return result, env, list(site.requests)


@pytest.fixture
def env(first, site, tmp_path):
    """A copy of the state the first refresh left; the server serves the bundled pages."""
    _, base, _ = first
    site.reset()
    site.serve_bundled()
    shutil.copytree(base.corpus, tmp_path / "corpus")
    shutil.copyfile(base.db, tmp_path / "rulings.duckdb")
    for key, path in engine_paths(base.engine).items():  # the engine's files: .py, .json, .mjs, .d.mts
        shutil.copyfile(path, engine_paths(tmp_path / "ocg_rules.py")[key])
    return Env(tmp_path / "corpus", tmp_path / "rulings.duckdb", tmp_path / "ocg_rules.py")


# --------------------------------------------------------------------------- nothing changed

def test_first_refresh_builds_then_fetches_every_fetchable_source(first, site):
    result, env, requests = first
    assert result.built_first and result.run_id == 2
    paths = [p for p, _, _ in requests]
    assert sorted(p for p in paths if p != "/robots.txt") == sorted(PAGE.values())
    assert paths.count("/robots.txt") == 1  # once per host and run
    assert not any("seeds" in p for p in paths)  # frozen sources are never fetched
    for _, _, headers in requests:
        assert headers["User-Agent"].startswith("rulings/")
    # the server serves what the bundled pages hold: equal hashes, nothing re-extracted
    assert [(o.source_id, o.outcome, o.http_status) for o in result.outcomes] == [
        (FACE_DOWN, "unchanged", 200), (PLEDGES, "unchanged", 200)]
    assert result.reprocessed == [] and not result.recompiled
    assert env.sql("SELECT run_id, kind, tried, unchanged, changed, failed FROM runs ORDER BY run_id") == [
        (1, "build", 3, 0, 3, 0), (2, "refresh", 2, 2, 0, 0)]
    etag, status = env.sql("SELECT etag, http_status FROM snapshots WHERE source_id = ? AND in_force", [PLEDGES])[0]
    assert etag.startswith('"') and status == 200
    digest = env.in_force(FACE_DOWN)
    stored = env.corpus / "snapshots" / FACE_DOWN / f"{digest}.html"
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == digest


def test_a_record_keeps_both_faq_ids_of_a_repeated_date(first):
    """``14/3/21 14/3/21`` links two FAQ entries; both are stored, so the record
    read back equals the extracted one and an unchanged page diffs empty."""
    _, env, _ = first
    assert env.sql("""SELECT d.raw, d.faq_id FROM record_dates d JOIN records r USING (record_id)
                      WHERE r.text LIKE '%这之后被一时除外的场合%' AND r.source_id = ? ORDER BY d.ord""",
                   [FACE_DOWN]) == [("14/3/21", "6403"), ("14/3/21", "8802")]


def test_a_refresh_rewrites_an_engine_file_that_is_missing_or_stale(env, site):
    """The .py, .json and .mjs engines all carry the rules hash; a refresh
    that finds one missing or stamped otherwise writes all three again."""
    mjs, data = env.engine.with_suffix(".mjs"), env.engine.with_suffix(".json")
    expected = mjs.read_bytes()
    mjs.unlink()
    data.write_text(data.read_text(encoding="utf-8").replace('"rules_hash": "', '"rules_hash": "0', 1)[:-1],
                    encoding="utf-8")
    result = env.refresh()
    assert result.engine_written and not result.recompiled
    assert mjs.read_bytes() == expected and json.loads(data.read_text(encoding="utf-8"))["rules_hash"] in expected.decode()


def test_second_refresh_gets_304_and_extracts_nothing(env, site):
    engine_before = env.engine.read_bytes()
    rules_before = env.rules()
    result = env.refresh()
    assert [(o.outcome, o.http_status, o.reason) for o in result.outcomes] == [
        ("unchanged", 304, "not modified (HTTP 304)")] * 2
    for path in PAGE.values():
        assert site.hits(path)[0]["If-None-Match"].startswith('"')
        assert site.hits(path)[0]["If-Modified-Since"] == "Sat, 01 Jun 2024 00:00:00 GMT"
    assert result.reprocessed == [] and not result.recompiled and not result.engine_written
    assert env.engine.read_bytes() == engine_before and env.rules() == rules_before
    assert env.sql("SELECT tried, unchanged, changed, failed FROM runs WHERE run_id = 3") == [(2, 2, 0, 0)]


def test_without_validators_equal_hashes_extract_nothing(env, site):
    site.validators = False  # the server ignores If-None-Match and sends the page again
    result = env.refresh()
    assert [(o.outcome, o.http_status, o.reason) for o in result.outcomes] == [
        ("unchanged", 200, "same content hash")] * 2
    assert result.reprocessed == [] and not result.recompiled


# --------------------------------------------------------------------------- changes

def test_editing_one_page_reextracts_that_page_and_changes_the_rules(env, site, tmp_path):
    assert env.verdict("synchro_summoned", "face_down") == "kept"
    site.serve_bundled({FACE_DOWN: [(KEPT_TEXT, LOST_TEXT)]})
    result = env.refresh()
    assert result.reprocessed == [FACE_DOWN]
    changed = {o.source_id: o for o in result.outcomes}
    assert changed[PLEDGES].outcome == "unchanged" and changed[FACE_DOWN].outcome == "changed"
    assert (changed[FACE_DOWN].added, changed[FACE_DOWN].retired) == (1, 1)
    assert result.recompiled and result.engine_written
    assert env.verdict("synchro_summoned", "face_down") == "lost"
    assert env.verdict("synchro_summoned", "temp_banish") == "lost"
    # the principle's change is a rule change to review, in the result and in rule_changes
    reviewed = {(c.info_kind, c.event): (c.change, c.old_verdict, c.new_verdict) for c in result.rule_changes}
    assert reviewed[("synchro_summoned", "face_down")] == ("verdict", "kept", "lost")
    assert env.sql("SELECT change, old_verdict, new_verdict FROM rule_changes WHERE run_id = ? AND info_kind = "
                   "'synchro_summoned' AND event = 'temp_banish'", [result.run_id]) == [("verdict", "kept", "lost")]
    # the same tables and engine bytes as a full build of the edited corpus
    edited = shutil.copytree(env.corpus, tmp_path / "edited", ignore=shutil.ignore_patterns("snapshots"))
    (edited / PAGE[FACE_DOWN].lstrip("/")).write_bytes(site.pages[PAGE[FACE_DOWN]])
    build(edited, tmp_path / "full.duckdb", tmp_path / "full.py")
    full = Env(edited, tmp_path / "full.duckdb", tmp_path / "full.py")
    assert env.rules() == full.rules()
    assert env.sql("SELECT * FROM rule_citations ORDER BY ALL") == full.sql("SELECT * FROM rule_citations ORDER BY ALL")
    assert env.engine.read_bytes() == full.engine.read_bytes()
    assert engine_rules_hash(env.engine) == result.rules_hash
    engine = import_module_from(env.engine)
    assert engine.retains("synchro_summoned", "face_down").verdict == "lost"
    # the old snapshot stays in the history, the new one is in force and stored
    history = env.sql("SELECT content_hash, in_force, run_id FROM snapshots WHERE source_id = ? ORDER BY run_id",
                      [FACE_DOWN])
    assert [h[1] for h in history] == [False, True] and history[1][2] == result.run_id
    assert (env.corpus / "snapshots" / FACE_DOWN / f"{history[1][0]}.html").is_file()
    # the change log
    _, rows = _changes(env.db)
    assert {(r["change"], r["text"]) for r in rows if r["change"] != "changed"} == {
        ("added", KEPT_SENTENCE.replace(KEPT_TEXT, LOST_TEXT)), ("retired", KEPT_SENTENCE)}


def test_a_removed_ruling_is_retired_not_deleted_and_can_come_back(env, site):
    site.serve_bundled({FACE_DOWN: [(KEPT_LINE, "")]})
    removed = env.refresh()
    row = env.sql("SELECT record_id, first_seen_run, retired_run FROM records WHERE text = ?", [KEPT_SENTENCE])
    assert len(row) == 1 and row[0][1:] == (1, removed.run_id)
    rid = row[0][0]
    assert env.sql("SELECT count(*) FROM statements WHERE record_id = ?", [rid])[0][0] > 0  # its rows stay too
    assert rid not in {r[0] for r in env.sql("SELECT record_id FROM rule_citations")}
    assert [(r["change"], r["record_id"]) for r in _changes(env.db)[1] if r["change"] == "retired"] == [
        ("retired", rid)]
    site.serve_bundled()
    back = env.refresh()
    assert env.sql("SELECT first_seen_run, retired_run FROM records WHERE record_id = ?", [rid]) == [
        (back.run_id, None)]
    assert env.verdict("synchro_summoned", "face_down") == "kept"
    # the page is back to the bundled bytes: that snapshot is in force again
    assert env.in_force(FACE_DOWN) == hashlib.sha256(site.pages[PAGE[FACE_DOWN]]).hexdigest()


def test_a_changed_page_s_rulings_on_card_effects_replace_the_old_ones(env, site):
    satan = 46565218  # 「撒旦老人」: its ② after a temporary banish, on the FACE_DOWN page only

    def rulings(retired: str) -> list[tuple]:
        return env.sql("SELECT e.effect, e.events, e.flip, e.can FROM effect_rulings e JOIN records r "
                       f"USING (record_id) WHERE r.retired_run IS {retired} AND e.passcode = ?", [satan])

    def second_effect() -> tuple:
        (effect,) = [e for e in import_module_from(env.engine).card_answer(satan, "temp_banish")["effects"]
                     if e["effect"] == "②"]
        return effect["works"], effect["decided_by"]

    assert rulings("NULL") == [("②", ["temp_banish"], False, False)]
    assert second_effect() == (False, "card_ruling")
    site.serve_bundled({FACE_DOWN: [("当回合回到场上后，结束阶段不能发动②效果", "当回合回到场上后，结束阶段可以发动②效果")]})
    env.refresh()
    assert rulings("NULL") == [("②", ["temp_banish"], False, True)]  # the new record's, read in the refresh
    assert rulings("NOT NULL") == [("②", ["temp_banish"], False, False)]  # the retired record keeps its rows
    assert second_effect() == (True, "card_ruling")


def test_a_new_hash_with_the_same_rulings_does_not_recompile(env, site):
    site.pages[PAGE[PLEDGES]] += b"\n<!-- rebuilt by the site generator -->\n"
    engine_mtime = env.engine.stat().st_mtime_ns
    result = env.refresh()
    assert result.reprocessed == [PLEDGES]
    outcome = {o.source_id: o for o in result.outcomes}[PLEDGES]
    assert (outcome.outcome, outcome.added, outcome.changed, outcome.retired) == ("changed", 0, 0, 0)
    assert not result.recompiled and not result.engine_written and env.engine.stat().st_mtime_ns == engine_mtime
    new_hash = hashlib.sha256(site.pages[PAGE[PLEDGES]]).hexdigest()
    assert env.in_force(PLEDGES) == new_hash
    assert env.sql("SELECT DISTINCT snapshot_hash FROM records WHERE source_id = ?", [PLEDGES]) == [(new_hash,)]


# --------------------------------------------------------------------------- failures

FAULTS = {
    "500": (["500", "500"], "HTTP 500 after 2 attempts"),
    "timeout": (["timeout", "timeout"], "timed out"),
    "429": ([("429", "7"), ("429", "7")], "HTTP 429 after 2 attempts"),
    "truncated": (["truncate", "truncate"], "truncated"),
    "404": (["404"], "HTTP 404 Not Found"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failing_source_is_recorded_and_its_snapshot_kept(env, site, fault):
    faults, reason = FAULTS[fault]
    before = (env.in_force(FACE_DOWN), env.rules(), env.sql("SELECT count(*) FROM records WHERE retired_run IS NULL"))
    site.serve_bundled({FACE_DOWN: [(KEPT_TEXT, LOST_TEXT)]})  # a change the run must not see
    site.faults[PAGE[FACE_DOWN]] = list(faults)
    sleeps = Sleeps()
    result = env.refresh(config=config(timeout=0.2, sleep=sleeps))
    outcome = {o.source_id: o for o in result.outcomes}
    assert outcome[FACE_DOWN].outcome == "failed" and reason in outcome[FACE_DOWN].reason
    assert f"snapshot {before[0][:12]} stays in force" in outcome[FACE_DOWN].reason
    assert outcome[PLEDGES].outcome == "unchanged"  # the other source went on
    assert (env.in_force(FACE_DOWN), env.rules(),
            env.sql("SELECT count(*) FROM records WHERE retired_run IS NULL")) == before
    tried, failed, details = env.sql("SELECT tried, failed, details FROM runs WHERE run_id = ?", [result.run_id])[0]
    assert (tried, failed) == (2, 1)
    assert reason in {s["source_id"]: s for s in json.loads(details)["sources"]}[FACE_DOWN]["reason"]
    if fault == "429":
        assert sleeps == [7.0]  # Retry-After honoured between the two attempts
    # the fault is over: the next run picks the change up
    assert env.refresh().reprocessed == [FACE_DOWN]
    assert env.verdict("synchro_summoned", "face_down") == "lost"


def test_429_then_success_waits_retry_after(env, site):
    site.pages[PAGE[PLEDGES]] += b"<!-- new -->"
    site.faults[PAGE[PLEDGES]] = [("429", "3")]
    sleeps = Sleeps()
    result = env.refresh(config=config(sleep=sleeps))
    assert sleeps == [3.0]
    assert [(o.source_id, o.outcome, o.attempts) for o in result.outcomes][1] == (PLEDGES, "changed", 2)


def test_a_retry_after_over_the_limit_fails_at_once(env, site):
    site.faults[PAGE[PLEDGES]] = [("429", "3600")]
    sleeps = Sleeps()
    result = env.refresh(config=config(retries=3, max_retry_after=60, sleep=sleeps))
    outcome = {o.source_id: o for o in result.outcomes}[PLEDGES]
    assert outcome.outcome == "failed" and "Retry-After 3600 s, over the limit of 60 s" in outcome.reason
    assert sleeps == [] and len(site.hits(PAGE[PLEDGES])) == 1


def test_backoff_grows_exponentially(env, site):
    site.faults[PAGE[PLEDGES]] = ["500"] * 3
    sleeps = Sleeps()
    result = env.refresh(config=config(retries=3, backoff=0.5, sleep=sleeps))
    assert sleeps == [0.5, 1.0, 2.0]
    assert {o.source_id: o.outcome for o in result.outcomes}[PLEDGES] == "unchanged"  # 4th attempt: 304


@pytest.mark.parametrize("body, reason, kind", [
    (b"\x00\x01\x02\x03" * 1000, "page looks binary", "failed"),
    (b"<html><body><div role='main'></div></body></html>", "page has no text", "failed"),
    # a page that shrinks is not taken, as in a build: not a failure (pipeline.finish)
    (b"<html><body><article role='main'><p>A one-line page.</p></article></body></html>",
     "not taken: gives 1 records where the database stored", "unchanged"),
])
def test_a_malformed_page_is_refused_and_the_snapshot_kept(env, site, body, reason, kind):
    before = env.in_force(PLEDGES)
    site.pages[PAGE[PLEDGES]] = body
    result = env.refresh()
    outcome = {o.source_id: o for o in result.outcomes}[PLEDGES]
    assert outcome.outcome == kind and reason in outcome.reason
    assert env.in_force(PLEDGES) == before
    bad = hashlib.sha256(body).hexdigest()
    assert env.sql("SELECT in_force FROM snapshots WHERE source_id = ? AND content_hash = ?", [PLEDGES, bad]) == [
        (False,)]  # kept in the history for a look, never in force


def test_a_page_that_loses_most_rulings_is_not_taken_and_keeps_its_records(env, site):
    text = site.pages[PAGE[FACE_DOWN]].decode("utf-8")
    cut = text.index("<h2")  # keep the first section only
    site.pages[PAGE[FACE_DOWN]] = (text[:text.index("<h2", cut + 10)] + "</div></body></html>").encode("utf-8")
    result = env.refresh()
    outcome = {o.source_id: o for o in result.outcomes}[FACE_DOWN]
    assert outcome.outcome == "unchanged" and "more than 50% fewer" in outcome.reason
    assert [w for w in result.warnings if w.startswith(f"{FACE_DOWN}: gives ")][0].endswith(
        "kept 250 records of the database (--max-shrink 1 accepts the page)")
    assert env.sql("SELECT count(*) FROM records WHERE retired_run IS NOT NULL") == [(0,)]
    accepted = env.refresh(max_shrink=1.0)  # the user says the page really lost them
    outcome = {o.source_id: o for o in accepted.outcomes}[FACE_DOWN]
    assert outcome.outcome == "changed" and outcome.retired > outcome.added
    assert env.sql("SELECT count(*) FROM records WHERE retired_run IS NOT NULL") == [(outcome.retired,)]


def test_oversized_page_stops_while_streaming(env, site):
    site.validators = False  # no 304: the pages are sent again
    result = env.refresh(config=config(max_page_bytes=50_000))
    outcome = {o.source_id: o for o in result.outcomes}
    assert "over the limit of 50000 bytes" in outcome[FACE_DOWN].reason  # 137 kB page
    assert outcome[PLEDGES].outcome == "failed"


def test_a_refused_connection_is_a_failure_not_a_crash(env, site, tmp_path):
    lines = (env.corpus / "manifest.tsv").read_text(encoding="utf-8").replace(site.url, "http://127.0.0.1:9")
    (env.corpus / "manifest.tsv").write_text(lines, encoding="utf-8")
    result = env.refresh(config=config(retries=0))
    assert [o.outcome for o in result.outcomes] == ["failed", "failed"]
    assert "robots.txt unreachable" in result.outcomes[0].reason


# --------------------------------------------------------------------------- politeness

def test_robots_txt_is_respected_and_crawl_delay_slows_the_host(env, site):
    site.robots = f"User-agent: *\nCrawl-delay: 30\nDisallow: {PAGE[PLEDGES]}\n"
    sleeps = Sleeps()
    result = env.refresh(config=config(sleep=sleeps))
    outcome = {o.source_id: o for o in result.outcomes}
    assert outcome[PLEDGES].outcome == "failed" and "disallowed by" in outcome[PLEDGES].reason
    assert site.hits(PAGE[PLEDGES]) == []
    assert outcome[FACE_DOWN].outcome == "unchanged"
    assert len(sleeps) == 1 and 29 < sleeps[0] <= 30  # face-down waited for robots.txt's Crawl-delay


def test_rate_limit_spaces_requests_to_one_host(env, site):
    sleeps = Sleeps()
    env.refresh(config=config(rate_limit=0.1, sleep=sleeps))  # robots.txt, then two pages
    assert len(sleeps) == 2 and all(9 < s <= 10 for s in sleeps)


def test_mediawiki_source_is_read_through_the_api(env, site):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(site.pages[PAGE[FACE_DOWN]], "lxml")
    article = soup.select_one("article[role=main]") or soup.body
    site.wiki["Face down rules"] = f'<div class="mw-parser-output">{article.decode_contents()}</div>'
    text = (env.corpus / "manifest.tsv").read_text(encoding="utf-8")
    text = text.replace(site.url + PAGE[FACE_DOWN], site.url + "/wiki/Face_down_rules")
    (env.corpus / "manifest.tsv").write_text(text, encoding="utf-8")
    result = env.refresh(config=config(mediawiki_apis={site.url.split("//")[1]: site.url + "/api.php"}))
    (query,) = [q for p, q, _ in site.requests if p == "/api.php"]
    assert {k: v[0] for k, v in query.items() if k in ("action", "page", "formatversion", "format")} == {
        "action": "parse", "page": "Face down rules", "formatversion": "2", "format": "json"}
    outcome = {o.source_id: o for o in result.outcomes}[FACE_DOWN]
    assert outcome.outcome == "changed" and (outcome.added, outcome.retired) == (0, 0)  # same rulings
    stored = env.corpus / "snapshots" / FACE_DOWN / f"{outcome.content_hash}.html"
    assert stored.read_text(encoding="utf-8").count("mw-parser-output") == 1
    assert env.sql("SELECT url FROM sources WHERE source_id = ?", [FACE_DOWN]) == [(site.url + "/wiki/Face_down_rules",)]


def test_mediawiki_api_error_is_a_failure(env, site):
    text = (env.corpus / "manifest.tsv").read_text(encoding="utf-8")
    (env.corpus / "manifest.tsv").write_text(text.replace(site.url + PAGE[PLEDGES], site.url + "/wiki/Gone"),
                                             encoding="utf-8")
    result = env.refresh(config=config(mediawiki_apis={site.url.split("//")[1]: site.url + "/api.php"}))
    outcome = {o.source_id: o for o in result.outcomes}[PLEDGES]
    assert outcome.outcome == "failed" and "MediaWiki API error missingtitle" in outcome.reason


def test_fetch_helpers():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    apis = {"*.fandom.com": "https://{host}/api.php", "en.wikipedia.org": "https://en.wikipedia.org/w/api.php"}
    api, params = mediawiki_request("https://yugioh.fandom.com/wiki/Battle_Position", apis)
    assert api == "https://yugioh.fandom.com/api.php" and params["page"] == "Battle Position"
    assert mediawiki_request("https://en.wikipedia.org/w/index.php?title=Yu-Gi-Oh!", apis)[1]["page"] == "Yu-Gi-Oh!"
    assert mediawiki_request("https://ocg-rule.readthedocs.io/zh_CN/latest/c03/x.html", apis) is None


# --------------------------------------------------------------------------- scheduling safety

def test_a_second_refresh_exits_while_one_runs(env, site):
    with FileLock(f"{env.db}.lock"):
        with pytest.raises(RefreshError, match="a refresh or build is running on .*try again later or pass --wait"):
            env.refresh()
        result = CliRunner().invoke(main, ["refresh", "--corpus", str(env.corpus), "--db", str(env.db),
                                           "--engine-out", str(env.engine), "--rate-limit", "0"])
        assert result.exit_code == 1 and "a refresh or build is running on" in result.output
    assert env.sql("SELECT max(run_id) FROM runs") == [(2,)]


def test_wait_waits_for_the_running_refresh(env, site):
    held, done = threading.Event(), []

    def other_refresh() -> None:  # holds the lock a while, as a running refresh would
        with FileLock(f"{env.db}.lock"):
            held.set()
            time.sleep(0.3)
            done.append(time.monotonic())

    threading.Thread(target=other_refresh).start()
    held.wait()
    result = env.refresh(wait=True)
    assert result.run_id == 3 and len(done) == 1


KILLER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
import pipeline.load
from pipeline.fetch import FetchConfig
from pipeline.refresh import refresh

real = pipeline.load.bulk_insert
def killing_insert(con, table, rows, workdir):
    if table == "statements":  # records already replaced, rules not yet: die mid-transaction
        os.kill(os.getpid(), signal.SIGKILL)
    return real(con, table, rows, workdir)
pipeline.load.bulk_insert = killing_insert
refresh({corpus!r}, {db!r}, {engine!r}, config=FetchConfig(rate_limit=0, retries=0, timeout=5))
"""


def test_a_refresh_killed_half_way_leaves_the_last_completed_run(env, site):
    site.serve_bundled({FACE_DOWN: [(KEPT_TEXT, LOST_TEXT)]})
    before = [env.sql(q) for q in ("SELECT * FROM runs ORDER BY run_id", "SELECT * FROM snapshots ORDER BY ALL",
                                   "SELECT * FROM records ORDER BY ALL", "SELECT * FROM rules ORDER BY ALL")]
    engine_before = env.engine.read_bytes()
    script = KILLER.format(tests=str(HERE), corpus=str(env.corpus), db=str(env.db), engine=str(env.engine))
    proc = subprocess.run([sys.executable, "-c", script], cwd=HERE.parent, capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()
    after = [env.sql(q) for q in ("SELECT * FROM runs ORDER BY run_id", "SELECT * FROM snapshots ORDER BY ALL",
                                  "SELECT * FROM records ORDER BY ALL", "SELECT * FROM rules ORDER BY ALL")]
    assert after == before and env.engine.read_bytes() == engine_before
    result = env.refresh()  # the lock died with the process; the next run does the work
    assert result.run_id == 3 and result.reprocessed == [FACE_DOWN]
    assert env.verdict("synchro_summoned", "face_down") == "lost"


def test_a_missing_engine_is_regenerated_from_the_database(env, site):
    expected = env.engine.read_bytes()
    env.engine.unlink()
    result = env.refresh()
    assert result.engine_written and not result.recompiled
    assert env.engine.read_bytes() == expected


def test_source_selection(env, site):
    result = env.refresh(source_ids=[PLEDGES])
    assert [o.source_id for o in result.outcomes] == [PLEDGES]
    with pytest.raises(UsageError, match="did you mean 'ocg-rule-c03-pledges'"):
        env.refresh(source_ids=["ocg-rule-c03-pledge"])
    with pytest.raises(UsageError, match="frozen"):
        env.refresh(source_ids=[FROZEN])


# --------------------------------------------------------------------------- the CLI

def test_cli_refresh_and_changes(env, site):
    site.serve_bundled({FACE_DOWN: [(KEPT_TEXT, LOST_TEXT)]})
    args = ["--corpus", str(env.corpus), "--db", str(env.db), "--engine-out", str(env.engine), "--rate-limit", "0"]
    runner = CliRunner()
    out = runner.invoke(main, ["refresh", *args, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["run_id"], data["changed"], data["unchanged"], data["reprocessed"]) == (3, 1, 1, [FACE_DOWN])
    out = runner.invoke(main, ["refresh", *args])
    assert out.exit_code == 0
    assert "run 4 refresh" in out.stdout and "2 tried, 2 unchanged, 0 changed, 0 failed" in out.stdout
    assert "rules      unchanged" in out.stdout
    out = runner.invoke(main, ["changes", "--db", str(env.db), "--since", "2"])
    assert out.exit_code == 0
    assert "run 3 (" in out.stdout and KEPT_SENTENCE in out.stdout
    assert out.stdout.strip().endswith("1 added, 1 changed, 1 retired after run 2")
    latest = json.loads(runner.invoke(main, ["changes", "--db", str(env.db), "--json"]).stdout)
    assert latest == {"since": 3, "changes": []}  # run 4 changed nothing
    out = runner.invoke(main, ["refresh", *args, "--source", "nope"])
    assert out.exit_code == 2 and "unknown source 'nope'" in out.output
    site.faults[PAGE[PLEDGES]] = ["500"]
    out = runner.invoke(main, ["refresh", *args, "--retries", "0"])
    assert out.exit_code == 1 and "failed    ocg-rule-c03-pledges" in out.stdout


# --------------------------------------------------------------------------- hardening: hangs and hostile servers

def _outcome(result, source_id):
    return {o.source_id: o for o in result.outcomes}[source_id]


@pytest.mark.parametrize("delay", ["100000", "31", "45.5", "1e400"])
def test_a_crawl_delay_over_the_limit_fails_at_once_without_waiting(env, site, delay):
    site.robots = f"User-agent: *\nCrawl-delay: {delay}\n"
    sleeps = Sleeps()
    result = env.refresh(config=config(sleep=sleeps, max_crawl_delay=30))
    for sid in (FACE_DOWN, PLEDGES):
        assert _outcome(result, sid).outcome == "failed"
        assert f"Crawl-delay of {float(delay):g} s, over the limit of 30 s" in _outcome(result, sid).reason
        # (robotparser reads whole numbers only: 45.5 and 1e400 are read here)
    assert sleeps == [] and site.hits(PAGE[PLEDGES]) == []
    assert env.sql("SELECT count(*) FROM runs WHERE run_id = ?", [result.run_id]) == [(1,)]  # the run is recorded


def test_the_default_retry_after_limit_refuses_a_five_minute_wait(env, site):
    site.faults[PAGE[PLEDGES]] = [("429", "299")]
    sleeps = Sleeps()
    result = env.refresh(config=FetchConfig(rate_limit=0, timeout=2.0, retries=2, sleep=sleeps))
    assert "Retry-After 299 s, over the limit of 60 s" in _outcome(result, PLEDGES).reason
    assert sleeps == []


def test_a_source_deadline_fails_the_source_and_the_run_goes_on(env, site):
    site.faults[PAGE[FACE_DOWN]] = ["500"] * 5
    sleeps = Sleeps()
    result = env.refresh(config=config(retries=4, backoff=5, source_deadline=3, sleep=sleeps))
    assert "the source's deadline (3 s, --source-deadline) is reached" in _outcome(result, FACE_DOWN).reason
    assert _outcome(result, PLEDGES).outcome == "unchanged"  # the next source is fetched
    assert sleeps == []  # a wait past the deadline is never started


def test_the_run_deadline_fails_every_source_left_and_records_the_run(env, site):
    result = env.refresh(config=config(deadline=1e-9))
    assert [o.outcome for o in result.outcomes] == ["failed", "failed"]
    assert all("the run's deadline" in o.reason for o in result.outcomes)
    assert env.sql("SELECT failed FROM runs WHERE run_id = ?", [result.run_id]) == [(2,)]


@pytest.mark.parametrize("fault", ["trickle", "trickle_headers"])
def test_a_trickling_server_is_cut_off(env, site, fault):
    site.faults[PAGE[PLEDGES]] = [fault]
    started = time.monotonic()
    result = env.refresh(config=config(retries=0, max_response_seconds=0.5))
    assert time.monotonic() - started < 8
    assert "the response took over 0.5 s" in _outcome(result, PLEDGES).reason
    assert _outcome(result, FACE_DOWN).outcome == "unchanged"


@pytest.mark.parametrize("charset", ["utf-7", "utf-16", "x-no-such-charset"])
def test_a_charset_no_page_should_use_fails_or_reads_that_source_only(env, site, charset):
    site.pages[PAGE[PLEDGES]] = b"+2AA-"
    site.faults[PAGE[PLEDGES]] = [("charset", charset)]
    result = env.refresh()
    # five bytes are no ruling page, whatever the charset: the page shrank, its stored records stay
    assert _outcome(result, PLEDGES).outcome == "unchanged" and "not taken" in _outcome(result, PLEDGES).reason
    assert "Traceback" not in _outcome(result, PLEDGES).reason
    assert _outcome(result, FACE_DOWN).outcome == "unchanged"
    assert env.sql("SELECT count(*) FROM runs WHERE run_id = ?", [result.run_id]) == [(1,)]


def test_an_unexpected_exception_fails_that_source_only(env, site, monkeypatch):
    from pipeline import fetch

    real = fetch.Fetcher.fetch

    def fetch_or_break(self, source, *args):
        if source.id == FACE_DOWN:
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return real(self, source, *args)

    monkeypatch.setattr(fetch.Fetcher, "fetch", fetch_or_break)
    site.pages[PAGE[PLEDGES]] += b"<!-- new -->"
    result = env.refresh()
    assert _outcome(result, FACE_DOWN).outcome == "failed"
    assert "unexpected UnicodeEncodeError" in _outcome(result, FACE_DOWN).reason
    assert _outcome(result, PLEDGES).outcome == "changed"  # fetched after the failure, and stored
    assert env.sql("SELECT changed, failed FROM runs WHERE run_id = ?", [result.run_id]) == [(1, 1)]


@pytest.mark.parametrize("charset", ["ISO-8859-1", "windows-1252", "latin1"])
def test_utf8_served_with_a_latin_charset_header_is_read_as_utf8(env, site, charset):
    before = env.in_force(FACE_DOWN)
    site.faults[PAGE[FACE_DOWN]] = [("charset", charset)]
    site.validators = False
    result = env.refresh()
    assert _outcome(result, FACE_DOWN).outcome == "unchanged"  # the same bytes, no mojibake, nothing retired
    assert env.in_force(FACE_DOWN) == before


@pytest.mark.parametrize("target", ["localhost", "127.0.0.1"])
def test_a_redirect_checks_the_robots_txt_of_the_origin_it_goes_to(env, site, target):
    port = site.url.rsplit(":", 1)[1]
    site.robots = "User-agent: *\nDisallow: /moved/\n"
    site.pages["/moved/pledges.html"] = site.pages[PAGE[PLEDGES]] + b"<!-- moved -->"
    site.faults[PAGE[PLEDGES]] = [("redirect", f"http://{target}:{port}/moved/pledges.html")]
    result = env.refresh()
    outcome = _outcome(result, PLEDGES)
    assert outcome.outcome == "failed" and f"disallowed by http://{target}:{port}/robots.txt" in outcome.reason
    assert site.hits("/moved/pledges.html") == []


@pytest.mark.parametrize("edit, what", [(("一时除外", "一時除外"),  # read as a yearly log: most statements stay (issue 34)
                                         r"0 statements in section '里侧·一时除外 / 用何出场' \(was 66, more than 50% fewer"),
                                        (('<article role="main" id="furo-main-content">',
                                          '<main><p>公告：本站已迁移。</p></main><div class="moved">'),
                                         r"gives 1 records where the database stored 250 \(more than 50% fewer"),
                                        (("「", ""), r"card mentions where the database stored \d+ \(more than 50% fewer"),
                                        (("」", "」<br>"),
                                         r"gives 583 records where the database stored 250 \(more than 2 times as many")])
def test_a_page_that_loses_its_statements_or_rulings_to_markup_is_not_taken(env, site, edit, what):
    before = env.rules()
    site.serve_bundled({FACE_DOWN: [edit]})
    result = env.refresh()
    outcome = _outcome(result, FACE_DOWN)
    assert outcome.outcome == "unchanged" and re.search(what, outcome.reason), outcome.reason
    assert any(re.search(what, w) for w in result.warnings), result.warnings
    assert env.rules() == before
    forced = env.refresh(max_shrink=1.0)
    assert _outcome(forced, FACE_DOWN).outcome == "changed"
