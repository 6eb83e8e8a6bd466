"""Chinese script and game vocabulary: Simplified and Traditional pages to one canonical text.

Rulings are published in Simplified script (mainland community sites) and in
Traditional script (Taiwan and Hong Kong, following Konami Asia's official
translations). Everything downstream (statement extraction, record ids, the
rules table, search keys) works on one canonical form: Simplified script with
the mainland community's game terms (``S召唤``, ``卡组``, ``手卡``, ``盖放``).

* **Script and region** of a page (:func:`resolve_script_region`): declared by
  the manifest or by the page itself (``<html lang="zh-Hant-TW">``, a
  ``content-language`` meta tag), checked against a character statistic
  (:func:`script_counts`: Traditional-only vs Simplified-only characters). A
  declaration the text clearly contradicts is not trusted, so text that is
  already Simplified is never run through OpenCC.
* **Script conversion** with OpenCC: ``tw2sp`` for Taiwan text, ``hk2s`` for
  Hong Kong, ``t2s`` otherwise (:func:`opencc_config`). Card names in 「」 are
  converted character by character (``tw2s`` / ``hk2s`` / ``t2s``): the phrase
  tables of ``tw2sp`` rewrite computing words that are also card-name words
  (``宣告`` -> ``声明``, ``装置`` -> ``设备``). Known OpenCC traps are corrected
  from ``schema/opencc_fixes.tsv``. The aspect particle 著 of Taiwan and
  Hong Kong pages becomes 着 for every region (:func:`_particle_zhe`).
* **Regional game terms** (:func:`map_regional_terms`) from
  ``schema/regional_terms.tsv``: one row per canonical term, its variants per
  region. Card names in 「」 are not terms and stay as written.
* **Keys** for matching and search: :func:`match_key` (width folding, ``☆`` ->
  ``★``, one middle dot, one dash for every dash-like character, ``ー``
  included) and :func:`name_key` (any script ->
  Simplified, regional terms folded, then :func:`match_key`). Keys are never
  stored as the text.

Every function here is pure; the OpenCC converters and the two tables are
loaded once and cached.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from collections.abc import Mapping
from functools import lru_cache
from itertools import repeat

from .orthography import QUOTED_NAME
from .schema import REGIONAL_TERM_COLUMNS, opencc_fix_rows, tsv_rows

REGIONS = ("CN", "TW", "HK")
REGION_ALIASES = {"MO": "HK", "SG": "CN", "MY": "CN"}
PHRASE_CONFIGS = {"TW": "tw2sp", "HK": "hk2s"}  # running text; t2s otherwise
NAME_CONFIGS = {"TW": "tw2s", "HK": "hk2s"}  # card names: characters only; t2s otherwise

# A clear majority: the text's own script wins over a declaration only when
# it has this many script-specific characters and this share of them.
MIN_EVIDENCE = 20
MIN_SHARE = 0.8
# A short page whose script-specific characters are all of one script: clear with fewer of them.
MIN_UNANIMOUS = 5


# --------------------------------------------------------------------------- OpenCC

@lru_cache(maxsize=None)
def _converter(config: str):
    import opencc  # the official binding (package "opencc")

    return opencc.OpenCC(f"{config}.json")


@lru_cache(maxsize=None)
def character_map(config: str = "t2s") -> dict[str, str]:
    """OpenCC's single-character conversions for ``config`` (default
    ``t2s``, Traditional to Simplified): ``{character: converted}`` for
    every CJK ideograph (U+3400-U+4DBF, U+4E00-U+9FFF, U+F900-U+FAFF) that
    the config converts to one other character, each converted alone (no
    phrase of several characters applies). The report's search ships it so
    that a query typed in either script finds text in the other."""
    chars = [chr(c) for lo, hi in ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF)) for c in range(lo, hi + 1)]
    converted = _converter(config).convert("\n".join(chars)).split("\n")
    if len(converted) != len(chars):  # a conversion that joined or split lines: none is trusted
        return {}
    return {a: b for a, b in zip(chars, converted) if len(b) == 1 and b != a}


def opencc_config(script: str, region: str) -> str | None:
    """The OpenCC config for running text: ``tw2sp`` (TW), ``hk2s`` (HK or
    MO), ``t2s`` (other Traditional); None for Simplified text (never converted)."""
    if script != "Hant":
        return None
    return PHRASE_CONFIGS.get(_region(region), "t2s")


def name_config(script: str, region: str) -> str | None:
    """The OpenCC config for card names: characters and regional variants, no phrases."""
    if script != "Hant":
        return None
    return NAME_CONFIGS.get(_region(region), "t2s")


def _region(region: str) -> str:
    region = (region or "").upper()
    return REGION_ALIASES.get(region, region)


@lru_cache(maxsize=1)
def opencc_fixes() -> dict[str, tuple[tuple[str, str], ...]]:
    """``schema/opencc_fixes.tsv`` as ``{config: ((written, simplified), ...)}``,
    longest written form first. Columns: ``configs`` (comma-separated),
    ``written`` (as on the page), ``simplified`` (what it must become), ``why``."""
    fixes: dict[str, dict[str, str]] = {}
    for row in opencc_fix_rows():
        for config in row["configs"].split(","):
            fixes.setdefault(config.strip(), {})[row["written"]] = row["simplified"]
    return {c: tuple(sorted(pairs.items(), key=lambda p: (-len(p[0]), p[0]))) for c, pairs in fixes.items()}


@lru_cache(maxsize=None)
def _fix_pattern(config: str) -> re.Pattern | None:
    pairs = opencc_fixes().get(config, ())
    return re.compile("|".join(re.escape(w) for w, _ in pairs)) if pairs else None


# The aspect particle (放置著指示物, 存在著): Taiwan and Hong Kong pages write it 著, as Konami Asia does.
# OpenCC's Taiwan configs read it (their variant step, tw2t, makes 著 着 except in the words where 著
# is zhù: 著名, 顯著, 著作, 名著...), but its own Traditional standard and its Hong Kong variant write
# the particle 着, so t2s and hk2s keep every 著. For them the particle is read by that same OpenCC step.
ZHE_CONFIGS = frozenset({"t2s", "hk2s"})
ZHE, ZHE_PARTICLE = "著", "着"


def _particle_zhe(text: str) -> str:
    """``text`` (Traditional) with each 著 that OpenCC's Taiwan variant step
    (``tw2t``) reads as the aspect particle written 着; every other
    character as it was. Unchanged when that step did not keep the text's
    length (its tables map one character to one: never seen)."""
    if ZHE not in text:
        return text
    variant = _converter("tw2t").convert(text)
    if len(variant) != len(text):
        return text
    out = list(text)
    for m in re.finditer(ZHE, text):
        if variant[m.start()] == ZHE_PARTICLE:
            out[m.start()] = ZHE_PARTICLE
    return "".join(out)


def _opencc(text: str, config: str) -> str:
    """``text`` through OpenCC ``config`` alone (the particle 著 read first for
    :data:`ZHE_CONFIGS`)."""
    if config in ZHE_CONFIGS:
        text = _particle_zhe(text)
    return _converter(config).convert(text)


def convert(text: str, config: str) -> str:
    """``text`` through OpenCC ``config``, with the corrections of
    ``schema/opencc_fixes.tsv`` for that config (a corrected phrase is not
    handed to OpenCC at all); for ``t2s`` and ``hk2s`` the aspect particle
    著 becomes 着 as ``tw2s`` makes it (:func:`_particle_zhe`)."""
    pattern = _fix_pattern(config)
    if pattern is None:
        return _opencc(text, config)
    table = dict(opencc_fixes()[config])
    out, last = [], 0
    for m in pattern.finditer(text):
        if m.start() > last:
            out.append(_opencc(text[last:m.start()], config))
        out.append(table[m.group(0)])
        last = m.end()
    if last < len(text):
        out.append(_opencc(text[last:], config))
    return "".join(out)


def to_simplified(text: str, script: str = "Hans", region: str = "") -> str:
    """Card names (and other names) in Simplified script: character conversion
    only, no term mapping. Simplified text is returned as is."""
    config = name_config(script, region)
    return convert(text, config) if config else text


def _to_simplified_running(text: str, script: str, region: str) -> str:
    """Running text with its 「card names」: phrases outside the quotes,
    characters only inside them."""
    config = opencc_config(script, region)
    if not config:
        return text
    names = name_config(script, region)
    out, last = [], 0
    for m in QUOTED_NAME.finditer(text):
        if m.start() > last:
            out.append(convert(text[last:m.start()], config))
        out.append(convert(m.group(0), names))
        last = m.end()
    if last < len(text):
        out.append(convert(text[last:], config))
    return "".join(out)


# --------------------------------------------------------------------------- regional terms

@lru_cache(maxsize=1)
def regional_term_table() -> tuple[tuple[str, dict[str, tuple[str, ...]]], ...]:
    """``schema/regional_terms.tsv``: ``(canonical, {region: variants})`` per row,
    variants as written in that region's script (``|``-separated in the file)."""
    table = []
    for row in tsv_rows("regional_terms.tsv", REGIONAL_TERM_COLUMNS):
        variants = {r: tuple(v.strip() for v in row.get(r, "").split("|") if v.strip()) for r in REGIONS}
        table.append((row["canonical"], variants))
    return tuple(table)


def _term_regions(script: str, region: str) -> tuple[str, ...]:
    """Whose variants a page may use: mainland variants always; a Traditional
    page also those of its region, or of every Traditional region when unknown."""
    if script != "Hant":
        return ("CN",)
    region = _region(region)
    return ("CN", region) if region in ("TW", "HK") else ("CN", "TW", "HK")


@lru_cache(maxsize=None)
def regional_terms(script: str = "Hans", region: str = "") -> tuple[tuple[str, str], ...]:
    """``(variant, canonical)`` pairs for a page of ``script`` and ``region``,
    longest variant first. Variants are converted with the page's own OpenCC
    config so they look exactly like the converted text (``連結`` becomes
    ``链接`` under tw2sp, ``连结`` under t2s)."""
    pairs = {}
    for canonical, variants in regional_term_table():
        for term_region in _term_regions(script, region):
            for variant in variants[term_region]:
                if term_region != "CN":
                    variant = _to_simplified_running(variant, "Hant", region)
                if variant != canonical:
                    pairs[variant] = canonical
    return tuple(sorted(pairs.items(), key=lambda p: (-len(p[0]), p[0])))


@lru_cache(maxsize=None)
def _term_matcher(script: str, region: str) -> tuple[re.Pattern | None, dict[str, str]]:
    pairs = regional_terms(script, region)
    return (re.compile("|".join(re.escape(v) for v, _ in pairs)) if pairs else None), dict(pairs)


def map_regional_terms(text: str, script: str = "Hans", region: str = "") -> str:
    """Replace regional game terms by canonical ones, leaving 「card names」 as written."""
    pattern, table = _term_matcher(script, region)
    if pattern is None or not pattern.search(text):  # most text holds no regional term: one search, no split
        return text
    sub = lambda s: pattern.sub(lambda t: table[t.group(0)], s)  # noqa: E731
    out, last = [], 0
    for m in QUOTED_NAME.finditer(text):
        out.append(sub(text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(sub(text[last:]))
    return "".join(out)


def canonical_text(text: str, language: str, script: str = "Hans", region: str = "") -> str:
    """Chinese text in Simplified script with canonical game terms; other text as is."""
    if language != "zh":
        return text
    return map_regional_terms(_to_simplified_running(text, script, region), script, region)


def is_canonical(text: str, language: str, script: str = "Hans", region: str = "") -> bool:
    """Whether ``text`` is its own :func:`canonical_text` for a reason every
    part of it shares: it is not Chinese, or no OpenCC conversion applies
    (Simplified script) and it holds no regional term (plain words: a part
    holds one only where the whole does). One search of the terms, the one
    canonical_text makes; False says nothing."""
    if language != "zh":
        return True
    if opencc_config(script, region) is not None:
        return False
    pattern, _ = _term_matcher(script, region)
    return pattern is None or pattern.search(text) is None


# --------------------------------------------------------------------------- script and region

def _is_han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


@lru_cache(maxsize=None)
def _char_script(ch: str) -> str:
    """``T`` for a character only Traditional text uses (in Big5, not in
    GB2312: 發, 們, 彌), ``S`` for one only Simplified text uses (in GB2312,
    not in Big5: 发, 们, 弥), ``""`` for shared ones (后, 里, 只, 著, 台)."""
    in_big5, in_gb = _encodable(ch, "big5"), _encodable(ch, "gb2312")
    if in_big5 and not in_gb:
        return "T"
    if in_gb and not in_big5:
        return "S"
    return ""


def _encodable(ch: str, encoding: str) -> bool:
    try:
        ch.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def char_counts(text: str, chunk: int = 1 << 20) -> dict[str, int]:
    """Character -> occurrences in ``text`` (in code point order), what
    ``Counter(text)`` gives: counted in NumPy (a ``bincount`` over the code
    points), six times faster than ``Counter`` on a page of Chinese.
    ``chunk`` characters are counted at a time: each takes 12 bytes while it
    is counted (its code points, then bincount's 64-bit copy of them), so a
    20 MB page does not take hundreds of MB. NumPy is imported on the first
    call: commands that read no page do not pay for its import."""
    import numpy as np

    counts = np.zeros(0, dtype=np.int64)
    for start in range(0, len(text), chunk):
        codes = np.frombuffer(text[start:start + chunk].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        part = np.bincount(codes)
        if len(part) < len(counts):
            counts[:len(part)] += part
        else:
            part[:len(counts)] += counts
            counts = part
    present = np.flatnonzero(counts)
    return dict(zip(map(chr, present.tolist()), counts[present].tolist()))


def script_counts(text_or_counts: str | Mapping[str, int]) -> tuple[int, int]:
    """(Traditional-only, Simplified-only) Han characters in a text, or in
    the text whose character counts are given (a page counts its characters
    once for every check: :func:`pipeline.normalize.normalize`)."""
    trad = simp = 0
    # A page repeats most of its characters: count each distinct one once.
    if isinstance(text_or_counts, Mapping):
        pairs = text_or_counts.items()
    else:
        text = text_or_counts
        pairs = char_counts(text).items() if len(text) > 64 else zip(text, repeat(1))
    for ch, n in pairs:
        if _is_han(ch):
            kind = _char_script(ch)
            trad += n if kind == "T" else 0
            simp += n if kind == "S" else 0
    return trad, simp


def detect_script(text: str | Mapping[str, int], min_evidence: int = 1) -> str:
    """``Hant`` or ``Hans`` by the majority of script-specific characters, or
    ``""`` when there are fewer than ``min_evidence`` of them or a tie."""
    trad, simp = script_counts(text)
    if trad + simp < min_evidence or trad == simp:
        return ""
    return "Hant" if trad > simp else "Hans"


@dataclass(frozen=True)
class LangTag:
    """What a BCP 47 tag such as ``zh-Hant-TW`` says: language, script, region."""

    language: str = ""
    script: str = ""
    region: str = ""


def parse_lang_tag(tag: str) -> LangTag:
    """``zh-TW`` -> (zh, Hant, TW); ``zh-Hans`` -> (zh, Hans, ''); ``zh-MO`` ->
    (zh, Hant, HK). A region implies the script it writes in."""
    parts = re.split(r"[-_]", tag.strip())
    language = parts[0].lower() if parts else ""
    script = next((p.title() for p in parts[1:] if len(p) == 4 and p.isalpha()), "")
    raw_region = next((p.upper() for p in parts[1:] if len(p) == 2 and p.isalpha()), "")
    region = _region(raw_region)
    if not script and language == "zh" and raw_region:
        script = "Hant" if region in ("TW", "HK") else "Hans" if region == "CN" else ""
    return LangTag(language, script, region if region in REGIONS else "")


def _has_kana(text_or_counts: str | Mapping[str, int]) -> bool:
    """Whether a text (or its character counts) holds Japanese kana."""
    chars = text_or_counts.keys() if isinstance(text_or_counts, Mapping) else text_or_counts
    return any("\u3041" <= ch <= "\u30ff" and ch not in "\u30fb\u30fc" for ch in chars)


def resolve_script_region(text: str | Mapping[str, int], declared_script: str = "", declared_region: str = "",
                          tag: LangTag = LangTag(), source_id: str = "") -> tuple[str, str, list[str]]:
    """(script, region, warnings) of a Chinese page.

    The manifest's declaration comes first, then the page's own ``tag``, then
    the character statistic of ``text`` (or of its character counts). A
    declared script that the text clearly contradicts (at least
    ``MIN_EVIDENCE`` script-specific characters, ``MIN_SHARE`` of them of the
    other script, or at least ``MIN_UNANIMOUS`` all of the other script: a
    short page, unless it holds kana, whose kanji look Traditional) is
    overruled with a warning: Simplified text is never
    converted, Traditional text always is.
    """
    warnings: list[str] = []
    declared = declared_script if declared_script in ("Hans", "Hant") else tag.script
    region = _region(declared_region or tag.region)
    trad, simp = script_counts(text)
    evidence = trad + simp
    clear = ""
    if ((evidence >= MIN_EVIDENCE and max(trad, simp) >= MIN_SHARE * evidence)
            or (evidence >= MIN_UNANIMOUS and min(trad, simp) == 0 and not _has_kana(text))):
        clear = "Hant" if trad > simp else "Hans"
    if declared in ("Hans", "Hant"):
        script = declared
        if clear and clear != declared:
            warnings.append(f"{source_id}: declared script {declared} but the text is {clear} "
                            f"({trad} Traditional-only, {simp} Simplified-only characters); treated as {clear}")
            script = clear
            region = tag.region if tag.script == clear else ""
    else:
        script = detect_script(text) or "Hans"
    if script == "Hans" and region in ("TW", "HK"):
        region = ""
    return script, region, warnings


# --------------------------------------------------------------------------- keys

# Every dash-like character names write for the dash (after NFKC, which makes ``－`` ``-``, ``ｰ`` ``ー``
# and ``‑`` ``‐``): hyphens, figure/en/em dashes and the horizontal bar, the hyphen bullet, minus signs,
# two- and three-em dashes, box-drawing lines, and the katakana prolonged sound mark ``ー``
# (``幻龙星ー嘲风``): folded to ``-``.
DASHES = re.compile("[-\u2010-\u2015\u2043\u2212\u2e3a\u2e3b\u2500\u2501\u30fc\ufe58\ufe63\uff0d\uff70]")
MIDDLE_DOTS = re.compile("[\u00b7\u2027\u2219\u22c5\u30fb\uff65\u2022\u2e31\ua78f]")


def match_key(text: str) -> str:
    """A search key: NFKC (full-width -> half-width: ``（）`` -> ``()``,
    ``－`` -> ``-``), ``☆`` -> ``★``, one middle dot (``・``, ``•``, ``‧`` ->
    ``·``), one dash (every character of :data:`DASHES`: ``ー``, ``—``,
    ``–``, ``―``, ``─`` -> ``-``), no spaces, lower case. Used to match
    names across widths; never stored as the text."""
    text = unicodedata.normalize("NFKC", text).replace("☆", "★")
    text = MIDDLE_DOTS.sub("·", DASHES.sub("-", text))
    return re.sub(r"\s+", "", text).lower()


@lru_cache(maxsize=1 << 16)  # card names repeat across a corpus' rulings
def name_key(text: str, script: str = "", region: str = "") -> str:
    """A card-name key for linking and search: the name in Simplified script
    (converted when it has a Traditional-only character, unless ``script``
    is given: a name in Simplified script is never converted), regional game
    terms of every region folded (``死之牌組破壞病毒`` and ``死之卡组破坏病毒``
    share a key), then :func:`match_key`. Never stored as the name."""
    if not script:
        script = "Hant" if script_counts(text)[0] else "Hans"
    return match_key(map_regional_terms(to_simplified(text, script, region), "Hant", ""))
