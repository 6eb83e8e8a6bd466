"""The ``effect_rulings`` rows of a record (pipeline/load.py
``effect_ruling_rows``): the rulings on a named card's numbered effect after
an event, read where the page is read, with the record's linked card mentions."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.chinese import convert
from pipeline.compile import info_kinds
from pipeline.extract import extract
from pipeline.load import RECORD_TABLES, effect_ruling_rows, record_rows
from pipeline.page import Block, Line, Page

LANIUS = 60950180  # 「急袭猛禽-穿刺伯劳」 (Raidraptor - Sharp Lanius)
RULING = "攻击过的「急袭猛禽-穿刺伯劳」，变成里侧再反转，②效果可以发动，一时除外再回到场上的场合不能发动。17/3/24"


def records(*lines: str, script: str = "Hans"):
    if script == "Hant":
        lines = tuple(convert(line, "s2twp") for line in lines)
    page = Page("case", "zh", script, "TW" if script == "Hant" else "CN", "",
                [Block(0, ("裁定",), [Line(line) for line in lines])])
    return extract(page, info_kinds())


@pytest.mark.parametrize("script", ["Hans", "Hant"])
def test_a_ruling_on_a_card_s_effect_gives_a_row_per_verdict(script):
    (record,) = records(RULING, script=script)
    rows = record_rows([record], {}, 1, {})["effect_rulings"]
    assert rows == [
        {"record_id": record.id, "ord": 0, "passcode": LANIUS, "effect": "②", "events": ["face_down"], "flip": True,
         "can": True, "date": "2017-03-24"},
        {"record_id": record.id, "ord": 1, "passcode": LANIUS, "effect": "②", "events": ["temp_banish"],
         "flip": False, "can": False, "date": "2017-03-24"}]
    assert "effect_rulings" in RECORD_TABLES  # written, replaced and retired with the record's other rows


def test_an_undated_ruling_has_no_date_and_the_words_decide_the_verdict():
    (record,) = records("攻击过的「急袭猛禽-穿刺伯劳」，变成里侧再反转，②效果不能发动。")
    (row,) = record_rows([record], {}, 1, {})["effect_rulings"]
    assert (row["events"], row["flip"], row["can"], row["date"]) == (["face_down"], True, False, None)


def test_only_a_current_record_with_a_number_and_a_linked_card_is_read():
    (record,) = records(RULING)
    mentions = record_rows([record], {}, 1, {})["card_mentions"]
    assert len(effect_ruling_rows(record, mentions)) == 2
    assert effect_ruling_rows(dataclasses.replace(record, status="superseded"), mentions) == []
    unlinked = [{**m, "passcode": None, "konami_id": None} for m in mentions]
    assert effect_ruling_rows(record, unlinked) == []
    (no_number,) = records("攻击过的「急袭猛禽-穿刺伯劳」，变成里侧再反转，效果可以发动。")
    assert record_rows([no_number], {}, 1, {})["effect_rulings"] == []
    (unknown,) = records("攻击过的「不存在的测试怪兽乙」，变成里侧再反转，②效果可以发动。")
    assert record_rows([unknown], {}, 1, {})["effect_rulings"] == []
