import datetime as dt

import pytest

from pipeline.dates import find_dates, heading_date

TODAY = dt.date(2026, 11, 29)


@pytest.mark.parametrize("text, language, expected", [
    ("仍然是S召唤的怪兽。16/1/8", "zh", [("16/1/8", "2016-01-08", True)]),
    ("17/3/24 要一时除外17/3/24", "zh", [("17/3/24", "2017-03-24", True), ("17/3/24", "2017-03-24", True)]),
    ("攻守是2800/2000。14/3/21", "zh", [("14/3/21", "2014-03-21", True)]),
    ("2019年10月30日的调整", "zh", [("2019年10月30日", "2019-10-30", True)]),
    ("ruled on 2019-10-30", "en", [("2019-10-30", "2019-10-30", True)]),
    ("ruled on 04/07/2004", "en", [("04/07/2004", "2004-04-07", True)]),
    ("99/1/2", "zh", [("99/1/2", "1999-01-02", True)]),
])
def test_valid_dates(text, language, expected):
    got = [(d.raw, d.iso, d.valid) for d in find_dates(text, language, TODAY)]
    assert got == expected


@pytest.mark.parametrize("raw, reason", [
    ("17/2/30", "impossible date"),
    ("99/13/1", "impossible date"),
    ("0/0/0", "impossible date"),
    ("27/1/1", "in the future"),
    ("1998年1月1日", "before 1999"),
])
def test_invalid_dates_are_kept_not_shifted(raw, reason):
    [d] = find_dates(f"某裁定。{raw}", "zh", TODAY)
    assert (d.raw, d.iso, d.valid, d.reason) == (raw, None, False, reason)


def test_heading_date_of_yearly_log():
    d = heading_date(("2019", "19/01", "1/9"), TODAY)
    assert (d.iso, d.valid) == ("2019-01-09", True)
    assert heading_date(("2019", "19/02", "1/9"), TODAY) is None  # day under the wrong month
    assert heading_date(("出场方式",), TODAY) is None
