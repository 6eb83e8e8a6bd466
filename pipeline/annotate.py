"""Extract pass 2, annotate: :class:`~pipeline.records.Ruling` s -> :class:`Annotated` rulings.

Takes the rulings of one page (their dates already found by the segment
pass) and returns each ruling with what its words point at:

* ``faq``: ``(date raw, FAQ id, URL)`` of each date whose link targets the
  official FAQ (``...?fid=123``);
* ``cards``: the card mentions, from the original text so offsets match
  links: every 「」 quote (an archetype when a kind word such as 怪兽
  follows and the name starts other cards' names; a token; a game term by
  ``term_quote_patterns``), and “” or 《》 quotes that name a known card;
  the name in Simplified script for Chinese pages; a mention of kind
  ``card`` linked to its card here, once (``CardMention.link``:
  :meth:`pipeline.cards.CardIndex.link`, exact, key or loose, never a
  fuzzy guess; ``card_mentions`` rows take it, :mod:`pipeline.cardlinks`);
* ``heading_date``: a yearly log's day-heading date for a ruling with no
  date of its own (:func:`pipeline.dates.heading_date`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from .cards import card_index
from .chinese import name_key, to_simplified
from .dates import RulingDate, heading_date
from .orthography import CARD_QUOTE, OTHER_QUOTES, TERM_QUOTES, alternation
from .records import CardMention, Ruling
from .schema import markers

FAQ_ID = re.compile(r"[?&]fid=(\d+)")


# Slots, not a named tuple: the later passes read its fields by name, a slot by the interpreter's
# specialized instruction (a named tuple's field by the generic lookup); made positionally, never changed.
@dataclass(slots=True)
class Annotated:
    """A ruling and what annotate finds in it: its FAQ links, card mentions
    (in text order) and the day heading's date standing for its own (or None)."""

    ruling: Ruling
    faq: tuple[tuple[str, str, str], ...]
    cards: tuple[CardMention, ...]
    heading_date: RulingDate | None


def annotate(rulings: list[Ruling], language: str, script: str = "Hans", region: str = "") -> list[Annotated]:
    """Each ruling of a page written in ``language``, :class:`Annotated`
    (card names converted from ``script`` and ``region``)."""
    by_section: dict[tuple[str, ...], RulingDate | None] = {}  # a day's rulings share its heading
    out = []
    for ruling in rulings:
        day = None
        if not any(d.counts for d in ruling.dates):  # yearly logs: no date of its own, its day heading's
            if ruling.section not in by_section:
                by_section[ruling.section] = heading_date(ruling.section)
            day = by_section[ruling.section]
        # ruling, faq, cards, heading_date (positional: a call with keywords builds a dict of them)
        faq = _faq(ruling) if ruling.links and ruling.dates else ()  # most rulings: no link, no call
        out.append(Annotated(ruling, faq, _cards(ruling.text, ruling.links, language, script, region), day))
    return out


def _faq(ruling: Ruling) -> tuple[tuple[str, str, str], ...]:
    """``(date raw, FAQ id, URL)`` of the dates inside (give or take one
    character) a link to an official FAQ entry."""
    if not (ruling.links and ruling.dates):
        return ()
    faq_links = [(start, end, href, fid) for start, end, href in ruling.links if (fid := _faq_id(href))]
    return tuple((d.raw, fid, href) for d in (ruling.dates if faq_links else ())
                 for start, end, href, fid in faq_links if start <= d.start and d.end <= end + 1)


def _cards(text: str, links, language: str, script: str, region: str) -> tuple[CardMention, ...]:
    """Card mentions of ``text``: every 「」 quote, and “” or 《》 quotes
    that name a known card or a term, 『』 and "" quotes that name a term."""
    cards: list[CardMention] = []
    quoted, other_quoted = "「" in text, "“" in text or "《" in text
    term_quoted = "『" in text or '"' in text
    # The links are indexed only for a ruling that quotes a name: most linked rulings quote one, not all.
    found = _Links(list(links)) if links and (quoted or other_quoted) else _NO_LINKS
    if language != "zh":  # names as written (_quoted_name converts none)
        script = region = ""
    if quoted:
        index = card_index()
        for q in CARD_QUOTE.finditer(text):
            name = q.group(1)
            norm_name, is_term = _quoted_name(name, script, region)
            kind = ("term" if is_term else "archetype" if _archetype(text, q.end(), norm_name)
                    else _card_kind(name, norm_name))
            # positional (quote, link): a call with keywords builds a dict of them, 32,000 times a corpus
            cards.append(CardMention(name, q.start(1), q.end(1), found.at(q), norm_name, kind, "「」",
                                     index.link(name) if kind == "card" else None))
    if other_quoted:
        for q in OTHER_QUOTES.finditer(text):
            name = q.group(q.lastindex)
            norm_name, is_term = _quoted_name(name, script, region)
            if is_term or any(card_index().link(n).linked for n in (name, norm_name)):
                cards.append(CardMention(name, q.start(q.lastindex), q.end(q.lastindex), found.at(q),
                                         norm_name, "term" if is_term else "card", q.group(0)[0] + q.group(0)[-1],
                                         None if is_term else card_index().link(name)))
    if term_quoted:
        for q in TERM_QUOTES.finditer(text):
            name = q.group(q.lastindex)
            norm_name, is_term = _quoted_name(name, script, region)
            if is_term:
                cards.append(CardMention(name, q.start(q.lastindex), q.end(q.lastindex), None, norm_name,
                                         "term", q.group(0)[0] + q.group(0)[-1]))
    if other_quoted or term_quoted:
        cards.sort(key=lambda c: c.start)
    return tuple(cards)


@lru_cache(maxsize=1 << 14)  # a page links the same FAQ entries and card pages over and over
def _faq_id(href: str) -> str | None:
    """The FAQ id in a link's target (``...?fid=123``), or None."""
    found = FAQ_ID.search(href)
    return found.group(1) if found else None


@lru_cache(maxsize=1 << 14)  # a corpus quotes the same card names over and over
def _quoted_name(name: str, script: str = "", region: str = "") -> tuple[str, bool]:
    """(the quoted ``name`` in Simplified script, whether it is a game term
    rather than a name: a pattern of ``term_quote_patterns`` in
    ``schema/markers.json`` matches its :func:`~pipeline.chinese.name_key`,
    whatever the quote marks, region or width); ``script`` empty: a name of
    a page not in Chinese. A card named exactly like a term would be read as
    the term: no card of ``corpus/data`` is (tests/stages/statements/test_quoted_terms_and_name_keys.py)."""
    norm_name = to_simplified(name, script, region) if script else name
    return norm_name, _term_quote().search(name_key(norm_name, "Hans")) is not None


class _Links:
    """A ruling's links (start, end, target), for finding the one on a quoted name."""

    def __init__(self, links: list[tuple[int, int, str]]):
        self.links = links
        # Links come in text order, each ending after it starts; were they not, every one would be looked
        # at. A few links are looked at one by one anyway: no check needed (most rulings have one or two).
        self.ordered = len(links) > 4 and (all(a[0] <= b[0] for a, b in zip(links, links[1:]))
                                           and all(start <= end for start, end, _ in links))

    def at(self, quote: re.Match) -> str | None:
        """The target of the first link inside the quoted name (its group:
        the one that matched) give or take one character, or None."""
        start, end = quote.start(quote.lastindex) - 1, quote.end(quote.lastindex) + 1
        # In text order: the links from the first one starting at ``start`` on, up to one starting past
        # ``end`` (it and every later link end past ``end``: each ends after it starts).
        first = bisect_left(self.links, (start,)) if self.ordered else 0
        for i in range(first, len(self.links)):
            s, e, href = self.links[i]
            if s >= start and e <= end:
                return href
            if self.ordered and s > end:
                return None
        return None


_NO_LINKS = _Links([])


@lru_cache(maxsize=1)
def _term_quote() -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in markers()["term_quote_patterns"]), re.IGNORECASE)


@lru_cache(maxsize=1)
def _archetype_suffix() -> re.Pattern:
    return re.compile(alternation(markers()["archetype_suffixes"]))


def _card_kind(name: str, norm_name: str) -> str:
    """The kind of a 「name」 that is neither a term nor an archetype before a
    kind word: ``token`` for a name ending in a token word (markers.json
    ``token_suffixes``: 勇者衍生物; a Token is no card), ``archetype`` for a
    name no card has that starts the names of at least two cards
    (:meth:`~pipeline.cards.CardIndex.is_series`: 「被封印」), else ``card``."""
    if norm_name.endswith(tuple(markers()["token_suffixes"])):
        return "token"
    index = card_index()
    if not index.link(name).linked and index.is_series(norm_name):
        return "archetype"
    return "card"


def _archetype(text: str, end: int, norm_name: str) -> bool:
    """A 「name」 right before a kind word (怪兽, 卡, S怪兽...) that starts other cards' names."""
    return bool(_archetype_suffix().match(text, end)) and card_index().is_archetype(norm_name)
