"""How a judge reads a ruling outside the retention topic sections: the
terms a ruling writes in pieces or implies, found on top of the spaCy
matches of :mod:`pipeline.extract` (issue 34).

* :func:`split_events`: an event written in two parts of one sentence, the
  monster leaving and coming back (``把攻击了的怪兽除外，…让那个怪兽回到场上``:
  a temporary banish with no 一时除外);
* :func:`turn_kinds`: a summon kind followed by a turn word
  (``自身效果特殊召唤的回合``: how it was summoned and when);
* :func:`implied_kind`: the kind a verdict or freedom word names itself
  (``可以按照自己的意志…变更表示形式``: the limits on changing position);
* :func:`quoted_effect`: the 『quoted effect text』 an ability word
  activates (``可以发动『③：融合召唤的这张卡…』效果``), whose kinds are what
  that effect depends on.

Each returns plain tuples (kind label, value, start, end) or ranges over the
canonical text of one sentence; every word list is in
``schema/retention_terms.json`` (``split_events``, ``turn_suffixes``,
``turn_kind``, ``implied_kinds``, ``ability_object``).
"""

from __future__ import annotations

from functools import lru_cache

from .schema import retention_terms

Found = tuple[str, str, int, int]  # (term label, value, start, end) in the sentence's canonical text


def _outside(ranges: list[tuple[int, int]], a: int, b: int) -> bool:
    return not any(a < e and s < b for s, e in ranges)


def split_events(text: str, taken: list[tuple[int, int]], quoted: list[tuple[int, int]]) -> list[Found]:
    """Events written in two parts (``split_events``): for each event, the
    first leaving word outside ``quoted`` ranges (「」 and 『』) and the
    ``taken`` ranges (event terms already matched), with a returning word
    after it in the sentence: ``("EVENT", event, start, end)`` at the
    leaving word. Empty when the sentence names no such pair (most)."""
    found: list[Found] = []
    for event, parts in retention_terms()["split_events"].items():
        for leave in parts["leaves"]:
            at = text.find(leave)
            while at >= 0:
                end = at + len(leave)
                if _outside(quoted, at, end) and _outside(taken, at, end):
                    if any(text.find(back, end) >= 0 for back in parts["returns"]):
                        found.append(("EVENT", event, at, end))
                    break
                at = text.find(leave, end)
    return found


@lru_cache(maxsize=1)
def _turn_words() -> tuple[tuple[str, ...], str]:
    t = retention_terms()
    return tuple(t["turn_suffixes"]), t["turn_kind"]


def turn_kinds(text: str, kinds: list[Found]) -> list[Found]:
    """The turn kind (``turn_kind``) for each summon kind term of ``kinds``
    (its words end with 召唤, or 召唤的) followed by a turn word
    (``turn_suffixes``): ``…特殊召唤的战斗阶段`` names when too. None for a
    kind that is the turn kind already."""
    suffixes, turn_kind = _turn_words()
    out: list[Found] = []
    for label, value, a, b in kinds:
        if value == turn_kind:
            continue
        words = text[a:b]
        end = b - 1 if words.endswith("召唤的") else b
        if text[a:end].endswith("召唤") and text.startswith(suffixes, end):
            out.append((label, turn_kind, a, b))
    return out


@lru_cache(maxsize=1)
def _implied() -> dict[str, str]:
    return {word: kind for kind, words in retention_terms()["implied_kinds"].items() for word in words}


def implied_kind(word: str, sentence: str = "") -> str | None:
    """The kind verdict or freedom ``word`` names itself (``implied_kinds``)
    in ``sentence``, or None: a kind of ``implied_kinds_when`` only where
    the sentence holds one of its ``needs`` words and none of its ``unless`` words."""
    kind = _implied().get(word)
    when = retention_terms()["implied_kinds_when"].get(kind) if kind else None
    if when and (not any(w in sentence for w in when["needs"]) or any(w in sentence for w in when["unless"])):
        return None
    return kind


def quoted_effect(text: str, after: int, clause_end: int) -> tuple[int, int] | None:
    """The 『』 quote that an ability word ending at ``after`` activates: it
    opens right after the word (a ① mark or two between allowed) and
    ``ability_object`` (效果) follows its closing mark (or 的 after it), all before
    ``clause_end``. Returns the quote's range (marks included), or None."""
    rest = text[after:clause_end]
    opening = rest.find("『")
    if opening < 0 or opening > 2:
        return None
    closing = rest.find("』", opening)
    if closing < 0:
        return None
    joined = closing + 2 if rest.startswith("的", closing + 1) else closing + 1  # 『…』的效果
    if not rest.startswith(retention_terms()["ability_object"], joined):
        return None
    return after + opening, after + closing + 1


@lru_cache(maxsize=1)
def _kind_words() -> list[tuple[str, str]]:
    """(words, kind) of every kind of ``kinds``, longest words first."""
    pairs = [(w, kind) for kind, words in retention_terms()["kinds"].items() for w in words]
    return sorted(pairs, key=lambda p: -len(p[0]))


@lru_cache(maxsize=4096)
def heading_kinds(heading: str) -> frozenset[str]:
    """The kinds named inside the 『』 quotes of a section ``heading``
    (canonical text): a card page's heading quotes the effect text its
    rulings are about (``③效果 / 『融合召唤的这张卡』``), so a kind a ruling
    under it names (融合召唤的这张卡…也能发动这个效果) is what that effect
    depends on. Empty for a heading without a quote (most)."""
    found: set[str] = set()
    start = heading.find("『")
    while start >= 0:
        end = heading.find("』", start)
        if end < 0:
            break
        quote = heading[start + 1:end]
        for words, kind in _kind_words():
            if words in quote:
                found.add(kind)
                quote = quote.replace(words, "\x00")
        start = heading.find("『", end)
    return frozenset(found)


def points_back(text: str, after: int) -> bool:
    """Whether an ability word ending at ``after`` activates the effect an
    ``anaphora`` word right after it points back at (不能再发动这类效果)."""
    return text.startswith(tuple(retention_terms()["anaphora"]), after)
