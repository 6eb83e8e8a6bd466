"""Rulings on a named card's numbered effect after a retention event.

A ruling such as "通过自身①的方法特殊召唤的「撒旦老人」被一时除外，当回合回到场上后，
结束阶段不能发动②效果" says that one effect (②) of one card (the monster that
underwent the event) cannot be activated after a temporary banish. This
module reads such sentences with the term lists of
``schema/card_ruling_terms.json``; the build (pipeline/cardengine.py) puts
what it reads into the engine's card table, where a ruling on the card
decides over the general rule (the rules table).

:func:`read_effect_rulings` reads one record's normalized text, given the
card names it quotes (name as quoted -> passcode, linked mentions only), and
returns :class:`EffectRuling` items: the card, the effect number, the events
the ruling names before its verdict (``face_down`` / ``temp_banish``, and
whether it names a flip too) and whether the effect can be used (True) or
not (False). The reading is clause by clause (a clause ends at ， ； 。):

* the events named since the last verdict belong to the next verdict; a
  sentence's events without a verdict carry into the next sentence only when
  it names an event too ("之后再反转的状况，下个回合可以再次发动②效果" continues
  the sentence before);
* a reference with a quoted card (「X」的②效果) is about X; a bare one (②效果,
  其③效果) about the card that underwent the event: the last card quoted
  before the first event word of the segment that is no cause of it
  (「S：P小夜」的②效果等一时除外 is the cause), else the only card quoted
  before it; a ruling about an effect of another card than the one that
  underwent the event (「炎龙星-狻猊」的③效果 after 「幻龙星-嘲风」 turned
  face-down) is left out, and so is a segment whose event is said of another
  monster (对象怪兽变成里侧);
* a verdict word with no reference in its clause (一时除外再回到场上的场合不能发动)
  is about the effect referred to last in the sentence;
* a sentence whose verdict holds only where another card makes it so
  (「军神 概布」的效果适用中, 作为通常怪兽) gives none.

Pure functions over text: no database, no build stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MAIN_EVENTS = ("face_down", "temp_banish")  # the events that change what a monster carries; a flip follows one
_CLAUSE = re.compile(r"[^，,；;。\n]+[，,；;。\n]?")
_QUOTE = re.compile(r"「([^「」]+)」")
_ANY_QUOTE = re.compile(r"「[^「」]*」")
_SENTENCE_END = "。\n"


@dataclass(frozen=True)
class EffectRuling:
    """One ruling's verdict on one effect: ``passcode`` the card,
    ``effect`` the number as printed (``②``), ``events`` the main events
    named (a sorted tuple of ``face_down`` / ``temp_banish``, empty when the
    ruling names only a flip), ``flip`` whether it names a flip
    (``flip_face_up``), ``can`` True (can be activated / applied) or False,
    ``words`` the verdict's words as written."""

    passcode: int
    effect: str
    events: tuple[str, ...]
    flip: bool
    can: bool
    words: str


# Before the group ``effect`` of the reference pattern: a run of groups (each optional or not, none
# holding another with groups); the group opens with a character class (no ?, * or {…} after it).
_GROUPS = re.compile(r"(?:\((?:[^()\\]|\\.|\([^()]*\))*\)[?*]?)*")
_FIRST_CLASS = re.compile(r"\(\?P<effect>(\[[^\]\\]+\])(?![?*{])")


def _number_class(reference: str) -> re.Pattern | None:
    """The character class every match of the reference pattern holds (``[①-⑳]``, an effect's
    number), or None when the pattern is not of that form (only groups before a group ``effect`` that
    opens with a class). A text without one of its characters has no reference: a search for the
    class skips ahead in C where the whole pattern (its optional 「card」的 and 其 first) is tried at
    every character, about 7 times the time over a text with no reference."""
    at = reference.find("(?P<effect>")
    first = _FIRST_CLASS.match(reference, at) if at >= 0 else None
    return re.compile(first.group(1)) if first and _GROUPS.fullmatch(reference[:at]) else None


_LAST_WORD = re.compile(r"[^\\()\[\]{}?*+|.^$]+$")


def _last_word(reference: str) -> str:
    """The plain text that ends every match of the reference pattern (``效果``): its end when
    only groups stand before it, else "" (which every text holds). A test for it (``in``, in C)
    is about 20 times faster than a scan with a pattern, and a quarter of the records have none."""
    word = _LAST_WORD.search(reference)
    return word.group(0) if word and _GROUPS.fullmatch(reference[:word.start()]) else ""


@lru_cache(maxsize=1)
def _terms() -> dict:
    from .schema import card_ruling_terms

    t = card_ruling_terms()
    either = lambda words: re.compile("|".join(f"(?:{w})" for w in words))  # noqa: E731
    return {
        "events": {ev: either(words) for ev, words in t["events"].items()},
        "any_event": either([w for words in t["events"].values() for w in words]),
        "not_events": either(t["not_events"]),
        "quoted": re.compile(t["quoted"]),
        "reference": re.compile(t["reference"]),
        "number": _number_class(t["reference"]),
        "last_word": _last_word(t["reference"]),
        "can": either(t["can"]),
        "cannot": either(t["cannot"]),
        "before": int(t["window"]["before"]),
        "after": int(t["window"]["after"]),
        "cause": re.compile(t["cause"]),
        "other_subject": re.compile(t["other_subject"]),
        "situational": either(t["situational"]),
    }


def _refers(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` holds an effect reference (``end`` None: to the end)."""
    t = _terms()
    end = len(text) if end is None else end
    if t["number"] is not None and t["number"].search(text, start, end) is None:
        return False
    return t["reference"].search(text, start, end) is not None


def may_rule(text: str) -> bool:
    """Whether ``text`` names an event and refers to a numbered effect at all: the
    cheap test before the reading (most records fail it). Blanking quotes and
    non-events (as :func:`read_effect_rulings` does) only removes matches, so a
    text that fails here has no ruling."""
    t = _terms()
    return t["last_word"] in text and t["any_event"].search(text) is not None and _refers(text)


def load_terms() -> None:
    """Compile the term patterns (``schema/card_ruling_terms.json``) now:
    the build's workers do it before they fork (pipeline.workers.load_page_work)."""
    _terms()


def _blank(text: str, pattern: re.Pattern) -> str:
    """``text`` with every match of ``pattern`` replaced by as many ``□``: offsets stay."""
    return pattern.sub(lambda m: "□" * len(m.group(0)), text)


def _events_in(masked: str, start: int, end: int) -> list[tuple[int, str, int]]:
    """(start, event, end) of every event word in ``masked[start:end]``."""
    t = _terms()
    if t["any_event"].search(masked, start, end) is None:  # most clauses: one scan, not one per event
        return []
    out = []
    for event, pattern in t["events"].items():
        out.extend((m.start() + start, event, m.end() + start) for m in pattern.finditer(masked[start:end]))
    return sorted(out)


def _verdict(text: str, ref: re.Match, clause_start: int, clause_end: int) -> tuple[bool, str] | None:
    """Whether the words right before or after reference ``ref`` (in its
    clause) say the effect can (True) or cannot (False) be used."""
    t = _terms()
    before = text[max(clause_start, ref.start() - t["before"]):ref.start()]
    after = text[ref.end():min(clause_end, ref.end() + t["after"])]
    for window, anchored in ((before, "end"), (after, "start")):
        for can, pattern in ((False, t["cannot"]), (True, t["can"])):
            for m in pattern.finditer(window):
                if anchored == "end" and m.end() != len(window):
                    continue
                if anchored == "start" and m.start() > 4:
                    continue
                if can and window[max(0, m.start() - 1):m.start()] in ("不", "无"):
                    continue
                return can, m.group(0)
    return None


_JOINED = re.compile(r"\s*(?:和|与|、|及|以及|或|或者|·)\s*")


def _verdicts(text: str, start: int, end: int) -> list[tuple[re.Match, tuple[bool, str]]]:
    """The references of a clause with their verdicts; references joined by
    和 / 与 / 、 (①效果和「X」的③效果不再适用) share the verdict of the last."""
    t = _terms()
    if t["number"] is not None and t["number"].search(text, start, end) is None:  # most clauses (_number_class)
        return []
    refs = list(t["reference"].finditer(text, start, end))
    out: list[tuple[re.Match, tuple[bool, str]]] = []
    shared = None
    for i in range(len(refs) - 1, -1, -1):
        ref = refs[i]
        verdict = _verdict(text, ref, start, end)
        if verdict is None and shared is not None and _JOINED.fullmatch(text[ref.end():refs[i + 1].start()]):
            verdict = shared
        shared = verdict
        if verdict is not None:
            out.append((ref, verdict))
    return out[::-1]


def _sentence(text: str, at: int) -> str:
    """The sentence of ``text`` around offset ``at``."""
    start = max(text.rfind(c, 0, at) for c in _SENTENCE_END) + 1
    ends = [i for i in (text.find(c, at) for c in _SENTENCE_END) if i >= 0]
    return text[start:min(ends) if ends else len(text)]


def _clause_verdict(text: str, start: int, end: int) -> tuple[bool, str] | None:
    """A verdict word of a clause that names no effect (…的场合不能发动)."""
    t = _terms()
    clause = text[start:end]
    for can, pattern in ((False, t["cannot"]), (True, t["can"])):
        m = pattern.search(clause)
        if m and not (can and clause[max(0, m.start() - 1):m.start()] in ("不", "无")):
            return can, m.group(0)
    return None


def _quoted_cards(text: str, cards: dict[str, int]) -> list[tuple[int, int, int]]:
    """(start, end, passcode) of every quote 「name」 of a linked card, in order."""
    out = []
    for m in _QUOTE.finditer(text):
        passcode = cards.get(m.group(1))
        if passcode is not None:
            out.append((m.start(), m.end(), passcode))
    return out


def _subject(text: str, quotes: list[tuple[int, int, int]], seg_start: int, event: tuple[int, str, int]) -> int | None:
    """The card that underwent ``event`` (start, name, end): the last quoted
    card before its end (in the segment, else the record; 把这只「X」盖放
    names it inside) that is no cause of the event, else the only card
    quoted before it; None when the event's clause says another monster
    underwent it."""
    t = _terms()
    event_at, event_end = event[0], event[2]
    clause_start = max(text.rfind(c, 0, event_at) for c in "，,；;。\n") + 1
    if t["other_subject"].search(_blank(text[clause_start:event_at], _ANY_QUOTE)):
        return None
    before = [q for q in quotes if q[1] <= event_end]
    plain = [q for q in before if not t["cause"].match(text[q[1]:q[1] + 3])]
    in_segment = [q for q in plain if q[0] >= seg_start]
    if in_segment or plain:
        return (in_segment or plain)[-1][2]
    distinct = {q[2] for q in before}
    return distinct.pop() if len(distinct) == 1 else None


def read_effect_rulings(text: str, cards: dict[str, int], tested: bool = False) -> list[EffectRuling]:
    """What ``text`` (a record's normalized text) says of numbered effects
    after a retention event; ``cards``: the linked card names it quotes (as
    quoted -> passcode); ``tested``: :func:`may_rule` is known to hold for
    ``text`` (the caller tested it). See the module docstring for the reading."""
    if not tested and not may_rule(text):
        return []
    t = _terms()
    text = _blank(text, t["quoted"])
    if not _refers(text):
        return []  # a verdict needs a numbered effect referred to (most records: the clause reading costs more)
    masked = _blank(text, t["not_events"])
    if not t["any_event"].search(masked):
        return []  # and an event named before it
    quotes = _quoted_cards(text, cards)
    out: list[EffectRuling] = []
    pending: list[tuple[int, str, int]] = []  # events since the last verdict
    seg_start = 0
    last_main: tuple[str, ...] = ()
    last_ref: tuple[int, str] | None = None  # (passcode, effect) referred to last in the sentence
    carried: list[tuple[int, str, int]] = []  # a sentence's events without a verdict, for a next sentence naming one
    for cm in _CLAUSE.finditer(text):
        start, end = cm.start(), cm.end()
        said = _events_in(masked, start, end)
        if said and not pending:
            pending = carried
        pending = pending + said
        found = False
        if pending:
            main = tuple(sorted({e for _, e, _ in pending if e in MAIN_EVENTS})) or last_main
            flip = any(e == "flip_face_up" for _, e, _ in pending)
            verdicts = _verdicts(text, start, end)
            # the card that underwent the events: wanted only with a verdict (most clauses have none)
            subject = _subject(text, quotes, seg_start, pending[0]) if verdicts else None
            for ref, verdict in verdicts:
                named = cards.get(ref.group("card")) if ref.group("card") else subject
                if ref.group("card") and ref.group("card") not in cards:
                    continue
                found = True
                if named is None or named != subject:
                    continue
                if t["situational"].search(_sentence(text, ref.start())):
                    continue  # a verdict that holds only where another card's effect applies
                for effect in ref.group("effect"):
                    out.append(EffectRuling(named, effect, main, flip, verdict[0], verdict[1]))
                    last_ref = (named, effect)
            if not found and last_ref is not None and not _refers(text, start, end):
                verdict = _clause_verdict(text, start, end)
                if verdict is not None and _subject(text, quotes, seg_start, pending[0]) == last_ref[0]:
                    found = True
                    out.append(EffectRuling(last_ref[0], last_ref[1], main, flip, verdict[0], verdict[1]))
            if found:
                last_main = main or last_main
                pending = []
                seg_start = end
        if text[end - 1:end] in _SENTENCE_END:
            last_ref = None
            carried, pending = pending, []
    return _unique(out)


def _unique(items: list[EffectRuling]) -> list[EffectRuling]:
    """Each (card, effect, events, flip) once: the first verdict read for it."""
    seen, out = set(), []
    for r in items:
        key = (r.passcode, r.effect, r.events, r.flip)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out

