from pathlib import Path

import pytest

from pipeline.corpus import Source
from pipeline.errors import NormalizeError
from pipeline.chinese import canonical_text, match_key
from pipeline.normalize import decode_page, normalize


def source(fmt="html", language="zh", script="Hans", region="CN", sid="test-page"):
    return Source(sid, "https://example.org/p", language, script, region, fmt, "test", "p", False, "", Path("/dev/null"))


# A real fragment of the Sphinx page (ocg-rule c03 face-down page), chrome included.
SPHINX = """<html><head><title>里侧·一时除外 - OCG Rule</title></head><body>
<nav class="sidebar-drawer"><a href="../index.html">OCG Rule</a><ul><li>2019</li></ul></nav>
<div class="main"><article role="main" id="furo-main-content"><section id="id1">
<h1>里侧·一时除外<a class="headerlink" href="#id1" title="链接到此标题。">¶</a></h1>
<section id="id4"><h2>指示物<a class="headerlink" href="#id4">¶</a></h2>
<p>放置指示物的卡变成里侧或被一时除外后，指示物全部消失。</p></section>
<section id="id6"><h2>攻守计算<a class="headerlink" href="#id6">¶</a></h2>
<div class="line-block">
<div class="line">例：</div>
<div class="line">用自身方法特殊召唤的「<a class="reference external" href="https://ygocdb.com/card/name/方界兽%20利刃之迦楼迪亚">方界兽 利刃之迦楼迪亚</a>」被一时除外后，攻击力不会上升。<a class="reference external" href="https://www.db.yugioh-card.com/yugiohdb/faq_search.action?ope=5&amp;fid=19093&amp;request_locale=ja">17/3/24</a></div>
</div>
<div class="admonition note"><p class="admonition-title">备注</p><p>等级·阶级·种族·属性等也一样复原。</p></div>
<p><span class="strike">旧的裁定。15/1/1</span> 新的裁定。</p>
</section></section></article>
<footer><div class="copyright">Copyright 碎冰</div></footer></div></body></html>"""


def test_sphinx_page_blocks_sections_and_chrome():
    page = normalize(SPHINX.encode("utf-8"), source())
    assert page.title == "里侧·一时除外 - OCG Rule"
    texts = [l.text for b in page.blocks for l in b.lines]
    assert texts == [
        "放置指示物的卡变成里侧或被一时除外后，指示物全部消失。",
        "例：",
        "用自身方法特殊召唤的「方界兽 利刃之迦楼迪亚」被一时除外后，攻击力不会上升。17/3/24",
        "等级·阶级·种族·属性等也一样复原。",
        "旧的裁定。15/1/1 新的裁定。",
    ]
    assert [b.section for b in page.blocks] == [
        ("里侧·一时除外", "指示物"), ("里侧·一时除外", "攻守计算"), ("里侧·一时除外", "攻守计算", "备注"),
        ("里侧·一时除外", "攻守计算")]
    assert not any("OCG Rule" == t or "Copyright" in t or "¶" in t for t in texts)


def test_links_and_struck_ranges_are_kept():
    page = normalize(SPHINX.encode("utf-8"), source())
    line = page.blocks[1].lines[1]
    date_link = [l for l in line.links if "fid=19093" in l.href][0]
    assert line.text[date_link.start:date_link.end] == "17/3/24"
    card_link = [l for l in line.links if "ygocdb" in l.href][0]
    assert line.text[card_link.start:card_link.end] == "方界兽 利刃之迦楼迪亚"
    struck = page.blocks[3].lines[0]
    assert [struck.text[a:b] for a, b in struck.struck] == ["旧的裁定。15/1/1"]


def test_plain_text_seed_headings_and_bullets():
    text = "里侧·一时除外\n\n前言\n\n里侧的卡片是非公开情报。\n  • 反转等，不会丢失任何情报。\n    例：\n    「冰剑龙 幻冰龙」的②效果。\n\n备注\n\n等级也一样复原。\n"
    page = normalize(text.encode("utf-8"), source(fmt="text"))
    assert [(b.section, [l.text for l in b.lines], b.bullet) for b in page.blocks] == [
        (("里侧·一时除外", "前言"), ["里侧的卡片是非公开情报。"], False),
        (("里侧·一时除外", "前言"), ["反转等，不会丢失任何情报。", "例：", "「冰剑龙 幻冰龙」的②效果。"], True),
        (("里侧·一时除外", "前言", "备注"), ["等级也一样复原。"], False),
    ]


def test_markdown_links_and_headings():
    md = "# Book of Moon\n\n### Card Rulings\n\n*   A [Gale](https://x.org/gale) ruling.\n"
    page = normalize(md.encode("utf-8"), source(fmt="markdown", language="en", script="Latn", region=""))
    [block] = page.blocks
    assert block.section == ("Book of Moon", "Card Rulings")
    line = block.lines[0]
    assert line.text == "A Gale ruling."
    assert line.links[0].href == "https://x.org/gale" and line.text[line.links[0].start:line.links[0].end] == "Gale"


@pytest.mark.parametrize("data, message", [(b"", "page is empty"), (b"\x00\x01\x02\x00" * 50, "binary")])
def test_unusable_pages_raise_with_source_id(data, message):
    with pytest.raises(NormalizeError) as err:
        normalize(data, source(sid="broken-page"))
    assert message in str(err.value) and "broken-page" in str(err.value)


def test_wrong_charset_declaration_is_not_trusted():
    html = '<html><head><meta charset="big5"></head><body><p>仍然是S召唤的怪兽</p></body></html>'
    text, warnings = decode_page(html.encode("utf-8"), "p")
    assert "仍然是S召唤的怪兽" in text and warnings == ["p: declared charset big5 does not fit the bytes; read as utf-8"]


def test_canonical_text_converts_traditional_and_maps_terms_but_not_card_names():
    assert canonical_text("同步召喚的怪獸變成裡側後，仍然是同步召喚的怪獸。", "zh", "Hant", "TW") == \
        "S召唤的怪兽变成里侧后，仍然是S召唤的怪兽。"
    # Simplified text is never run through OpenCC; card names in 「」 keep their words.
    assert canonical_text("「同调召唤之门」同调召唤", "zh", "Hans", "CN") == "「同调召唤之门」S召唤"


def test_match_key_folds_width_and_stars():
    assert match_key("Ｎｏ．３９　希望皇霍普") == match_key("No.39 希望皇霍普")
    assert match_key("☆") == match_key("★")


# --------------------------------------------------------------------------- rulings separated by <br>

def _lines(body: str) -> list[str]:
    html = f"<html><head><title>t</title></head><body><article role='main'><h2>规则</h2>{body}</article></body></html>"
    return [l.text for b in normalize(html.encode("utf-8"), source()).blocks for l in b.lines]


@pytest.mark.parametrize("wrapper", ["<p>{}</p>", "<div>{}</div>", "<ul><li>{}</li></ul>", "<dd>{}</dd>",
                                     "<blockquote>{}</blockquote>"])
@pytest.mark.parametrize("body, rulings", [
    # dates after the rulings: a ruling ends at its date; a line before it without one is part of it
    ("「A」的效果适用。17/3/24<br>补充：同上。<br/> <br>「B」的效果不适用。（2018.1.5）<br>「C」不能发动。18/2/1<br>另：待定",
     ["「A」的效果适用。17/3/24", "补充：同上。 「B」的效果不适用。（2018.1.5）", "「C」不能发动。18/2/1", "另：待定"]),
    # dates before the rulings: a ruling starts at its date; a line after it without one is part of it
    ("17/3/24 「A」的效果适用。<br>连锁「X」也一样。<br>17/4/1 「B」不能发动。",
     ["17/3/24 「A」的效果适用。 连锁「X」也一样。", "17/4/1 「B」不能发动。"]),
    # a date stamp alone before each ruling dates the one after it
    ("17/3/24<br>「A」的效果可以发动。<br>17/4/1<br>「B」的效果不能发动。",
     ["17/3/24 「A」的效果可以发动。", "17/4/1 「B」的效果不能发动。"]),
    # an answer stays with its question, whatever their dates
    ("Q（17/3/20提问）：「A」可以发动吗？<br>A（17/3/24回答）：可以。<br>问：「B」呢？17/4/1<br>答：不能。17/4/2",
     ["Q（17/3/20提问）：「A」可以发动吗？ A（17/3/24回答）：可以。", "问：「B」呢？17/4/1 答：不能。17/4/2"]),
    # a question starts a ruling, dated or not, and a date may stand before the answer
    ("问：「A」能发动吗？（17/3/24）<br>答：不能。<br>问：「B」呢？（17/4/1）<br>答：可以。",
     ["问：「A」能发动吗？（17/3/24） 答：不能。", "问：「B」呢？（17/4/1） 答：可以。"]),
    ("问：「A」能发动吗？<br>17/3/24 答：不能。<br>问：「B」呢？<br>17/4/1 答：可以。",
     ["问：「A」能发动吗？ 17/3/24 答：不能。", "问：「B」呢？ 17/4/1 答：可以。"]),
    # a label or an ordinal before the date: still dates before rulings
    ("①17/3/24 「A」不能发动。<br>补充说明。<br>②17/4/1 「B」可以发动。",
     ["①17/3/24 「A」不能发动。 补充说明。", "②17/4/1 「B」可以发动。"]),
    ("日期：17/3/24 「C」不能发动。<br>补充。<br>日期：17/4/1 「D」可以。",
     ["日期：17/3/24 「C」不能发动。 补充。", "日期：17/4/1 「D」可以。"]),
    # a title, then a stamp before each ruling
    ("「X」<br>17/3/24<br>「A」不能发动。<br>17/3/25<br>「B」可以。",
     ["「X」", "17/3/24 「A」不能发动。", "17/3/25 「B」可以。"]),
    # a label of any length ending in an opening parenthesis or a colon, before its date
    ("Konami FAQ (17/3/24): 「A」 can be activated.<br>Also when Special Summoned.<br>Konami FAQ (17/3/25): 「B」.",
     ["Konami FAQ (17/3/24): 「A」 can be activated. Also when Special Summoned.", "Konami FAQ (17/3/25): 「B」."]),
    # a date in parentheses inside an answer is no label: its ruling's date
    ("「A」能否对应「B」发动？<br>「A」可以对应发动（17/3/24），但不能连锁「C」。<br>「D」能否对应「E」发动？<br>"
     "「D」不能对应发动（17/3/25），因为是永续效果。",
     ["「A」能否对应「B」发动？ 「A」可以对应发动（17/3/24），但不能连锁「C」。",
      "「D」能否对应「E」发动？ 「D」不能对应发动（17/3/25），因为是永续效果。"]),
    # a label whose parenthesis holds more than the date
    ("KONAMI官方FAQ（17/3/24，邮件）：「A」可以发动。<br>不进入连锁。<br>KONAMI官方FAQ（18/1/5）：「B」不能。<br>也不能。",
     ["KONAMI官方FAQ（17/3/24，邮件）：「A」可以发动。 不进入连锁。", "KONAMI官方FAQ（18/1/5）：「B」不能。 也不能。"]),
    # a stamp's note in parentheses is no word of the ruling after it
    ("「X」可以对应发动吗？<br>可以 17/3/24（邮件）<br>「Y」被除外的场合呢？<br>不能 17/3/25（邮件）",
     ["「X」可以对应发动吗？ 可以 17/3/24（邮件）", "「Y」被除外的场合呢？ 不能 17/3/25（邮件）"]),
    # a short answer with its date after it: the date ends the ruling
    ("「A」和「B」可以同时发动吗？<br>可以。（2017/3/24）<br>「C」可以对应「D」发动吗？<br>不能。（2017/3/25）",
     ["「A」和「B」可以同时发动吗？ 可以。（2017/3/24）", "「C」可以对应「D」发动吗？ 不能。（2017/3/25）"]),
])
def test_dated_rulings_separated_by_br_are_lines_of_their_own(wrapper, body, rulings):
    assert _lines(wrapper.format(body)) == rulings


@pytest.mark.parametrize("body", [
    "问：「A」能否发动？<br>答：可以发动。17/3/24",  # a question and its answer: one dated ruling
    "「A」的效果<br>不适用。",  # a line wrapped by hand, no date
    "「A」可以发动。17/3/24<br>（详见17/1/1的「B」的裁定）",  # a date it refers to is no date of its own
])
def test_a_br_inside_one_ruling_stays_a_space(body):
    assert _lines(f"<p>{body}</p>") == [body.replace("<br>", " ")]


def test_a_table_row_with_dated_lines_in_a_cell_stays_one_row():
    [row] = _lines("<table><tr><td>17/3/24 「A」<br>17/3/25 「B」</td><td>x</td></tr></table>")
    assert row == "17/3/24 「A」 17/3/25 「B」 | x"


def test_lines_of_a_line_block_written_with_br_are_lines():
    body = ('<div class="line-block">规则一「<a href="/a">A</a>」的效果。<br>规则二<span>「B」</span>。<br/>'
            '<div class="line">第三<br><s>第四。15/1/1</s></div></div>')
    html = f"<html><head><title>t</title></head><body><article role='main'><h2>规则</h2>{body}</article></body></html>"
    [block] = normalize(html.encode("utf-8"), source()).blocks
    assert [l.text for l in block.lines] == ["规则一「A」的效果。", "规则二「B」。", "第三", "第四。15/1/1"]
    first, last = block.lines[0], block.lines[3]
    assert [(first.text[l.start:l.end], l.href) for l in first.links] == [("A", "/a")]
    assert [last.text[a:b] for a, b in last.struck] == ["第四。15/1/1"]


# --------------------------------------------------------------------------- headings in all but their tag

def _sections(body: str) -> list[tuple[tuple[str, ...], str]]:
    html = f"<html><head><title>t</title></head><body><article role='main'><h1>页</h1>{body}</article></body></html>"
    return [(b.section, l.text) for b in normalize(html.encode("utf-8"), source()).blocks for l in b.lines]


def test_a_bold_card_name_or_a_rubric_is_a_heading_under_the_last_real_one():
    body = ("<h2>规则</h2><p><strong>「死者苏生」</strong></p><p>「死者苏生」不能发动。17/3/24</p>"
            "<p class='rubric'>其他</p><p>「A」可以。</p><h2>下一节</h2><p>「B」可以。</p>")
    assert _sections(body) == [
        (("页", "规则", "「死者苏生」"), "「死者苏生」不能发动。17/3/24"),
        (("页", "规则", "其他"), "「A」可以。"),
        (("页", "下一节"), "「B」可以。"),
    ]


@pytest.mark.parametrize("paragraph", [
    "<p><b>「A」不能发动。</b></p>",  # a sentence: a bold ruling
    "<p><b>「死者苏生」可以对应「灰流丽」发动</b></p>",  # no full stop, still a ruling
    "<p><strong>答：可以</strong></p>",
    "<p><b>可以发动（调整中）</b></p>",
    "<p><strong>Yes, you can chain Book of Moon</strong></p>",
    "<p><b>No</b></p>",
    "<p><b>有效果的发动=产生连锁=进入连锁</b>。</p>",  # text outside the bold part
    "<p>注意：<b>不能发动</b></p>",
    "<p><b>「一」</b><b>「二」</b></p>",
])
def test_a_bold_ruling_stays_a_ruling(paragraph):
    [(section, text)] = _sections("<h2>规则</h2>" + paragraph)
    assert section == ("页", "规则") and text


@pytest.mark.parametrize("body", [
    "<p><b>「公告」</b></p><h1>页</h1><p>「A」可以。</p>",  # before the first heading: never the title
    "<h1>页</h1><ul><li><p><strong>「X」</strong></p></li></ul><p>「A」可以。</p>",  # inside a list
    "<h1>页</h1><div class='admonition note'><p class='admonition-title'>备注</p><p><b>「X」</b></p></div>"
    "<p>「A」可以。</p>",  # inside an admonition
])
def test_a_paragraph_heading_outside_the_top_level_or_before_the_title_is_a_ruling(body):
    html = f"<html><head><title>t</title></head><body><article role='main'>{body}</article></body></html>"
    blocks = normalize(html.encode("utf-8"), source()).blocks
    assert [(b.section, l.text) for b in blocks for l in b.lines][-1] == (("页",), "「A」可以。")


def test_a_pre_without_dated_lines_is_one_line_as_a_diagram_is():
    assert _sections("<pre>开始步骤\n   ↓\n结束步骤 17/3/24</pre>") == [(("页",), "开始步骤 ↓ 结束步骤 17/3/24")]


def test_dated_lines_of_a_pre_keep_their_struck_text_and_continuations():
    html = ("<html><head><title>t</title></head><body><article role='main'><h1>页</h1><pre>"
            "<del>17/3/24 「A」的效果不能发动。</del>\n17/4/1 「A」的效果可以发动。\n  连锁「B」也可以。\n</pre>"
            "</article></body></html>")
    [block] = normalize(html.encode("utf-8"), source()).blocks
    assert [l.text for l in block.lines] == ["17/3/24 「A」的效果不能发动。", "17/4/1 「A」的效果可以发动。 连锁「B」也可以。"]
    assert [(l.text[a:b]) for l in block.lines for a, b in l.struck] == ["17/3/24 「A」的效果不能发动。"]


def test_an_english_page_splits_at_its_own_date_forms():
    html = ("<html><head><title>t</title></head><body><article role='main'><h1>Page</h1>"
            "<p>Book of Moon can be chained. (04/07/2004)<br>It cannot target a token. (05/01/2005)</p></article>"
            "</body></html>")
    lines = [l.text for b in normalize(html.encode("utf-8"), source(language="en", script="Latn", region="")).blocks
             for l in b.lines]
    assert lines == ["Book of Moon can be chained. (04/07/2004)", "It cannot target a token. (05/01/2005)"]


def test_a_data_table_cell_with_a_paragraph_stays_a_field_of_its_row():
    assert _sections("<table><tr><td><p>a</p><p>b</p></td><td>c</td></tr></table>") == [(("页",), "a b | c")]


DATED_FIRST = [("17/3/24 「A」不能发动。", ("2017-03-24",)), ("17/4/1 「B」可以。", ("2017-04-01",))]


@pytest.mark.parametrize("body, rulings", [
    ('<div class="line-block">17/3/24<br>「A」不能发动。<br>17/4/1<br>「B」可以。</div>', DATED_FIRST),
    ('<div class="line-block"><div class="line">17/3/24</div><div class="line">「A」不能发动。</div>'
     '<div class="line">17/4/1</div><div class="line">「B」可以。</div></div>', DATED_FIRST),
    # a title line first (it ends no sentence), then a stamp before each ruling
    ('<div class="line-block">「X」<br>17/3/24<br>「A」不能发动。<br>17/4/1<br>「B」可以。</div>',
     [("「X」", ())] + DATED_FIRST),
    # stamps written with 年月日
    ('<div class="line-block">2017年3月24日<br>「A」不能发动。<br>2017年4月1日<br>「B」可以。</div>',
     [("2017年3月24日 「A」不能发动。", ("2017-03-24",)), ("2017年4月1日 「B」可以。", ("2017-04-01",))]),
    # a block that opens and ends with stamps written alike: the last one also dates the last ruling
    ('<div class="line-block">17/3/24<br>「A」不能发动。<br>17/3/25<br>「B」可以。<br>17/4/1</div>',
     [("17/3/24 「A」不能发动。", ("2017-03-24",)), ("17/3/25 「B」可以。 17/4/1", ("2017-03-25", "2017-04-01"))]),
    # a first ruling without a full stop is no title: its stamp follows it
    ('<div class="line-block">「A」的效果可以对应「B」发动<br>17/3/24<br>「B」的效果不能被无效。<br>17/3/25</div>',
     [("「A」的效果可以对应「B」发动 17/3/24", ("2017-03-24",)), ("「B」的效果不能被无效。 17/3/25", ("2017-03-25",))]),
    # titles that are no bare card name: a name in 【】, a name and its note, an English card name
    ('<div class="line-block">【X】<br>17/3/24<br>「A」不能发动。<br>17/4/1<br>「B」可以。</div>',
     [("【X】", ())] + DATED_FIRST),
    ('<div class="line-block">「X」的裁定<br>17/3/24<br>「A」不能发动。<br>17/4/1<br>「B」可以。</div>',
     [("「X」的裁定", ())] + DATED_FIRST),
    # a block that opens and ends with a stamp: the odd stamp out is an update of the last ruling…
    ('<div class="line-block">17/3/24<br>「A」不能发动。<br>17/4/1<br>「B」可以。<br>2019.1.9（更新）</div>',
     [("17/3/24 「A」不能发动。", ("2017-03-24",)),
      ("17/4/1 「B」可以。 2019.1.9（更新）", ("2017-04-01", "2019-01-09"))]),
    # …or the day's stamp over rulings dated after them
    ('<div class="line-block">2017年3月1日<br>「A」不能发动。<br>17/3/24<br>「B」可以。<br>17/4/1</div>',
     [("2017年3月1日 「A」不能发动。 17/3/24", ("2017-03-01", "2017-03-24")), ("「B」可以。 17/4/1", ("2017-04-01",))]),
    # a line of a number and a note is no stamp
    ('<div class="line-block">1.（略）<br>「A」不能发动。</div>', [("1.（略）", ()), ("「A」不能发动。", ())]),
    # a title, then rulings each followed by its stamp, the newest undated: dates after
    ('<div class="line-block">「X」<br>「A」不能发动。<br>17/3/24<br>「B」可以。<br>17/3/25<br>「C」可以。</div>',
     [("「X」", ()), ("「A」不能发动。 17/3/24", ("2017-03-24",)), ("「B」可以。 17/3/25", ("2017-03-25",)),
      ("「C」可以。", ())]),
    # a stamp with a note in parentheses is a stamp
    ('<div class="line-block">「A」不能发动。<br>17/3/24（邮件）<br>「B」可以。<br>17/3/25（邮件）</div>',
     [("「A」不能发动。 17/3/24（邮件）", ("2017-03-24",)), ("「B」可以。 17/3/25（邮件）", ("2017-03-25",))]),
])
def test_a_stamp_alone_on_a_line_dates_the_ruling_it_stands_by(body, rulings):
    from pipeline.extract import extract
    from pipeline.schema import info_kinds

    html = f"<html><head><title>t</title></head><body><article role='main'><h1>页</h1>{body}</article></body></html>"
    records = extract(normalize(html.encode("utf-8"), source()), info_kinds())
    assert [(r.text, r.valid_dates) for r in records] == rulings


def test_a_layout_table_holding_a_data_table_reads_both():
    body = ("<table><tr><td><p>导航</p><p>首页</p><p>卡片</p></td><td><h3>裁定</h3><p>「E」可以。17/3/24</p>"
            "<table><tr><th>日期</th><th>裁定</th></tr><tr><td>17/3/26</td><td>「G」可以。</td></tr>"
            "<tr><td>17/3/27</td><td>「H」不能。</td></tr></table></td></tr></table>")
    assert _sections(body) == [(("页",), "导航"), (("页",), "首页"), (("页",), "卡片"), (("页", "裁定"), "「E」可以。17/3/24"),
                               (("页", "裁定"), "日期 | 裁定"), (("页", "裁定"), "17/3/26 | 「G」可以。"),
                               (("页", "裁定"), "17/3/27 | 「H」不能。")]


def test_a_table_with_a_header_row_is_data_whatever_its_cells_hold():
    body = ("<table><thead><tr><th>日期</th><th>裁定</th></tr></thead><tbody><tr><td>17/3/24</td>"
            "<td><p>「A」不能发动。</p><p>理由一。</p><p>理由二。</p></td></tr></tbody></table>")
    assert [t for _, t in _sections(body)] == ["日期 | 裁定", "17/3/24 | 「A」不能发动。 理由一。 理由二。"]


def test_rows_of_a_data_table_stay_records_whatever_their_cells_hold():
    rows = "".join(f"<tr><td>问{i}</td><td><p>可以。</p><p>但是不能连锁。</p><p>17/3/2{i}</p></td></tr>" for i in range(3))
    rows += "<tr><td><h4>小节</h4></td><td>x</td></tr>"
    texts = [t for _, t in _sections(f"<table>{rows}</table>")]
    assert texts == [f"问{i} | 可以。 但是不能连锁。 17/3/2{i}" for i in range(3)] + ["小节 | x"]


@pytest.mark.parametrize("text, title", [
    ("「救援兔」", True), ("【救援兔】", True), ("「救援兔」的裁定", True), ("「救援兔」（レスキュー・ラビット）", True),
    ("「救援兔」的裁定：", True), ("Rescue Rabbit", True), ("Book of Moon", True), ("Card Rulings:", True),
    ("「A」的效果可以对应「B」发动", False), ("「救援兔」可以发动。", False), ("You can activate it", False),
    ("Rescue Rabbit.", False),
])
def test_a_title_is_told_from_a_ruling(text, title):
    from pipeline.segment import is_title

    assert is_title(text) is title
