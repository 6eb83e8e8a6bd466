"""Page bytes -> text, for the encodings real Chinese pages use.

UTF-8 (with or without a BOM), Big5 (Taiwan; read as Windows cp950, which
has the circled numbers ①② of effect references where Big5-HKSCS has kana,
or as Big5-HKSCS for Hong Kong characters cp950 lacks), GBK / GB2312
(mainland; read as GB18030, their superset), declared in an HTTP header, a
``<meta charset>`` (or ``http-equiv``) tag, or not at all. Declarations are not trusted blindly: GB18030 accepts almost any
byte sequence, so Big5 bytes read as GB18030 give plausible-looking nonsense
without a single error. Every candidate is therefore scored with
charset-normalizer's mess detector (plus its share of undecodable bytes) and
the best one wins; near-ties go to a declared encoding.

Undecodable bytes never stop a page: the best candidate decodes it with
U+FFFD replacement characters and a warning names the source, the encoding
and the byte offsets.

A page that declares nothing and is not UTF-8 is read in an encoding of its
language, script and region (the manifest's), as a browser falls back on
its locale's: an English page in windows-1252 (ISO-8859-1 pages are read by
it too), a Simplified Chinese one in GB18030 first, a Traditional one in
Big5 (cp950, then Big5-HKSCS) first (:func:`expected_encodings`). The
encodings of other scripts are scored as well; one that reads the bytes
clearly better is reported in a warning, never taken silently (GB18030
reads Latin-1 bytes as ``caf� r閟um�`` with few errors).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from charset_normalizer.md import mess_ratio

META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-]+)""", re.I)
# Read every declared name as the superset real pages need.
ENCODING_ALIASES = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030",
                    "euc-cn": "gb18030", "big5": "cp950", "x-x-big5": "cp950", "big5-hkscs": "big5hkscs",
                    "utf8": "utf-8",
                    # As browsers do (WHATWG Encoding): these labels mean windows-1252, whose 0x80-0x9F
                    # bytes are the curly quotes and dashes such pages really hold.
                    **dict.fromkeys(("iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1",
                                     "ascii", "us-ascii", "cp819", "ibm819", "x-cp1252"), "cp1252")}
FALLBACKS = ("gb18030", "cp950", "big5hkscs", "cp1252")
# The encodings an undeclared page is read in, most likely first (ties go to the earlier), by its language
# and script: Western pages in windows-1252, as browsers do for Western locales (WHATWG Encoding); Chinese
# pages in GB18030 (mainland, Simplified) or Big5 (Taiwan, Hong Kong, Traditional), each scored against the
# others of its language, since either script may be saved in either encoding.
LATIN_ENCODINGS = ("cp1252",)
HANS_ENCODINGS = ("gb18030", "cp950", "big5hkscs")
HANT_ENCODINGS = ("cp950", "big5hkscs", "gb18030")
TRADITIONAL_REGIONS = frozenset({"TW", "HK", "MO"})
# Another script's encoding is reported when it scores at least this much better than the one chosen.
OTHER_SCRIPT_MARGIN = 0.2
# Scores this close count as a tie (wrong CJK decodings score about 1).
MARGIN = 0.05
# An undecodable byte weighs like this much mess per byte of the page.
ERROR_WEIGHT = 100
MAX_OFFSETS_REPORTED = 5


@dataclass
class Decoded:
    """The text of a page, the encoding it was read with, and warnings;
    ``utf8``: the page's bytes when ``text`` is exactly their decoding as
    UTF-8 (valid UTF-8 without a BOM: most pages), so that ``text``
    encoded is these bytes (a reader hands them on, not encoding the text
    again), else None."""

    text: str
    encoding: str
    warnings: list[str] = field(default_factory=list)
    utf8: bytes | None = None


def encoding_name(name: str | None) -> str | None:
    """A declared charset label -> the Python codec to read it with (the
    superset for GB2312/GBK and Big5), or None when there is no such codec."""
    if not name:
        return None
    label = name.strip().strip("\"'").lower()
    try:
        return codecs.lookup(ENCODING_ALIASES.get(label, label)).name
    except LookupError:
        return None


def declared_charset(data: bytes) -> str | None:
    """The charset a page declares in its first 4 KB (``<meta charset>`` or
    ``<meta http-equiv="Content-Type" content="...; charset=...">``)."""
    m = META_CHARSET.search(data[:4096])
    return m.group(1).decode("ascii", "ignore") if m else None


# One error handler, registered once, that records where decoding failed
# (module state: pages are decoded one at a time).
_bad_offsets: list[int] = []


def _record_bad_bytes(exc: UnicodeDecodeError) -> tuple[str, int]:
    _bad_offsets.append(exc.start)
    return "\ufffd", exc.end


codecs.register_error("rulings-record", _record_bad_bytes)


def _decode(data: bytes, encoding: str) -> tuple[str, list[int]]:
    """``data`` decoded with replacement characters, and the byte offsets replaced."""
    _bad_offsets.clear()
    text = data.decode(encoding, errors="rulings-record")
    offsets = list(_bad_offsets)
    _bad_offsets.clear()
    return text, offsets


def _clean_in(scored: list[tuple], encoding: str) -> bool:
    return any(name == encoding and not offsets for _, name, _, offsets in scored)


def _offsets_warning(source_id: str, encoding: str, offsets: list[int]) -> str:
    shown = ", ".join(map(str, offsets[:MAX_OFFSETS_REPORTED])) + (", ..." if len(offsets) > MAX_OFFSETS_REPORTED else "")
    return (f"{source_id}: {len(offsets)} undecodable byte sequence(s) read as {encoding} at byte {shown}; "
            f"replaced with U+FFFD")


def _utf8_declared_otherwise(data: bytes, text: str, source_id: str, declared: str | None) -> list[str]:
    """A warning when bytes that are valid UTF-8, not all ASCII, were
    declared in another encoding (an HTTP header or ``<meta charset>``):
    read as UTF-8, as a page whose declaration is stale. ASCII bytes fit
    every declaration."""
    if len(text) == len(data):  # all ASCII
        return []
    for label in (declared, declared_charset(data)):
        name = encoding_name(label)
        # HTML reads a UTF-16 or UTF-32 label on bytes without a BOM as UTF-8: no contradiction
        if name and name != "utf-8" and not name.startswith(("utf-16", "utf-32")):
            return [f"{source_id}: declared charset {label} does not fit the bytes; read as utf-8"]
    return []


def expected_encodings(language: str = "", script: str = "", region: str = "") -> tuple[str, ...]:
    """The codecs an undeclared, non-UTF-8 page of ``language`` (``en``,
    ``zh`` or ``''``: unknown), ``script`` (``Latn``, ``Hans``, ``Hant`` or
    ``''``) and ``region`` (``CN``, ``TW``, ... or ``''``) may be in, most
    likely first: :data:`LATIN_ENCODINGS` for English, :data:`HANT_ENCODINGS`
    for Traditional Chinese (by script, else a region of Traditional
    script), :data:`HANS_ENCODINGS` for other Chinese, every one of
    :data:`FALLBACKS` when the language is unknown."""
    if language == "en" or script == "Latn":
        return LATIN_ENCODINGS
    if language == "zh":
        traditional = script == "Hant" or (not script and region.upper() in TRADITIONAL_REGIONS)
        return HANT_ENCODINGS if traditional else HANS_ENCODINGS
    return FALLBACKS


def decode_bytes(data: bytes, source_id: str, declared: str | None = None, *, language: str = "",
                 script: str = "", region: str = "") -> Decoded:
    """Bytes -> :class:`Decoded`.

    Order: a BOM (UTF-8, UTF-32, UTF-16); valid UTF-8 (with a warning when
    a declaration says otherwise); else every candidate (the
    declared encodings: ``declared``, e.g. from an HTTP header, then
    ``<meta charset>``; UTF-8; the encodings of the page's ``language``,
    ``script`` and ``region``, :func:`expected_encodings`) is scored by its
    mess ratio plus its share of undecodable bytes; the first candidate within
    ``MARGIN`` of the best is used, so a declared encoding wins unless another
    is clearly better. The encodings of other scripts (:data:`FALLBACKS`)
    are scored too and never chosen: one that reads the bytes better by
    :data:`OTHER_SCRIPT_MARGIN` is named in a warning (the page's language
    in the manifest, or its bytes, are wrong). Warnings name a declaration
    the bytes contradict and the byte offsets of undecodable bytes (replaced
    with U+FFFD).
    """
    # UTF-32 LE before UTF-16 LE: its BOM starts with UTF-16 LE's.
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"),
                          (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                          (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            text, offsets = _decode(data[len(bom):], encoding)
            return Decoded(text, encoding, [_offsets_warning(source_id, encoding, [o + len(bom) for o in offsets])]
                           if offsets else [])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return Decoded(text, "utf-8", _utf8_declared_otherwise(data, text, source_id, declared), data)
    warnings: list[str] = []
    declared_names: dict[str, str] = {}  # codec -> label as declared
    for label in (declared, declared_charset(data)):
        name = encoding_name(label)
        if label and not name:
            warnings.append(f"{source_id}: declared charset {label!r} is unknown; ignored")
        elif name:
            declared_names.setdefault(name, label)
    candidates = list(dict.fromkeys(list(declared_names) + ["utf-8"] + list(expected_encodings(language, script,
                                                                                             region))))
    scored = _scored(data, candidates, declared_names)
    # Near-ties go to the earlier candidate: a declared encoding, then UTF-8, then the language's own.
    best = min(score for score, *_ in scored)
    chosen, encoding, text, offsets = next(c for c in scored if c[0] <= best + MARGIN)
    if declared_names and encoding not in declared_names:
        label = next(iter(declared_names.values()))
        warnings.append(f"{source_id}: declared charset {label} does not fit the bytes; read as {encoding}")
    other = _better_other_script(data, chosen, candidates, declared_names)
    if other:
        warnings.append(f"{source_id}: read as {encoding}, the encoding of a page in "
                        f"{_language_label(language, script, region)}, but the bytes read better as {other}; "
                        "check the page's language in the manifest or declare its charset")
    if offsets:
        warnings.append(_offsets_warning(source_id, encoding, offsets))
    return Decoded(text, encoding, warnings)


def _scored(data: bytes, encodings: list[str], declared_names: dict[str, str]) -> list[tuple]:
    """``(score, encoding, text, offsets)`` of each of ``encodings`` in
    order: the mess ratio of ``data`` decoded plus :data:`ERROR_WEIGHT`
    times the share of undecodable bytes (lower is better)."""
    scored: list[tuple] = []
    for encoding in encodings:
        if encoding == "big5hkscs" and encoding not in declared_names and _clean_in(scored, "cp950"):
            continue  # same bytes as cp950 but ①② read as kana: only for Hong Kong characters cp950 lacks
        text, offsets = _decode(data, encoding)
        score = mess_ratio(text, 1.0) + ERROR_WEIGHT * len(offsets) / len(data)
        scored.append((score, encoding, text, offsets))
    return scored


def _better_other_script(data: bytes, chosen: float, candidates: list[str],
                         declared_names: dict[str, str]) -> str | None:
    """The encoding of :data:`FALLBACKS` not among ``candidates`` that reads
    ``data`` better than the ``chosen`` score by :data:`OTHER_SCRIPT_MARGIN`
    (the best such), or None."""
    others = [e for e in FALLBACKS if e not in candidates]
    if not others or chosen < OTHER_SCRIPT_MARGIN:  # nothing can beat it by the margin
        return None
    score, encoding, *_ = min(_scored(data, others, declared_names), key=lambda c: c[0])
    return encoding if score + OTHER_SCRIPT_MARGIN <= chosen else None


def _language_label(language: str, script: str, region: str) -> str:
    """``en``, ``zh-Hant-TW``...: the page's language as the manifest gives it."""
    return "-".join(p for p in (language, script, region.upper()) if p) or "no language"
