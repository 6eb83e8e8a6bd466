"""Page bytes in the encodings real Chinese pages use (pipeline/encoding.py)."""

import codecs
from pathlib import Path

import pytest

from pipeline.corpus import Source
from pipeline.encoding import decode_bytes, encoding_name
from pipeline.normalize import normalize
from conftest import CASES, ROOT

CASES = CASES / "traditional"
TW_PAGE = (CASES / "c03-face-down-temp-banish.zh-TW.html").read_text(encoding="utf-8")
CN_PAGE = (ROOT / "corpus/pages/ocg-rule/c03-face-down-temp-banish.html").read_text(
    encoding="utf-8")


def saved_as(text: str, encoding: str, label: str | None) -> bytes:
    """``text`` saved as a browser would: characters the encoding lacks become
    numeric character references; the ``<meta charset>`` names ``label``
    (None: no declaration)."""
    meta = f'<meta charset="{label}">' if label else ""
    return text.replace('<meta charset="utf-8">', meta, 1).encode(encoding, errors="xmlcharrefreplace")


def lines_of(data: bytes, declared: str | None = None, script="Hant", region="TW") -> tuple[list[str], list[str]]:
    source = Source("tw-page", "u", "zh", script, region, "html", "l", "p", False, "", Path("p"))
    page = normalize(data, source, declared)
    return [line.text for block in page.blocks for line in block.lines], page.warnings


REFERENCE = lines_of(TW_PAGE.encode("utf-8"))[0]


@pytest.mark.parametrize("encoding, label", [
    ("big5", "big5"), ("cp950", "big5"), ("big5", None), ("big5hkscs", "big5-hkscs"),
    ("gb18030", "gb18030"), ("gb18030", None), ("utf-8-sig", None), ("utf-8-sig", "utf-8"),
])
def test_same_text_in_every_encoding(encoding, label):
    lines, warnings = lines_of(saved_as(TW_PAGE, encoding, label))
    assert lines == REFERENCE
    assert warnings == []


@pytest.mark.parametrize("encoding, wrong, read_as", [
    ("big5", "gb2312", "cp950"), ("big5", "utf-8", "cp950"), ("gb18030", "big5", "gb18030"),
])
def test_a_wrong_meta_declaration_is_detected(encoding, wrong, read_as):
    lines, warnings = lines_of(saved_as(TW_PAGE, encoding, wrong))
    assert lines == REFERENCE
    assert warnings == [f"tw-page: declared charset {wrong} does not fit the bytes; read as {read_as}"]


def test_a_wrong_http_header_is_detected_and_a_right_one_is_used():
    data = saved_as(TW_PAGE, "big5", None)
    lines, warnings = lines_of(data, declared="GBK")
    assert lines == REFERENCE
    assert warnings == ["tw-page: declared charset GBK does not fit the bytes; read as cp950"]
    assert lines_of(data, declared="Big5") == (REFERENCE, [])


def test_a_simplified_page_in_gbk_without_declaration():
    data = saved_as(CN_PAGE, "gbk", None)
    assert b"<meta charset" not in data
    decoded = decode_bytes(data, "cn-page")
    assert (decoded.encoding, decoded.warnings) == ("gb18030", [])
    assert lines_of(data, script="Hans", region="CN") == lines_of(CN_PAGE.encode("utf-8"), script="Hans", region="CN")


@pytest.mark.parametrize("text, encoding, expected", [
    ("<p>同步召喚的怪獸變成裡側後，仍然是同步召喚的怪獸。</p>", "big5", "cp950"),
    ("<p>S召唤的怪兽变成里侧后，仍然是S召唤的怪兽。</p>", "gbk", "gb18030"),
    ("<p>「冰劍龍 幻冰龍」的②效果發動並適用後</p>", "cp950", "cp950"),
])
def test_short_undeclared_pages(text, encoding, expected):
    decoded = decode_bytes(text.encode(encoding), "short")
    assert (decoded.text, decoded.encoding, decoded.warnings) == (text, expected, [])


def test_circled_numbers_of_big5_are_not_read_as_kana():
    # Big5-HKSCS puts kana where cp950 has ①②③: an undeclared Big5 page keeps its effect numbers.
    data = "<p>發動③效果後，①效果不適用。</p>".encode("big5")
    assert decode_bytes(data, "p").text == "<p>發動③效果後，①效果不適用。</p>"


def test_undecodable_bytes_are_reported_with_the_byte_offset_and_the_page_is_kept():
    data = saved_as(TW_PAGE, "big5", "big5")
    first = data.index("指示物全部消失".encode("big5"))
    broken = data[:first] + b"\xff" + data[first:]
    second = broken.index("也一樣復原".encode("big5"))
    broken = broken[:second] + b"\x80" + broken[second:]
    lines, warnings = lines_of(broken)
    assert warnings == [f"tw-page: 2 undecodable byte sequence(s) read as cp950 at byte {first}, {second}; "
                        "replaced with U+FFFD"]
    assert len(lines) == len(REFERENCE)
    assert "放置指示物的卡變成裡側或被一時除外後，\ufffd指示物全部消失。" in lines
    assert sum(a != b for a, b in zip(lines, REFERENCE)) == 2


def test_a_broken_utf8_page_stays_utf8():
    data = TW_PAGE.encode("utf-8")
    at = data.index("指示物全部消失".encode("utf-8"))
    decoded = decode_bytes(data[:at] + b"\xfe" + data[at:], "p")
    assert decoded.encoding == "utf-8"
    assert decoded.warnings == [f"p: 1 undecodable byte sequence(s) read as utf-8 at byte {at}; replaced with U+FFFD"]


def test_bom_wins_over_a_declaration_and_broken_bytes_after_it_are_reported():
    body = saved_as(TW_PAGE, "utf-8", "big5")
    assert decode_bytes(codecs.BOM_UTF8 + body, "p").text == TW_PAGE.replace('"utf-8"', '"big5"', 1)
    decoded = decode_bytes(codecs.BOM_UTF8 + b"<p>\xff</p>", "p")
    assert decoded.warnings == ["p: 1 undecodable byte sequence(s) read as utf-8 at byte 6; replaced with U+FFFD"]


def test_unknown_charset_label_is_reported():
    decoded = decode_bytes('<meta charset="x-klingon"><p>同步召喚</p>'.encode("big5"), "p")
    assert decoded.encoding == "cp950"
    assert decoded.warnings == ["p: declared charset 'x-klingon' is unknown; ignored"]


@pytest.mark.parametrize("label, codec", [
    ("GB2312", "gb18030"), ("gbk", "gb18030"), ("Big5", "cp950"), ("big5-hkscs", "big5hkscs"), ("UTF8", "utf-8"),
    ("nonsense", None), ("ISO-8859-1", "cp1252"), ("latin1", "cp1252"), ("US-ASCII", "cp1252"), ("windows-1252", "cp1252"),
])
def test_declared_labels_read_as_supersets(label, codec):
    assert encoding_name(label) == codec


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                                        (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")])
def test_a_utf16_or_utf32_page_is_read_by_its_bom(bom, codec):
    decoded = decode_bytes(bom + "<p>同步召喚「死者蘇生」</p>".encode(codec), "p")
    assert (decoded.encoding, decoded.text, decoded.warnings) == (codec, "<p>同步召喚「死者蘇生」</p>", [])


@pytest.mark.parametrize("meta, header", [("gbk", None), ("big5", None), ("ISO-8859-1", None), (None, "gb2312")])
def test_utf8_bytes_declared_otherwise_are_read_as_utf8_with_a_warning(meta, header):
    head = f'<meta charset="{meta}">' if meta else ""
    decoded = decode_bytes(f"{head}<p>同步召唤「死者苏生」—</p>".encode("utf-8"), "p", declared=header)
    assert decoded.encoding == "utf-8" and decoded.text.endswith("<p>同步召唤「死者苏生」—</p>")
    assert decoded.warnings == [f"p: declared charset {header or meta} does not fit the bytes; read as utf-8"]


@pytest.mark.parametrize("text, declared", [("<p>plain ASCII</p>", "gbk"), ("<p>同步召唤</p>", "utf-8"),
                                            ("<p>同步召唤</p>", "UTF8"), ("<p>同步召唤</p>", None),
                                            ("<p>同步召唤</p>", "utf-16")])  # HTML reads utf-16 without a BOM as utf-8
def test_utf8_bytes_that_fit_their_declaration_give_no_warning(text, declared):
    assert decode_bytes(text.encode("utf-8"), "p", declared=declared).warnings == []


def test_a_latin1_declaration_reads_windows_1252_quotes_and_dashes_as_browsers_do():
    page = '<meta charset="iso-8859-1"><p>Book of Moon \u2014 \u201cSet\u201d it, caf\u00e9</p>'
    decoded = decode_bytes(page.encode("cp1252"), "p")
    assert (decoded.encoding, decoded.text, decoded.warnings) == ("cp1252", page, [])
