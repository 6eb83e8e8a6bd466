"""Card mentions -> cards, from ``corpus/data/card-names.tsv.gz``.

The table (derived from the card-text data set: YAML Yugi's cards with the
OurOCG names of yaml-yugi-zh, see ``corpus/data/SOURCES.md``) has one row per
(``konami_id``, ``password``) with ``en``, ``ja``, ``zh-CN``, ``zh-TW``,
``ko`` and ``zh-community`` names. A card is one Konami id: its passcodes
(Dark Magician has 46986414 and the alternate artwork 36996508; Slifer the
Sky Dragon has none) and the names of all its rows. Its main passcode
(:attr:`Card.passcode`) is the one the community database lists, else the
lowest. The 57 rows with neither a Konami id nor a passcode (cards too new
for the official database) are no card one can link to.

A mention is linked by its exact official name in either Chinese script or
English, then its exact community name, then by a normalized key
(:func:`pipeline.chinese.name_key`: Simplified script, NFKC width folding,
☆ -> ★, spaces dropped, regional terms folded) of an official, then of a
community name, of a name other cards' texts quote for the card
(``corpus/data/card-quoted-names.tsv.gz``) or of a name the ruling pages
write for it (``corpus/data/card-ruling-names.tsv``: hand-checked, see
:func:`ruling_names`), then by a loose key (:func:`loose_key`: separators,
quotes and the particles 之/的/の dropped) of any Chinese or Japanese name.
The link says which (``name_source`` official, community, quoted or
ruling; ``linked_by`` exact, key or loose). A name quoted with reST link
markup left in it (```召唤兽 光体`_``) is linked without the markup. Names
that match nothing stay unlinked and visible; a key shared by two different
cards is ambiguous and never used. A mention is never linked by a guess:
the ranked fuzzy match (:meth:`CardIndex.fuzzy`, :mod:`rapidfuzz`,
:data:`FUZZY_MIN` and :data:`FUZZY_MARGIN`) only suggests names for review
(``corpus/data/card_ruling_candidates.py``).

An archetype (``「女武神」怪兽``, ``「冰结界」S怪兽``) is no card:
:meth:`CardIndex.is_archetype` says whether a quoted name starts the names
of at least two other cards.
"""

from __future__ import annotations

import bisect
import csv
from collections import Counter
import gzip
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .chinese import match_key, name_key
from .paths import BUNDLED_CORPUS

CARD_NAMES = BUNDLED_CORPUS / "data" / "card-names.tsv.gz"
# Chinese names card texts quote for other cards (corpus/data/make_card_names.py): language zh-quoted
QUOTED_NAMES = BUNDLED_CORPUS / "data" / "card-quoted-names.tsv.gz"
# Names the Chinese ruling pages write for a card where no data set has them, each checked by hand: language zh-ruling
RULING_NAMES = BUNDLED_CORPUS / "data" / "card-ruling-names.tsv"

# the languages of a card's names, in the order cards and reports list them
NAME_LANGUAGES = ("en", "ja", "zh-CN", "zh-TW", "ko", "zh-community")
QUOTED = "zh-quoted"  # a name other cards' texts quote for the card: one of its entry's ``also`` names
RULING = "zh-ruling"  # a name the ruling pages write for the card (card-ruling-names.tsv): an ``also`` name
OFFICIAL_ZH = ("zh-CN", "zh-TW")

# A fuzzy suggestion (rapidfuzz's normalized Indel similarity of two loose keys, 0-100) needs this score ...
FUZZY_MIN = 88.0
# ... this lead over the best name of any other card ...
FUZZY_MARGIN = 8.0
# ... and a loose key this long (short names are too easily near another card's).
FUZZY_MIN_LENGTH = 5

_RUBY = re.compile(r"<rt>.*?</rt>|<rp>.*?</rp>|</?ruby>", re.S)
# dropped by loose_key: separators, quotes and brackets names write or leave out
_LOOSE_DROP = re.compile("[·\\-=_:：,，.。!！?？'’‘\"“”「」『』()（）〈〉《》\\[\\]×☆★]")
_PARTICLES = re.compile("[之的の]")
# a name quoted with its reST link markup left in it: `召唤兽 光体`_
_REST_LINK = re.compile(r"`([^`]+)`_{1,2}")


def read_names(path: Path) -> list[dict[str, str]]:
    """Rows of a name table (``.gz``: gzip-compressed): tab-separated, a
    field holding quotes written the CSV way (quoted, inner quotes
    doubled: Maxx "C"); ruby markup in a name (``<ruby>DD<rt>디디</rt></ruby>``)
    kept as its base text only."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    fh = io.StringIO(raw.decode("utf-8"), newline="")
    return [{k: _RUBY.sub("", v) if isinstance(v, str) and "<" in v else v for k, v in row.items()}
            for row in csv.DictReader(fh, delimiter="\t")]


def loose_key(key: str) -> str:
    """A looser key of a :func:`~pipeline.chinese.name_key`: separators,
    quotes, hyphens and brackets dropped, the particles 之, 的 and の
    dropped, ``&`` -> ``and``, ``xyz`` -> ``x`` (name_key writes 超量 as
    ``x``): ``白銀の迷宮城`` and ``白银之迷宫城``, ``奇妙・超量`` and
    ``奇妙超量``, ``blueeyeswhitedragon`` and ``blue-eyeswhitedragon`` share
    one."""
    return _PARTICLES.sub("", _LOOSE_DROP.sub("", key.replace("&", "and"))).replace("xyz", "x")


@dataclass(frozen=True)
class CardEntry:
    """A card of the name table: its Konami id, passcodes (main first) and
    names by language (:data:`NAME_LANGUAGES`; a language without a name is
    left out), plus every other name its rows give (``also``)."""
    konami_id: int
    passcodes: tuple[int, ...]
    names: dict[str, str]
    also: tuple[tuple[str, str], ...] = ()  # (language, name) of another row of the card

    @property
    def passcode(self) -> int | None:
        return self.passcodes[0] if self.passcodes else None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def ruling_names(path: Path = RULING_NAMES) -> list[tuple[int, str]]:
    """(konami_id, name) of the names the Chinese ruling pages write for a
    card where no name data set has them (the pages' card-database links:
    「拉比林斯迷宫连环阵」 for Labrynth Barrage, whose community name is
    白银城的密集攻击), from the tab-separated table at ``path`` (columns
    ``name``, ``konami_id``, ``en``; ``en`` is for the reader). Each row was
    checked by hand against the card's Japanese name and the rulings that
    quote it (corpus/data/SOURCES.md); none is a guess. Empty when the file
    is missing. ValueError naming the file and line for a row without a
    name or a numeric Konami id."""
    if not path.is_file():
        return []
    out = []
    for line, row in enumerate(read_names(path), start=2):
        kid, name = _int(row.get("konami_id")), (row.get("name") or "").strip()
        if kid is None or not name:
            raise ValueError(f"{path}: line {line}: a row needs a name and a numeric konami_id")
        out.append((kid, name))
    return out


@lru_cache(maxsize=2)
def card_entries(path: Path = CARD_NAMES, quoted: Path | None = QUOTED_NAMES,
                 ruling: Path | None = RULING_NAMES) -> dict[int, CardEntry]:
    """Every card of the name table at ``path`` by Konami id (rows without
    one left out). The main passcode comes first: the one whose row has a
    community name, else the lowest; the card's names are that row's, a
    language it lacks filled from the other rows; the names other cards'
    texts quote for it (the table at ``quoted``, when there is one) are
    ``also`` names of language :data:`QUOTED`, the names the ruling pages
    write for it (:func:`ruling_names` of ``ruling``) of language :data:`RULING`."""
    extra: dict[int, list[tuple[str, str]]] = {}
    if quoted is not None and quoted.is_file():
        for row in read_names(quoted):
            kid, name = _int(row.get("konami_id")), (row.get("name") or "").strip()
            if kid is not None and name:
                extra.setdefault(kid, []).append((QUOTED, name))
    for kid, name in ruling_names(ruling) if ruling is not None else ():
        extra.setdefault(kid, []).append((RULING, name))
    rows: dict[int, list[dict[str, str]]] = {}
    for row in read_names(path):
        kid = _int(row.get("konami_id"))
        if kid is not None:
            rows.setdefault(kid, []).append(row)
    out = {}
    for kid, its in rows.items():
        its.sort(key=lambda r: (not r.get("zh-community"), _int(r.get("password")) is None,
                                _int(r.get("password")) or 0))
        names: dict[str, str] = {}
        also: list[tuple[str, str]] = []
        for row in its:
            for language in NAME_LANGUAGES:
                name = (row.get(language) or "").strip()
                if not name:
                    continue
                if language not in names:
                    names[language] = name
                elif names[language] != name and (language, name) not in also:
                    also.append((language, name))
        also += [pair for pair in extra.get(kid, []) if pair[1] not in names.values()]
        passcodes = tuple(p for r in its if (p := _int(r.get("password"))) is not None)
        out[kid] = CardEntry(kid, passcodes, {k: names[k] for k in NAME_LANGUAGES if k in names}, tuple(also))
    return out


@dataclass(frozen=True)
class Card:
    konami_id: int
    passcode: int | None  # the main passcode; None for a card without one
    name_en: str


@dataclass(frozen=True)
class CardLink:
    passcode: int | None
    name_en: str | None
    linked_by: str | None  # exact | key | loose | None
    name_source: str | None = None  # official | community | quoted (another card's text) | ruling (the pages) | None
    konami_id: int | None = None

    @property
    def linked(self) -> bool:
        return self.konami_id is not None


UNLINKED_CARD = CardLink(None, None, None)


class CardIndex:
    """Exact, key and loose-key lookups over the names of every card with a
    Konami id, and the fuzzy match that suggests names for review."""

    def __init__(self, path: Path = CARD_NAMES):
        self.exact: dict[str, Card | None] = {}
        self.by_key: dict[str, Card | None] = {}
        self.community_exact: dict[str, Card | None] = {}
        self.community_key: dict[str, Card | None] = {}
        self.loose: dict[str, Card | None] = {}
        self.quoted: dict[str, Card | None] = {}  # name_key of a name other cards' texts quote
        self.ruling: dict[str, Card | None] = {}  # name_key of a name the ruling pages write (checked by hand)
        self._links: dict[str, CardLink] = {}  # names repeat across a corpus' rulings
        # Each Chinese name's name_key, kept for card_names' rows (load.card_name_rows): a build
        # makes the index in a helper process, so its name_key cache is not the build process's.
        self.zh_keys: dict[str, str] = {}
        names: set[str] = set()
        for entry in card_entries(path).values():
            card = Card(entry.konami_id, entry.passcode, entry.names.get("en", ""))
            its = list(entry.names.items()) + list(entry.also)
            for language, name in its:
                if language in OFFICIAL_ZH or language == "en":
                    self._add(self.exact, name, card)
                if language in OFFICIAL_ZH:
                    self._add(self.by_key, self._zh_key(name), card)
                    if language == "zh-CN":
                        names.add(name)
                elif language == "en":
                    self._add(self.by_key, match_key(name), card)
                elif language == "zh-community":
                    names.add(name)
                    self._add(self.community_exact, name, card)
                    self._add(self.community_key, self._zh_key(name), card)
                elif language == QUOTED:
                    self._add(self.quoted, self._zh_key(name), card)
                elif language == RULING:
                    self._add(self.ruling, self._zh_key(name), card)
                if language.startswith("zh") or language == "ja":
                    self._add(self.loose, loose_key(self._zh_key(name)), card)
        self._sorted_names = sorted(names)  # Simplified names, for archetype prefixes
        self._sorted_loose = sorted((k, c.konami_id) for k, c in self.loose.items() if c is not None)
        # the fuzzy match's choices: every loose key of one card, and that card
        self.fuzzy_keys = [k for k, c in self.loose.items() if c is not None and len(k) >= 2]
        self.fuzzy_cards = [self.loose[k] for k in self.fuzzy_keys]
        self._fuzzy_filter = _CharFilter(self.fuzzy_keys)
        self._keys_by_card: dict[int, list[str]] = {}
        for k, c in zip(self.fuzzy_keys, self.fuzzy_cards):
            self._keys_by_card.setdefault(c.konami_id, []).append(k)

    def _zh_key(self, name: str) -> str:
        key = self.zh_keys.get(name)
        if key is None:
            key = self.zh_keys[name] = name_key(name)
        return key

    def is_archetype(self, name: str, minimum: int = 2) -> bool:
        """Whether ``name`` (Simplified) starts the names of at least
        ``minimum`` cards other than one named ``name`` itself."""
        i = bisect.bisect_left(self._sorted_names, name)
        count = 0
        while i < len(self._sorted_names) and self._sorted_names[i].startswith(name):
            if self._sorted_names[i] != name:
                count += 1
                if count >= minimum:
                    return True
            i += 1
        return False

    def is_series(self, name: str, minimum: int = 2) -> bool:
        """Whether the :func:`loose_key` of ``name`` starts the loose keys of
        at least ``minimum`` different cards' Chinese or Japanese names (a
        series name: 「被封印」 starts 被封印的右腕, 被封印的左腕...)."""
        key = loose_key(name_key(name))
        if not key:
            return False
        i = bisect.bisect_left(self._sorted_loose, (key, -1))
        cards: set[int] = set()
        while i < len(self._sorted_loose) and self._sorted_loose[i][0].startswith(key):
            if self._sorted_loose[i][0] != key:
                cards.add(self._sorted_loose[i][1])
                if len(cards) >= minimum:
                    return True
            i += 1
        return False

    @staticmethod
    def _add(index: dict, key: str, card: Card) -> None:
        known = index.get(key, card)
        # The rows of one card (alternate artworks) share its Konami id; two
        # cards under one key make the key ambiguous.
        if known is None or not key:
            return
        index[key] = card if known.konami_id == card.konami_id else None

    def link(self, name: str) -> CardLink:
        """The card ``name`` names: its exact official, then community name,
        then the :func:`~pipeline.chinese.name_key` of either, of a quoted
        or of a ruling-page name, then the :func:`loose_key` of any Chinese
        or Japanese name; unlinked when none is known or the match is
        ambiguous (never a fuzzy guess)."""
        link = self._links.get(name)
        if link is None:
            bare = _REST_LINK.fullmatch(name)
            link = self._links[name] = self._link(bare.group(1).strip() if bare else name)
        return link

    def _link(self, name: str) -> CardLink:
        official, community = self.exact.get(name), self.community_exact.get(name)
        # An official name that is another card's community name is that card's: the ruling pages
        # write community names (「水龙」 is Water Dragon there, the official 水龙 Aqua Dragon).
        if official is not None and (community is None or community.konami_id == official.konami_id):
            return _card_link(official, "exact", "official")
        if community is not None:
            return _card_link(community, "exact", "community")
        key = name_key(name)
        for index, source in ((self.by_key, "official"), (self.community_key, "community"), (self.quoted, "quoted"),
                              (self.ruling, "ruling")):
            card = index.get(key)
            if card is not None:
                return _card_link(card, "key", source)
        loose = loose_key(key)
        card = self.loose.get(loose)
        return _card_link(card, "loose", None) if card is not None else UNLINKED_CARD

    def fuzzy(self, loose: str) -> Card | None:
        """The card whose loose key is nearest ``loose`` (rapidfuzz ratio) when
        it scores at least :data:`FUZZY_MIN` and leads every other card by
        :data:`FUZZY_MARGIN`; None otherwise or for a key shorter than
        :data:`FUZZY_MIN_LENGTH`. A suggestion to check by hand
        (``corpus/data/card_ruling_candidates.py``), never a mention's link."""
        if len(loose) < FUZZY_MIN_LENGTH or loose in self.loose:
            return None
        from rapidfuzz import fuzz, process  # only for a name no key finds

        best: Card | None = None
        best_score = second = 0.0
        cutoff = FUZZY_MIN - FUZZY_MARGIN
        candidates = self._fuzzy_filter.candidates(loose, cutoff)  # the same matches, far fewer comparisons
        for _, score, i in process.extract(loose, [self.fuzzy_keys[j] for j in candidates], scorer=fuzz.ratio,
                                           limit=8, score_cutoff=cutoff):
            card = self.fuzzy_cards[candidates[i]]
            if best is None:
                best, best_score = card, score
            elif card.konami_id != best.konami_id:
                second = max(second, score)
        if best is None or best_score < FUZZY_MIN or best_score - second < FUZZY_MARGIN:
            return None
        return None if any(_adds_words(k, loose) for k in self._keys_of(best)) else best

    def _keys_of(self, card: Card) -> list[str]:
        """The loose keys of ``card``."""
        return self._keys_by_card.get(card.konami_id, [])


class _CharFilter:
    """The keys that can reach a fuzzy score: rapidfuzz's ``fuzz.ratio`` is
    ``200 * LCS / (len(a) + len(b))``, and the longest common subsequence of
    a query and a key is at most the number of the query's characters (with
    their counts in the query) that occur in the key. A key whose bound is
    under the cutoff cannot score it, so the fuzzy match compares only the
    others (a few dozen of 36,000 keys) and finds the same cards."""

    def __init__(self, keys: list[str]):
        import numpy

        postings: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            for ch in set(key):
                postings.setdefault(ch, []).append(i)
        self.postings = {ch: numpy.array(ids, dtype=numpy.int32) for ch, ids in postings.items()}
        self.lengths = numpy.array([len(k) for k in keys], dtype=numpy.int32)

    def candidates(self, query: str, cutoff: float) -> list[int]:
        """Indices (ascending, as in the key list) of the keys whose bound
        ``200 * shared / (len(query) + len(key))`` reaches ``cutoff``."""
        import numpy

        shared = numpy.zeros(len(self.lengths), dtype=numpy.int32)
        for ch, n in Counter(query).items():
            ids = self.postings.get(ch)
            if ids is not None:
                shared[ids] += n
        reach = 200 * shared >= cutoff * (len(query) + self.lengths)
        return numpy.flatnonzero(reach & (shared > 0)).tolist()


def _adds_words(key: str, query: str) -> bool:
    """Whether ``query`` is ``key`` with words added: text before it, or a
    run of two or more characters anywhere (``超未来融合`` is no
    misspelling of ``未来融合`` nor ``急袭猛禽起翼叛逆猎鹰`` of
    ``急袭猛禽起翼猎鹰``: they are other cards that build on its name)."""
    from rapidfuzz.distance import Indel

    ops = Indel.opcodes(key, query)
    if any(op.tag not in ("equal", "insert") for op in ops):
        return False
    inserts = [op for op in ops if op.tag == "insert"]
    return any(op.dest_end - op.dest_start >= 2 or op.src_start == 0 for op in inserts)


def _card_link(card: Card, linked_by: str, source: str | None) -> CardLink:
    return CardLink(card.passcode, card.name_en or None, linked_by, source, card.konami_id)


_index: CardIndex | None = None


def card_index() -> CardIndex:
    """This process's :class:`CardIndex` of the bundled name table, built on
    first use (about a second) unless :func:`use_card_index` handed it one."""
    global _index
    if _index is None:
        _index = CardIndex()
    return _index


def card_index_built() -> bool:
    """Whether this process holds its card index already."""
    return _index is not None


def use_card_index(index: CardIndex) -> None:
    """Make ``index`` (a :class:`CardIndex` of the bundled table, built by
    another process: :func:`pipeline.run.build`) this process's card index."""
    global _index
    _index = index


@lru_cache(maxsize=1)
def card_names() -> dict[int, dict[str, str]]:
    """The names of every card with a passcode, by each of its passcodes:
    ``{passcode: {"en", "ja", "zh-CN", "zh-TW", "ko", "zh-community"}}`` (a
    language without a name is left out), from :func:`card_entries`: an
    alternate artwork's passcode gives its card's names."""
    return {p: entry.names for entry in card_entries().values() for p in entry.passcodes}


def card_loose_key(language: str, name: str) -> str:
    """The :func:`loose_key` of :func:`card_name_key` (``card_names.loose_key``)."""
    return loose_key(card_name_key(language, name))


def card_name_key(language: str, name: str) -> str:
    """The search key of a card name of ``language`` (a column of
    :func:`card_names`): :func:`~pipeline.chinese.name_key` for Chinese
    names, :func:`~pipeline.chinese.match_key` for the others, as
    card_mentions.match_key and card_names.name_key are made."""
    return name_key(name) if language.startswith("zh") else match_key(name)
