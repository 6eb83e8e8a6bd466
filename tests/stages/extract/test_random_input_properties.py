"""Property-based tests (Hypothesis): random bytes, text and HTML through
normalize and extract raise nothing but the project's own errors, and every
date token put into a page comes out on some record.

A modest number of examples keeps the suite fast; fuzz deeper with
``RULINGS_FUZZ_EXAMPLES=2000 pytest tests/test_properties.py``.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.compile import info_kinds
from pipeline.corpus import Source
from pipeline.errors import RulingsError
from pipeline.extract import extract
from pipeline.normalize import normalize

SETTINGS = settings(max_examples=int(os.environ.get("RULINGS_FUZZ_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FORMATS = st.sampled_from(["html", "text", "markdown"])
LANGUAGES = st.sampled_from(["zh", "en"])


def source(fmt: str, language: str) -> Source:
    script = "Hans" if language == "zh" else "Latn"
    return Source("fuzz-page", "https://example.org/p", language, script, "", fmt, "test", "p", False, "",
                  Path("/dev/null"))


def records_of(data: bytes, fmt: str, language: str):
    """Normalize and extract; None when the page is refused with a project error.
    Any other exception fails the test."""
    try:
        return extract(normalize(data, source(fmt, language)), info_kinds())
    except RulingsError as exc:
        assert exc.source_id == "fuzz-page" and exc.place
        return None


# --------------------------------------------------------------------------- never anything but our errors

TAGS = ["p", "div", "span", "b", "a", "del", "li", "ul", "table", "tr", "td", "h1", "h2", "main", "article",
        "nav", "script", "section", "br", "html", "body", "title", "pre", "s"]
MARKUP = st.one_of(
    st.text(max_size=30),
    st.sampled_from(TAGS).map(lambda t: f"<{t}>"),
    st.sampled_from(TAGS).map(lambda t: f"</{t}>"),
    st.sampled_from(['<div class="line-block">', '<div class="line">', '<span class="strike">', '<a href="?fid=1">',
                     '<div class="admonition"><p class="admonition-title">备注</p>', "<!--", "-->", "<![CDATA[",
                     "&amp;", "&#0;", "&#xD800;", "&nbsp;", "<meta charset=big5>", "<?xml version='1.0'?>",
                     "17/3/24", "「", "」", "。", "例：", "\x00", "\u2028"]),
)


@SETTINGS
@given(data=st.binary(max_size=3000), fmt=FORMATS, language=LANGUAGES)
def test_random_bytes_raise_only_project_errors(data, fmt, language):
    records_of(data, fmt, language)


@SETTINGS
@given(text=st.text(max_size=3000), fmt=FORMATS, language=LANGUAGES)
def test_random_text_raises_only_project_errors(text, fmt, language):
    records_of(text.encode("utf-8"), fmt, language)


@SETTINGS
@given(parts=st.lists(MARKUP, max_size=120), language=LANGUAGES)
def test_random_markup_raises_only_project_errors(parts, language):
    records_of("".join(parts).encode("utf-8"), "html", language)


# --------------------------------------------------------------------------- no date token is lost

# Filler text: anything but the few characters that make Markdown or a list of
# their own (headings, links, quotes) or that join with a token's digits.
FILLER = st.text(st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="#[]()>/0123456789"),
                 max_size=40)
SEPARATORS = st.sampled_from([" ", "，", "。", ". ", "、", "\u3000"])
SHORT = st.tuples(st.integers(0, 99), st.integers(0, 19), st.integers(0, 39)).map(lambda t: "%d/%d/%d" % t)
FULL = st.tuples(st.integers(1990, 2110), st.integers(0, 19), st.integers(0, 39)).flatmap(
    lambda t: st.sampled_from(["%d年%d月%d日" % t, "%d-%02d-%02d" % t]))
TOKENS = st.one_of(SHORT, SHORT, FULL)


@st.composite
def dated_text(draw) -> tuple[str, list[str]]:
    """Filler with date tokens between separators; returns (text, tokens)."""
    parts, tokens = [draw(FILLER)], []
    for _ in range(draw(st.integers(1, 4))):
        token = draw(TOKENS)
        tokens.append(token)
        parts += [draw(SEPARATORS), token, draw(SEPARATORS), draw(FILLER)]
    return "".join(parts), tokens


def assert_no_token_lost(records, tokens: list[str]) -> None:
    assert records is not None
    found = Counter(d.raw for r in records for d in r.dates)
    missing = Counter(tokens) - found
    assert not missing, (missing, [r.text for r in records])


@SETTINGS
@given(lines=st.lists(st.one_of(dated_text(), FILLER.map(lambda f: (f, []))), min_size=1, max_size=8),
       blank=st.lists(st.booleans(), min_size=8, max_size=8), fmt=st.sampled_from(["text", "markdown"]),
       language=LANGUAGES)
def test_text_pages_keep_every_date_token(lines, blank, fmt, language):
    body = "".join(text + ("\n\n" if gap else "\n") for (text, _), gap in zip(lines, blank))
    tokens = [t for _, ts in lines for t in ts]
    if not tokens:
        return
    assert_no_token_lost(records_of(body.encode("utf-8"), fmt, language), tokens)


def _leaf(dated: tuple[str, list[str]]) -> tuple[str, list[str]]:
    return html.escape(dated[0]), dated[1]


def _wrap(children: list[tuple[str, list[str]]], open_tag: str, close_tag: str) -> tuple[str, list[str]]:
    return open_tag + "".join(c[0] for c in children) + close_tag, [t for c in children for t in c[1]]


CONTAINERS = [("<div>", "</div>"), ("<p>", "</p>"), ("<span>", "</span>"), ("<b>", "</b>"), ("<del>", "</del>"),
              ('<a href="https://www.db.yugioh-card.com/faq?fid=19093">', "</a>"), ("<section>", "</section>"),
              ("<blockquote>", "</blockquote>"), ("<ul><li>", "</li></ul>"), ("<table><tr><td>", "</td></tr></table>"),
              ('<div class="line-block"><div class="line">', "</div></div>"), ('<div class="line-block">', "</div>"),
              ('<span class="strike">', "</span>"),
              ('<div class="admonition"><p class="admonition-title">备注</p>', "</div>")]
HTML_TREE = st.recursive(
    st.one_of(dated_text().map(_leaf), FILLER.map(lambda f: (html.escape(f), [])),
              st.sampled_from(["<br>", "<h2>指示物</h2>", "<h3>备注</h3>", "<!-- 17/3/24 -->"]).map(lambda t: (t, []))),
    lambda inner: st.tuples(st.lists(inner, min_size=1, max_size=4), st.sampled_from(CONTAINERS)).map(
        lambda x: _wrap(x[0], *x[1])),
    max_leaves=25,
)


@SETTINGS
@given(tree=HTML_TREE, content=st.sampled_from([("<main>", "</main>"), ('<article role="main">', "</article>"),
                                                ("", "")]), language=LANGUAGES)
def test_html_pages_keep_every_date_token(tree, content, language):
    markup, tokens = tree
    if not tokens:
        return
    page = f"<html><head><title>t</title></head><body><nav>17/1/1</nav>{content[0]}{markup}{content[1]}</body></html>"
    assert_no_token_lost(records_of(page.encode("utf-8"), "html", language), tokens)


# --------------------------------------------------------------------------- fast paths give what the general path gives

SENTENCE_TEXT = st.lists(st.sampled_from(list("。！？（）()「」『』ab 1/3/24") + ["17/3/24", " 17/3/2"]),
                         max_size=20).map(lambda parts: "".join(parts).strip())


@SETTINGS
@given(text=SENTENCE_TEXT)
def test_one_sentence_shortcut_splits_as_the_walk_does(text):
    """split_sentences skips its walk over brackets and quotes for a text
    that is surely one sentence (_one_sentence); the walk must agree."""
    from pipeline import segment as ex

    fast = ex.split_sentences(text, "zh")
    original = ex._one_sentence
    ex._one_sentence = lambda _text: False
    try:
        assert ex.split_sentences(text, "zh") == fast
    finally:
        ex._one_sentence = original


LEAF_MARKUP = st.lists(st.one_of(
    st.text(alphabet=st.sampled_from(list("ab 1。&;\u200b\u00ad")), max_size=6),
    st.sampled_from(['<a href="?fid=1">17/3/24</a>', '<a href="u">1</a>', "<a>2</a>", "<del>x</del>",
                     '<span class="strike">y</span>', '<span class="headerlink">¶</span>', "<b></b>", "<br>",
                     "<td>c</td>", '<a href="v"><b>n</b></a>', "&amp;amp;", "&#8203;", "<nav>m</nav>",
                     '<span role="navigation">r</span>', '<nav class="footnote">k</nav>', '<a class="strike toc">t</a>',
                     '<s role="doc-footnote">f</s>', '<span class="headerlink footnote">h</span>']),
), max_size=10)


@SETTINGS
@given(parts=LEAF_MARKUP)
def test_line_shortcuts_read_as_the_walk_does(parts):
    """LineBuilder reads a childless element without lxml's walk, and
    skips clean_text on a piece without '&' on a page with no invisible
    character (clean_page): both must give the line the general walk gives."""
    from lxml import etree

    from pipeline import htmlline as nz

    root = etree.fromstring(f"<html><body><div>{''.join(parts)}</div></body></html>".encode(), etree.HTMLParser())
    div = root.find(".//div")
    if div is None:
        return
    fast = nz.line_from(div, clean=nz.clean_page(div))
    original = nz._WALKED_LEAVES
    nz._WALKED_LEAVES = _EVERY_TAG
    try:
        assert nz.line_from(div, clean=False) == fast
    finally:
        nz._WALKED_LEAVES = original


BLOCK_MARKUP = st.lists(st.one_of(
    st.text(alphabet=st.sampled_from(list(" \t\n\x0b\x0c\x1c\x85\xa0\u3000\u200b\u180ea1")), min_size=1, max_size=4),
    st.sampled_from(["<p>x</p>", "<div>y</div>", "<h3>t</h3>", "<ul><li>i <ul><li>j</li></ul></li></ul>",
                     "<a href='u'>17/3/24</a>", "<span> </span>", "<b></b>", "<br>", "&nbsp;", "&#8203;", "&amp;",
                     "<div class='line-block'><div class='line'>z</div>\n</div>", "<nav>n</nav>", "<p>例：</p>"]),
), max_size=12)


@SETTINGS
@given(parts=BLOCK_MARKUP)
@example(parts=["\n", "<p>x</p>", " \u3000", "<div>y</div>"]).via("white space between blocks")
@example(parts=["\u200b", "<p>x</p>", "\u180e"]).via("invisible characters are no white space")
def test_blank_runs_are_skipped_as_the_line_builder_drops_them(parts):
    """The walk skips an inline run of white space only without building its
    line (_blank): the blocks must be those the line builder gives."""
    from lxml import etree

    from pipeline import htmlwalk as nz
    from pipeline.htmlline import clean_page

    root = etree.fromstring(f"<html><body><main>{''.join(parts)}</main></body></html>".encode(), etree.HTMLParser())
    main = root.find(".//main")
    if main is None:
        return

    def blocks():
        walker = nz.HtmlWalker(clean=clean_page(main))
        walker.walk(main)
        return walker.blocks

    fast = blocks()
    original = nz._blank
    nz._blank = lambda run: False
    try:
        assert blocks() == fast
    finally:
        nz._blank = original


ATTRIBUTES = st.dictionaries(st.sampled_from(["class", "role", "href", "id", "data-class", "roles", "CLASS"]),
                             st.text(alphabet=st.sampled_from(list("ab \t")), max_size=4), max_size=4)


@SETTINGS
@given(attributes=ATTRIBUTES)
@example(attributes={"class": "", "role": ""}).via("empty values")
@example(attributes={"data-class": "nav", "roles": "x"}).via("names that hold class or role")
def test_class_and_role_read_as_lookups_by_name(attributes):
    """normalize reads an element's attribute names before its class and
    role (class_role): the values must be what lookups by name give."""
    from lxml import etree

    from pipeline import htmlline as nz

    markup = "".join(f' {name}="{html.escape(value)}"' for name, value in attributes.items())
    root = etree.fromstring(f"<html><body><span{markup}>x</span></body></html>".encode(), etree.HTMLParser())
    span = root.find(".//span")
    assert nz.class_role(span) == (span.get("class"), span.get("role"))


class _EveryTag:
    """A set holding every tag: every element takes the general walk."""

    def __contains__(self, tag) -> bool:
        return True


_EVERY_TAG = _EveryTag()


WHITESPACE_TEXT = st.text(alphabet=st.sampled_from(list("a中 1\t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2000\u2028\u3000\u200b")),
                          max_size=12)


@SETTINGS
@given(text=WHITESPACE_TEXT)
@example(text="a  b").via("a double space")
@example(text="a\u3000b").via("an ideographic space")
def test_whitespace_shortcut_collapses_as_the_pattern_does(text):
    """LineBuilder.text leaves a piece as it is when it is printable with
    no double space; the whitespace pattern must then change nothing."""
    from pipeline import htmlline as nz

    builder = nz.LineBuilder(clean=True)
    builder.text(text)
    assert "".join(builder.parts) == (nz.WHITESPACE.sub(" ", text) if text else "")
    assert builder.pos == len("".join(builder.parts))


@SETTINGS
@given(text=WHITESPACE_TEXT)
@example(text=" a  b \n c ").via("spaces before, between and after")
def test_char_tokenizer_tokens_as_spacy_does(text):
    """extract's Chinese tokenizer gives the tokens and spaces of spaCy's own
    ``char`` segmenter, whatever the whitespace."""
    from pipeline.match import pipeline_for
    from spacy.lang.zh import ChineseTokenizer

    nlp = pipeline_for("zh")
    ours = nlp.tokenizer(text)
    spacys = ChineseTokenizer(nlp.vocab)(text)
    assert [(t.text, t.whitespace_) for t in ours] == [(t.text, t.whitespace_) for t in spacys]


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("a Z中文\u3400\u4dbf\u9fffかカー・한\uac00\ud7a3é1")), max_size=40))
def test_letter_counts_count_each_character(text):
    """letter_counts matches each distinct character once: the counts are
    those of matching every character of the text."""
    from pipeline.pagescript import SCRIPT_LETTERS, letter_counts

    expected = {script: sum(1 for ch in text if pattern.match(ch)) for script, pattern in SCRIPT_LETTERS.items()}
    assert letter_counts(Counter(text)) == expected


@SETTINGS
@given(text=st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60))
@example(text="a\ud800b\udfff\U0010ffff\x00").via("lone surrogates, the last code point, NUL")
@example(text="").via("no text")
def test_char_counts_are_counters(text):
    """The NumPy character count gives what ``Counter`` gives, for any
    code point (astral ones and lone surrogates a bad decode may leave), when
    the text is counted at once or a few characters at a time."""
    from pipeline.chinese import char_counts

    assert char_counts(text) == dict(Counter(text))
    assert char_counts(text, chunk=3) == dict(Counter(text))


LINKS = st.lists(st.tuples(st.integers(0, 40), st.integers(-2, 6), st.sampled_from(["/a", "/b", "/c"])).map(
    lambda t: (t[0], t[0] + t[1], t[2])), max_size=8)  # a few end before they start: the lookup must not assume


@SETTINGS
@given(links=LINKS, start=st.integers(0, 45), length=st.integers(1, 8), in_order=st.booleans())
@example(links=[(5, 9, "/a"), (3, 12, "/b")], start=4, length=6, in_order=False).via("links out of text order")
@example(links=[(4, 6, "/a"), (4, 10, "/b")], start=5, length=4, in_order=True).via("two links from one place")
@example(links=[(16, 18, "/a"), (17, 9, "/b")], start=3, length=6, in_order=True).via("a link ending before it starts")
def test_link_on_a_quoted_name_is_the_first_inside_it(links, start, length, in_order):
    """extract's link lookup (a bisection when links are in text order) finds
    what a scan of every link finds: the first link within the quoted name,
    give or take one character."""
    import re

    from pipeline.annotate import _Links

    if in_order:
        links = sorted(links, key=lambda link: link[0])
    text = "x" * start + "「" + "n" * length + "」" + "x" * 10
    quote = re.compile("「(n+)」").search(text)
    a, b = quote.start(1), quote.end(1)
    expected = next((h for s, e, h in links if s >= a - 1 and e <= b + 1), None)
    assert _Links(links).at(quote) == expected


# The date patterns as first written, a lookbehind first: dates.py checks the
# character before the first digit after that digit, which must change nothing.
LOOKBEHIND_FIRST = {
    "YMD_SHORT": r"(?<![\d/.:])(\d{1,2})/(\d{1,2})/(\d{1,2})(?![\d/])",
    "YMD_CJK": r"(?<!\d)(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日",
    "YMD_ISO": r"(?<![\d/-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d-])|(?<![\d/-])((?:19|20)\d\d)/(\d{1,2})/(\d{1,2})(?![\d/=])",
    "MDY_US": r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])",
}


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("0121923/-.:=年月日 ３\n")), max_size=40))
@example(text="1/2/3 12/1/24 2019/1/2 2019-01-02 2024年1月2日 3/14/2019").via("one date of each pattern")
@example(text="01/2/3 1.1/2/3 :1/2/3 12019/1/2 /2019-1-2 -2019/1/2 x2019年1月2日 1/1/2/3").via("after a digit or mark")
def test_date_patterns_match_as_lookbehind_first(text):
    """Each date pattern finds the same tokens (places and groups) as its
    form with the lookbehind before the first digit."""
    import re

    from pipeline import dates

    for name, pattern in LOOKBEHIND_FIRST.items():
        ours = [(m.span(), m.groups()) for m in getattr(dates, name).finditer(text)]
        assert ours == [(m.span(), m.groups()) for m in re.finditer(pattern, text)], name


HEAD_PARTS = st.lists(st.sampled_from([
    "<head>", "</head>", "<title>", "</title>", " T &amp; t ", "里侧", "<!--c-->", "<b>", "</b>", "<meta charset=utf-8>",
    '<meta http-equiv="Content-Language" content="zh-TW">', "<div>", "<p>x</p>", "<svg><title>s</title></svg>",
    "\n", "<html>", '<html lang="en">', '<script>"<title>"</script>', "<!-- <title>c</title> -->", "<TITLE>",
    "</TITLE >", "<body>", "</titlex>", "</title", "<template>", "</template>", "<rt>", "<rp>", "<titles>"]),
    max_size=12)


@SETTINGS
@given(lang=st.sampled_from(["", " ", "zh-CN", " zh-Hant-TW ", "en"]), head=HEAD_PARTS, body=HEAD_PARTS)
@example(lang="zh", head=["<title>", "a<!--x-->b", "</title>"], body=[]).via("markup inside a title is its text")
@example(lang="en", head=["<title>", "no head", "</title>"], body=[]).via("a title without <head>")
@example(lang="en", head=["<head>", "</head>"], body=["<svg><title>s</title></svg>"]).via("a title in the body only")
@example(lang="en", head=["<div>", "<title>", "t", "</title>"], body=[]).via("a title after body content")
@example(lang=" ", head=["<title>", "t", "</title>"], body=[]).via("a blank lang")
@example(lang="en", head=["<title>", "A", "</titlex>"], body=["</title>"]).via("a closer that is no end tag")
@example(lang="zh", head=["<rt>", "<title>", "A", "</title>"], body=[]).via("a title inside <rt>")
@example(lang="en", head=["<template>", "<title>", "S", "</title>", "</template>"], body=[]).via("inside <template>")
def test_page_head_from_the_tree_reads_as_beautifulsoup_does(lang, head, body):
    """The title and declared language read from the page's lxml tree (when
    it has a title in <head>, a lang on <html>, and the last <title> before
    <body> is closed) are what BeautifulSoup's parse of the text before
    <body> gives."""
    from pipeline.htmlpage import _parse, page_head

    attr = f' lang="{lang}"' if lang else ""
    text = f"<!DOCTYPE html><html{attr}>{''.join(head)}<body>{''.join(body)}<p>text</p></body></html>"
    root, _ = _parse(text)
    assert page_head(text, root) == page_head(text)


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("0123456789/-年月日 x")), max_size=40))
@example(text="2019/1/2 1919/1/2 2024-01-02 17/3/24").via("a year before a slash, a hyphen")
@example(text="x2020/3/4").via("a year after a letter")
def test_dates_found_whether_or_not_the_iso_pattern_is_skipped(text):
    """find_dates skips its ISO pattern in a text with no hyphen and no
    19 / 20 before a slash; with a hyphen appended after a space (every
    pattern then runs, and it starts no date) it finds the same dates."""
    from pipeline.dates import find_dates

    def tokens(found):
        return [(d.raw, d.start, d.end, d.iso) for d in found if d.end <= len(text)]

    assert tokens(find_dates(text)) == tokens(find_dates(text + " -"))


@SETTINGS
@given(text=st.lists(st.sampled_from(["调整中", "調整中", "确认", "確認", "整", "中", "x", " "]), max_size=8).map("".join))
@example(text="调整中确认").via("answered")
@example(text="调整中 确认").via("not answered")
def test_pending_shortcut_says_what_the_pattern_says(text):
    """_pending looks for the markers as substrings first: it says what the
    pending pattern's search says."""
    from pipeline.segment import _pending, _pending_pattern

    assert _pending(text) == (_pending_pattern().search(text) is not None)


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(["a", "中", "\x00", "\x08", "\t", "\n", "\x0e", "\x1f", " ", "\x7f", "\x80",
                                              "\x9f", "\xa0", "\xc2", "Â", "\ud800", "\U0001f600", "\u0100", "\u2028"]),
               max_size=12), chunk=st.integers(1, 4))
@example(text="Â\xa0\x85", chunk=1 << 20).via("C1 after a Latin-1 letter and a no-break space")
def test_control_characters_found_as_the_pattern_finds_them(text, chunk):
    """has_control_chars (on UTF-8 bytes, a chunk at a time) says what a
    search of CONTROL_CHARS says."""
    from pipeline.cleantext import CONTROL_CHARS, has_control_chars

    assert has_control_chars(text, chunk) == (CONTROL_CHARS.search(text) is not None)


@pytest.mark.parametrize("field, kept", [
    ("<ruby>DD<rt>디디</rt></ruby>", "DD"), ("Foo</ruby>", "Foo"), ("A<rp>(</rp>B<rp>)</rp>", "AB"),
    ('Maxx "C"', 'Maxx "C"'), ("<b>x</b>", "<b>x</b>")])
def test_card_name_tables_keep_the_base_text_of_ruby_markup(tmp_path, field, kept):
    """read_names drops ruby markup (a lone closing tag too: the shortcut
    that skips fields without '<' must not skip it) and nothing else."""
    from pipeline.cards import read_names

    table = tmp_path / "names.tsv"
    table.write_text(f"passcode\tname\n1\t{field}\n", encoding="utf-8")
    assert read_names(table) == [{"passcode": "1", "name": kept}]


@pytest.mark.parametrize("source_id", ["ocg-rule-c03-face-down-temp-banish", "ocg-rule-c06-rulings-2023"])
def test_the_retention_gate_skips_only_rulings_that_state_nothing(source_id, monkeypatch):
    """``speaks_of_retention`` asks a principle outside the topic sections
    with an outcome word but no verdict word for a kind too, before the
    spaCy matcher reads it: read with every section outside a topic (the
    gold page as a yearly log reads it), the statements are those of the
    wider gate (an event, or one written in two parts, and a verdict or
    outcome word; or a continuity phrase and a specific kind)."""
    from pipeline import retention
    from pipeline.corpus import BUNDLED_CORPUS, load_manifest, read_snapshot

    [src] = [s for s in load_manifest(BUNDLED_CORPUS) if s.id == source_id]
    page = normalize(read_snapshot(src), src)
    monkeypatch.setattr(retention, "section_config", lambda section: None)

    def statements():
        return [(r.id, s) for r in extract(page, info_kinds()) for s in r.statements]

    gated = statements()
    from pipeline import reading

    events_, verdicts_, outcomes_, _, continuity_, specific_ = retention.retention_words()
    def wider(norm: str, example: bool = False) -> bool:
        named_event = events_.search(norm) or reading.split_events(norm, [], [])
        return bool(named_event and (verdicts_.search(norm) or outcomes_.search(norm))
                    or (continuity_.search(norm) and specific_.search(norm)))

    monkeypatch.setattr(retention, "speaks_of_retention", wider)
    assert gated == statements() and len(gated) > 30
