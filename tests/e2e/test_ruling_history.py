"""Ruling history: a later ruling overrides an earlier one ("changed on"),
struck-through rulings are superseded and listed, never deciding a verdict."""

import json

from click.testing import CliRunner

from conftest import make_corpus
from pipeline.cli import main
from pipeline.run import build

PAGE = "ocg-rule-c03-face-down-temp-banish"
OLD = "<li><p>P召唤的怪兽变成里侧后，不再是P召唤的怪兽。"
NEWER = "<li><p>P召唤的怪兽变成里侧后，仍然是P召唤的怪兽。25/6/1</p></li>\n"


def _ask(db, *args):
    return CliRunner().invoke(main, ["ask", "pendulum_summoned", "face_down", "--db", str(db), *args])


def test_later_ruling_wins_and_ask_says_changed_on(tmp_path):
    corpus = make_corpus(tmp_path / "c", [PAGE], {PAGE: [(OLD, NEWER + OLD)]})
    build(corpus, tmp_path / "x.duckdb", tmp_path / "x.py")
    out = _ask(tmp_path / "x.duckdb")
    assert out.output.splitlines()[0] == "pendulum_summoned on face_down: kept; changed on 2025-06-01"
    data = json.loads(_ask(tmp_path / "x.duckdb", "--json").output)
    assert data["conflicts"][0]["verdict"] == "lost" and data["conflicts"][0]["latest_date"] == "2014-11-14"
    roles = {(c["role"], c["verdict"]) for c in data["citations"]}
    assert roles == {("supports", "kept"), ("conflicts", "lost")}


def test_struck_ruling_is_superseded_and_listed(tmp_path):
    struck = "<li><p><span class=\"strike\">P召唤的怪兽变成里侧后，不再是P召唤的怪兽。</span>"
    corpus = make_corpus(tmp_path / "c", [PAGE], {PAGE: [(OLD, NEWER + struck)]})
    build(corpus, tmp_path / "x.duckdb", tmp_path / "x.py")
    data = json.loads(_ask(tmp_path / "x.duckdb", "--json").output)
    assert data["verdict"] == "kept" and data["conflicts"] == []
    superseded = [c for c in data["citations"] if c["role"] == "superseded"]
    # The struck sentence is a withdrawn part of a ruling whose second sentence stands.
    assert [(c["verdict"], c["status"]) for c in superseded] == [("lost", "current")]
    assert superseded[0]["text"].startswith("P召唤的怪兽变成里侧后，不再是P召唤的怪兽。")
    shown = json.loads(CliRunner().invoke(main, ["show", superseded[0]["record_id"], "--db", str(tmp_path / "x.duckdb"),
                                                 "--json"]).output)
    assert shown["withdrawn"] == "P召唤的怪兽变成里侧后，不再是P召唤的怪兽。"


SEED = "seed-004-face-down-temp-banish"


def test_a_live_page_wins_over_its_frozen_extract_on_equal_dates(tmp_path):
    """Seed 004 is a frozen extract of the live page (same URL): an edit of
    the live page with the same date (16/1/8) is not overruled by the seed."""
    edit = ("仍然是S召唤的怪兽", "不再是S召唤的怪兽")
    corpus = make_corpus(tmp_path / "c", [SEED, PAGE], {PAGE: [edit]})
    build(corpus, tmp_path / "x.duckdb", tmp_path / "x.py")
    out = CliRunner().invoke(main, ["ask", "synchro_summoned", "face_down", "--db", str(tmp_path / "x.duckdb"), "--json"])
    data = json.loads(out.output)
    assert data["verdict"] == "lost"
    assert {c["source"] for c in data["citations"] if c["role"] == "supports"} == {PAGE}
    # The seed's copy of the edited ruling, and the page's example that shows kept in its own
    # words (「幻龙星-嘲风」…可以发动②效果, 15/2/13): both disagree, neither decides.
    assert [(c["source"], c["dates"]) for c in data["citations"] if c["role"] == "conflicts"] == [
        (PAGE, ["2015-02-13"]), (SEED, ["2016-01-08"])]


def test_each_ruling_is_cited_once_from_the_live_page(tmp_path):
    corpus = make_corpus(tmp_path / "c", [SEED, PAGE])
    build(corpus, tmp_path / "x.duckdb", tmp_path / "x.py")
    data = json.loads(_ask(tmp_path / "x.duckdb", "--json").output)
    assert [(c["source"], c["dates"]) for c in data["citations"]] == [(PAGE, ["2014-11-14"])]
