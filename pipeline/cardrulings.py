"""Statements with basis ``card_text``: a ruling says an effect of a named
card can or cannot be used after a retention event, and the effect's text
says what information it depends on.

「幻龙星-嘲风」变成里侧后，被卡的效果破坏…送去墓地时，可以发动②效果: the card's ②
is 『同调召唤的这张卡…』 (:mod:`pipeline.cardtext`: ``synchro_summoned``), so
the ruling states ``synchro_summoned`` kept on ``face_down``. Being able to use
the effect shows the information kept, being unable lost, except for the
restricting kinds (a pledge, a count of uses: ``restricting_kinds`` of
``schema/retention_terms.json`` and ``schema/card_text_terms.json``), where
being able shows it lost.

The ruling's words read here (``schema/card_text_terms.json``):

* the effect: ``effect_reference`` (「X」的②效果, ②的效果, ②效果); the card is
  the one named in the reference, else the first card of the sentence (then
  of the record) that has that numbered effect; or a quoted effect text
  (『同调召唤的这张卡被破坏的场合才能发动』的效果): the numbered effect whose
  Chinese text holds the quote, of the first card of the sentence (then of
  the record) that has one;
* whether it can be used: a ``cannot`` or ``can`` word right before the
  reference (可以发动②效果) or right after it (②效果不能发动, ②效果仍然可以适用);
  a word followed by 的, 中, 时, 后 or 之际 describes a moment, not an outcome;
* the event: an event term of the sentence before the reference (as the
  statement reader reads it), else of the record's earlier sentences; it
  must happen to that card (the last card named before it that is not the
  cause: 因「月之书」等效果), or to no card named;
* a sentence that gives a reason of its own before the reference
  (``other_reasons``: 由于…, 「X」的效果适用中) or names a case apart
  (不是S召唤的…也能发动) is not read.

A record that already states a (kind, event) in its own words keeps them: no
card_text statement is added for that pair. Struck-through sentences and
superseded records give none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from .records import Statement

if TYPE_CHECKING:  # the statements pass's drafts (records in the making)
    from .statements import Draft as Record


# A sequel flip (之后再反转) in a sentence naming no other event (pipeline.statements._sentence_events):
# a flip only where the record names no event before it (变成里侧…。之后再反转…: the case is the face-down).
SEQUEL_FLIP = "sequel:flip_face_up"


def own_events(events: list[tuple[int, str]], earlier: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``events`` of a sentence, a :data:`SEQUEL_FLIP` read as ``flip_face_up``
    when ``earlier`` (the record's events before) is empty, else dropped; a
    flip after a face-down of the same sentence is dropped too (变成里侧表示再因
    「停战协定」的效果反转: the flip is how it came back, the case is the face-down)."""
    if earlier:
        events = [(at, e) for at, e in events if e != SEQUEL_FLIP]
    out: list[tuple[int, str]] = []
    for at, e in events:
        e = "flip_face_up" if e == SEQUEL_FLIP else e
        if e == "flip_face_up" and any(x == "face_down" for _, x in out):
            continue
        out.append((at, e))
    return out


# The words between a reference and the ability word after it: ②效果仍然可以发动, ②效果也不能发动.
_FILLER = "(?:仍然|依然|仍|也|还|都|就|正常|照常|同样|依旧)"
_MOMENT = "的中时后际"


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern, frozenset[str]]:
    from .schema import card_text_terms, retention_terms

    terms = card_text_terms()
    words = sorted(terms["cannot"], key=len, reverse=True) + sorted(terms["can"], key=len, reverse=True)
    alternation = "|".join(re.escape(w) for w in words)
    before = re.compile(f"(?P<word>{alternation})$")
    after = re.compile(f"^{_FILLER}{{0,2}}(?P<word>{alternation})(?![{_MOMENT}])")
    restricting = frozenset(retention_terms()["restricting_kinds"]) | frozenset(terms["restricting_kinds"])
    return re.compile(terms["effect_reference"]), before, after, restricting


def cites_an_effect(text: str) -> bool:
    """Whether ``text`` (canonical Chinese) names a numbered effect or quotes
    an effect's text with an ability word right before or after it
    (可以发动②效果, ②效果不能发动, 『…』的效果不再适用)."""
    reference = _patterns()[0]
    return any(_polarity(text, m.start(), m.end()) for pattern in (reference, _QUOTED_EFFECT)
               for m in pattern.finditer(text))


def _polarity(text: str, start: int, end: int) -> str | None:
    """``can`` / ``cannot`` when an ability word stands right after
    ``text[start:end]`` (after at most two filler words) or right before it;
    None otherwise."""
    _, before, after, _ = _patterns()
    m = after.match(text[end:end + 12]) or before.search(text[max(0, start - 8):start])
    if m is None:
        return None
    return "cannot" if m.group("word") in _cannot_words() else "can"


@lru_cache(maxsize=1)
def _cannot_words() -> frozenset[str]:
    from .schema import card_text_terms

    return frozenset(card_text_terms()["cannot"])


def _verdict(kind: str, polarity: str, restricting: frozenset[str]) -> str:
    able = polarity == "can"
    return ("lost" if able else "kept") if kind in restricting else ("kept" if able else "lost")


class _CardFinder:
    """The card a reference in a record means: named in it, else the first
    card of the sentence, then of the record, that has that effect."""

    def __init__(self, record: Record, link: Callable[[str], int | None], texts: dict):
        self.link, self.texts = link, texts
        self.record_cards = [p for p in (self._passcode(c.norm_name or c.name) for c in record.cards
                                         if c.kind == "card") if p is not None]

    def _passcode(self, name: str) -> int | None:
        passcode = self.link(name)
        return passcode if passcode in self.texts else None

    def _candidates(self, sentence: str, at: int) -> list[int]:
        in_sentence = [self._passcode(n) for n in re.findall(r"「([^「」]+)」", sentence[:at])]
        return [p for p in in_sentence if p is not None] + self.record_cards

    def find(self, named: str | None, sentence: str, at: int, number: str) -> int | None:
        if named:
            return self._passcode(named)
        for passcode in self._candidates(sentence, at):
            if any(e.effect == number and e.part == "monster" for e in self.texts[passcode].effects):
                return passcode
        return None

    def find_quoted(self, quote: str, sentence: str, at: int) -> tuple[int, str] | None:
        """(passcode, number) of the numbered effect whose Chinese text holds
        ``quote`` (punctuation and spaces aside), of the first card of the
        sentence, then of the record, that has one."""
        key = _bare(quote)
        if len(key) < _MIN_QUOTE:
            return None
        for passcode in self._candidates(sentence, at):
            for e in self.texts[passcode].effects:
                if e.effect and e.part == "monster" and any(
                        key in _canonical_bare(e.texts.get(lang, "")) for lang in ("zh-community", "zh-CN")):
                    return passcode, e.effect
        return None


_MIN_QUOTE = 6  # characters of a quoted effect text, punctuation aside: shorter quotes are terms (『1回合1次』)
_PUNCTUATION = re.compile(r"[\s，,。.、·・：:；;「」“”\"（）()]")


def _bare(text: str) -> str:
    from .cardtext import fold_width

    return _PUNCTUATION.sub("", fold_width(text))


@lru_cache(maxsize=4096)
def _canonical_bare(text: str) -> str:
    """An effect's Chinese text as a ruling's canonical text writes it (同调召唤 -> S召唤), bare."""
    from .chinese import canonical_text

    return _bare(canonical_text(text, "zh", "Hans", "CN")) if text else ""


_QUOTED_EFFECT = re.compile(r"『(?P<quote>[^『』]+)』(?:的)?效果")


def _references(text: str, finder: _CardFinder) -> list[tuple[int, int, int | None, str, str]]:
    """Every effect a sentence cites, in order: (start, end, passcode, number,
    quote) of 「X」的②效果 / ②效果 (quote ``""``) and of 『quoted effect text』效果
    (passcode None: no card of the ruling has that effect)."""
    reference = _patterns()[0]
    refs = [(m.start(), m.end(), finder.find(m.group("card"), text, m.start(), m.group("effect")), m.group("effect"),
             "") for m in reference.finditer(text)]
    for m in _QUOTED_EFFECT.finditer(text):
        found = finder.find_quoted(m.group("quote"), text, m.start())
        refs.append((m.start(), m.end(), found[0] if found else None, found[1] if found else "", m.group("quote")))
    return sorted(refs)


def _quoted_kinds(quote: str, kinds: list[str], restricting: frozenset[str]) -> list[str]:
    """Of an effect's ``kinds``, those its quoted part itself depends on, but
    the restricting ones: 『这张卡不能使用这个效果』效果不再适用 says the restriction
    is gone, the other way round from an effect that cannot be activated."""
    from .cardtext import read_dependencies

    own = {d.info_kind for d in read_dependencies(quote, "zh")}
    return [k for k in kinds if k in own and k not in restricting]


def card_text_statements(records: Sequence[Record], docs: Sequence, events_of: Callable,
                         dates_of: Callable, link: Callable[[str], int | None] | None = None,
                         texts: dict | None = None) -> int:
    """Add the ``card_text`` statements of ``records`` (their sentences in
    ``docs``, the ``card_sentences`` of :class:`pipeline.match.MatchedRuling`); returns how
    many. ``events_of(sentence)`` gives the events a sentence names in
    order as ``(start, event)``; ``dates_of(record, sentence)`` its dates;
    ``link(name)`` a card name's passcode (default: the bundled card index);
    ``texts`` the card texts by passcode (default: the bundled ones)."""
    if texts is None:
        from .cardtext import card_texts
        texts = card_texts()
    if not texts:
        return 0
    if link is None:
        from .cards import card_index
        index = card_index()
        link = lambda name: index.link(name).passcode  # noqa: E731
    from .carddenials import denial_statements

    added = 0
    for record, sentences in zip(records, docs):
        if sentences is None or record.status == "superseded":
            continue
        added += _record_statements(record, sentences, events_of, dates_of, _CardFinder(record, link, texts), texts)
        added += denial_statements(record, sentences, events_of, dates_of, link, texts)
    return added


_QUOTED_CARD = re.compile(r"「([^「」]+)」")
# A card named as the cause of the event, not the monster it happens to: 因「月之书」等效果, 被「银河眼光子龙」等.
_CAUSE_AFTER = re.compile(r"(?:的)?[①-⑳]?(?:的)?(?:等)?(?:卡的|怪兽的)?(?:效果|等)")
_CAUSE_BEFORE = ("因", "被", "用", "以", "由", "通过", "让", "发动")


def _subject_before(text: str, at: int, link: Callable[[str], int | None]) -> int | None | bool:
    """The passcode of the last card named before ``text[at]`` that is not
    a cause (因「月之书」等效果); False when no card is named there (None
    when the card is not known)."""
    for m in reversed(list(_QUOTED_CARD.finditer(text[:at]))):
        if _CAUSE_AFTER.match(text, m.end()) or text[:m.start()].endswith(_CAUSE_BEFORE):
            continue
        return link(m.group(1))
    return False


def _kinds_and_verdicts(kinds: list[str], polarity: str, used_before: bool,
                        restricting: frozenset[str]) -> list[tuple[str, str]]:
    """What the ruling says of each kind the effect depends on. Able: every
    enabling kind kept, and a restricting kind lost when the effect had been
    used before the event. Unable: the enabling kinds lost (of several, those
    of ``lost_first`` in ``schema/card_text_terms.json`` when there are any),
    unless the effect was used before (then its count or its moment may stop
    it: only a single restricting kind is read, kept); nothing when several
    could have stopped it."""
    from .schema import card_text_terms

    # Unable to use again an effect used before the event: its count or its moment stops it, not what enables it.
    enabling = [k for k in kinds if k not in restricting] if polarity == "can" or not used_before else []
    limiting = [k for k in kinds if k in restricting] if used_before else []
    if polarity == "can":
        return [(k, "kept") for k in enabling] + [(k, "lost") for k in limiting]
    if enabling:
        first = [k for k in enabling if k in card_text_terms()["lost_first"]]
        return [(k, "lost") for k in (first or enabling)]
    if len(limiting) == 1:
        return [(limiting[0], "kept")]
    return []


def _record_statements(record: Record, sentences, events_of: Callable, dates_of: Callable, finder: _CardFinder,
                       texts: dict) -> int:
    from .schema import card_text_terms

    restricting = _patterns()[3]
    terms = card_text_terms()
    stated = {(s.info_kind, s.event) for s in record.statements}
    earlier: list[tuple[int, str]] = []
    before = ""  # the record's earlier sentences
    added = 0
    for sentence in sentences:
        events, text, last = own_events(events_of(sentence), earlier), sentence.norm, 0
        for start, end, passcode, number, quote in _references(text, finder):
            named = ([(at, e) for at, e in events if last <= at < start]
                     or [(at, e) for at, e in events if at < start])
            last = end
            polarity = _polarity(text, start, end)
            if sentence.struck or polarity is None or not (named or earlier) or passcode is None:
                continue
            if named and _subject_before(text, named[0][0], finder.link) not in (False, passcode):
                continue  # the event happens to another card
            if any(w in text[:start] for w in terms["other_reasons"]):
                continue  # the ruling gives its own reason
            used_before = any(w in before + text[:start] for w in terms["history_words"])
            card = texts[passcode]
            effect = next(e for e in card.effects if e.effect == number and e.part == "monster")
            # a monster's own event: what its effect needs of itself; a Spell's or Trap's: all it needs
            kinds = effect.kinds_of("this_card") if card.card_type == "Monster" else effect.kinds
            if any(w in text for w in terms["later_turn_words"]):  # a new turn counts anew
                kinds = [k for k in kinds if k not in terms["restricting_kinds"]]
            if quote:
                kinds = _quoted_kinds(quote, kinds, restricting)
            for event in dict.fromkeys(e for _, e in (named or earlier)):
                for kind, verdict in _kinds_and_verdicts(kinds, polarity, used_before, restricting):
                    if (kind, event) in stated:
                        continue
                    record.add_statement(Statement(kind, event, verdict, "", "card_text", "",
                                                   dates_of(record, sentence), "outcome", number, passcode))
                    added += 1
        earlier.extend(events)
        before += text
    return added
