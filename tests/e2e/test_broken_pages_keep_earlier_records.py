"""Broken pages: each gets an error or a warning naming the source and the
place, the build goes on with the other pages, and a page that fails keeps
the records an earlier build stored."""

from __future__ import annotations

import gzip
import os
import shutil

import pytest
from click.testing import CliRunner

from conftest import import_module_from
from corpus_kit import GOOD_HTML, OTHER_TEXT, RULING, good_corpus, stored_records
from pipeline.cli import main
from pipeline.corpus import DEFAULT_MAX_PAGE_BYTES
from pipeline.run import build

# Data-safety end to end (every page, refresh and file case): `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow

PAGE = "pages/ruling-page.html"
WRAP = "<html><body><main><h1>里侧·一时除外</h1><h2>指示物</h2>{}</main></body></html>"


def _sparse(size: int):
    def write(path):
        path.unlink()
        with path.open("wb") as fh:
            fh.truncate(size)  # a sparse file: the size is real, the disk is not used
    return write


def _content(data: bytes):
    return lambda path: path.write_bytes(data)


def _folder(path):
    path.unlink()
    path.mkdir()


def _fifo(path):
    path.unlink()
    os.mkfifo(path)  # reading it would wait for a writer forever


# (case, how to break the page, words of the error, the place it names)
FAILING = [
    ("empty", _content(b""), "page is empty", "byte 0"),
    ("whitespace only", _content(b" \n\t\r\n "), "page is empty", "byte 0"),
    ("binary", _content(bytes(range(256)) * 8), "binary", "byte 0"),
    ("gzip saved raw", _content(gzip.compress(GOOD_HTML.encode("utf-8"))), "binary", "byte 0"),
    ("50 MB", _sparse(50 * 1024 * 1024), f"over the limit of {DEFAULT_MAX_PAGE_BYTES} bytes", PAGE),
    ("no body", _content(b"<html><head><title>moved</title></head></html>"), "no body or content element", "<body>"),
    ("no text", _content(b"<html><body><main><div><img src=x></div></main></body></html>"),
     "no text in its content element", "<main>"),
    ("a folder", _folder, "not a regular file", PAGE),
    ("a FIFO", _fifo, "not a regular file", PAGE),
    ("a sentence over a million characters", _content(WRAP.format("<p>" + "指" * 1_100_000 + "</p>").encode()),
     "over the limit of 1000000", "block 0 (section 里侧·一时除外 / 指示物)"),
]


@pytest.fixture(scope="module")
def good_build(tmp_path_factory):
    """A folder with the good corpus (``c``) and its build (``out``), made once:
    each test breaks a copy."""
    root = tmp_path_factory.mktemp("good")
    corpus = good_corpus(root / "c", version=1)
    assert build(corpus, root / "out" / "r.duckdb", root / "out" / "e.py").errors == []
    return root


@pytest.mark.parametrize("case, breaks, message, place", FAILING, ids=[c[0] for c in FAILING])
def test_failing_page_is_named_and_keeps_its_records(good_build, tmp_path, case, breaks, message, place):
    corpus = shutil.copytree(good_build / "c", tmp_path / "c")
    out = shutil.copytree(good_build / "out", tmp_path / "out")
    db, engine = out / "r.duckdb", out / "e.py"
    before = stored_records(db, "ruling-page")
    assert [r[1:] for r in before] == [("里侧的卡片是非公开情报。基本上不能判断卡片的具体种类·等级·攻击力等情报。", []),
                                       (RULING, ["17/3/24"])]

    breaks(corpus / PAGE)
    (corpus / "pages/other-page.txt").write_text(OTHER_TEXT.format(n=2), encoding="utf-8")
    second = build(corpus, db, engine)

    [error] = second.errors
    assert error.startswith(("[normalize] ruling-page, ", "[extract] ruling-page, "))
    assert message in error and place in error
    assert second.warnings == ["ruling-page: kept 2 records of the previous build"]
    assert stored_records(db, "ruling-page") == before
    assert [r[1] for r in stored_records(db, "other-page")][-1].endswith("Version 2.")  # the run went on
    r = import_module_from(engine).retains("counters", "face_down")
    assert (r.verdict, r.dates) == ("lost", ("2017-03-24",))


def test_page_limit_is_configurable_and_named(tmp_path):
    corpus = good_corpus(tmp_path / "c")
    out = CliRunner().invoke(main, ["build", "--corpus", str(corpus), "--db", str(tmp_path / "r.duckdb"),
                                    "--engine-out", str(tmp_path / "e.py"), "--max-page-bytes", "200"])
    assert out.exit_code == 1
    size = len(GOOD_HTML.encode("utf-8"))
    assert (f"error: [normalize] ruling-page, {PAGE}: page is {size} bytes, over the limit of 200 bytes "
            "(--max-page-bytes)") in out.output
    assert "sources          2 (1 built)" in out.output


def _ruling_page(body: str) -> str:
    return GOOD_HTML.replace(f"<p>{RULING}</p>", body)


DEEP = 20_000

# (case, page text, words of the warning or None); the ruling must still be read.
WARNED = [
    ("truncated", GOOD_HTML[:GOOD_HTML.index("</main>")], "page ends at line 8 without </html>; it may be truncated"),
    ("mismatched tags", _ruling_page(f"<div><p><b>{RULING}</p></i></div>"),
     "mismatched or unclosed tags repaired, the first at line 7, column"),
    ("deeply nested", _ruling_page("<div>" * DEEP + f"<p>{'<b>' * DEEP}{RULING}{'</b>' * DEEP}</p>"
                                   + "</div>" * DEEP), None),
    ("no content element", _ruling_page("").replace("<main>", "<div>").replace("</main>", "</div>")
     .replace("</div></body>", f"<p>{RULING}</p></div></body>"), "no content element"),
    ("control characters", _ruling_page(f"<p>{RULING[:5]}\x01\x7f{RULING[5:]}</p>"),
     "2 control characters removed, the first (U+0001) at char"),
]


@pytest.mark.parametrize("case, html, warning", WARNED, ids=[c[0] for c in WARNED])
def test_damaged_html_is_read_with_a_warning(tmp_path, case, html, warning):
    corpus = good_corpus(tmp_path / "c")
    (corpus / PAGE).write_text(html, encoding="utf-8")
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert result.errors == []
    page_warnings = [w for w in result.warnings if w.startswith("ruling-page: ")]
    if warning is None:
        assert page_warnings == []
    else:
        assert len(page_warnings) == 1 and warning in page_warnings[0]
    assert (RULING, ["17/3/24"]) in [r[1:] for r in stored_records(tmp_path / "r.duckdb", "ruling-page")]
    assert import_module_from(tmp_path / "e.py").retains("counters", "face_down").verdict == "lost"


JAPANESE = "<p>裏側表示になったモンスターは、カウンターを全て失います。リバースした場合も同じです。</p>" * 3
ENGLISH = "<p>A monster that is turned face-down loses all of its counters, and so does a banished one.</p>"


@pytest.mark.parametrize("body, shares", [(JAPANESE, "Japanese kana"), (ENGLISH, "Latin")])
def test_page_in_an_unexpected_language_is_warned_about(tmp_path, body, shares):
    corpus = good_corpus(tmp_path / "c")
    (corpus / PAGE).write_text(WRAP.format(body), encoding="utf-8")
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    [warning] = [w for w in result.warnings if w.startswith("ruling-page: ")]
    assert "declared language 'zh' but most letters are not Chinese (" in warning
    assert shares in warning and "first such block: block 0 (section 里侧·一时除外 / 指示物)" in warning


def test_dated_line_in_a_text_page_is_a_ruling_not_a_heading(tmp_path):
    corpus = good_corpus(tmp_path / "c")
    page = "Battle Position\n\nA ruling.\n\n4/7/19\n\nAnother.\n"
    (corpus / "pages/other-page.txt").write_text(page, encoding="utf-8")
    build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert [r[1:] for r in stored_records(tmp_path / "r.duckdb", "other-page")] == [
        ("A ruling.", []), ("4/7/19", ["4/7/19"]), ("Another.", [])]


def test_unexpected_exception_in_a_stage_fails_only_that_page(tmp_path, monkeypatch):
    """A safety net for what no check foresaw: the stage's error, named, and the run goes on."""
    import pipeline.run as run

    real = run.extract

    def extract(page, kinds):
        if page.source_id == "ruling-page":
            raise KeyError("surprise")
        return real(page, kinds)

    corpus = good_corpus(tmp_path / "c")
    build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    monkeypatch.setattr(run, "extract", extract)
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert result.errors == [f"[extract] ruling-page, {PAGE}: unexpected KeyError: 'surprise'"]
    assert result.pages_ok == 1 and len(stored_records(tmp_path / "r.duckdb", "ruling-page")) == 2


# Sixty dated rulings with nothing between them but spaces: one cell, or <pre> lines of one paragraph.
RUN_TOGETHER = " ".join(f"{17 + i % 5}/3/{1 + i % 28} 「卡{i}」的效果不能发动。" for i in range(60))


@pytest.mark.parametrize("body", [f"<table><tr><td>{RUN_TOGETHER}</td></tr></table>", f"<p>{RUN_TOGETHER}</p>",
                                  f"<div><span>{RUN_TOGETHER}</span></div>"])
def test_rulings_run_together_into_one_record_are_warned_about(tmp_path, body):
    corpus = good_corpus(tmp_path / "c")
    (corpus / PAGE).write_text(WRAP.format(f"<p>{RULING}</p>{body}"), encoding="utf-8")
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert result.errors == []
    [warning] = [w for w in result.warnings if w.startswith("ruling-page: ")]
    assert warning.startswith("ruling-page: record 2 (里侧·一时除外 > 指示物) holds 60 date stamps: rulings run "
                              "together in a layout the pipeline does not separate? See `rulings show r")


@pytest.mark.parametrize("body", [
    "<table><tr><td><h2>指示物</h2>{}</td></tr></table>",  # a layout table: its cell holds sections
    "<table><tr><td>{}</td></tr></table>",  # its only cell holds two or more paragraphs
    "<pre>{}</pre>",  # preformatted lines, each dated
    "<p>{}</p>",  # lines separated by <br>
])
def test_dated_rulings_in_a_layout_cell_pre_or_br_lines_are_records_of_their_own(tmp_path, body):
    rulings = [f"{17 + i % 5}/3/{1 + i % 28} 「卡{i}」的效果不能发动。" for i in range(30)]
    sep = "\n" if body.startswith("<pre") else "<br>" if body.startswith("<p>") else None
    inner = sep.join(rulings) if sep else "".join(f"<p>{r}</p>" for r in rulings)
    corpus = good_corpus(tmp_path / "c")
    (corpus / PAGE).write_text(WRAP.format(body.format(inner)), encoding="utf-8")
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert [w for w in result.warnings if w.startswith("ruling-page: ")] == []
    stored = [r[1] for r in stored_records(tmp_path / "r.duckdb", "ruling-page")]
    assert stored == rulings
