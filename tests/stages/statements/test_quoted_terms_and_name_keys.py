"""Issue 32, items 17 and 18: game terms are terms whatever their quote marks,
the Traditional aspect particle 著 is 着 in canonical text, card-name keys fold
every dash, and the shrink guard compares a page's statements per section."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from pipeline import schema
from pipeline.cards import card_index, card_names
from pipeline.chinese import canonical_text, name_key, opencc_fixes
from pipeline.cli import main
from pipeline.corpus import Source
from pipeline.errors import ExtractError
from pipeline.annotate import _quoted_name
from pipeline.records import SectionLoss, page_counts, section_key, section_shrinkage, section_statements
from pipeline.finish import STORED, shrunk
from pipeline.run import process_page



def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _mentions(html: str, script: str = "Hans", region: str = "CN") -> list[tuple[str, str, str]]:
    """(name as written, kind, quote marks) of every mention a page's records hold."""
    source = Source("s", "", "zh", script, region, "html", "", "x", False, "", Path("x"))
    records = process_page(source, {"normalize": 0.0, "extract": 0.0}, data=html.encode("utf-8")).records
    return [(c.name, c.kind, c.quote) for r in records for c in r.cards]


def _page(body: str, lang: str = "zh-CN") -> str:
    return f"<html lang='{lang}'><body><main><h1>用语</h1><p>{body}</p></main></body></html>"


# --------------------------------------------------------------------------- 17: terms whatever the quote marks

@pytest.mark.parametrize("body, script, region, expected", [
    ("“永续魔法”和「永续魔法」、『永续魔法卡』、\"永续魔法\"的卡都可以。",
     "Hans", "CN", [("永续魔法", "“”"), ("永续魔法", "「」"), ("永续魔法卡", "『』"), ("永续魔法", '""')]),
    ("「戰鬥階段」中，『伤害步骤结束时』与“同步怪獸”、《反击陷阱》不同。",
     "Hant", "TW", [("戰鬥階段", "「」"), ("伤害步骤结束时", "『』"), ("同步怪獸", "“”"), ("反击陷阱", "《》")]),
    ("「同調怪獸」和『主要階段２』以及“里側守備表示”。",
     "Hant", "HK", [("同調怪獸", "「」"), ("主要階段２", "『』"), ("里側守備表示", "“”")]),
])
def test_a_game_term_is_a_term_whatever_its_quote_marks(body, script, region, expected):
    lang = {"CN": "zh-CN", "TW": "zh-Hant-TW", "HK": "zh-Hant-HK"}[region]
    found = _mentions(_page(body, lang), script, region)
    assert found == [(name, "term", quote) for name, quote in expected]


@pytest.mark.parametrize("body", [
    "『攻击力2500以下的怪兽』不受影响，『这张卡的攻击力上升500』也一样。",  # effect text naming a term
    "“不能发动”和\"可以发动\"。",  # quoted words, no term
])
def test_effect_text_in_quotes_is_no_term(body):
    assert _mentions(_page(body)) == []


def test_cards_stay_cards_and_no_card_is_named_like_a_term():
    """A card whose name is a game term could not be told from the term: the
    term wins, so the name tables must hold none (a new table that brings one
    fails here, naming it)."""
    named_like_terms = sorted({(passcode, name) for passcode, names in card_names().items()
                               for language, name in names.items() if language.startswith("zh")
                               and _quoted_name(name, "Hant" if language == "zh-TW" else "Hans")[1]})
    assert named_like_terms == []
    assert _mentions(_page("「二重召唤」和「升阶魔法-七皇之剑」以及“闪刀姬-零衣”。")) == [
        ("二重召唤", "card", "「」"), ("升阶魔法-七皇之剑", "card", "「」"), ("闪刀姬-零衣", "card", "“”")]


# --------------------------------------------------------------------------- 17: the aspect particle 著

@pytest.mark.parametrize("region", ["TW", "HK", ""])
@pytest.mark.parametrize("written, canonical", [
    ("這張卡上放置著3個指示物", "这张卡上放置着3个指示物"),
    ("場上存在著名為「幻龍星－嘲風」的卡", "场上存在着名为「幻龙星－嘲风」的卡"),
    ("存在著作為對象的怪獸", "存在着作为对象的怪兽"),
    ("配合著對方的效果，保持著表側表示", "配合着对方的效果，保持着表侧表示"),
    ("這是著名的卡，效果顯著，著作權屬於作者", "这是著名的卡，效果显著，著作权属于作者"),  # 著 is zhù: kept
])
def test_the_particle_zhe_becomes_着_and_zhu_words_keep_著(region, written, canonical):
    assert canonical_text(written, "zh", "Hant", region) == canonical


@pytest.fixture
def schema_copy(tmp_path, monkeypatch):
    """A copy of schema/ that the loaders read instead of the project's."""
    copy = tmp_path / "schema"
    shutil.copytree(ROOT / "schema", copy)
    loaders = (schema.opencc_fix_rows, schema.markers, opencc_fixes)
    monkeypatch.setattr(schema, "SCHEMA_DIR", copy)
    for loader in loaders:
        loader.cache_clear()
    yield copy
    monkeypatch.undo()
    for loader in loaders:
        loader.cache_clear()


@pytest.mark.parametrize("row, message", [
    ("tw2x\t著名為\t着名为\tx", r"row \d+ names unknown OpenCC configs \['tw2x'\]"),
    ("hk2s\t著名為\t著名为\tx", r"row \d+ corrects '著名為' for hk2s a second way \('著名为', before: '着名为'\)"),
    ("t2s\t\t着\tx", r"row \d+ has an empty written or simplified form"),
])
def test_a_broken_opencc_fix_row_is_named(schema_copy, row, message):
    path = schema_copy / "opencc_fixes.tsv"
    path.write_text(path.read_text(encoding="utf-8") + row + "\n", encoding="utf-8")
    with pytest.raises(schema.SchemaError, match=rf"opencc_fixes.tsv: {message}"):
        schema.check_all()


# --------------------------------------------------------------------------- 17: every dash in card-name keys

@pytest.mark.parametrize("canonical, variants", [
    ("幻龙星-嘲风", ["幻龙星ー嘲风", "幻龍星ｰ嘲風", "幻龙星－嘲风", "幻龙星—嘲风", "幻龙星–嘲风", "幻龙星‐嘲风",
                    "幻龙星‑嘲风", "幻龙星―嘲风", "幻龙星─嘲风", "幻龙星−嘲风"]),
    ("闪刀姬-零衣", ["閃刀姬ー零衣", "闪刀姬ｰ零衣", "闪刀姬⸺零衣", "閃刀姬－零衣"]),
])
def test_every_dash_folds_to_one_and_the_name_links(canonical, variants):
    passcode = card_index().link(canonical).passcode
    assert passcode is not None
    for name in variants:
        assert name_key(name) == name_key(canonical), name
        assert card_index().link(name).passcode == passcode, name


# --------------------------------------------------------------------------- 18: statements per section

FACE_DOWN = "ocg-rule-c03-face-down-temp-banish"
FACE_DOWN_PAGE = "pages/ocg-rule/c03-face-down-temp-banish.html"
HOW_SUMMONED = '<h2>用何出场<a class="headerlink" href="#id10" title="链接到此标题。">¶</a></h2>'


def _number_headings(html: str, form: str) -> str:
    """Every <h2> numbered in ``form`` (``{n}、``)."""
    n = itertools.count(1)
    return re.sub(r"<h2>", lambda m: "<h2>" + form.format(n=next(n)), html)


HIDDEN_BY_NUMBERS = (lambda html: _number_headings(html, "{n}、"), "里侧·一时除外 / 用何出场", 66)
MOVED_OUT_OF_HEADING = (lambda html: html.replace(HOW_SUMMONED, ""), "里侧·一时除外 / 用何出场", 66)


def _records(html: str):
    source = Source(FACE_DOWN, "", "zh", "Hans", "CN", "html", "", "x", False, "", Path("x"))
    return process_page(source, {"normalize": 0.0, "extract": 0.0}, data=html.encode("utf-8")).records


@pytest.mark.parametrize("edit, section, before", [HIDDEN_BY_NUMBERS, MOVED_OUT_OF_HEADING])
def test_a_refresh_does_not_take_a_page_one_of_whose_sections_lost_its_statements(edit, section, before):
    """The rule a build follows (pipeline.finish.shrunk), with the refresh's words."""
    html = (ROOT / "corpus" / FACE_DOWN_PAGE).read_text(encoding="utf-8")
    old, new = _records(html), _records(edit(html))

    def why(new, max_shrink):
        return shrunk(page_counts(old), page_counts(new), section_statements(old), section_statements(new),
                      max_shrink, STORED)

    assert why(new, 0.5) == (f"gives 0 statements in section '{section}' (was {before}, more than 50% fewer; the "
                             "section is gone) against the database (a markup change?)")
    assert why(new, 1.0) is None  # accepted
    assert why(_records(_number_headings(html, "{n}. ")), 0.5) is None  # numbers it knows: the same sections


def test_section_shrinkage_counts_from_the_floor_and_takes_the_largest_loss():
    before = {"A / x": 36, "A / y": 6, "A / z": 4}
    assert section_shrinkage(before, {"A / x": 36, "A / y": 3, "A / z": 0}, 0.5) is None  # 3 of 6 is half; 4 < floor
    assert section_shrinkage(before, {"A / x": 36, "A / y": 2}, 0.5) == SectionLoss("A / y", 6, 2)
    assert section_shrinkage(before, {"A / y": 2}, 0.5) == SectionLoss("A / x", 36, 0)  # the largest loss first
    assert section_shrinkage(before, {"A / x": 10, "A / y": 6}, 0.75) is None
    assert section_shrinkage(before, {}, 1.0) is None
    assert section_key("里侧·一时除外 / 3.1 指示物") == section_key("里侧·一时除外 / 指示物") == "里侧·一时除外 / 指示物"
    assert section_key("里侧·一时除外 / 3、指示物") != "里侧·一时除外 / 指示物"  # a number the topic reading keeps
    assert section_statements(_records((ROOT / "corpus" / FACE_DOWN_PAGE).read_text(encoding="utf-8")))[
        "里侧·一时除外 / 用何出场"] == 66
