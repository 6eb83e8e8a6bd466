"""Statements with basis ``card_text`` from a ruling that says, in the
effect's own words, that a card's effect no longer does (or still does) what
its text says after a retention event, without citing the effect by number.

「战栗之凶皇-始祖恶魔」被一时除外，当回合回到场上后，…结束阶段不会破坏: the card's ②
reads 『这张卡的①的方法召唤的这张卡的…结束阶段破坏』 (:mod:`pipeline.cardtext`:
``summoned_by_own_procedure``); 结束阶段 + 破坏, the words around ``不会``, stand
in that text, so the ruling says the effect no longer applies and the
information it rests on is lost on ``temp_banish``.

The ruling's words read here (``denials`` of ``schema/card_text_terms.json``):

* a ``cannot`` word (不会, 不再) or a ``can`` word (仍会, 仍然会) after the
  sentence's first event;
* the words of its clause right before it (at most ``context_before``
  characters) joined to those after it up to the clause's end: together at
  least ``min_chars`` characters, found as they stand in one effect's
  Chinese text (community or official wording) of the card the event
  happens to (the last card named before the event that is not a cause:
  :func:`pipeline.cardrulings._subject_before`);
* the event: the sentence's events before the word (as the statement reader
  reads them);
* a sentence giving its own reason (``other_reasons``) or citing a numbered
  effect with an ability word (read by :mod:`pipeline.cardrulings`) is not read.

Only the effect's kinds of the card itself count (``kinds_of("this_card")``),
verdicts as :func:`pipeline.cardrulings._kinds_and_verdicts` gives them with
no use before the event. A record that already states a (kind, event) keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from .records import Statement

if TYPE_CHECKING:  # the statements pass's drafts (records in the making)
    from .statements import Draft as Record


_CLAUSE = re.compile(r"[，。；,;：:！？（）()]")
_ZH_TEXTS = ("zh-community", "zh-CN")


@lru_cache(maxsize=1)
def _words() -> tuple[re.Pattern, frozenset[str], int, int]:
    from .schema import card_text_terms

    denials = card_text_terms()["denials"]
    words = sorted(denials["cannot"] + denials["can"], key=len, reverse=True)
    return (re.compile("|".join(re.escape(w) for w in words)), frozenset(denials["cannot"]),
            denials["context_before"], denials["min_chars"])


def denied_phrases(text: str, after: int = 0) -> list[tuple[int, str, str]]:
    """The (position, polarity, phrase) of each ``denials`` word of ``text``
    after ``after``: ``cannot`` or ``can``, and the words of its clause
    around it without the word (结束阶段不会破坏 -> 结束阶段破坏); only phrases
    of at least ``min_chars`` characters with words on both sides."""
    pattern, cannot, before_chars, min_chars = _words()
    out = []
    for m in pattern.finditer(text, after):
        start = max((d.end() for d in _CLAUSE.finditer(text, 0, m.start())), default=0)
        end = next((d.start() for d in _CLAUSE.finditer(text, m.end())), len(text))
        before, rest = text[max(start, m.start() - before_chars):m.start()], text[m.end():end]
        if before and len(rest) >= 2 and len(before) + len(rest) >= min_chars:
            out.append((m.start(), "cannot" if m.group() in cannot else "can", before + rest))
    return out


def _effects_saying(card, phrase: str) -> list:
    """The monster effects of ``card`` whose Chinese text holds ``phrase``."""
    return [e for e in card.effects if e.part == "monster"
            and any(phrase in (e.texts.get(lang) or "") for lang in _ZH_TEXTS)]


def _alternation(words: dict) -> str:
    return "|".join(re.escape(w) for w in sorted(words["cannot"] + words["can"], key=len, reverse=True))


@lru_cache(maxsize=1)
def _activation() -> tuple[re.Pattern, re.Pattern, re.Pattern, frozenset[str]]:
    from .schema import card_text_terms

    terms = card_text_terms()
    activation, material, effect = terms["activation_on_it"], terms["material_of"], terms["effect_on_it"]
    return (re.compile(f"(?P<word>{_alternation(activation)})「(?P<card>[^「」]+)」"),
            re.compile(f"(?P<word>{_alternation(material)})「(?P<card>[^「」]+)」的?(?:{material['summons']})?素材"),
            re.compile(f"(?P<word>{_alternation(effect)})「(?P<card>[^「」]+)」的?(?:[①-⑳]的?)?效果"),
            frozenset(activation["cannot"] + material["cannot"] + effect["cannot"]))


def activations_on_it(text: str) -> list[tuple[int, str, str, str]]:
    """The (position, polarity, card name, use) of each card ``text`` says
    can or cannot be activated on the monster (use ``activation``:
    ``activation_on_it``, 不能对其发动「X」), use it as material (use
    ``material``: ``material_of``, 也可以成为「X」的连接素材) or affect it
    (use ``activation`` too: ``effect_on_it``, 不会被「X」的效果破坏)."""
    activation, material, effect, cannot = _activation()
    return sorted((m.start(), "cannot" if m.group("word") in cannot else "can", m.group("card"), use)
                  for use, pattern in (("activation", activation), ("material", material), ("activation", effect))
                  for m in pattern.finditer(text))


def _needs_of_another(card, use: str = "activation") -> list[str]:
    """What ``card`` needs of the monster it is used on: as material, what
    its materials line (the text before its first numbered effect) needs of
    another monster; activated on it, a Spell's or Trap's every kind but
    its own count and pledges, a monster's kinds of another monster."""
    from .schema import card_text_terms

    own = set(card_text_terms()["card_kinds"])
    if use == "material":
        return sorted({k for e in card.effects[:1] if e.effect == "" for k in e.kinds_of("other")} - own)
    if card.card_type == "Monster":
        return sorted({k for e in card.effects for k in e.kinds_of("other")} - own)
    return sorted({k for e in card.effects for k in e.kinds} - own)


def may_deny(text: str, names: list[str], link: Callable[[str], int | None], texts: dict) -> bool:
    """Cheap gate: whether a phrase of ``text`` (:func:`denied_phrases`)
    stands in an effect text of one of the cards ``names``, or ``text``
    says a card that needs something of the monster can or cannot be
    activated on it (:func:`activations_on_it`)."""
    for _, _, name, use in activations_on_it(text):
        passcode = link(name)
        if passcode in texts and _needs_of_another(texts[passcode], use):
            return True
    phrases = [p for _, _, p in denied_phrases(text)]
    if not phrases:
        return False
    for name in names:
        passcode = link(name)
        if passcode in texts and any(_effects_saying(texts[passcode], p) for p in phrases):
            return True
    return False


def denial_statements(record: Record, sentences, events_of: Callable, dates_of: Callable,
                      link: Callable[[str], int | None], texts: dict) -> int:
    """Add the card_text statements of ``record`` read from denials; returns how many."""
    from .cardrulings import _kinds_and_verdicts, _patterns, _subject_before, cites_an_effect, own_events
    from .schema import card_text_terms

    restricting = _patterns()[3]
    other_reasons = card_text_terms()["other_reasons"]
    stated = {(s.info_kind, s.event) for s in record.statements}
    added = 0
    earlier: list[tuple[int, str]] = []
    for sentence in sentences:
        text = sentence.norm
        events = own_events(events_of(sentence), earlier)
        earlier.extend(events)
        if sentence.struck or cites_an_effect(text) or any(w in text for w in other_reasons):
            continue
        if not events:
            continue
        added += _activation_statements(record, sentence, events, link, texts, stated, dates_of)
        passcode = _subject_before(text, events[0][0], link)
        if not passcode or passcode not in texts or texts[passcode].card_type != "Monster":
            continue
        for at, polarity, phrase in denied_phrases(text, events[0][0]):
            for effect in _effects_saying(texts[passcode], phrase):
                pairs = _kinds_and_verdicts(effect.kinds_of("this_card"), polarity, False, restricting)
                for event in dict.fromkeys(e for pos, e in events if pos < at):
                    for kind, verdict in pairs:
                        if (kind, event) in stated:
                            continue
                        stated.add((kind, event))
                        record.add_statement(Statement(kind, event, verdict, "", "card_text", "",
                                                       dates_of(record, sentence), "outcome", effect.effect, passcode))
                        added += 1
    return added


def _activation_statements(record: Record, sentence, events: list[tuple[int, str]], link: Callable, texts: dict,
                           stated: set[tuple[str, str]], dates_of: Callable) -> int:
    """Statements of ``不能对其发动「X」`` after an event that happens to no
    card named, or to a card other than X: what X needs of the monster lost
    (of several, those of ``lost_first``), kept when X can be activated."""
    from .cardrulings import _kinds_and_verdicts, _patterns, _subject_before

    text, added = sentence.norm, 0
    for at, polarity, name, use in activations_on_it(text):
        passcode = link(name)
        before = [(pos, e) for pos, e in events if pos < at]
        if passcode not in texts or not before or _subject_before(text, before[0][0], link) == passcode:
            continue
        card = texts[passcode]
        effect = next((e for e in card.effects if e.part == "monster" and e.kinds), None)
        if effect is None or (use == "material" and effect.effect != ""):
            continue
        needs = _needs_of_another(card, use)
        named = [k for k in needs if k in _named_kinds(text[:at])]  # 反转召唤后…: of its needs, the one the ruling names
        for kind, verdict in _kinds_and_verdicts(named or needs, polarity, False, _patterns()[3]):
            for event in dict.fromkeys(e for _, e in before):
                if (kind, event) not in stated:
                    stated.add((kind, event))
                    record.add_statement(Statement(kind, event, verdict, "", "card_text", "",
                                                   dates_of(record, sentence), "outcome", effect.effect, passcode))
                    added += 1
    return added


def _named_kinds(text: str) -> set[str]:
    """The kinds whose words (``kinds`` of schema/retention_terms.json) ``text`` holds."""
    from .reading import _kind_words

    return {kind for words, kind in _kind_words() if words in text}
