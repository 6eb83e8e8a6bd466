"""End-to-end builds: the bundled corpus, determinism, and corpus edits."""

import csv
import re

import duckdb

from conftest import GOLD, import_module_from, make_corpus
from pipeline.corpus import BUNDLED_CORPUS
from pipeline.run import build

FACE_DOWN_HTML = "ocg-rule-c03-face-down-temp-banish"
SEED_004 = "seed-004-face-down-temp-banish"


def test_bundled_build_summary(built):
    result, db, engine = built
    assert result.errors == []
    site_pages = len(list((BUNDLED_CORPUS / "pages/ocg-rule").glob("*.html")))
    assert site_pages == 34  # the whole OCG-Rule-documentation site
    assert (result.sources, result.pages_ok) == (site_pages + 6, site_pages + 6)  # + 3 seeds + 3 English texts
    assert result.procedural_rules == 14  # seeds 000 and 003: every rule of schema/procedural_rules.json
    assert sum(result.rules_by_verdict.values()) == 35 * 3  # every (kind, event) pair has a row
    assert result.rules_by_verdict.get("unknown", 0) == 0
    con = duckdb.connect(str(db), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"sources", "snapshots", "records", "record_dates", "card_mentions", "statements", "effect_rulings", "rules",
            "rule_citations"} <= tables
    assert con.execute("SELECT count(*) FROM records").fetchone()[0] == result.records


def test_gold_verdicts(built):
    _, db, _ = built
    con = duckdb.connect(str(db), read_only=True)
    with (GOLD / "retention_public.csv").open(encoding="utf-8") as fh:
        gold = list(csv.DictReader(fh))
    misses = []
    for g in gold:
        got = con.execute("SELECT verdict FROM rules WHERE info_kind = ? AND event = ?",
                          [g["info_kind"], g["event"]]).fetchone()[0]
        if got != g["verdict"]:
            misses.append((g["info_kind"], g["event"], g["verdict"], got))
    assert misses == []
    assert len(gold) == 30


def test_seed_004_every_date_stamp_is_on_a_record(built):
    """Seed 004 has 116 raw YY/M/D stamps on 88 lines. Every stamp lands on a
    record, and a record is one line (one ruling as the page writes it): 88
    records carry them (a line may carry several, e.g. ``14/3/21 14/3/21``, or
    two dated sentences)."""
    _, db, _ = built
    raw = (BUNDLED_CORPUS / "pages/seeds/004-face-down-temp-banish.txt").read_text(encoding="utf-8")
    stamps = re.findall(r"(?<![\d/])\d{1,2}/\d{1,2}/\d{1,2}(?![\d/])", raw)
    assert len(stamps) == 116
    con = duckdb.connect(str(db), read_only=True)
    dated, tokens, invalid = con.execute(
        """SELECT count(DISTINCT d.record_id), count(*), count(*) FILTER (WHERE NOT d.valid)
           FROM record_dates d JOIN records r USING (record_id) WHERE r.source_id = ?""", [SEED_004]).fetchone()
    lines = [line for line in raw.splitlines()
             if re.search(r"(?<![\d/])\d{1,2}/\d{1,2}/\d{1,2}(?![\d/])", line)]
    assert len(lines) == 88
    assert (dated, tokens, invalid) == (len(lines), 116, 0)
    assert con.execute("""SELECT count(*) FROM record_dates d JOIN records r USING (record_id)
                          WHERE r.source_id = ? AND d.raw = '17/3/24' AND d.date = DATE '2017-03-24'""",
                       [SEED_004]).fetchone()[0] > 10


def test_build_is_deterministic(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", ["seed-000-battle-position", "seed-003-battle-phase", SEED_004])
    build(corpus, tmp_path / "a.duckdb", tmp_path / "a.py")
    build(corpus, tmp_path / "b.duckdb", tmp_path / "b.py")
    a, b = (tmp_path / "a.py").read_bytes(), (tmp_path / "b.py").read_bytes()
    assert a == b
    assert b"Rules hash: sha256:" in a and b"2026" not in a.split(b"RULES_HASH")[0]  # no timestamp in the header


def test_changing_one_sentence_changes_the_answer(tmp_path):
    sources = ["seed-000-battle-position", "seed-003-battle-phase", SEED_004, FACE_DOWN_HTML]
    edit = ("仍然是S召唤的怪兽", "不再是S召唤的怪兽")
    before = make_corpus(tmp_path / "before", sources)
    after = make_corpus(tmp_path / "after", sources, {SEED_004: [edit], FACE_DOWN_HTML: [edit]})
    build(before, tmp_path / "before.duckdb", tmp_path / "before.py")
    build(after, tmp_path / "after.duckdb", tmp_path / "after.py")
    old = import_module_from(tmp_path / "before.py").retains("synchro_summoned", "face_down")
    new = import_module_from(tmp_path / "after.py").retains("synchro_summoned", "face_down")
    assert (old.verdict, new.verdict) == ("kept", "lost")
    assert "2016-01-08" in old.dates and "2016-01-08" in new.dates


def test_removing_the_statement_makes_the_pair_unknown(tmp_path):
    corpus = make_corpus(tmp_path / "c", ["seed-000-battle-position"])
    build(corpus, tmp_path / "x.duckdb", tmp_path / "x.py")
    engine = import_module_from(tmp_path / "x.py")
    r = engine.retains("synchro_summoned", "face_down")
    assert (r.verdict, r.record_ids, r.dates) == ("unknown", (), ())


def test_broken_page_does_not_stop_the_build(tmp_path):
    corpus = make_corpus(tmp_path / "c", ["seed-000-battle-position", SEED_004])
    (corpus / "pages/seeds/000-battle-position.txt").write_bytes(b"")
    result = build(corpus, tmp_path / "x.duckdb", tmp_path / "x.py")
    assert result.pages_ok == 1
    assert len(result.errors) == 1 and "seed-000-battle-position" in result.errors[0] and "empty" in result.errors[0]
    assert import_module_from(tmp_path / "x.py").retains("synchro_summoned", "face_down").verdict == "kept"


def test_failing_page_keeps_its_earlier_records(tmp_path):
    corpus = make_corpus(tmp_path / "c", ["seed-000-battle-position", SEED_004])
    db, engine = tmp_path / "x.duckdb", tmp_path / "x.py"
    first = build(corpus, db, engine)
    (corpus / "pages/seeds/004-face-down-temp-banish.txt").write_bytes(b"\x00\x01" * 100)
    second = build(corpus, db, engine)
    assert len(second.errors) == 1 and "binary" in second.errors[0]
    assert "seed-004-face-down-temp-banish: kept 210 records of the previous build" in second.warnings
    assert second.records == first.records
    assert import_module_from(engine).retains("synchro_summoned", "face_down").verdict == "kept"
