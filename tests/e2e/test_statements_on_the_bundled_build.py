"""Statements of a build: the score against the gold with its misses, every
citation stating its rule's kind and event, statements from every page of
the site, a conflict answered as one."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import GOLD, make_corpus
from pipeline.cli import main


def test_evaluate_statements_prints_misses_and_a_score(built):
    _, db, _ = built
    out = CliRunner().invoke(main, ["evaluate", "--statements", str(GOLD / "statements_public.jsonl"), "--db", str(db)])
    assert out.exit_code == 0
    last = out.output.splitlines()[-1]
    assert last.startswith("statements P=") and " R=" in last and " F1=" in last
    data = json.loads(CliRunner().invoke(main, ["evaluate", "--statements", str(GOLD / "statements_public.jsonl"),
                                                "--db", str(db), "--json"]).output)
    assert data["scored"] == 251 - sum(1 for line in (GOLD / "statements_public.jsonl").open() if '"skip": true' in line)
    assert data["precision"] >= 0.90  # measured 0.93 (README); recall is still under the goal
    assert data["dates_ok"] == data["dated_units"]  # every unit's own dates are on its records
    assert f"P={data['precision']:.2f}" in last


def test_every_citation_states_its_rules_kind_and_event(built):
    import duckdb

    con = duckdb.connect(str(built[1]), read_only=True)
    bad = con.execute("""
        SELECT c.info_kind, c.event, c.record_id FROM rule_citations c JOIN rules r USING (info_kind, event)
        WHERE c.role = 'supports' AND r.verdict <> 'not_applicable'
          AND NOT EXISTS (SELECT 1 FROM statements s WHERE s.record_id = c.record_id AND s.info_kind = c.info_kind
                          AND s.event = c.event AND s.basis IN ('stated', 'example', 'exception', 'card_text'))""").fetchall()
    assert bad == []
    assert con.execute("""SELECT count(*) FROM rule_citations c JOIN records r USING (record_id)
                          WHERE c.role = 'supports' AND r.status <> 'current'""").fetchone()[0] == 0


def test_the_topic_page_read_as_a_yearly_log_still_gives_most_of_its_statements(tmp_path, monkeypatch):
    """Rulings outside a topic section must name their kind themselves. How
    well they are read is measured on the gold page with its topic taken
    away (every section read as a yearly log reads it): 85/4/210 (R=0.29)
    before the subject of a ruling was read, 174/8/121 (P=0.96 R=0.59) after,
    191/10/104 (P=0.95 R=0.65) with kinds named as information and rulings
    that go on with the one before, 197/10/98 (P=0.95 R=0.67) with the
    phrasings of issue 34 (tests/test_reading.py)."""
    import duckdb

    from pipeline import evaluation
    from pipeline import retention
    from pipeline.run import build

    monkeypatch.setattr(retention, "section_config", lambda section: None)
    corpus = make_corpus(tmp_path / "c", ["ocg-rule-c03-face-down-temp-banish"])
    build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py", workers=1)
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        score = evaluation.score_statements(con, evaluation.read_statement_gold(GOLD / "statements_public.jsonl"))
    assert score["precision"] >= 0.94 and score["recall"] >= 0.66, score


def test_the_whole_site_gives_statements_on_other_pages(built):
    import duckdb

    with duckdb.connect(str(built[1]), read_only=True) as con:
        rows = con.execute("""SELECT r.source_id, s.info_kind, s.event, s.verdict FROM statements s
                              JOIN records r USING (record_id)
                              WHERE r.source_id NOT IN ('ocg-rule-c03-face-down-temp-banish',
                                                        'seed-004-face-down-temp-banish')""").fetchall()
    pages = {r[0] for r in rows}
    assert {"ocg-rule-c06-rulings-2021", "ocg-rule-c06-rulings-2022", "ocg-rule-c04-mirrorjade-iceblade-dragon",
            "edisonrul-book-of-moon"} <= pages
    assert ("ocg-rule-c06-rulings-2021", "summoned_from_location", "temp_banish", "kept") in rows
    assert ("ocg-rule-c04-mirrorjade-iceblade-dragon", "fusion_summoned", "temp_banish", "kept") in rows
    assert not any(r[1:] == ("special_summoned", "flip_face_up", "lost") for r in rows)  # 「名推理」翻开


def test_book_of_moon_page_shows_as_a_conflict(built):
    run = CliRunner().invoke(main, ["ask", "flip_summoned", "face_down", "--db", str(built[1]), "--json"])
    report = json.loads(run.stdout)
    assert report["verdict"] == "lost"
    english_cites = {c["verdict"] for c in report["citations"] if c["source"] == "edisonrul-book-of-moon"}
    assert english_cites == {"kept", "lost"}  # "remembers ... Flip Summoned" and "forgets ... Flip Summoned"
    assert [c["verdict"] for c in report["conflicts"]] == ["kept"]
