"""Builds: game terms in every kind of quote share one key and are never
linked to a card; the shrink guard compares a page's statements per section."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from corpus_kit import PageSpec, db_fingerprint, write_corpus
from pipeline.cli import main
from pipeline.run import build


FACE_DOWN = "ocg-rule-c03-face-down-temp-banish"
FACE_DOWN_PAGE = "pages/ocg-rule/c03-face-down-temp-banish.html"
HOW_SUMMONED = '<h2>用何出场<a class="headerlink" href="#id10" title="链接到此标题。">¶</a></h2>'


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _page(body: str, lang: str = "zh-CN") -> str:
    return f"<html lang='{lang}'><body><main><h1>用语</h1><p>{body}</p></main></body></html>"


def _number_headings(html: str, form: str) -> str:
    """Every <h2> numbered in ``form`` (``{n}、``)."""
    n = itertools.count(1)
    return re.sub(r"<h2>", lambda m: "<h2>" + form.format(n=next(n)), html)


HIDDEN_BY_NUMBERS = (lambda html: _number_headings(html, "{n}、"), "里侧·一时除外 / 用何出场", 66)
MOVED_OUT_OF_HEADING = (lambda html: html.replace(HOW_SUMMONED, ""), "里侧·一时除外 / 用何出场", 66)

HIDDEN_BY_OTHER_NUMBERS = (lambda html: _number_headings(html, "{n}) "), "里侧·一时除外 / 用何出场", 66)


def _edit(corpus: Path, edit) -> None:
    page = corpus / FACE_DOWN_PAGE
    page.write_text(edit(page.read_text(encoding="utf-8")), encoding="utf-8")



def test_terms_in_every_quote_share_one_key_and_are_never_linked(tmp_path):
    """The stored rows: one kind and one match_key for a term however it is quoted and written."""
    corpus = write_corpus(tmp_path / "c", [
        PageSpec("cn", _page("“永续魔法”和「永续魔法」都是『永续魔法』，\"战斗阶段\"即「战斗阶段」。")),
        PageSpec("tw", _page("「永續魔法」在『戰鬥階段』。", "zh-Hant-TW"), script="Hant", region="TW"),
    ])
    db = tmp_path / "r.duckdb"
    assert build(corpus, db, tmp_path / "e.py").errors == []
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT match_key, kind, passcode, quote FROM card_mentions").fetchall()
    finally:
        con.close()
    by_key = {}
    for key, kind, passcode, quote in rows:
        by_key.setdefault(key, set()).add((kind, passcode, quote))
    assert by_key == {"战斗阶段": {("term", None, q) for q in ('""', "『』", "「」")},
                      "永续魔法": {("term", None, q) for q in ("“”", "『』", "「」")}}


@pytest.mark.parametrize("edit, section, before", [HIDDEN_BY_NUMBERS, HIDDEN_BY_OTHER_NUMBERS, MOVED_OUT_OF_HEADING])
def test_a_build_keeps_a_page_one_of_whose_sections_lost_its_statements(build_copy, tmp_path, edit, section, before):
    corpus, db, engine = build_copy([FACE_DOWN, "seed-000-battle-position"], tmp_path)
    kept = db_fingerprint(db)
    _edit(corpus, edit)
    out = run("build", "--corpus", corpus, "--db", db, "--engine-out", engine)
    assert out.exit_code == 0
    [warning] = [line for line in out.output.splitlines() if line.startswith("warning:")]
    assert warning == (f"warning: {FACE_DOWN}: gives 0 statements in section '{section}' (was {before}, more than 50% "
                       f"fewer; the section is gone) against the previous build (a markup change?); kept 250 records "
                       f"of the previous build (--max-shrink 1 accepts the page)")
    assert db_fingerprint(db) == kept
    forced = run("build", "--corpus", corpus, "--db", db, "--engine-out", engine, "--max-shrink", "1")
    assert forced.exit_code == 0 and "warning:" not in forced.output
    assert db_fingerprint(db) != kept


def test_an_ordinary_edit_passes_the_section_guard(build_copy, tmp_path):
    """Numbers the topic reading knows (``3. 指示物``: the sections are the same),
    one ruling less and one more: built, no warning."""
    corpus, db, engine = build_copy([FACE_DOWN, "seed-000-battle-position"], tmp_path)
    _edit(corpus, lambda html: _number_headings(html, "{n}. ").replace(
        '<div class="line">一时除外的场合丢失。</div>', "").replace(
        '<div class="line">进行了攻击宣言的情报在变成里侧表示后不会丢失。',
        '<div class="line">表示形式变更过的情报在变成里侧表示后不会丢失。</div><div class="line">进行了攻击宣言的情报在变成里侧表示后不会丢失。'))
    out = run("build", "--corpus", corpus, "--db", db, "--engine-out", engine)
    assert out.exit_code == 0 and "warning:" not in out.output, out.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = {r[0] for r in con.execute("SELECT section_path FROM records WHERE source_id = ?",
                                           [FACE_DOWN]).fetchall()}
        texts = {r[0] for r in con.execute("SELECT text FROM records WHERE source_id = ?", [FACE_DOWN]).fetchall()}
    finally:
        con.close()
    assert "里侧·一时除外 / 3. 表示形式" in paths and "表示形式变更过的情报在变成里侧表示后不会丢失。" in texts
    assert "一时除外的场合丢失。" not in texts
