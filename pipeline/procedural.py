"""The procedural-rule reader: English sentences -> the ids of the rules of
``schema/procedural_rules.json`` they state (seeds 000 and 003: changing
battle positions, the Battle Phase).

A rule is a modality over an action with conditions. spaCy's rule
matchers (``PhraseMatcher`` for the patterns without gaps, ``Matcher``
for the others: :class:`_Reader`; lower-cased tokens of a blank English
pipeline, no parser, no lemmatizer data: the word forms are listed in the
schema) find the *features* of a
sentence: its polarity (``CAN`` or ``CANNOT``: "may not", "is not allowed
to", "prevents", ...; the first one the sentence says, longest first),
flags (``ONLY``: "only", "restricted to", "outside"; ``ONCE``: "once per
turn", "only once each turn"; ``MORE_THAN_ONCE``: "twice", "a second
time", which states the once-per-turn rules only when denied), actions (a manual battle position
change, active or passive, a change to Defense Position, a Flip Summon, an
attack, an attack declaration, the Battle Phase, a replay) and conditions
(summoned or Set this turn, an attack declared, an earlier change, a change
by a card effect, not by the turn player, the first turn, ...), wherever
the sentence puts them (after "if", "when", "unless" or in a relative
clause). A sentence with no action takes those of the sentence before it
in its record, else of its lead-in ("... except in three cases." before
"2. You cannot change it in Main Phase 2 if ..."); a sentence with no
polarity takes its lead-in's ("You cannot change a monster's position
if it:" before "- declared an attack this turn"). A rule is stated when
the features satisfy one of its ``readings`` (:func:`stated_rules`) and no
``blocks`` entry holds: a claim said to be untrue, a hypothetical ("if it
could ..., it would ..."), another game format (Speed Duel, Rush Duel) and,
for the position rules, a Spell or Trap Card with no monster named.

The patterns are strings in the schema (:func:`token_pattern`); nothing of
the text read here becomes code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import TYPE_CHECKING

from .schema import procedural_blocks, procedural_grammar, procedural_rules

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

USER_DATA_KEY = "procedural_features"
_NO_MODAL = "NO_MODAL"
_WILDCARD = re.compile(r"\*(\d+)$")


def token_pattern(text: str, groups: Mapping[str, list[str]]) -> list[dict]:
    """One pattern string of the schema -> a spaCy ``Matcher`` pattern.

    Tokens are separated by spaces: ``word`` (lower-cased form),
    ``a|b|GROUP`` (alternatives; an upper-case name is a word group of
    ``words``), a leading ``?`` (optional), ``*N`` (up to N tokens of any
    kind; above 4, any number within the sentence: spaCy expands ``{0,N}``
    into N optional tokens, whose states cost twice the rulebook's reading). ``token_pattern("CHANGE *4 ?battle POSITION", groups)`` ->
    ``[{"LOWER": {"IN": [...]}}, {"OP": "{0,4}"}, {"LOWER": "battle", "OP": "?"}, {"LOWER": {"IN": [...]}}]``."""
    out: list[dict] = []
    for token in text.split():
        wildcard = _WILDCARD.match(token)
        if wildcard:
            out.append({"OP": "*"} if int(wildcard.group(1)) > 4 else {"OP": f"{{0,{wildcard.group(1)}}}"})
            continue
        optional = token.startswith("?") and len(token) > 1
        words: list[str] = []
        for alt in (token[1:] if optional else token).split("|"):
            words.extend(groups[alt] if alt.isupper() and alt in groups else [alt.lower()])
        spec: dict = {"LOWER": words[0] if len(words) == 1 else {"IN": sorted(set(words))}}
        if optional:
            spec["OP"] = "?"
        out.append(spec)
    return out


def _required_words(pattern: list[dict]) -> list[frozenset[str]]:
    """The word sets of a ``Matcher`` pattern's tokens that are neither
    optional nor wildcards: a text holding no word of one of them cannot match."""
    return [frozenset([spec["LOWER"]] if isinstance(spec["LOWER"], str) else spec["LOWER"]["IN"])
            for spec in pattern if "LOWER" in spec and "OP" not in spec]


def longest_first(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """spaCy's ``greedy="LONGEST"`` filter over the (start, end) matches of
    one key: longest first (the earlier of equal lengths first), each kept
    when none of its tokens is in one kept before; in that order."""
    kept: list[tuple[int, int]] = []
    taken: set[int] = set()
    for start, end in sorted(set(spans), key=lambda x: (x[1] - x[0], -x[0]), reverse=True):
        if taken.isdisjoint(range(start, end)):
            kept.append((start, end))
            taken.update(range(start, end))
    return kept


def _reach(pattern: list[dict]) -> int | None:
    """The most tokens a match of ``pattern`` spans (None: any number, a ``*``)."""
    total = 0
    for spec in pattern:
        op = spec.get("OP")
        if op == "*":
            return None
        total += int(op[3:-1]) if op and op.startswith("{0,") else 1
    return total


@dataclass(frozen=True)
class _Pattern:
    """One pattern of the schema: its feature, a ``Matcher`` holding it
    alone, the word sets of its required tokens (string hashes), the
    narrowest of them (``anchor``: every match holds one of its words) and
    its ``reach`` (:func:`_reach`)."""

    feature: str
    matcher: object
    required: tuple[frozenset[int], ...]
    anchor: frozenset[int]
    reach: int | None


def phrases(pattern: list[dict]) -> list[tuple[str, ...]] | None:
    """The word sequences a pattern without gaps matches (each optional
    token there or not; a pattern that could match nothing at all
    contributes no empty sequence: spaCy drops empty matches), or None
    for a pattern with a gap (``*N``), which a ``Matcher`` reads."""
    options: list[list[str | None]] = []
    for spec in pattern:
        if "LOWER" not in spec or spec.get("OP", "?") != "?":
            return None
        value = spec["LOWER"]
        words = [value] if isinstance(value, str) else list(value["IN"])
        options.append(words + [None] if spec.get("OP") == "?" else words)
    return [seq for combo in product(*options) if (seq := tuple(w for w in combo if w is not None))]


class _Reader:
    """The ``rulings_procedural`` component.

    Patterns without gaps (three in four) are read by one ``PhraseMatcher``
    over lower-cased tokens holding every word sequence they match
    (:func:`phrases`): one pass of each sentence. Each pattern with a gap
    has a ``Matcher`` of its own, run on a sentence only when the sentence
    holds a word of each of the pattern's required tokens
    (:func:`_required_words`), and then only over the tokens a match could
    span (within its ``reach`` of the first and last word of its
    ``anchor``). The matches of a feature's patterns are then filtered as
    one ``Matcher`` with ``greedy="LONGEST"`` filters them
    (:func:`longest_first`).

    The same spans as one ``Matcher`` holding every pattern
    (tests/stages/extract/test_procedural_rules.py), at a fraction of its cost: its ``IN`` sets
    are Python predicates spaCy calls at every token for every pattern."""

    def __init__(self, vocab):
        from spacy.matcher import Matcher, PhraseMatcher
        from spacy.tokens import Doc as SpacyDoc

        grammar = procedural_grammar()
        self._vocab = vocab
        self._features = list(grammar["patterns"])
        self._phrases = PhraseMatcher(vocab, attr="LOWER")
        self._patterns: list[_Pattern] = []
        self._by_word: dict[int, list[int]] = {}  # an anchor's word -> the patterns it is the anchor of
        self._always: list[int] = []  # patterns with no required token (all optional): run on every sentence
        for feature, patterns in grammar["patterns"].items():
            for text in patterns:
                pattern = token_pattern(text, grammar["words"])
                sequences = phrases(pattern)
                if sequences is not None:
                    # a word with a capital never equals a token's lower-cased form, as in the Matcher
                    docs = [SpacyDoc(vocab, words=list(seq)) for seq in sequences if all(w == w.lower() for w in seq)]
                    if docs:
                        self._phrases.add(feature, docs)
                    continue
                matcher = Matcher(vocab)
                matcher.add(feature, [pattern])
                required = tuple(frozenset(vocab.strings.add(w) for w in words) for words in _required_words(pattern))
                anchor = min(required, key=len, default=frozenset())
                self._patterns.append(_Pattern(feature, matcher, required, anchor, _reach(pattern)))
                if not required:
                    self._always.append(len(self._patterns) - 1)
                for word in anchor:
                    self._by_word.setdefault(word, []).append(len(self._patterns) - 1)

    def __call__(self, doc: Doc) -> Doc:
        from spacy.attrs import LOWER

        spans: dict[str, list[tuple[int, int]]] = {}
        for match_id, start, end in self._phrases(doc) if len(self._phrases) else ():
            spans.setdefault(self._vocab.strings[match_id], []).append((start, end))
        first: dict[int, int] = {}  # word (string hash) -> its first and last token
        last: dict[int, int] = {}
        for i, word in enumerate(doc.to_array(LOWER).tolist() if len(doc) else ()):
            first.setdefault(word, i)
            last[word] = i
        words = first.keys()
        candidates = sorted({*self._always, *(i for word in words & self._by_word.keys() for i in self._by_word[word])})
        for i in candidates:
            pattern = self._patterns[i]
            if not all(not words.isdisjoint(r) for r in pattern.required):
                continue
            start, end = 0, len(doc)
            if pattern.reach is not None and pattern.anchor:
                anchors = words & pattern.anchor
                start = max(0, min(first[w] for w in anchors) - pattern.reach + 1)
                end = min(len(doc), max(last[w] for w in anchors) + pattern.reach)
            found = spans.setdefault(pattern.feature, [])
            for _, a, b in pattern.matcher(doc[start:end] if end - start < len(doc) else doc):
                found.append((start + a, start + b))
        doc.user_data[USER_DATA_KEY] = {f: longest_first(spans[f]) for f in self._features if spans.get(f)}
        return doc


def _factory(nlp: Language, name: str) -> _Reader:
    """``rulings_procedural`` (:class:`_Reader`): ``doc.user_data["procedural_features"]``
    gets ``{feature: [(start, end), ...]}`` (token offsets, longest match per place)."""
    return _Reader(nlp.vocab)


def register() -> None:
    """Make the ``rulings_procedural`` factory known to spaCy (once)."""
    from spacy.language import Language

    if not Language.has_factory("rulings_procedural"):
        Language.factory("rulings_procedural", func=_factory)


@lru_cache(maxsize=1)
def trigger_words() -> re.Pattern:
    """Words a record must hold before the matcher reads it (lower-cased text)."""
    return re.compile("|".join(map(re.escape, procedural_grammar()["triggers"])))


@dataclass
class Features:
    """What one sentence says: its polarity (``CAN``, ``CANNOT`` or
    None), and its features (polarity, flags, actions, conditions) by name."""

    polarity: str | None = None
    names: frozenset[str] = frozenset()
    actions: frozenset[str] = field(default_factory=frozenset)


def features(found: Mapping[str, list[tuple[int, int]]]) -> Features:
    """The spans the matcher found in one sentence -> :class:`Features`.

    The polarity is that of the first polarity span (overlapping spans: the
    longest wins, so "may not" is ``CANNOT``, not ``CAN``); an attack word
    inside a position name ("Attack Position") or a condition ("if the
    monster attacked") is no attack action."""
    grammar = procedural_grammar()
    categories = grammar["categories"]
    # "attack more than once" holds "attack ... once": a match overlapping one of a feature that overrides it is dropped
    found = {f: [(s, e) for s, e in where
                 if not any(a < e and s < b for o in grammar["overridden"].get(f, ()) for a, b in found.get(o, ()))]
             for f, where in found.items()}
    spans = sorted(((s, e, f) for f in categories["polarity"] for s, e in found.get(f, ())),
                   key=lambda x: (x[0], -(x[1] - x[0])))
    polarity, taken_end = None, -1
    for start, end, feature in spans:
        if start < taken_end:
            continue
        if feature == _NO_MODAL:
            # "whether or not", "the player whose turn it is not": a negation that is no modality
            taken_end = end
            continue
        polarity = feature
        break
    names = {f for f, where in found.items() if where and f not in categories["polarity"]}
    # "Attack Position" names no attack; in "if it declared an attack" the attack is a condition, not the action.
    positions, conditions = found.get("POSITION_NAME", ()), found.get("ATTACKED", ())
    outside = lambda spans, inside: [(s, e) for s, e in spans  # noqa: E731
                                     if not any(a <= s and e <= b for a, b in inside)]
    if "ATTACK" in names and not outside(found["ATTACK"], positions):
        names.discard("ATTACK")
    actions = {f for f in names & set(categories["actions"]) if outside(found[f], [*positions, *conditions])}
    if polarity:
        names.add(polarity)
    return Features(polarity, frozenset(names), frozenset(actions))


@dataclass(frozen=True)
class _Reading:
    """A reading of a rule or the condition of a block, as sets:
    ``polarity`` (None: any), features ``own`` must hold (``all``), hold
    one of (``any``, when not empty) and hold none of (``none``), and
    features the sentence or its context must hold (``near``)."""

    polarity: str | None
    all: frozenset[str]
    near: frozenset[str]
    any: frozenset[str]
    none: frozenset[str]

    @classmethod
    def of(cls, reading: Mapping) -> _Reading:
        return cls(reading.get("polarity"), *(frozenset(reading.get(k, ())) for k in ("all", "near", "any", "none")))

    def holds(self, own: frozenset[str], near: frozenset[str], polarity: str | None) -> bool:
        return ((self.polarity is None or self.polarity == polarity) and self.all <= own and self.near <= near
                and (not self.any or not self.any.isdisjoint(own)) and self.none.isdisjoint(own))


@lru_cache(maxsize=1)
def _readings() -> tuple[tuple[tuple[_Reading, str], ...], tuple[tuple[str, tuple[_Reading, ...]], ...]]:
    """(each block's condition and the rule prefix it blocks, each rule's id
    and readings in schema order) of ``schema/procedural_rules.json``."""
    return (tuple((_Reading.of(b["when"]), b["rules"]) for b in procedural_blocks()),
            tuple((rule_id, tuple(map(_Reading.of, rule["readings"]))) for rule_id, rule in procedural_rules().items()))


def stated_rules(sentence: Features, previous: Iterable[Features] = (), lead_in: Features | None = None) -> list[str]:
    """The ids of the rules ``sentence`` states, in schema order.

    ``previous``: the sentences before it in its record (nearest last);
    ``lead_in``: the last sentence of the record its list item hangs under.
    A sentence naming no action takes those of the nearest previous sentence
    naming one, else the lead-in's; with no polarity it completes its lead-in
    and takes the lead-in's polarity and actions too.
    ``near`` features of a reading may come from any of them."""
    previous = list(previous)
    own, polarity = set(sentence.names), sentence.polarity
    context = frozenset().union(*(p.names for p in previous), lead_in.names if lead_in else frozenset())
    if not sentence.actions:
        inherited = next((p.actions for p in reversed(previous) if p.actions), None)
        if inherited is None and lead_in is not None:
            inherited = lead_in.actions
        own |= inherited or set()
    if polarity is None and lead_in is not None and lead_in.polarity:
        # a list item with no modal of its own completes its lead-in ("... may not be changed if it:")
        polarity = lead_in.polarity
        own |= {polarity, *lead_in.actions}
    own_f = frozenset(own)
    near = own_f | context
    # a negated or hypothetical claim, another game format, a Spell/Trap Card's position: not these rules
    blocks, rules = _readings()
    blocked = tuple(prefix for when, prefix in blocks if when.holds(frozenset(sentence.names), near, None))
    return [rule_id for rule_id, readings in rules
            if not (blocked and rule_id.startswith(blocked)) and any(r.holds(own_f, near, polarity) for r in readings)]
