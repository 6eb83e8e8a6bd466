"""The Chinese sentence reader: one matched sentence -> the statements it makes.

Takes a sentence's :class:`~pipeline.retention.Term` s, its canonical text
and a :class:`Context` (what the block and section said before) and returns
its :class:`~pipeline.records.Statement` s and the kinds it spoke of (for
the next sentence). It reads the matched terms clause by clause: an
information kind (named, inherited from the previous sentence of the block,
or the section's default unless the clause names a kind the section does not
treat), the events before a verdict word, and the verdict (``kept``,
``lost``, ``not_applicable``; a negator before it says the opposite;
``conditional`` when a ``如果是...`` clause states a condition). Sentences
about what happens "at resolution" (``处理时``) and hypothetical verdicts
(``如果仍然是``) state nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from . import reading
from .dates import TRAILING_DATES
from .orthography import CARD_QUOTE, EXEMPLAR, LETTER, quote_ranges
from .records import Statement
from .retention import (FLIPPED, OUTCOME_TERMS, Term, after_flip, clause_bounds, clause_delimiter, elliptical_words,
                        inside, kinds_after, outcome_verdict, outside_parens, sentence_terms, specific_kinds,
                        subject_of_verdict, without_history)
from .schema import retention_terms

if TYPE_CHECKING:
    from spacy.tokens import Doc


@dataclass
class Context:
    """What a sentence may inherit: the block's last kinds (outside a topic
    section, those of the ruling just before only), the section's last statement."""

    default: str | None
    allowed: frozenset[str]
    block_kinds: list[str] | None = None
    section_last: tuple[list[str], list[str], str] | None = None  # kinds, events, verdict
    strict: bool = False  # outside a topic section: any kind, but only as the verdict's object
    # (kind, event, verdict) stated earlier in the section: the build's own set,
    # read only while the sentence is read (it grows between sentences)
    section_said: Collection[tuple[str, str, str]] = ()
    # kinds the section's heading quotes (『融合召唤的这张卡』): what the effect its rulings are about needs
    heading: frozenset[str] = frozenset()
    # the cards the ruling just before named (with block_kinds, outside a topic section): the same case
    block_cards: frozenset[str] = frozenset()
    # the specific kinds the ruling's previous sentence named: what 这个效果 points back at
    before: tuple[str, ...] = ()


def sentence_statements(doc: Doc, text: str, ctx: Context,
                         all_kinds: list[str]) -> tuple[list[Statement], list[str] | None]:
    """Statements of one sentence (``text``, the text of ``doc``) and the
    kinds it spoke of (for the next sentence)."""
    terms = without_history(sentence_terms(doc, text), text)
    if not any(term in outside_parens(text) for term in retention_terms()["out_of_scope"]):
        return _SentenceReader(text, terms, ctx, all_kinds).read()
    # At resolution time the effect applied to a face-down monster: only what
    # its later flip keeps is a retention (an effect that never applied loses nothing).
    terms = after_flip(terms)
    statements, kinds = _SentenceReader(text, terms, ctx, all_kinds).read() if terms else ([], None)
    return [s for s in statements if s.verdict == "kept"], kinds


class _SentenceReader:
    """Reads a sentence clause by clause (clauses: :func:`clause_bounds`).

    Events gather as *pending* until a verdict word (不再是, 仍然是: the
    kinds named after it, else before it, else the sentence's subject, the
    block's or the section's), an outcome word (仍然可以发动, 不能再发动:
    :func:`_outcome_kinds`) or, in a topic section, a continuity phrase
    (持续…表侧表示) says what became of them. Outside a topic section
    (``ctx.strict``) the kind must be one the ruling names: a verdict's
    object, or a specific kind of its subject (:meth:`_strict_subject`). ``；`` starts a case
    of its own; a condition opener (``如果是…``, ``对于「…」…``) sets the
    condition of what follows."""

    def __init__(self, text: str, terms: list[Term], ctx: Context, all_kinds: list[str]):
        self.t = retention_terms()
        self.text, self.terms, self.ctx = text, terms, ctx
        self.specific = specific_kinds(tuple(all_kinds))
        self.allowed = frozenset(all_kinds) if ctx.strict else (
            ctx.allowed | ({ctx.default} if ctx.default else set()) | self.specific)
        self.every_kind = [k for k in all_kinds if k not in self.t["all_kinds_except"]]
        self.statements: list[Statement] = []
        self.pending: list[str] = []  # events not yet given a verdict
        self.seen_events: list[str] = []
        self.outcome_events: list[str] = []  # the events the last outcome word spoke of
        self.subject: list[str] = []  # kinds named before the first verdict
        self.lead: list[str] = []  # kinds named before the first event: who the ruling is about
        self.named_info: set[str] = set()  # kinds named as information (『攻击过』的情报)
        self.recent: list[str] = []  # the kinds of the last clause that named any
        self.last_kinds: list[str] | None = None
        self.last_verdict: str | None = None
        self.condition = ""
        self.case_from = 0  # where the case being read began: after the last statement made
        self.event_end: dict[str, int] = {}  # event -> end of the clause that last named it
        self.cases: dict[Statement, str] = {}
        self.from_outcome: set[Statement] = set()  # read from an outcome word, not a verdict word
        # the clause being read
        self.kinds_before: list[str] = []
        self.other_kind = False  # it names a kind this section does not treat: it speaks of that one
        self.hypothetical = False
        self.has_verdict = False
        self.clause = (0, 0)

    def read(self) -> tuple[list[Statement], list[str] | None]:
        for a, b in clause_bounds(self.text):
            self._clause(a, b)
        # A verdict word outranks an outcome word on the same kind and event:
        # "…不会再因这个效果送去墓地，不会归还控制权" keeps control.
        said = {(s.info_kind, s.event) for s in self.statements if s not in self.from_outcome}
        statements = [s for s in self.statements if s not in self.from_outcome or (s.info_kind, s.event) not in said]
        statements = _with_cases(statements, self.cases, self._exceptions(statements))
        return [replace(s, reading=self._reading(s)) for s in statements], self.last_kinds

    def _reading(self, s: Statement) -> str:
        """How ``s`` was read (:class:`~pipeline.records.Statement`): from an
        outcome word, or from a verdict word in a ruling on a named card
        (``case``) or on no card (``principle``; cards named as examples of a
        kind, ``「X」等``, name no card ruled on)."""
        if any(s.key[:3] == o.key[:3] for o in self.from_outcome):
            return "outcome"
        # 「X」等 ("X and the like") names an example of a kind of card, not the card ruled on
        return "case" if CARD_QUOTE.search(EXEMPLAR.sub("", self.text)) else "principle"

    def _exceptions(self, statements: list[Statement]) -> set[tuple[str, str]]:
        """The (kind, event) pairs a sentence opening with 但是 states against
        what its section stated before (an exception to it, not a ruling on
        another event: "…变成里侧后不再是P召唤的怪兽。但是，被一时除外后，还是…")."""
        if not self.text.lstrip().startswith(tuple(self.t["exception_openers"])):
            return set()
        return {(s.info_kind, s.event) for s in statements
                if (s.info_kind, s.event, FLIPPED.get(s.verdict)) in self.ctx.section_said}

    def _clause(self, a: int, b: int) -> None:
        if a and self.text[a - 1] in self.t["case_separators"]:
            self.pending, self.outcome_events = [], []  # a case of its own: the events before are not its events
        terms = [x for x in self.terms if a <= x.start and x.end <= b]
        clause_text = self.text[a:b].strip()
        self.has_verdict = any(x.kind in ("VERDICT", "SAME") for x in terms)
        if not self.has_verdict and clause_text.startswith(tuple(self.t["condition_openers"])):
            self.condition = clause_text
            return
        self.kinds_before, self.other_kind, self.hypothetical = [], False, False
        self.clause = (a, b)
        i = 0
        while i < len(terms):
            x = terms[i]
            if x.kind in ("KIND", "KIND*"):
                self._kind(terms, i)
            elif x.kind == "EVENT":
                self._event(x)
            elif x.kind == "HYPO":
                self.hypothetical = True
            elif x.kind == "CONTINUITY":
                self._continuity(x)
            elif x.kind in OUTCOME_TERMS:
                self._outcome(terms, i, b)
            elif x.kind in ("VERDICT", "SAME"):
                i = self._verdict(terms, i, b)
                continue
            i += 1
        self._stated_by_words(terms)
        if not self.last_kinds and self.kinds_before:
            self.subject = list(dict.fromkeys(self.subject + self.kinds_before))
        self.recent = self.kinds_before or self.recent

    def _stated_by_words(self, terms: list[Term]) -> None:
        """A grant's own words after an event, in a clause with no verdict or
        outcome word (``stated_by_words``: 那个怪兽翻开后可以作2次攻击): it still holds."""
        if self.has_verdict or self.hypothetical or not self.pending:
            return
        if any(x.kind in OUTCOME_TERMS for x in terms):
            return
        kinds = [x.value for x in terms if x.kind == "KIND" and x.value in self.t["stated_by_words"]]
        if kinds:
            self._emit(kinds, list(dict.fromkeys(self.pending)), "kept", self.clause[1])
            self.last_kinds, self.last_verdict, self.pending = kinds, "kept", []
            self.case_from = self.clause[1] + 1

    def _emit(self, kinds: list[str], events: list[str], verdict: str, at: int) -> None:
        for k in (self.every_kind if kinds == ["*"] else kinds):
            for e in events:
                s = Statement(k, e, verdict, self.condition)
                if s not in self.statements:
                    self.statements.append(s)
                    self.cases[s] = self.text[self.case_from:min(at, self.event_end.get(e, at))]

    def _kind(self, terms: list[Term], i: int) -> None:
        x = terms[i]
        if x.kind == "KIND*" or x.value in self.allowed or subject_of_verdict(terms, i, self.text):
            self.kinds_before.append(x.value)
            if not self.seen_events:
                self.lead.append(x.value)
            if self._named_as_information(x):
                self.named_info.add(x.value)  # 『攻击过』的情报: the information itself, not a description
        else:
            self.other_kind = True

    def _named_as_information(self, x: Term) -> bool:
        """Whether kind term ``x`` is named as information (``『攻击过』的情报``
        …), the ruling's subject: not a modifier of another noun
        (``持有『攻击过』的情报的怪兽``: the information noun before ``的``)."""
        after = self.text[x.end:x.end + 8].lstrip("』")
        noun = next((n for n in self.t["information_nouns"] if after.startswith(n)), None)
        return noun is not None and not after[len(noun):].startswith("的")

    def _event(self, x: Term) -> None:
        if self.ctx.strict and self.text[x.start:x.end] in self.t["events_in_topics_only"]:
            return
        self.pending.append(x.value)
        self.seen_events.append(x.value)
        self.event_end[x.value] = self.clause[1]

    def _continuity(self, x: Term) -> None:
        """"must stay face-up on the field until…": lost when it does not.
        Only of a kind the ruling names (not the summons listed for the span,
        召唤·特殊召唤·反转召唤到…为止), and not after a negator (不需要持续…)."""
        lead = self.text[self.clause[0]:x.start]
        if self.hypothetical or any(n in lead for n in self.t["negators"]):
            return
        kinds = [k for k in self.kinds_before or self.subject if k in self.specific]
        if kinds:
            events = self.t["continuity_events"]
            self._emit(kinds, events, "lost", x.start)
            self.from_outcome.update(s for s in self.statements if s.event in events)

    def _outcome(self, terms: list[Term], i: int, clause_end: int) -> None:
        """What became of the effect resting on the information, only where
        the clause has no verdict word. Its kind is the one named right after
        it (``不会再转移控制权``), else before (:func:`_outcome_kinds`);
        outside a topic section only a specific kind the ruling names itself
        (:meth:`_strict_outcome_kinds`)."""
        if self.hypothetical or self.has_verdict:
            return
        x, nxt = terms[i], (terms[i + 1] if i + 1 < len(terms) else None)
        if x.kind == "OUTCOME" and nxt is not None and nxt.kind in ("ABILITY", "FREEDOM"):
            return  # 仍然不能发动: the ability word after the adverb says which way
        if x.kind != "OUTCOME" and any(a in self.text[self.clause[0]:x.start] for a in self.t["other_actors"]):
            return  # 对方不能发动效果: another player's, not the monster's
        objects = [y.value for y in kinds_after(terms, i) if y.value in self.specific]
        if self.text[x.start:x.end] in self.t["outcome_objects"] and not objects:
            return  # 正常地回到场上: an adverb, no outcome
        quote = reading.quoted_effect(self.text, x.end, clause_end) if x.kind == "ABILITY" else None
        depends = [y.value for y in terms if quote and y.kind in ("KIND", "KIND*")
                   and quote[0] <= y.start and y.end <= quote[1]
                   and (self.ctx.strict or y.value in self.allowed)]  # 『③：融合召唤的这张卡…』: what it needs
        if not depends and self.ctx.strict and x.kind == "ABILITY" and reading.points_back(self.text, x.end):
            quoted = quote_ranges(self.text, "『", "』")  # 持有『反转的回合』发动的效果…不能再发动这类效果
            depends = [y.value for y in self.terms if y.kind in ("KIND", "KIND*") and y.end <= x.start
                       and inside(quoted, y.start, y.end)]
        if self.ctx.strict:
            named = depends or self._strict_outcome_kinds(objects, x)
            if not named:
                return
        else:
            named = depends or objects or self.kinds_before or self.last_kinds or self.recent or self.subject
        kinds = named if depends else _outcome_kinds(x, named, self.ctx, self.text, clause_end)
        # A flip itself frees a monster to attack: "free" after a flip shows nothing.
        events = [e for e in dict.fromkeys(self.pending) if x.value != "free" or e != "flip_face_up"]
        if not (kinds and events):
            return
        verdicts = {kind: outcome_verdict(x, kind) for kind in kinds}
        for kind in kinds:
            self._emit([kind], events, verdicts[kind], x.start)
            self.from_outcome.update(s for s in self.statements if s.info_kind == kind and s.event in events)
        self.last_kinds, self.last_verdict, self.pending = kinds, verdicts[kinds[0]], []
        self.outcome_events = events  # a verdict word after it may speak of them too
        self.case_from = clause_end + 1  # the next case starts with the next clause

    def _strict_subject(self) -> list[str]:
        """Outside a topic section, the specific kinds a verdict or outcome
        word without an object speaks of: those its clause names before it
        (``原本攻击力复原``: a generic kind, so none), else the ruling's
        subject, named before its first event; a generic kind named as
        information (``『攻击过』的情报``: ``information_nouns``) counts."""
        return [k for k in self.kinds_before or self.lead if k in self.specific or k in self.named_info]

    def _elliptical(self) -> list[str]:
        """Outside a topic section, the kinds of the ruling just before in
        the block (``ctx.block_kinds``, one ruling back) for a sentence that
        is only an event, a verdict word and ``elliptical_words``:
        ``被一时除外的场合丢失。`` after ``『攻击过』的情报在变成里侧表示后不会丢失。``
        goes on speaking of it; ``魔法·陷阱卡被盖放的场合，…不适用`` does not."""
        if not self.ctx.block_kinds or "？" in self.text or "?" in self.text:  # a question states nothing
            return []
        if self._same_case():
            return self.ctx.block_kinds
        rest = self.text
        for t in sorted((t for t in self.terms if t.kind in ("EVENT", "VERDICT")), key=lambda t: -t.start):
            rest = rest[:t.start] + " " + rest[t.end:]
        rest = elliptical_words().sub("", TRAILING_DATES.sub("", rest))
        return self.ctx.block_kinds if not LETTER.search(rest) else []

    def _pointed_back(self) -> list[str]:
        """Outside a topic section, the kinds the ruling's previous sentence
        named (``ctx.before``) when this one points back at its effect
        (``anaphora``: 若这个效果已经适用，再变成里侧的时点不再适用) and names no kind."""
        if not self.ctx.before or any(t.kind in ("KIND", "KIND*") for t in self.terms):
            return []
        return list(self.ctx.before) if any(w in self.text for w in self.t["anaphora"]) else []

    def _same_case(self) -> bool:
        """Whether the sentence goes on with the case of the ruling just
        before in its block: it names cards, every one of them named there
        too (``ctx.block_cards``), and no kind of its own (``「X」的效果特殊召唤的「Y」…
        不再适用。`` then ``「Y」被一时除外的场合，回到场上后也适用。``)."""
        cards = CARD_QUOTE.findall(self.text)
        return (bool(cards) and set(cards) <= self.ctx.block_cards
                and not any(t.kind in ("KIND", "KIND*") for t in self.terms))

    def _strict_outcome_kinds(self, objects: list[str], x: Term | None = None) -> list[str]:
        """Outside a topic section, the kinds an outcome word speaks of: only
        specific kinds the ruling names itself, the one right after it
        (``不会再归还控制权``), else its subject's (named before the event:
        ``自身①效果特殊召唤的「X」被一时除外…``). A granted ability after
        it (``subject_over_object``: ``仍然可以作2次攻击``) yields to a
        subject named by how it was summoned (``「剑斗兽」怪兽的效果特殊召唤的…``:
        the monster's own effect, not a grant). A freedom word speaks of
        the kind it implies (``可以改变表示形式``: :func:`pipeline.reading.implied_kind`),
        else of what stood in the way that the ruling names (``freedom_kinds``:
        ``攻击了的怪兽…可以攻击``) or of its subject."""
        if x is not None and x.kind == "FREEDOM":
            implied = reading.implied_kind(self.text[x.start:x.end], self.text)
            if implied:
                return [implied]
            blocking = [k for k in self.kinds_before or self.lead if k in self.t["freedom_kinds"]]
            if blocking:
                return blocking
        subject = (self._strict_subject() or [k for k in self.kinds_before or self.lead if k in self.ctx.heading]
                   or (self.ctx.block_kinds if self.ctx.block_kinds and self._same_case() else []))
        named = [k for k in objects if k in self.specific]
        if named and subject and set(named) <= set(self.t["subject_over_object"]):
            return subject
        return named or subject

    def _verdict(self, terms: list[Term], i: int, clause_end: int) -> int:
        """A verdict word (or 也一样) at ``terms[i]``; returns the index of
        the first term after its object kinds."""
        x = terms[i]
        # Object kinds: those named after the verdict, up to the next verdict.
        objects: list[str] = []
        j = i + 1
        while j < len(terms) and terms[j].kind not in ("VERDICT", "SAME", "EVENT"):
            y = terms[j]
            if y.kind == "ALL":
                objects = ["*"]
            elif y.kind in ("KIND", "KIND*") and (y.kind == "KIND*" or y.value in self.allowed):
                objects.append(y.value)
            elif y.kind == "KIND":
                self.other_kind = True
            j += 1
        if self.hypothetical:
            return j
        verdict, kinds = self._verdict_kinds(x, objects)
        if x.value == "not_applicable":
            event = self.t["not_applicable_events"].get(self.text[x.start:x.end])
            if verdict and kinds and event:
                self._emit(kinds, [event], verdict, x.start)
            return j
        events = self.pending or self.outcome_events or (
            self.seen_events if objects and objects != self.last_kinds else [])
        if verdict and kinds and events:
            word = self.text[x.start:x.end]
            for kind in (self.every_kind if kinds == ["*"] else kinds):
                scheduled = word in self.t["scheduled_kinds"].get(kind, ())  # "不会归还控制权": it will not happen
                self._emit([kind], list(dict.fromkeys(events)), "lost" if scheduled else verdict, x.start)
            self.last_kinds, self.last_verdict, self.pending, self.outcome_events = kinds, verdict, [], []
            self.case_from = clause_end + 1  # the next case starts with the next clause
        return j

    def _verdict_kinds(self, x: Term, objects: list[str]) -> tuple[str | None, list[str] | None]:
        if x.kind == "SAME":
            if self.last_verdict is None and self.ctx.section_last and self.kinds_before:
                # "等级...也一样复原": the events of the section's last statement.
                self.pending = self.pending or list(self.ctx.section_last[1])
                self.last_verdict = self.ctx.section_last[2]
                self.last_kinds = self.ctx.section_last[0]
            return self.last_verdict, objects or self.kinds_before or self.last_kinds
        if self.ctx.strict:  # "不再是『从墓地特殊召唤的怪兽』": the kind is what is kept or lost
            implied = reading.implied_kind(self.text[x.start:x.end], self.text)
            return x.value, (objects or ([implied] if implied else []) or self._strict_subject() or self._elliptical()
                             or self._pointed_back())
        fallback = [] if self.other_kind else (self.last_kinds or self.subject or self.ctx.block_kinds
                                               or ([self.ctx.default] if self.ctx.default else []))
        # 可以按照自己的意志 in the section 表示形式: the word names the section's kind, whatever monster it is about
        implied = reading.implied_kind(self.text[x.start:x.end], self.text)
        return x.value, objects or ([implied] if implied and implied == self.ctx.default else []) or (
            self.kinds_before or fallback)


def _with_cases(statements: list[Statement], cases: dict[Statement, str],
                exceptions: set[tuple[str, str]]) -> list[Statement]:
    """Statements that hold in a case only take the case's words as their
    condition (unless they state one): those of a sentence that says kept
    and lost of the same kind and event (``在召唤的回合…仍然不能攻击；在反转
    召唤的回合…可以攻击``: compile sees a conditional rule, not a conflict),
    and the ``exceptions`` of a sentence opening with 但是 (basis
    ``exception``: compile lists it, it never overturns the rule)."""
    verdicts: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s in statements:
        verdicts[(s.info_kind, s.event)].add(s.verdict)
    out = []
    for s in statements:
        key = (s.info_kind, s.event)
        if key in exceptions or (len(verdicts[key]) > 1 and not s.condition):
            s = replace(s, condition=s.condition or _case_words(cases[s]),
                        basis="exception" if key in exceptions else s.basis)
        out.append(s)
    return out


def _case_words(case: str) -> str:
    """A case's words as a condition: clause marks as spaces, no opening 但是."""
    words = clause_delimiter().sub(" ", case).strip()
    for opener in retention_terms()["exception_openers"]:
        words = words.removeprefix(opener).strip()
    return words


def _outcome_kinds(x: Term, named: list[str], ctx: Context, text: str, clause_end: int) -> list[str]:
    """The kinds an outcome word speaks of: those the ruling names, else the
    section's default. A freedom (可以攻击) needs a named kind or a
    restricting default (what stood in the way must be known); an ability
    (不能发动) only counts for the monster's own effect: ``效果`` within
    ``ability_object_window`` characters after it, or the clause ending
    within them (``②效果不能发动``, ``可以发动·适用``), not ``不能发动魔法·陷阱卡``."""
    t = retention_terms()
    default = [ctx.default] if ctx.default else ctx.block_kinds or []
    if x.kind == "FREEDOM":
        return named or [k for k in default if k in t["restricting_kinds"]]
    if x.kind == "ABILITY":
        window = t["ability_object_window"] + len(t["ability_object"])
        after = text[x.end:clause_end]
        if len(after) > t["ability_object_window"] and t["ability_object"] not in after[:window]:
            return []
    return named or default

