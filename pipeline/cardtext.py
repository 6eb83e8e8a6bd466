"""Card texts: each card's numbered effects and what information each depends on.

Source: ``corpus/data/card-texts.jsonl.gz``, the texts of the cards the corpus
names, taken from the YAML Yugi data set (DawnbrandBots/yaml-yugi, its
published ``cards.json``; card texts are Konami's, the compilation
AGPL-3.0-or-later, the community Chinese stage yaml-yugi-zh LGPL-3.0-or-later:
``corpus/data/SOURCES.md``). One JSON object a line: ``konami_id``,
``password`` (the passcode, null for the few cards without one), ``name``,
``text`` and, for a Pendulum monster, ``pendulum_effect``, each by language
(:data:`TEXT_LANGUAGES`), and ``card_type``.

* :func:`split_effects` cuts a text at its circled numbers (``①：``); the text
  before the first number (summon conditions, materials, a card-wide
  once-per-turn line) is the effect ``""``, as is a text without numbers;
* :func:`read_dependencies` reads what one effect's text depends on with the
  term lists of ``schema/card_text_terms.json`` (Japanese, or Chinese in
  either script: Traditional is converted first);
* :func:`card_effects` aligns a card's effects across languages by their
  number (the Japanese text's numbers first: the most uniform wording) and
  joins what each language's text of the effect depends on;
* :func:`load_card_texts` reads the bundled file once per process.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .paths import BUNDLED_CORPUS

CARD_TEXTS = BUNDLED_CORPUS / "data" / "card-texts.jsonl.gz"
# The languages bundled: ja (read for dependencies), the Chinese texts (read and shown), en (shown;
# its effects are not numbered). Korean is left out of the bundle.
TEXT_LANGUAGES = ("ja", "zh-community", "zh-CN", "zh-TW", "en")
READ_LANGUAGES = ("ja", "zh-community", "zh-CN", "zh-TW")
# What a card's effects are read in: the Traditional text (zh-TW) is the official Simplified one's twin,
# and converting it costs most of the reading; read_dependencies reads it when asked.
CARD_READ_LANGUAGES = ("ja", "zh-community", "zh-CN")
KEPT_FIELDS = ("konami_id", "password", "card_type")
PARTS = ("monster", "pendulum")  # a Pendulum monster's text is its monster effect; pendulum_effect apart

_EFFECT_START = re.compile(r"([①-⑳])\s*[：:]")
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_SELF = re.compile("このカード|这张卡|此卡|自身|這張卡")
# Characters before a match, in its clause, that may name the card: このカードが①の方法で特殊召喚されたターン
_SELF_WINDOW = 24
_CLAUSE_BREAK = re.compile("[、，,；;：:]")


@dataclass(frozen=True)
class Dependency:
    """One kind of information an effect depends on: ``info_kind`` (a
    vocabulary id), the ``language`` of the text that says it, the
    ``words`` that matched and whose information it is: ``this_card`` when
    the words or the words before them in their clause name the card itself
    (このカード, 这张卡, 此卡, 自身), or the kind is one of ``card_kinds`` of
    ``schema/card_text_terms.json`` (a count, a pledge), else ``other`` (the monster the effect
    Special Summoned: 『この効果で特殊召喚したモンスター』)."""

    info_kind: str
    language: str
    words: str
    subject: str = "this_card"  # this_card | other: whose information (『この効果で特殊召喚したモンスター』: other)


@dataclass(frozen=True)
class Effect:
    """One effect of a card: ``part`` ``monster`` or ``pendulum``,
    ``effect`` its number as printed (``②``; ``""`` for the text before the
    first number, or a text without numbers), ``ord`` its position in the
    part, ``texts`` its text by language and ``depends_on`` what it depends
    on (every language's reading, sorted)."""

    part: str
    effect: str
    ord: int
    texts: dict[str, str]
    depends_on: tuple[Dependency, ...] = ()

    @property
    def kinds(self) -> list[str]:
        """The info kinds it depends on, sorted, each once."""
        return sorted({d.info_kind for d in self.depends_on})

    def kinds_of(self, subject: str) -> list[str]:
        """The info kinds it depends on of ``subject`` (``this_card`` or ``other``)."""
        return sorted({d.info_kind for d in self.depends_on if d.subject == subject})


@dataclass(frozen=True)
class CardText:
    """A card's texts: ``passcode`` (None for the few cards without one),
    ``konami_id``, ``name``, ``text`` and ``pendulum`` by language (see
    :data:`TEXT_LANGUAGES`), ``card_type`` (Monster, Spell, Trap)."""

    passcode: int | None
    konami_id: int | None
    name: dict[str, str]
    text: dict[str, str]
    pendulum: dict[str, str] = field(default_factory=dict)
    card_type: str = ""

    @property
    def effects(self) -> list[Effect]:
        return card_effects(self)


def fold_width(text: str) -> str:
    """Full-width Latin letters, digits and signs as ASCII (Ｓ召喚 -> S召喚,
    １ターン -> 1ターン); circled numbers and CJK punctuation stay."""
    return text.translate(_FULL_WIDTH)


def split_effects(text: str) -> list[tuple[str, str]]:
    """``text`` cut at its circled effect numbers: ``[(number, text)]`` in
    order, the number as printed (``①``), its text without the number and
    colon. The text before the first number is ``("", text)`` when not
    blank; a text without numbers is one ``("", text)``; an empty text none.
    A number not followed by a colon (``①の効果``, ``②的效果``) is a
    reference, not the start of an effect."""
    if not text or not text.strip():
        return []
    starts = list(_EFFECT_START.finditer(text))
    out: list[tuple[str, str]] = []
    head = text[:starts[0].start()] if starts else text
    if head.strip():
        out.append(("", head.strip()))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        out.append((m.group(1), text[m.end():end].strip()))
    return out


def _reading_script(language: str) -> str:
    return "ja" if language == "ja" else "zh"


def _for_reading(text: str, language: str) -> str:
    """The text the term lists read: width folded; Traditional Chinese in Simplified script."""
    text = fold_width(text)
    if language == "zh-TW":
        from .chinese import to_simplified
        text = to_simplified(text, "Hant", "TW")
    return text


_META = re.compile(r"[\\()\[\]{}|?*+.^$]")


def literal_gate(pattern: str) -> str | None:
    """The longest run of plain characters every match of ``pattern`` holds
    (outside groups and classes, before no quantifier): a cheap ``in`` test
    that skips the regular expression on texts without it. None when there
    is none (a top-level alternation, an escape)."""
    depth, plain, runs = 0, [], []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            return None
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == "|":
            return None
        if depth == 0 and not _META.match(c) and c not in ")]":
            plain.append(c)
        else:
            if plain:
                runs.append("".join(plain))
            plain = []
            if depth == 0 and c in "?*{" and runs and runs[-1] and i > 0 and pattern[i - 1] == runs[-1][-1]:
                runs[-1] = runs[-1][:-1]  # a quantified last character is not required
        i += 1
    if plain:
        runs.append("".join(plain))
    runs = [r for r in runs if r]
    return max(runs, key=len) if runs else None


@lru_cache(maxsize=1)
def _compiled_terms() -> tuple[dict, dict, dict]:
    """The dependency patterns of ``schema/card_text_terms.json`` compiled:
    ``({script: [(kind, pattern, gates)]}, {kind: {script: pattern}}, subsumed_by)``;
    ``gates`` are the :func:`literal_gate` of each word (None: none, always search)."""
    from .schema import card_text_terms

    terms = card_text_terms()
    patterns: dict[str, list[tuple[str, re.Pattern, tuple[str, ...] | None]]] = {"ja": [], "zh": []}
    for kind, by_script in terms["dependencies"].items():
        for script, words in by_script.items():
            gates = [literal_gate(w) for w in words]
            patterns[script].append((kind, re.compile("|".join(f"(?:{w})" for w in words)),
                                     None if None in gates else frozenset(gates)))
    unless = {kind: {script: re.compile("|".join(f"(?:{w})" for w in words)) for script, words in by_script.items()}
              for kind, by_script in terms["unless"].items()}
    return patterns, unless, terms["subsumed_by"]


@lru_cache(maxsize=1)
def _card_kinds() -> frozenset[str]:
    from .schema import card_text_terms

    return frozenset(card_text_terms()["card_kinds"])


@lru_cache(maxsize=2)
def _all_gates(script: str) -> frozenset[str]:
    return frozenset(g for _, _, gates in _compiled_terms()[0][script] for g in gates or ())


def read_dependencies(text: str, language: str) -> list[Dependency]:
    """What one effect's ``text`` (``language``: ``ja``, ``zh-community``,
    ``zh-CN``, ``zh-TW`` or plain ``zh``) depends on, by the term lists of
    ``schema/card_text_terms.json``: one :class:`Dependency` per kind, with
    the first words that said it. A match is dropped when a pattern of the
    kind's ``unless`` list is in the same sentence (a once per turn counted
    by the card's name), and a kind when a more specific one of its
    ``subsumed_by`` list is found too. Sorted by kind."""
    patterns, unless, _ = _compiled_terms()
    card_kinds = _card_kinds()
    script = _reading_script(language)
    text = _for_reading(text, language)
    found: dict[str, tuple[str, str]] = {}
    present = {g for g in _all_gates(script) if g in text}
    for kind, pattern, gates in patterns[script]:
        if gates is not None and gates.isdisjoint(present):
            continue
        cancel = unless.get(kind, {}).get(script)
        for m in pattern.finditer(text):
            start = max(text.rfind("。", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
            if cancel is not None and cancel.search(text[start:_sentence_end(text, m.end())]):
                continue
            window = _CLAUSE_BREAK.split(text[max(start, m.start() - _SELF_WINDOW):m.start()])[-1] + m.group(0)
            subject = "this_card" if kind in card_kinds or _SELF.search(window) else "other"
            if kind not in found or subject == "this_card":
                found[kind] = (m.group(0), subject)
            if subject == "this_card":
                break
    deps = [Dependency(kind, language, words, subject) for kind, (words, subject) in sorted(found.items())]
    return without_subsumed(deps)


def _sentence_end(text: str, at: int) -> int:
    ends = [i for i in (text.find("。", at), text.find("\n", at)) if i >= 0]
    return min(ends) + 1 if ends else len(text)


def without_subsumed(deps: list[Dependency]) -> list[Dependency]:
    """``deps`` without a kind one of whose ``subsumed_by`` kinds is there too."""
    subsumed_by = _compiled_terms()[2]
    kinds = {d.info_kind for d in deps}
    return [d for d in deps if not any(k in kinds for k in subsumed_by.get(d.info_kind, ()))]


def _part_effects(part: str, texts: dict[str, str]) -> list[Effect]:
    """One part's effects, numbered as its Japanese text (else the first
    Chinese text) numbers them; each language's text of the same number
    read for dependencies."""
    split = {lang: split_effects(texts.get(lang) or "") for lang in TEXT_LANGUAGES if texts.get(lang)}
    lead = next((lang for lang in READ_LANGUAGES if split.get(lang)), None)
    if lead is None:
        en = texts.get("en") or ""
        return [Effect(part, "", 0, {"en": en})] if en.strip() else []
    effects = []
    for i, (number, _) in enumerate(split[lead]):
        by_lang = {lang: dict(pieces).get(number) for lang, pieces in split.items()}
        by_lang = {lang: t for lang, t in by_lang.items() if t}
        if "en" in texts and len(split[lead]) == 1:  # English is not numbered: it goes with a single effect
            by_lang["en"] = texts["en"]
        else:
            by_lang.pop("en", None)
        deps = without_subsumed(sorted({d for lang in CARD_READ_LANGUAGES if lang in by_lang
                                        for d in read_dependencies(by_lang[lang], lang)},
                                       key=lambda d: (d.info_kind, READ_LANGUAGES.index(d.language))))
        effects.append(Effect(part, number, i, by_lang, tuple(deps)))
    return effects


def card_effects(card: CardText) -> list[Effect]:
    """The card's effects: the monster (or Spell / Trap) text's, then a
    Pendulum monster's pendulum effects (part ``pendulum``)."""
    return _part_effects("monster", card.text) + _part_effects("pendulum", card.pendulum)


def card_from_json(obj: dict) -> CardText:
    """A :class:`CardText` from one object of the data set (``cards.json`` of
    YAML Yugi or a line of the bundled file). ValueError for an object
    without ``text``."""
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), dict):
        raise ValueError("a card object needs a text by language")

    def langs(value) -> dict[str, str]:
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if k in TEXT_LANGUAGES and isinstance(v, str) and v}

    def number(value) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return CardText(number(obj.get("password")), number(obj.get("konami_id")), langs(obj.get("name")),
                    langs(obj.get("text")), langs(obj.get("pendulum_effect")),
                    obj.get("card_type") if isinstance(obj.get("card_type"), str) else "")


def read_card_lines(lines: Iterable[str], place: str) -> Iterator[CardText]:
    """Cards of a JSON-lines text; ValueError naming ``place`` and the line for a bad line."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield card_from_json(json.loads(line))
        except ValueError as exc:
            raise ValueError(f"{place}: line {n}: {exc}") from None


_in_use: Path = CARD_TEXTS


def use_card_texts(path: Path) -> None:
    """Read the card texts from ``path`` in this process (a build's corpus
    folder holds its own, kept current by a refresh: :func:`texts_file`);
    workers forked afterwards read the same."""
    global _in_use
    _in_use = Path(path)


def card_texts_file() -> Path:
    """The card-texts file this process reads (:func:`use_card_texts`; the bundled one by default)."""
    return _in_use


def card_texts() -> dict[int, CardText]:
    """The card texts of :func:`card_texts_file` (:func:`load_card_texts`)."""
    return load_card_texts(_in_use)


def texts_file(corpus_dir: Path) -> Path:
    """The card-texts file of the corpus at ``corpus_dir``: the path of its
    manifest's ``card-texts`` data row when that file exists, else the
    bundled file."""
    from .corpus import load_data_sources

    for source in load_data_sources(corpus_dir):
        if source.format == "card-texts" and source.snapshot.is_file():
            return source.snapshot
    return CARD_TEXTS


def file_version(path: Path) -> tuple[str, int, int]:
    """``(path, mtime in ns, size)``: what the caches of a card-texts file are keyed by (a refresh rewrites it)."""
    try:
        st = Path(path).stat()
    except OSError:
        return str(path), 0, -1
    return str(path), st.st_mtime_ns, st.st_size


def load_card_texts(path: Path = CARD_TEXTS) -> dict[int, CardText]:
    """The card texts of the file at ``path`` (the bundled one by default) by
    passcode (a card without a passcode is left out: card mentions link
    passcodes), read once per version of the file. Empty when the file is
    missing; ValueError naming the file and line for a line that is no card."""
    return _load_card_texts(file_version(path))


@lru_cache(maxsize=2)
def _load_card_texts(version: tuple[str, int, int]) -> dict[int, CardText]:
    path = Path(version[0])
    if version[2] < 0:
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return {c.passcode: c for c in read_card_lines(fh, str(path)) if c.passcode is not None}


_RUBY = re.compile(r"<rt>.*?</rt>|<rp>.*?</rp>|</?ruby>", re.S)


def slim_card(obj: dict) -> dict:
    """What the bundle keeps of one data-set object: :data:`KEPT_FIELDS` and
    ``name``, ``text``, ``pendulum_effect`` in :data:`TEXT_LANGUAGES`, ruby
    readings removed (YAML Yugi's ``cards.json`` writes
    ``<ruby>灰流<rt>はる</rt></ruby>``)."""
    out = {k: obj[k] for k in KEPT_FIELDS if obj.get(k) is not None}
    for key in ("name", "text", "pendulum_effect"):
        value = obj.get(key)
        if isinstance(value, dict):
            kept = {lang: _RUBY.sub("", value[lang]) for lang in TEXT_LANGUAGES
                    if isinstance(value.get(lang), str) and value[lang]}
            if kept:
                out[key] = kept
    return out


def bundle_bytes(cards: Iterable[dict], passcodes: set[int]) -> tuple[bytes, int]:
    """The bundle of the ``cards`` whose passcode is in ``passcodes``: their
    slim objects (:func:`slim_card`) as gzip JSON lines sorted by passcode
    (gzip's header carries no time: the same cards give the same bytes), and
    how many."""
    kept = sorted((slim_card(c) for c in cards if isinstance(c, dict) and c.get("password") in passcodes),
                  key=lambda c: c["password"])
    data = "".join(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n" for c in kept).encode("utf-8")
    return gzip.compress(data, compresslevel=9, mtime=0), len(kept)


def write_bundle(cards: Iterable[dict], passcodes: set[int], out: Path) -> int:
    """Write :func:`bundle_bytes` of ``cards`` to ``out``; returns how many cards."""
    data, count = bundle_bytes(cards, passcodes)
    Path(out).write_bytes(data)
    return count
