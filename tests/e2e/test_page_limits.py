"""One page cannot stall or swell a run (issue 32, items 8-10).

A page nested too deep, with too many attributes on an element, with too
many records, or that takes too long to read fails alone: one error line
naming it and the limit, its previous records kept, the other pages
built. SIGTERM stops a build whose worker is stuck, and a refresh's
deadline covers reading the pages. No test here times anything: speed is
the bench's (``python -m bench.hostile`` prints the figures)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.run as run_module
from conftest import HERE
from corpus_kit import GOOD_HTML, OTHER_TEXT, RULING, PageSpec, good_corpus, stored_records, write_corpus
from pipeline.cli import main
from pipeline.fetch import FetchConfig
from pipeline.limits import PageLimits
from pipeline.pagelimits import check_attributes, check_elements, check_nesting
from pipeline.errors import NormalizeError
from pipeline.refresh import refresh
from pipeline.run import build

# Data-safety end to end (every page, refresh and file case): `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow

PAGE = "pages/ruling-page.html"
HEAD = "<html><head><title>t</title></head><body><main><h1>里侧·一时除外</h1><h2>指示物</h2>"
TAIL = "</main></body></html>"
KEPT = [("里侧的卡片是非公开情报。基本上不能判断卡片的具体种类·等级·攻击力等情报。", []), (RULING, ["17/3/24"])]


def _page(body: str) -> str:
    return HEAD + f"<p>{RULING}</p>" + body + TAIL


@pytest.fixture(scope="module")
def good_build(tmp_path_factory) -> Path:
    """A folder with a good corpus (``c``) and its build by ``rulings build`` (``out``), made once."""
    root = tmp_path_factory.mktemp("good")
    corpus = good_corpus(root / "c", version=1)
    first = CliRunner().invoke(main, ["build", "--corpus", str(corpus), "--db", str(root / "out" / "r.duckdb"),
                                      "--engine-out", str(root / "out" / "e.py")])
    assert first.exit_code == 0, first.output
    return root


@pytest.fixture
def first_build(good_build, tmp_path) -> tuple[Path, Path, Path]:
    """This test's copy of the good build: (corpus, db, engine)."""
    shutil.copytree(good_build / "c", tmp_path / "c")
    shutil.copytree(good_build / "out", tmp_path / "out")
    return tmp_path / "c", tmp_path / "out" / "r.duckdb", tmp_path / "out" / "e.py"


def _build_twice(first_build: tuple[Path, Path, Path], hostile: str | bytes, *options: str):
    """From a build of a good corpus (``first_build``), build again with
    ``ruling-page`` replaced by ``hostile`` and ``other-page`` changed, with
    ``options``; returns the second run's CLI result and the database."""
    corpus, db, engine = first_build
    args = ["build", "--corpus", str(corpus), "--db", str(db), "--engine-out", str(engine)]
    assert [r[1:] for r in stored_records(db, "ruling-page")] == KEPT
    data = hostile.encode("utf-8") if isinstance(hostile, str) else hostile
    (corpus / PAGE).write_bytes(data)
    (corpus / "pages/other-page.txt").write_text(OTHER_TEXT.format(n=2), encoding="utf-8")
    return CliRunner().invoke(main, args + list(options)), db


def _assert_failed_alone(out, db: Path, error: str) -> None:
    """``ruling-page`` failed with exactly ``error`` (one line), kept its
    records; ``other-page`` was built again."""
    assert out.exit_code == 1, out.output
    errors = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {error}"]
    assert "warning: ruling-page: kept 2 records of the previous build" in out.output
    assert "sources          2 (1 built)" in out.output
    assert [r[1:] for r in stored_records(db, "ruling-page")] == KEPT
    assert stored_records(db, "other-page")[-1][1].endswith("Version 2.")


# --------------------------------------------------------------------------- 8. nesting

# Deeper than libxml2's 2,048 levels (the page goes to the second parser), over a limit of 3,000.
NESTED = {
    "div": _page("<div>" * 3500 + "文字" + "</div>" * 3500),
    "span": _page("<p>" + "<span>" * 3500 + "文字" + "</span>" * 3500 + "</p>"),
    "table": _page("<table><tr><td>" * 1200 + "文字" + "</td></tr></table>" * 1200),
    "list": _page("<ul><li>" * 1600 + "文字" + "</li></ul>" * 1600),
}
# The first element over the limit, counted in document order: html, head, title, body, main, h1, h2, p, then
# the nested ones (html, body and main are open: the 2,998th nested element is the 3,001st level).
NESTED_ELEMENT = {"div": "element 3006 <div>", "span": "element 3006 <span>", "table": "element 3006 <table>",
                  "list": "element 3006 <li>"}


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_a_page_nested_over_the_limit_fails_alone(first_build, shape):
    out, db = _build_twice(first_build, NESTED[shape], "--max-nesting", "3000")
    _assert_failed_alone(out, db, f"[normalize] ruling-page, {NESTED_ELEMENT[shape]}: markup nested over 3000 "
                                  "levels deep, over the limit (--max-nesting)")


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_a_page_nested_under_the_limit_is_read(first_build, shape):
    out, db = _build_twice(first_build, NESTED[shape], "--max-nesting", "8000")
    assert out.exit_code == 0, out.output
    texts = [r[1] for r in stored_records(db, "ruling-page")]
    assert RULING in texts and any("文字" in t for t in texts)


@pytest.mark.parametrize("markup, deepest", [
    ("<p>a" * 5000, 3),  # html, body, one p: an open <p> closes the one before
    ("<li>a" * 5000, 3),
    ("<div>" * 40 + "a" + "</div>" * 40 + "<b>x</b>" * 5000, 42),
    ("</div>" * 5000 + "<div>" * 12, 14),  # stray end tags close nothing
])
def test_nesting_is_counted_as_the_parser_nests(markup, deepest):
    check_nesting(markup, deepest)  # at the limit: no error
    with pytest.raises(NormalizeError, match=f"nested over {deepest - 1} levels deep"):
        check_nesting(markup, deepest - 1)


# --------------------------------------------------------------------------- 9. attributes

ATTRIBUTES = {
    "one tag, 1,001 attributes": _page("<p><span " + " ".join(f'a{i}="x"' for i in range(1001)) + ">x</span></p>"),
    "values holding > and <": _page("<p><span " + "".join(f"a{i}='>' b{i}=\"<\" " for i in range(800))
                                    + ">x</span></p>"),
    "no spaces between them": _page("<p><span " + "".join(f'a{i}="x"' for i in range(1500)) + ">x</span></p>"),
    "many tags, boolean attributes": _page("<p>" + ("<span " + " ".join(f"a{i}" for i in range(1200)) + ">x</span>")
                                           * 50 + "</p>"),
}


@pytest.mark.parametrize("shape", sorted(ATTRIBUTES))
def test_a_page_with_too_many_attributes_on_an_element_fails_alone(first_build, shape):
    html = ATTRIBUTES[shape]
    line = html[:html.index("<span")].count("\n") + 1
    out, db = _build_twice(first_build, html)
    _assert_failed_alone(out, db, f"[normalize] ruling-page, line {line}: more than 1000 attributes on one element, "
                                  "over the limit (--max-attributes)")


PAGE_ATTRIBUTES = {
    "attributes with values": _page("<p>" + '<span class="c" id="i" title="t">x</span>\n' * 400 + "</p>"),
    "boolean attributes, no spaces": _page("<p>" + '<span a="x"b="x"c/d/e>x</span>\n' * 400 + "</p>"),
}


@pytest.mark.parametrize("shape", sorted(PAGE_ATTRIBUTES))
def test_a_page_with_too_many_attributes_in_all_fails_alone(first_build, shape):
    """1,000 is over 333 tags of three attributes (five in the second shape: 200 tags)."""
    html = PAGE_ATTRIBUTES[shape]
    first = html.index("<span")
    per_tag = 3 if shape == "attributes with values" else 5
    line = html[:first].count("\n") + 1 + 1000 // per_tag
    out, db = _build_twice(first_build, html, "--max-page-attributes", "1000")
    _assert_failed_alone(out, db, f"[normalize] ruling-page, line {line}: more than 1000 attributes on the page's "
                                  "elements, over the limit (--max-page-attributes)")


ELEMENTS = {  # (page, the line of the 1,001st start tag: html, head, title, body, main, h1, h2 and p come first)
    "empty divs": (_page("<div></div>\n" * 1500), 993),
    "inline elements in one paragraph": (_page("<p>" + "<b>x</b>\n" * 1500 + "</p>"), 992),
}


@pytest.mark.parametrize("shape", sorted(ELEMENTS))
def test_a_page_of_too_many_elements_fails_alone(first_build, shape):
    html, line = ELEMENTS[shape]
    out, db = _build_twice(first_build, html, "--max-page-elements", "1000")
    _assert_failed_alone(out, db, f"[normalize] ruling-page, line {line}: more than 1000 elements on one page, over "
                                  "the limit (--max-page-elements)")


def test_elements_are_start_tags():
    check_elements("<p>a < b, c <= d</p>" * 500 + "<!-- x -->" * 2000, 500)  # "<" in text, comments
    with pytest.raises(NormalizeError, match="line 3: more than 2 elements on one page"):
        check_elements("<p>\n</p><br>\n<i>x</i>", 2)


def test_attributes_are_counted_per_element_and_in_all():
    many_small = "<p " + 'class="a" id="b" ' + ">x</p>"
    check_attributes(many_small * 10000, 3)  # 20,000 attributes in all, two an element
    check_attributes(many_small * 10000, 3, page_limit=20000)
    check_attributes('<p title="' + "a b c " * 1000 + '">x</p>', 3, page_limit=3)  # one long value
    with pytest.raises(NormalizeError, match="line 2: more than 3 attributes on one element"):
        check_attributes("<p>\n<i a b c d>x</i>", 3)
    with pytest.raises(NormalizeError, match="line 1: more than 19999 attributes on the page's elements"):
        check_attributes(many_small * 10000, 3, page_limit=19999)


# --------------------------------------------------------------------------- 9. time

def _stuck_in_c(data, source, *args):
    """A page read that never returns and ignores SIGTERM (a parser stuck in C code)."""
    if source.id == "ruling-page":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        marker = os.environ.get("RULINGS_TEST_STUCK")
        if marker:
            Path(marker).write_text(str(os.getpid()))
        time.sleep(3600)
    return _real_normalize(data, source, *args)


def _busy_in_python(data, source, *args):
    if source.id == "ruling-page":
        while True:
            pass
    return _real_normalize(data, source, *args)


_real_normalize = run_module.normalize


@pytest.fixture(scope="module")
def five_pages(tmp_path_factory) -> Path:
    """A folder with a corpus of the ruling page and four others (``c``) and its build (``out``), made once."""
    root = tmp_path_factory.mktemp("five")
    corpus = write_corpus(root / "c", [
        PageSpec("ruling-page", GOOD_HTML),
        *(PageSpec(f"other-{i}", OTHER_TEXT.format(n=i), format="text", language="en", script="Latn", region="")
          for i in range(4))])
    assert build(corpus, root / "out" / "r.duckdb", root / "out" / "e.py").errors == []
    return root


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("slow", [_stuck_in_c, _busy_in_python], ids=["stuck in C", "busy in Python"])
def test_a_page_over_the_page_timeout_fails_alone(five_pages, tmp_path, monkeypatch, slow, workers):
    """The worker reading the page is ended; the others go on (the workers
    are forked, so they inherit the slow stand-in)."""
    corpus = shutil.copytree(five_pages / "c", tmp_path / "c")
    out = shutil.copytree(five_pages / "out", tmp_path / "out")
    db, engine = out / "r.duckdb", out / "e.py"
    monkeypatch.setattr(run_module, "normalize", slow)
    result = build(corpus, db, engine, workers=workers, limits=PageLimits(timeout=1.5))
    assert result.errors == [f"[normalize] ruling-page, {PAGE}: reading the page took over 1.5 s, over the limit "
                             "(--page-timeout); its worker process was ended"]
    assert result.warnings == ["ruling-page: kept 2 records of the previous build"]
    assert result.pages_ok == 4
    assert [r[1:] for r in stored_records(db, "ruling-page")] == KEPT
    assert all(stored_records(db, f"other-{i}") for i in range(4))


SIGTERM_SCRIPT = """
import sys
sys.path[:0] = [{here!r}, {tests!r}]  # this file's folder, and tests/ for the corpus kit
import pipeline.run as run_module
import test_page_limits
run_module.normalize = test_page_limits._stuck_in_c
from pipeline.cli import main
main(["build", "--corpus", {corpus!r}, "--db", {db!r}, "--engine-out", {engine!r}, "--workers", {workers!r}])
"""


@pytest.mark.slow  # whole builds and refreshes killed or timed out: make test-slow, CI
@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_stops_a_build_whose_worker_is_stuck(tmp_path, workers):
    """The worker ignores SIGTERM and never returns: the build kills it,
    exits 143 and leaves the previous database as it was."""
    corpus = good_corpus(tmp_path / "c")
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(corpus, db, engine).errors == []
    before = db.read_bytes()
    marker = tmp_path / "stuck.pid"
    script = SIGTERM_SCRIPT.format(here=str(Path(__file__).parent), tests=str(HERE), corpus=str(corpus), db=str(db),
                                   engine=str(engine), workers=workers)
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "RULINGS_TEST_STUCK": str(marker)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(1200):  # the stuck page has started (spaCy loads first)
            if marker.exists() and marker.read_text() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None and marker.read_text()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143  # not forever: the stuck worker was killed
    finally:
        proc.kill()
        proc.wait()
    worker = int(marker.read_text())
    for _ in range(100):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the stuck worker {worker} outlived the build")
    assert db.read_bytes() == before


# --------------------------------------------------------------------------- 9. a refresh's deadline

class _Server(BaseHTTPRequestHandler):
    pages: dict[str, bytes] = {}

    def do_GET(self):  # noqa: N802
        body = self.pages.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _fetched_corpus(tmp_path: Path, url: str) -> Path:
    """Two fetchable pages, ``first-page`` and ``ruling-page`` (in that
    order), built once from their bundled copies; the server then serves
    changed versions of both."""
    pages = [PageSpec("first-page", GOOD_HTML.replace("前言", "序"), url=f"{url}/first.html"),
             PageSpec("ruling-page", GOOD_HTML, url=f"{url}/ruling.html")]
    corpus = write_corpus(tmp_path / "c", pages)
    manifest = corpus / "manifest.tsv"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("\tno\t", "\tyes\t"), encoding="utf-8")
    assert build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py").errors == []
    new = "<p>新的一条：放置指示物的卡被除外后，指示物全部消失。18/1/5</p></main>"
    _Server.pages = {"/first.html": GOOD_HTML.replace("前言", "序").replace("</main>", new).encode("utf-8"),
                     "/ruling.html": GOOD_HTML.replace("</main>", new).encode("utf-8")}
    return corpus


@pytest.mark.parametrize("bound, message", [
    ({"deadline": 20.0}, "not read: the run's deadline was reached (--deadline)"),
    ({"timeout": 1.5}, "reading the page took over 1.5 s, over the limit (--page-timeout); its worker process was "
                       "ended"),
], ids=["run deadline", "page timeout"])
@pytest.mark.slow  # whole builds and refreshes killed or timed out: make test-slow, CI
def test_a_refresh_bounds_reading_pages_and_stores_what_was_done(tmp_path, monkeypatch, server, bound, message):
    corpus = _fetched_corpus(tmp_path, server)
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    monkeypatch.setattr(run_module, "normalize", _stuck_in_c)
    config = FetchConfig(rate_limit=0, timeout=5.0, retries=0, deadline=bound.get("deadline", 3600.0))
    result = refresh(corpus, db, engine, config=config, limits=PageLimits(timeout=bound.get("timeout", 3600.0)))
    outcomes = {o.source_id: o for o in result.outcomes}
    assert outcomes["first-page"].outcome == "changed" and outcomes["first-page"].added == 1
    assert outcomes["ruling-page"].outcome == "failed"
    assert f"refused: [normalize] ruling-page, {PAGE}: {message}; snapshot " in outcomes["ruling-page"].reason
    first_texts = [r[1] for r in stored_records(db, "first-page")]
    assert "新的一条：放置指示物的卡被除外后，指示物全部消失。18/1/5" in first_texts  # stored
    assert [r[1:] for r in stored_records(db, "ruling-page")] == KEPT


# --------------------------------------------------------------------------- 10. records per page

MANY = {
    "paragraphs": _page("".join(f"<p>「卡{i}」可以发动。17/3/24</p>" for i in range(700))),
    "list items": _page("<ul>" + "".join(f"<li>「卡{i}」可以发动。17/3/24</li>" for i in range(700)) + "</ul>"),
    "table rows": _page("<table>" + "".join(f"<tr><td>「卡{i}」</td><td>可以发动。17/3/24</td></tr>"
                                            for i in range(700)) + "</table>"),
}


@pytest.mark.parametrize("shape", sorted(MANY))
def test_a_page_of_too_many_records_fails_alone(first_build, shape):
    out, db = _build_twice(first_build, MANY[shape], "--max-page-records", "500")
    _assert_failed_alone(out, db, "[normalize] ruling-page, block 500: over 500 records on one page, over the "
                                  "limit (--max-page-records)")


def test_records_cut_from_one_block_count_too(first_build):
    """Dated rulings one after the other in one paragraph (<br>) become
    records of their own: they are counted after extract."""
    rulings = "<br>".join(f"「卡{i}」可以发动。17/3/{1 + i % 28}" for i in range(600))
    out, db = _build_twice(first_build, _page(f"<p>{rulings}</p>"), "--max-page-records", "500")
    _assert_failed_alone(out, db, "[extract] ruling-page, whole page: 601 records, over the limit of 500 "
                                  "(--max-page-records)")


def test_a_text_page_of_too_many_blocks_fails_alone(tmp_path):
    corpus = good_corpus(tmp_path / "c")
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    assert build(corpus, db, engine).errors == []
    (corpus / "pages/other-page.txt").write_text("\n\n".join(f"Ruling {i}: it can be activated."
                                                             for i in range(700)), encoding="utf-8")
    result = build(corpus, db, engine, limits=PageLimits(max_records=500))
    assert result.errors == ["[normalize] other-page, line 1001: over 500 records on one page, over the limit "
                             "(--max-page-records)"]
    assert [r[1:] for r in stored_records(db, "ruling-page")] == KEPT
