"""Broken and unusual dates: an invalid one is stored invalid with its raw
token and a reason, all the way into DuckDB, and never shifted to a
neighbouring valid date."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from conftest import import_module_from
from corpus_kit import PageSpec, write_corpus
from pipeline.dates import find_dates
from pipeline.run import build

TODAY = dt.date(2026, 11, 29)


@pytest.mark.parametrize("text, language, expected", [
    # two-digit years: 99 is 1999, others 20YY, so 98 is 2098, in the future
    ("某裁定。98/1/1", "zh", [("98/1/1", None, "in the future")]),
    ("某裁定。00/1/1", "zh", [("00/1/1", "2000-01-01", "")]),
    ("某裁定。2099年1月1日", "zh", [("2099年1月1日", None, "in the future")]),
    ("某裁定。1998-05-01", "zh", [("1998-05-01", None, "before 1999")]),
    ("某裁定。2019年2月30日", "zh", [("2019年2月30日", None, "impossible date")]),
    ("ruled 2019-02-30", "en", [("2019-02-30", None, "impossible date")]),
    ("ruled 2019/10/30", "en", [("2019/10/30", "2019-10-30", "")]),
    # US order on English pages: day 13 is not a month, so nothing is swapped
    ("ruled 13/07/2004", "en", [("13/07/2004", None, "impossible date")]),
    ("ruled 2/29/2020 and 2/29/2019", "en", [("2/29/2020", "2020-02-29", ""), ("2/29/2019", None, "impossible date")]),
    # several invalid tokens in one sentence keep their order and their text
    ("某裁定。17/2/30 99/13/1 0/0/0", "zh",
     [("17/2/30", None, "impossible date"), ("99/13/1", None, "impossible date"), ("0/0/0", None, "impossible date")]),
    # US order is read on English pages only; a Chinese page has no such token
    ("某裁定。04/07/2004", "zh", []),
])
def test_dates(text, language, expected):
    got = [(d.raw, d.iso, d.reason) for d in find_dates(text, language, TODAY)]
    assert got == expected
    assert all(d.valid == (d.iso is not None) for d in find_dates(text, language, TODAY))


ZH_PAGE = """里侧·一时除外

指示物

放置指示物的卡变成里侧后，指示物全部消失。17/2/30
放置指示物的卡被一时除外后，指示物全部消失。99/13/1 0/0/0
变成里侧表示的卡反转后，指示物也不会回来。98/1/1
这个裁定在2019年10月30日和2019-10-30公布，在2099年1月1日之后改变。
"""
EN_PAGE = """Book of Moon

A monster Set by Book of Moon forgets it was Synchro Summoned. Ruled 04/07/2004, confirmed 13/07/2004.
"""


def test_invalid_dates_reach_duckdb_with_their_raw_tokens(tmp_path):
    corpus = write_corpus(tmp_path / "c", [
        PageSpec("zh-dates", ZH_PAGE, format="text"),
        PageSpec("en-dates", EN_PAGE, format="text", language="en", script="Latn", region=""),
    ])
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert result.errors == []
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    rows = con.execute("""SELECT r.source_id, d.raw, d.date, d.valid, d.reason FROM record_dates d
                          JOIN records r USING (record_id) ORDER BY r.source_id, r.seq, d.ord""").fetchall()
    iso = lambda s: dt.date.fromisoformat(s)  # noqa: E731
    assert rows == [
        ("en-dates", "04/07/2004", iso("2004-04-07"), True, None),
        ("en-dates", "13/07/2004", None, False, "impossible date"),
        ("zh-dates", "17/2/30", None, False, "impossible date"),
        ("zh-dates", "99/13/1", None, False, "impossible date"),
        ("zh-dates", "0/0/0", None, False, "impossible date"),
        ("zh-dates", "98/1/1", None, False, "in the future"),
        ("zh-dates", "2019年10月30日", iso("2019-10-30"), True, None),
        ("zh-dates", "2019-10-30", iso("2019-10-30"), True, None),
        ("zh-dates", "2099年1月1日", None, False, "in the future"),
    ]
    # A statement whose only date is invalid cites no date; the engine never invents one.
    engine = import_module_from(tmp_path / "e.py")
    r = engine.retains("counters", "face_down")
    assert r.verdict == "lost" and r.dates == ()
