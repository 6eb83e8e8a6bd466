"""``rulings card NAME|PASSCODE``: a card's rulings, by any of its names."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pipeline.cli import main

BOOK_OF_MOON = 14087893


def card(db, *args):
    return CliRunner().invoke(main, ["card", *map(str, args), "--db", str(db)])


@pytest.mark.parametrize("name", ["月之书", "月之書", "月の書", "Book of Moon", "book of moon", "ＢＯＯＫ ＯＦ ＭＯＯＮ",
                                  str(BOOK_OF_MOON)])
def test_any_name_or_the_passcode_finds_the_card(built, name):
    run = card(built[1], name, "--json")
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    assert data["passcode"] == BOOK_OF_MOON and data["names"]["en"] == "Book of Moon"
    assert data["count"] == len(data["rulings"]) > 100


def test_rulings_newest_first_with_dates_faq_ids_and_english_pages(built):
    import duckdb

    data = json.loads(card(built[1], BOOK_OF_MOON, "--json").stdout)
    latest = [r["dates"][-1] if r["dates"] else "" for r in data["rulings"]]
    assert latest == sorted(latest, reverse=True)
    with duckdb.connect(str(built[1]), read_only=True) as con:
        english_pages = {r[0] for r in con.execute("SELECT source_id FROM sources WHERE language = 'en'").fetchall()}
        linked = {r[0] for r in con.execute("SELECT DISTINCT m.record_id FROM card_mentions m JOIN records r "
                                            "USING (record_id) WHERE passcode = ? AND r.retired_run IS NULL",
                                            [BOOK_OF_MOON]).fetchall()}
    ids = {r["record_id"] for r in data["rulings"]}
    assert linked <= ids
    english = [r for r in data["rulings"] if r["how"] == "english_text"]
    assert {r["source_id"] for r in english} >= {"edisonrul-book-of-moon", "seed-000-battle-position"}
    assert {r["source_id"] for r in english} <= english_pages
    assert any(r["faq_ids"] for r in data["rulings"])
    assert {r["status"] for r in data["rulings"]} <= {"current", "superseded", "pending"}


def test_text_output_and_limit(built):
    run = card(built[1], "月之書", "--limit", "2")
    lines = run.output.splitlines()
    assert lines[0].startswith("月之书 / 月之書 / 月の書 / Book of Moon (14087893): ")
    assert len([l for l in lines if l.startswith("      ")]) == 2 and "more (--limit)" in lines[-1]


@pytest.mark.parametrize("name, hint", [("ash blossom", "Ash Blossom & Joyous Spring"), ("月之书x", "月之书")])
def test_unknown_name_says_did_you_mean(built, name, hint):
    run = card(built[1], name)
    assert run.exit_code == 2
    assert "did you mean" in run.stderr and hint in run.stderr


def test_unknown_passcode(built):
    run = card(built[1], "99999999999")
    assert run.exit_code == 2 and "no card with passcode" in run.stderr
