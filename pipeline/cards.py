"""Card mentions -> passcodes, from ``corpus/data/card-names.tsv``.

The table (derived from yaml-yugi) has one row per card with ``password``
(the passcode), ``en``, ``ja``, ``zh-CN``, ``zh-TW`` and ``ko`` names. A
mention is linked by its exact name in either Chinese script first (``exact``),
then by a normalized key (:func:`pipeline.chinese.name_key`: Simplified
script, NFKC width folding, ☆ -> ★, spaces dropped, regional terms folded so
``死之卡组破坏病毒`` finds ``死之牌组破坏病毒``: ``key``). Community names that match no official name stay
unlinked and visible; a key shared by two different passcodes is ambiguous and
never used.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .chinese import match_key, name_key

CARD_NAMES = Path(__file__).resolve().parent.parent / "corpus" / "data" / "card-names.tsv"


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


class CardIndex:
    """Exact and normalized-key lookups over the card table."""

    def __init__(self, path: Path = CARD_NAMES):
        self.exact: dict[str, Card | None] = {}
        self.by_key: dict[str, Card | None] = {}
        self._links: dict[str, CardLink] = {}  # names repeat across a corpus' rulings
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                try:
                    passcode = int(row["password"])
                except (TypeError, ValueError):
                    continue
                card = Card(passcode, row.get("en") or "", row.get("zh-CN") or "", row.get("zh-TW") or "")
                for name in {card.name_zh_cn, card.name_zh_tw, card.name_en}:
                    if name:
                        self._add(self.exact, name, card)
                for name in {card.name_zh_cn, card.name_zh_tw}:
                    if name:
                        self._add(self.by_key, name_key(name), card)
                if card.name_en:
                    self._add(self.by_key, match_key(card.name_en), card)

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
        """The passcode of ``name``: its exact name first, then its
        :func:`~pipeline.chinese.name_key`; unlinked when neither is known
        or the key is ambiguous."""
        link = self._links.get(name)
        if link is None:
            link = self._links[name] = self._link(name)
        return link

    def _link(self, name: str) -> CardLink:
        card = self.exact.get(name)
        if card is not None:
            return CardLink(card.passcode, card.name_en, "exact")
        card = self.by_key.get(name_key(name))
        if card is not None:
            return CardLink(card.passcode, card.name_en, "key")
        return CardLink(None, None, None)


@lru_cache(maxsize=1)
def card_index() -> CardIndex:
    return CardIndex()
