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
    # dots and short hyphens
    ("不能发动。17.3.24", "zh", [("17.3.24", "2017-03-24", True)]),
    ("（2017.03.24）", "zh", [("2017.03.24", "2017-03-24", True)]),
    ("（２０１７．０３．２４）", "zh", [("２０１７．０３．２４", "2017-03-24", True)]),
    ("可以。17-3-24 18.1.5 19/2/3", "zh", [("17-3-24", "2017-03-24", True), ("18.1.5", "2018-01-05", True),
                                         ("19/2/3", "2019-02-03", True)]),
    ("ruled on 2017.03.24", "en", [("2017.03.24", "2017-03-24", True)]),
    # US order with a short year on English pages; YY/M/D where US order is impossible
    ("ruled on 3/24/17", "en", [("3/24/17", "2017-03-24", True)]),
    ("ruled on 3/4/17", "en", [("3/4/17", "2017-03-04", True)]),

    ("3/4/17", "zh", [("3/4/17", "2003-04-17", True)]),
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


@pytest.mark.parametrize("text, language", [
    ("见3.1.2节", "zh"),  # a section number: no possible date, so no token
    ("17.2.30", "zh"),
    ("攻击力变成1.5倍", "zh"),
    ("版本v1.17.3.24", "zh"),
    ("2017.3.24.5", "zh"),
    ("SD17-3-1", "zh"),
    ("17-3-24-1", "zh"),
    ("1600.2.2", "zh"),  # a four-digit year written with dots: 19xx or 20xx only
    ("version 12.5.10", "en"),  # English pages write D.M.YY as often: short forms with dots are Chinese only
    ("score 17-3-2", "en"),
])
def test_dotted_and_short_hyphen_forms_are_dates_only_when_they_can_be(text, language):
    assert find_dates(text, language, TODAY) == []


@pytest.mark.parametrize("raw", ["24/3/17", "17/3/24", "24/3/2017"])
def test_a_date_of_an_english_page_that_is_none_in_us_order_is_never_read_in_another(raw):
    [d] = find_dates(f"ruled on {raw}", "en", TODAY)
    assert (d.raw, d.iso, d.valid, d.reason) == (raw, None, False, "impossible date")


@pytest.mark.parametrize("text", ["见12.3.4节", "第20.1.1条", "98.1.1", "35.2.1", "第17-3-1项"])
def test_section_numbers_and_out_of_range_dotted_forms_are_no_dates(text):
    assert find_dates(text, "zh", TODAY) == []


def test_two_dotted_dates_joined_by_a_dash_are_both_read():
    assert [d.iso for d in find_dates("17.3.24-17.3.25", "zh", TODAY)] == ["2017-03-24", "2017-03-25"]


def test_a_paragraph_of_many_dates_reads_each_once():
    text = " ".join(["17/3/24 「A」", "2017-03-25", "17.3.26", "2017年3月27日"] * 2500)
    found = find_dates(text, "zh", TODAY)
    assert len(found) == 10000
    assert [d.iso for d in found[:4]] == ["2017-03-24", "2017-03-25", "2017-03-26", "2017-03-27"]
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))  # no two tokens overlap


def test_heading_date_of_yearly_log():
    d = heading_date(("2019", "19/01", "1/9"), TODAY)
    assert (d.iso, d.valid) == ("2019-01-09", True)
    assert heading_date(("2019", "19/02", "1/9"), TODAY) is None  # day under the wrong month
    assert heading_date(("出场方式",), TODAY) is None
