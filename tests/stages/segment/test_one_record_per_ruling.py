"""A record is one ruling whatever the markup: the inputs of the bug report
(issue 12), each with other cases of the same kind of fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.corpus import Source
from pipeline.extract import extract
from pipeline.normalize import normalize
from pipeline.schema import info_kinds

TOPIC = "<h1>里侧·一时除外</h1><h2>出场方式</h2>"


def records(body: str, topic: str = TOPIC, script: str = "Hans", region: str = "CN"):
    source = Source("t", "https://example.org/t.html", "zh", script, region, "html", "", "t.html", False, "", Path("t"))
    html = f"<html><head><meta charset='utf-8'></head><body><main>{topic}{body}</main></body></html>"
    return extract(normalize(html.encode("utf-8"), source), info_kinds())


def summary(record) -> tuple:
    return (record.text, [d.iso for d in record.dates if d.counts], [c.name for c in record.cards])


# --------------------------------------------------------------------------- inline markup never cuts a ruling

MOON = "「<a href='https://ygocdb.com/card/name/月之书'>月之书</a>」"


@pytest.mark.parametrize("wrap", [
    "{}",  # the link alone
    "<span>{}</span>", "<b>{}</b>", "<em>{}</em>", "<span class='x'><a href='#'>{}</a></span>",
])
def test_a_list_item_with_inline_markup_is_one_record_and_its_sub_item_a_child(wrap):
    body = (f"<ul><li>{wrap.format(MOON)}把S召唤的怪兽变成里侧后，仍然是S召唤的怪兽。16/1/8"
            "<ul><li>再反转也一样。</li></ul></li></ul>")
    parent, child = records(body)
    assert summary(parent) == ("「月之书」把S召唤的怪兽变成里侧后，仍然是S召唤的怪兽。16/1/8", ["2016-01-08"], ["月之书"])
    assert parent.statements and {s.verdict for s in parent.statements} == {"kept"}
    assert (child.text, child.parent_id) == ("再反转也一样。", parent.id)


@pytest.mark.parametrize("container", ["<div>{}</div>", "<p>{}</p>", "<section>{}</section>", "<td>{}</td>"])
def test_bold_inside_a_container_stays_in_its_ruling(container):
    body = container.format("S召唤的怪兽变成里侧后，<strong>仍然是S召唤的怪兽</strong>。16/1/8")
    if body.startswith("<td>"):
        body = f"<table><tr>{body}</tr></table>"
    [record] = records(body)
    assert summary(record) == ("S召唤的怪兽变成里侧后，仍然是S召唤的怪兽。16/1/8", ["2016-01-08"], [])
    assert [(s.info_kind, s.event, s.verdict) for s in record.statements] == [("synchro_summoned", "face_down", "kept")]


def test_ruby_annotations_do_not_split_a_card_name():
    [record] = records("<p>「<ruby>月之书<rt>つきのしょ</rt></ruby>」的效果。16/1/8</p>")
    assert record.cards[0].name.startswith("月之书")
    assert [d.iso for d in record.dates] == ["2016-01-08"]


def test_table_cells_are_separate_fields_of_one_record():
    record = records("<table><tr><td>攻击力回到卡片记载的数值2500</td><td>17/3/24</td></tr>"
                     "<tr><th>守备力</th><td>1000</td></tr></table>")[0]
    assert summary(record) == ("攻击力回到卡片记载的数值2500 | 17/3/24", ["2017-03-24"], [])
    assert record.cells == ["攻击力回到卡片记载的数值2500", "17/3/24"]
    other = records("<table><tr><th>守备力</th><td><b>1000</b> <i>x</i></td><td></td></tr></table>")[0]
    assert other.cells == ["守备力", "1000 x", ""]
    [line] = records("<p>不是表格。16/1/8</p>")
    assert line.cells == []


@pytest.mark.parametrize("links", [
    "<a href='x?ope=5&fid=1'>17/3/24</a><a href='x?ope=5&fid=2'>17/3/24</a>",
    "<a href='x?ope=5&fid=1'>17/3/24</a><span><a href='x?ope=5&fid=2'>17/3/24</a></span>",
])
def test_two_date_links_in_a_row_are_two_dates_with_their_faq_ids(links):
    [record] = records(f"<div class='line-block'><div class='line'>效果不适用。{links}</div></div>")
    assert [d.raw for d in record.dates] == ["17/3/24", "17/3/24"]
    assert [fid for _, fid, _ in record.faq] == ["1", "2"]
    assert "17/3/2417" not in record.text


def test_a_ruling_of_several_sentences_is_one_dated_record():
    text = "只能把在场上表侧表示存在的水族怪兽送去墓地。也不能把作为装备卡的「甲」送去墓地。17/3/24"
    [record] = records(f"<p>{text}</p>")
    assert summary(record) == (text, ["2017-03-24"], ["甲"])
    assert len(record.sentences) == 2


# --------------------------------------------------------------------------- quotes, footnotes, text

@pytest.mark.parametrize("text, names", [
    ("「强韧！」的②效果发动。16/1/8", ["强韧！"]),
    ("『那只怪兽破坏时这张卡破坏』的效果。「甲？乙」也一样。16/1/8", ["甲？乙"]),
])
def test_sentences_are_not_cut_inside_quotes(text, names):
    [record] = records(f"<p>{text}</p>")
    assert [c.name for c in record.cards] == names
    assert all(not record.text[a:b].startswith(("」", "』")) for a, b in record.sentences)


def test_an_aside_footnote_is_a_note_of_the_ruling_that_refers_to_it():
    body = ("<p>「甲」的效果适用。<a class='footnote-reference' href='#fn1'>[1]</a> 19/1/7</p>"
            "<aside class='footnote-list'><aside class='footnote' id='fn1' role='doc-footnote'>"
            "<span class='label'>[1]</span><p>详见「乙」的裁定。19/2/1</p></aside></aside>")
    ruling, note = records(body)
    assert (note.role, note.parent_id, note.text) == ("note", ruling.id, "详见「乙」的裁定。19/2/1")
    assert [d.iso for d in note.dates] == ["2019-02-01"]


@pytest.mark.parametrize("text, own, references", [
    ("…不适用，详见2023/1/6的「德梅特爷爷」和2024/4/24的「焰圣骑士-奥利佛」等相关裁定。", [], ["2023-01-06", "2024-04-24"]),
    ("参照17/3/24裁定，效果适用。19/1/7", ["2019-01-07"], ["2017-03-24"]),
    ("于2019 年 10 月 30 日公布", ["2019-10-30"], []),
    ("指示物全部消失。１７／３／２４", ["2017-03-24"], []),
    ("指示物全部消失。17／3／24", ["2017-03-24"], []),
])
def test_dates_in_every_written_form_and_references_apart(text, own, references):
    [record] = records(f"<p>{text}</p>")
    assert [d.iso for d in record.dates if d.kind == "own"] == own
    assert [d.iso for d in record.dates if d.kind == "reference"] == references
    assert list(record.valid_dates) == sorted(own)


def test_a_date_token_that_cannot_be_read_is_stored_invalid_with_its_reason():
    [record] = records("<p>指示物全部消失。１７／２／３０</p>")
    [d] = record.dates
    assert (d.raw, d.valid, d.reason) == ("１７／２／３０", False, "impossible date")


@pytest.mark.parametrize("quoted, name", [
    ("「咔啵&amp;amp;回啵」", "咔啵&回啵"),  # escaped twice by the page
    ("「咔啵&amp;回啵」", "咔啵&回啵"),
    ("「月之\u200b书」", "月之书"),  # a zero-width space
    ("「月之\u00ad书」", "月之书"),  # a soft hyphen
    ("「\u200e月之书\u200f」", "月之书"),  # bidi marks
])
def test_text_is_cleaned_before_any_matching(quoted, name):
    [record] = records(f"<p>{quoted}的效果适用。16/1/8</p>")
    assert [c.name for c in record.cards] == [name]


def test_known_cards_in_other_quotes_are_mentions_and_other_quotes_are_not():
    [record] = records("<p>“月之书”把怪兽变成里侧。《旋风》也是。“回到场上”不是卡名。</p>")
    assert [(c.name, c.quote) for c in record.cards] == [("月之书", "“”"), ("旋风", "《》")]


@pytest.mark.parametrize("text, kind", [
    ("「女武神」怪兽的效果。", "archetype"), ("「码语者」怪兽特殊召唤。", "archetype"),
    ("「冰结界」S怪兽的效果。", "archetype"), ("「宝玉兽」卡的效果。", "archetype"),
    ("「女武神」的效果。", "card"),  # the card of that name, not the family
    ("「月之书」卡的效果。", "card"),  # no other card's name starts with it
    ("「攻击力·守备力」的变化。", "term"), ("「○○」的效果。", "term"),
])
def test_archetypes_and_terms_are_not_cards(text, kind):
    [record] = records(f"<p>{text}</p>")
    assert [c.kind for c in record.cards] == [kind]


# --------------------------------------------------------------------------- status

def test_under_review_is_pending_and_its_answer_is_current():
    log = "<h1>2021</h1><h2>21/01</h2><h3>1/6</h3>"
    body = ("<div class='line-block'><div class='line'>调整中确认：</div>"
            "<div class='line'>「甲」的效果可以发动。</div></div>"
            "<div class='line-block'><div class='line'>邮件：</div>"
            "<div class='line'>「乙」的①效果只能发动1次，<span class='strike'>「丙」的①效果可以发动几次，调整中。</span></div>"
            "<div class='line'>「丁」的效果可以发动几次，调整中。</div></div>")
    answer, partly_struck, pending = records(body, topic=log)
    assert (answer.channel, answer.status) == ("under_review_confirmed", "current")
    assert (partly_struck.status, partly_struck.withdrawn) == ("current", "「丙」的①效果可以发动几次，调整中。")
    assert pending.status == "pending"
    assert [d.iso for d in answer.dates] == ["2021-01-06"]
