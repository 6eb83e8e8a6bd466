"""A page read from valid UTF-8 is checked and parsed in its own bytes
(:attr:`pipeline.encoding.Decoded.utf8`): what it reads must be what the
text encoded again gives."""

import codecs
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cleantext import CONTROL_CHARS, has_control_bytes
from pipeline.corpus import BUNDLED_CORPUS, Source, load_manifest, read_snapshot
from pipeline.htmlpage import normalize_html
from pipeline.normalize import decoded_page, normalize
from pipeline.pagelimits import separator_count


def source(fmt="html", sid="test-page"):
    return Source(sid, "https://example.org/p", "zh", "Hans", "CN", fmt, "test", "p", False, "", Path("/dev/null"))


@pytest.mark.parametrize("data, kept", [
    ("<p>中文</p>".encode("utf-8"), True),
    (codecs.BOM_UTF8 + "<p>中文</p>".encode("utf-8"), False),  # the text is the bytes after the BOM
    ("<p>中文</p>".encode("gb18030"), False),  # read as GB18030: its bytes are not the text's UTF-8
    (b"<p>\xe4\xb8\xad\xff</p>", False),  # invalid UTF-8: a byte replaced
])
def test_only_a_valid_utf8_page_keeps_its_bytes(data, kept):
    decoded = decoded_page(data, "p", language="zh", script="Hans", region="CN")
    assert (decoded.utf8 is data) == kept
    if kept:
        assert decoded.text.encode("utf-8") == data


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(["a", "中", "\x00", "\x08", "\t", "\n", "\x0e", "\x1f", " ", "\x7f",
                                              "\x80", "\x85", "\x9f", "\xa0", "\xc2", "Â", "\U0001f600", "\u0100"]),
                    max_size=12))
def test_control_bytes_found_as_the_pattern_finds_them(text):
    """has_control_bytes of a text's UTF-8 says what a search of CONTROL_CHARS says."""
    assert has_control_bytes(text.encode("utf-8")) == (CONTROL_CHARS.search(text) is not None)


@given(text=st.text(alphabet=st.sampled_from(["a", "中", " ", "\n", "\t", "/", '"', "'", "\r", "\f", "<"]),
                    max_size=20))
def test_separators_counted_in_given_bytes_as_in_the_text(text):
    assert separator_count(text, text.encode("utf-8")) == separator_count(text) == sum(
        text.count(c) for c in " \n\t\r\f/\"'")


@pytest.mark.parametrize("src", [s for s in load_manifest(BUNDLED_CORPUS) if s.format == "html"][:6],
                         ids=lambda s: s.id)
def test_an_html_page_reads_the_same_from_its_bytes(src):
    """normalize_html given the page's bytes gives the page it gives from the text alone."""
    text = read_snapshot(src).decode("utf-8")
    assert normalize_html(text, src, utf8=text.encode("utf-8")) == normalize_html(text, src)


def test_a_page_with_control_characters_is_parsed_without_them():
    """Control characters removed from the text: the parser reads the text, not the page's bytes."""
    page = normalize("<html><body><p>a\x01b 中文</p></body></html>".encode("utf-8"), source())
    assert [line.text for block in page.blocks for line in block.lines] == ["ab 中文"]
    assert any("control characters removed" in w for w in page.warnings)
    assert not any("character references" in w for w in page.warnings)  # the parse found none left
