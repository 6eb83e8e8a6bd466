"""Card mentions -> passcodes, from ``corpus/data/card-names.tsv`` and
``corpus/data/community-names-zh.tsv``.

The official table (derived from yaml-yugi) has one row per card with
``password`` (the passcode), ``en``, ``ja``, ``zh-CN``, ``zh-TW`` and ``ko``
names; the community table (yaml-yugi-zh, OurOCG) gives the Simplified name
most Chinese pages write (旋风 for the official 气旋). A mention is linked by
its exact official name in either Chinese script or English, then its exact
community name, then by a normalized key (:func:`pipeline.chinese.name_key`:
Simplified script, NFKC width folding, ☆ -> ★, spaces dropped, regional
terms folded) of an official, then of a community name. The link says which
(``name_source`` official or community, ``linked_by`` exact or key). Names
that match nothing stay unlinked and visible; a key shared by two different
passcodes is ambiguous and never used.

An archetype (``「女武神」怪兽``, ``「冰结界」S怪兽``) is no card:
:meth:`CardIndex.is_archetype` says whether a quoted name starts the names
of at least two other cards.
"""

from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .chinese import match_key, name_key
from .paths import BUNDLED_CORPUS

CARD_NAMES = BUNDLED_CORPUS / "data" / "card-names.tsv"
COMMUNITY_NAMES = BUNDLED_CORPUS / "data" / "community-names-zh.tsv"


_RUBY = re.compile(r"<rt>.*?</rt>|<rp>.*?</rp>|</?ruby>", re.S)


def read_names(path: Path) -> list[dict[str, str]]:
    """Rows of a name table: tab-separated, a field holding quotes written the
    CSV way (quoted, inner quotes doubled: Maxx "C"); ruby markup in a name
    (``<ruby>DD<rt>디디</rt></ruby>``) kept as its base text only."""
    with path.open(encoding="utf-8", newline="") as fh:
        return [{k: _RUBY.sub("", v) if isinstance(v, str) and "<" in v else v for k, v in row.items()}
                for row in csv.DictReader(fh, delimiter="\t")]


@dataclass(frozen=True)
class Card:
    passcode: int
    name_en: str
    name_zh_cn: str
    name_zh_tw: str


@dataclass(frozen=True)
class CardLink:
    passcode: int | None
    name_en: str | None
    linked_by: str | None  # exact | key | None
    name_source: str | None = None  # official | community | None


class CardIndex:
    """Exact and normalized-key lookups over the official and community names."""

    def __init__(self, path: Path = CARD_NAMES, community: Path | None = COMMUNITY_NAMES):
        self.exact: dict[str, Card | None] = {}
        self.by_key: dict[str, Card | None] = {}
        self.community_exact: dict[str, Card | None] = {}
        self.community_key: dict[str, Card | None] = {}
        self._links: dict[str, CardLink] = {}  # names repeat across a corpus' rulings
        # Each Chinese name's name_key, kept for card_names' rows (load.card_name_rows): a build
        # makes the index in a helper process, so its name_key cache is not the build process's.
        self.zh_keys: dict[str, str] = {}
        by_passcode: dict[int, Card] = {}
        for row in read_names(path):
            try:
                passcode = int(row["password"])
            except (TypeError, ValueError):
                continue
            card = Card(passcode, row.get("en") or "", row.get("zh-CN") or "", row.get("zh-TW") or "")
            by_passcode.setdefault(passcode, card)
            for name in {card.name_zh_cn, card.name_zh_tw, card.name_en}:
                if name:
                    self._add(self.exact, name, card)
            for name in {card.name_zh_cn, card.name_zh_tw}:
                if name:
                    self._add(self.by_key, self._zh_key(name), card)
            if card.name_en:
                self._add(self.by_key, match_key(card.name_en), card)
        names = {c.name_zh_cn for c in by_passcode.values() if c.name_zh_cn}
        for passcode, name in community_names(community):
            card = by_passcode.get(passcode)
            if card is None:
                continue
            names.add(name)
            self._add(self.community_exact, name, card)
            self._add(self.community_key, self._zh_key(name), card)
        self._sorted_names = sorted(names)  # Simplified names, for archetype prefixes

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

    @staticmethod
    def _add(index: dict, key: str, card: Card) -> None:
        known = index.get(key, card)
        # Two passcodes under one name (alternate artworks share a name) keep the
        # lowest; two different names colliding on a key make the key ambiguous.
        if known is None:
            return
        if known.passcode != card.passcode and known.name_en != card.name_en:
            index[key] = None
        else:
            index[key] = min(known, card, key=lambda c: c.passcode)

    def link(self, name: str) -> CardLink:
        """The passcode of ``name``: its exact official, then community name,
        then the :func:`~pipeline.chinese.name_key` of either; unlinked when
        none is known or the key is ambiguous."""
        link = self._links.get(name)
        if link is None:
            link = self._links[name] = self._link(name)
        return link

    def _link(self, name: str) -> CardLink:
        for index, linked_by, source in ((self.exact, "exact", "official"), (self.community_exact, "exact", "community")):
            card = index.get(name)
            if card is not None:
                return CardLink(card.passcode, card.name_en, linked_by, source)
        key = name_key(name)
        for index, source in ((self.by_key, "official"), (self.community_key, "community")):
            card = index.get(key)
            if card is not None:
                return CardLink(card.passcode, card.name_en, "key", source)
        return CardLink(None, None, None)


_index: CardIndex | None = None


def card_index() -> CardIndex:
    """This process's :class:`CardIndex` of the bundled name tables, built on
    first use (about a second) unless :func:`use_card_index` handed it one."""
    global _index
    if _index is None:
        _index = CardIndex()
    return _index


def card_index_built() -> bool:
    """Whether this process holds its card index already."""
    return _index is not None


def use_card_index(index: CardIndex) -> None:
    """Make ``index`` (a :class:`CardIndex` of the bundled tables, built by
    another process: :func:`pipeline.run.build`) this process's card index."""
    global _index
    _index = index


NAME_LANGUAGES = ("en", "ja", "zh-CN", "zh-TW", "ko")


@lru_cache(maxsize=1)
def card_names() -> dict[int, dict[str, str]]:
    """Every card's names by passcode: ``{passcode: {"en", "ja", "zh-CN",
    "zh-TW", "ko", "zh-community"}}`` (a language without a name is left
    out), from ``corpus/data/card-names.tsv`` and the community table. The
    lowest passcode of a name shared by alternate artworks carries it too."""
    names: dict[int, dict[str, str]] = {}
    for row in read_names(CARD_NAMES):
        try:
            passcode = int(row["password"])
        except (TypeError, ValueError):
            continue
        entry = names.setdefault(passcode, {})
        for language in NAME_LANGUAGES:
            if row.get(language) and language not in entry:
                entry[language] = row[language]
    for passcode, name in community_names(COMMUNITY_NAMES):
        if passcode in names:
            names[passcode].setdefault("zh-community", name)
    return names


def community_names(path: Path | None) -> Iterator[tuple[int, str]]:
    """(passcode, community Chinese name) of each usable row of the community
    table at ``path`` (none when there is no such file)."""
    if path is None or not path.is_file():
        return
    for row in read_names(path):
        try:
            passcode = int(row["password"])
        except (TypeError, ValueError):
            continue
        name = (row.get("name_zh_community") or "").strip()
        if name:
            yield passcode, name


def card_name_key(language: str, name: str) -> str:
    """The search key of a card name of ``language`` (a column of
    :func:`card_names`): :func:`~pipeline.chinese.name_key` for Chinese
    names, :func:`~pipeline.chinese.match_key` for the others, as
    card_mentions.match_key and card_names.name_key are made."""
    return name_key(name) if language.startswith("zh") else match_key(name)
