"""The build spread over worker processes gives the same database and the
same engine bytes as a build in one process, and a broken page in a worker
is handled as in the build's own process."""

from __future__ import annotations

import shutil

import duckdb

from pipeline.corpus import BUNDLED_CORPUS
from pipeline.run import build

TABLES = {
    "records": "record_id, source_id, seq, section_path, status, text, norm_text, snapshot_hash",
    "record_dates": "record_id, ord, raw, date, valid, from_heading, faq_id",
    "card_mentions": "record_id, ord, name, passcode, linked_by",
    "statements": "record_id, info_kind, event, verdict, basis, principle_id",
    "rules": "info_kind, event, verdict, latest_date, record_ids",
    "rule_citations": "info_kind, event, record_id, role, date",
}


def _contents(db) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT {cols} FROM {t} ORDER BY ALL").fetchall() for t, cols in TABLES.items()}
    finally:
        con.close()


def test_two_workers_build_what_one_process_builds(tmp_path, built):
    result, db, engine = built  # the session's build: 12 pages, one worker per core
    one = build(BUNDLED_CORPUS, tmp_path / "one.duckdb", tmp_path / "one.py", workers=1)
    two = build(BUNDLED_CORPUS, tmp_path / "two.duckdb", tmp_path / "two.py", workers=2)
    assert (one.workers, two.workers) == (1, 2)
    assert (tmp_path / "one.py").read_bytes() == (tmp_path / "two.py").read_bytes() == engine.read_bytes()
    contents = _contents(tmp_path / "one.duckdb")
    assert len(contents["records"]) == 7090 and len(contents["statements"]) == 878
    assert _contents(tmp_path / "two.duckdb") == contents
    assert one.summary()["records"] == two.summary()["records"] == 7090
    assert (one.card_mentions, one.linked_mentions) == (two.card_mentions, two.linked_mentions) == (11364, 5647)


def test_a_page_broken_in_a_worker_keeps_its_earlier_records(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(BUNDLED_CORPUS, corpus)
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    first = build(corpus, db, engine, workers=2)
    page = corpus / "pages/ocg-rule/c06-rulings-2019.html"
    page.write_bytes(b"\x00\x01\x02\x03" * 2000)  # binary: normalize refuses it
    second = build(corpus, db, engine, workers=2)
    assert first.errors == [] and len(second.errors) == 1
    assert "ocg-rule-c06-rulings-2019" in second.errors[0] and "binary" in second.errors[0]
    assert "ocg-rule-c06-rulings-2019: kept 1623 records of the previous build" in second.warnings
    assert second.records == first.records and second.rules_hash == first.rules_hash
    assert second.pages_ok == 11
