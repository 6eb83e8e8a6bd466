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
from dataclasses import dataclass, field, replace
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
        return read_sentence(text, terms, ctx, all_kinds)
    # At resolution time the effect applied to a face-down monster: only what
    # its later flip keeps is a retention (an effect that never applied loses nothing).
    terms = after_flip(terms)
    statements, kinds = read_sentence(text, terms, ctx, all_kinds) if terms else ([], None)
    return [s for s in statements if s.verdict == "kept"], kinds


@dataclass(frozen=True)
class Sentence:
    """What is read, unchanged while it is read: a sentence's canonical
    ``text``, its ``terms``, what it may inherit (``ctx``), the words of
    ``schema/retention_terms.json`` (``t``), the specific kinds, the kinds it
    may speak of (``allowed``) and those "every kind" means (``every_kind``)."""

    text: str
    terms: list[Term]
    ctx: Context
    t: dict
    specific: frozenset[str]
    allowed: frozenset[str]
    every_kind: list[str]


@dataclass
class State:
    """What the sentence has said so far, clause after clause: its
    statements, the events waiting for a verdict, the kinds it named, the
    case being read (from ``case_from``, under ``condition``)."""

    statements: list[Statement] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # events not yet given a verdict
    seen_events: list[str] = field(default_factory=list)
    outcome_events: list[str] = field(default_factory=list)  # the events the last outcome word spoke of
    subject: list[str] = field(default_factory=list)  # kinds named before the first verdict
    lead: list[str] = field(default_factory=list)  # kinds named before the first event: who the ruling is about
    named_info: set[str] = field(default_factory=set)  # kinds named as information (『攻击过』的情报)
    recent: list[str] = field(default_factory=list)  # the kinds of the last clause that named any
    last_kinds: list[str] | None = None
    last_verdict: str | None = None
    condition: str = ""
    case_from: int = 0  # where the case being read began: after the last statement made
    event_end: dict[str, int] = field(default_factory=dict)  # event -> end of the clause that last named it
    cases: dict[Statement, str] = field(default_factory=dict)
    from_outcome: set[Statement] = field(default_factory=set)  # read from an outcome word, not a verdict word


@dataclass
class Clause:
    """The clause being read: its ``span``, the kinds it named so far, and
    what it holds (a kind the section does not treat, a supposition, a verdict word)."""

    kinds_before: list[str] = field(default_factory=list)
    other_kind: bool = False  # it names a kind this section does not treat: it speaks of that one
    hypothetical: bool = False
    has_verdict: bool = False
    span: tuple[int, int] = (0, 0)


def read_sentence(text: str, terms: list[Term], ctx: Context,
                  all_kinds: list[str]) -> tuple[list[Statement], list[str] | None]:
    """Reads a sentence clause by clause (clauses: :func:`clause_bounds`);
    returns its statements and the kinds it spoke of last.

    Events gather as *pending* until a verdict word (不再是, 仍然是: the
    kinds named after it, else before it, else the sentence's subject, the
    block's or the section's), an outcome word (仍然可以发动, 不能再发动:
    :func:`_outcome_kinds`) or, in a topic section, a continuity phrase
    (持续…表侧表示) says what became of them. Outside a topic section
    (``ctx.strict``) the kind must be one the ruling names: a verdict's
    object, or a specific kind of its subject (:func:`_strict_subject`). ``；`` starts a case
    of its own; a condition opener (``如果是…``, ``对于「…」…``) sets the
    condition of what follows. One function per term kind (:func:`_kind`,
    :func:`_event`, :func:`_continuity`, :func:`_outcome`, :func:`_verdict`)
    reads it into the :class:`State`."""
    t = retention_terms()
    specific = specific_kinds(tuple(all_kinds))
    allowed = frozenset(all_kinds) if ctx.strict else (ctx.allowed | ({ctx.default} if ctx.default else set())
                                                       | specific)
    sen = Sentence(text, terms, ctx, t, specific, allowed, [k for k in all_kinds if k not in t["all_kinds_except"]])
    st, cl = State(), Clause()
    for a, b in clause_bounds(text):
        _clause(sen, st, cl, a, b)
    # A verdict word outranks an outcome word on the same kind and event:
    # "…不会再因这个效果送去墓地，不会归还控制权" keeps control.
    said = {(s.info_kind, s.event) for s in st.statements if s not in st.from_outcome}
    statements = [s for s in st.statements if s not in st.from_outcome or (s.info_kind, s.event) not in said]
    statements = _with_cases(statements, st.cases, _exceptions(sen, statements))
    return [replace(s, reading=_reading(sen, st, s)) for s in statements], st.last_kinds


def _reading(sen: Sentence, st: State, s: Statement) -> str:
    """How ``s`` was read (:class:`~pipeline.records.Statement`): from an
    outcome word, or from a verdict word in a ruling on a named card
    (``case``) or on no card (``principle``; cards named as examples of a
    kind, ``「X」等``, name no card ruled on)."""
    if any(s.key[:3] == o.key[:3] for o in st.from_outcome):
        return "outcome"
    # 「X」等 ("X and the like") names an example of a kind of card, not the card ruled on
    return "case" if CARD_QUOTE.search(EXEMPLAR.sub("", sen.text)) else "principle"


def _exceptions(sen: Sentence, statements: list[Statement]) -> set[tuple[str, str]]:
    """The (kind, event) pairs a sentence opening with 但是 states against
    what its section stated before (an exception to it, not a ruling on
    another event: "…变成里侧后不再是P召唤的怪兽。但是，被一时除外后，还是…")."""
    if not sen.text.lstrip().startswith(tuple(sen.t["exception_openers"])):
        return set()
    return {(s.info_kind, s.event) for s in statements
            if (s.info_kind, s.event, FLIPPED.get(s.verdict)) in sen.ctx.section_said}


def _clause(sen: Sentence, st: State, cl: Clause, a: int, b: int) -> None:
    if a and sen.text[a - 1] in sen.t["case_separators"]:
        st.pending, st.outcome_events = [], []  # a case of its own: the events before are not its events
    terms = [x for x in sen.terms if a <= x.start and x.end <= b]
    clause_text = sen.text[a:b].strip()
    cl.has_verdict = any(x.kind in ("VERDICT", "SAME") for x in terms)
    if not cl.has_verdict and clause_text.startswith(tuple(sen.t["condition_openers"])):
        st.condition = clause_text
        return
    cl.kinds_before, cl.other_kind, cl.hypothetical = [], False, False
    cl.span = (a, b)
    i = 0
    while i < len(terms):
        x = terms[i]
        if x.kind in ("KIND", "KIND*"):
            _kind(sen, st, cl, terms, i)
        elif x.kind == "EVENT":
            _event(sen, st, cl, x)
        elif x.kind == "HYPO":
            cl.hypothetical = True
        elif x.kind == "CONTINUITY":
            _continuity(sen, st, cl, x)
        elif x.kind in OUTCOME_TERMS:
            _outcome(sen, st, cl, terms, i, b)
        elif x.kind in ("VERDICT", "SAME"):
            i = _verdict(sen, st, cl, terms, i, b)
            continue
        i += 1
    _stated_by_words(sen, st, cl, terms)
    if not st.last_kinds and cl.kinds_before:
        st.subject = list(dict.fromkeys(st.subject + cl.kinds_before))
    st.recent = cl.kinds_before or st.recent


def _stated_by_words(sen: Sentence, st: State, cl: Clause, terms: list[Term]) -> None:
    """A grant's own words after an event, in a clause with no verdict or
    outcome word (``stated_by_words``: 那个怪兽翻开后可以作2次攻击): it still holds."""
    if cl.has_verdict or cl.hypothetical or not st.pending:
        return
    if any(x.kind in OUTCOME_TERMS for x in terms):
        return
    kinds = [x.value for x in terms if x.kind == "KIND" and x.value in sen.t["stated_by_words"]]
    if kinds:
        _emit(sen, st, kinds, list(dict.fromkeys(st.pending)), "kept", cl.span[1])
        st.last_kinds, st.last_verdict, st.pending = kinds, "kept", []
        st.case_from = cl.span[1] + 1


def _emit(sen: Sentence, st: State, kinds: list[str], events: list[str], verdict: str, at: int) -> None:
    for k in (sen.every_kind if kinds == ["*"] else kinds):
        for e in events:
            s = Statement(k, e, verdict, st.condition)
            if s not in st.statements:
                st.statements.append(s)
                st.cases[s] = sen.text[st.case_from:min(at, st.event_end.get(e, at))]


def _kind(sen: Sentence, st: State, cl: Clause, terms: list[Term], i: int) -> None:
    x = terms[i]
    if x.kind == "KIND*" or x.value in sen.allowed or subject_of_verdict(terms, i, sen.text):
        cl.kinds_before.append(x.value)
        if not st.seen_events:
            st.lead.append(x.value)
        if _named_as_information(sen, x):
            st.named_info.add(x.value)  # 『攻击过』的情报: the information itself, not a description
    else:
        cl.other_kind = True


def _named_as_information(sen: Sentence, x: Term) -> bool:
    """Whether kind term ``x`` is named as information (``『攻击过』的情报``
    …), the ruling's subject: not a modifier of another noun
    (``持有『攻击过』的情报的怪兽``: the information noun before ``的``)."""
    after = sen.text[x.end:x.end + 8].lstrip("』")
    noun = next((n for n in sen.t["information_nouns"] if after.startswith(n)), None)
    return noun is not None and not after[len(noun):].startswith("的")


def _event(sen: Sentence, st: State, cl: Clause, x: Term) -> None:
    if sen.ctx.strict and sen.text[x.start:x.end] in sen.t["events_in_topics_only"]:
        return
    st.pending.append(x.value)
    st.seen_events.append(x.value)
    st.event_end[x.value] = cl.span[1]


def _continuity(sen: Sentence, st: State, cl: Clause, x: Term) -> None:
    """"must stay face-up on the field until…": lost when it does not.
    Only of a kind the ruling names (not the summons listed for the span,
    召唤·特殊召唤·反转召唤到…为止), and not after a negator (不需要持续…)."""
    lead = sen.text[cl.span[0]:x.start]
    if cl.hypothetical or any(n in lead for n in sen.t["negators"]):
        return
    kinds = [k for k in cl.kinds_before or st.subject if k in sen.specific]
    if kinds:
        events = sen.t["continuity_events"]
        _emit(sen, st, kinds, events, "lost", x.start)
        st.from_outcome.update(s for s in st.statements if s.event in events)


def _outcome(sen: Sentence, st: State, cl: Clause, terms: list[Term], i: int, clause_end: int) -> None:
    """What became of the effect resting on the information, only where
    the clause has no verdict word. Its kind is the one named right after
    it (``不会再转移控制权``), else before (:func:`_outcome_kinds`);
    outside a topic section only a specific kind the ruling names itself
    (:func:`_strict_outcome_kinds`)."""
    if cl.hypothetical or cl.has_verdict:
        return
    x, nxt = terms[i], (terms[i + 1] if i + 1 < len(terms) else None)
    if x.kind == "OUTCOME" and nxt is not None and nxt.kind in ("ABILITY", "FREEDOM"):
        return  # 仍然不能发动: the ability word after the adverb says which way
    if x.kind != "OUTCOME" and any(a in sen.text[cl.span[0]:x.start] for a in sen.t["other_actors"]):
        return  # 对方不能发动效果: another player's, not the monster's
    objects = [y.value for y in kinds_after(terms, i) if y.value in sen.specific]
    if sen.text[x.start:x.end] in sen.t["outcome_objects"] and not objects:
        return  # 正常地回到场上: an adverb, no outcome
    quote = reading.quoted_effect(sen.text, x.end, clause_end) if x.kind == "ABILITY" else None
    depends = [y.value for y in terms if quote and y.kind in ("KIND", "KIND*")
               and quote[0] <= y.start and y.end <= quote[1]
               and (sen.ctx.strict or y.value in sen.allowed)]  # 『③：融合召唤的这张卡…』: what it needs
    if not depends and sen.ctx.strict and x.kind == "ABILITY" and reading.points_back(sen.text, x.end):
        quoted = quote_ranges(sen.text, "『", "』")  # 持有『反转的回合』发动的效果…不能再发动这类效果
        depends = [y.value for y in sen.terms if y.kind in ("KIND", "KIND*") and y.end <= x.start
                   and inside(quoted, y.start, y.end)]
    if sen.ctx.strict:
        named = depends or _strict_outcome_kinds(sen, st, cl, objects, x)
        if not named:
            return
    else:
        named = depends or objects or cl.kinds_before or st.last_kinds or st.recent or st.subject
    kinds = named if depends else _outcome_kinds(x, named, sen.ctx, sen.text, clause_end)
    # A flip itself frees a monster to attack: "free" after a flip shows nothing.
    events = [e for e in dict.fromkeys(st.pending) if x.value != "free" or e != "flip_face_up"]
    if not (kinds and events):
        return
    verdicts = {kind: outcome_verdict(x, kind) for kind in kinds}
    for kind in kinds:
        _emit(sen, st, [kind], events, verdicts[kind], x.start)
        st.from_outcome.update(s for s in st.statements if s.info_kind == kind and s.event in events)
    st.last_kinds, st.last_verdict, st.pending = kinds, verdicts[kinds[0]], []
    st.outcome_events = events  # a verdict word after it may speak of them too
    st.case_from = clause_end + 1  # the next case starts with the next clause


def _strict_subject(sen: Sentence, st: State, cl: Clause) -> list[str]:
    """Outside a topic section, the specific kinds a verdict or outcome
    word without an object speaks of: those its clause names before it
    (``原本攻击力复原``: a generic kind, so none), else the ruling's
    subject, named before its first event; a generic kind named as
    information (``『攻击过』的情报``: ``information_nouns``) counts."""
    return [k for k in cl.kinds_before or st.lead if k in sen.specific or k in st.named_info]


def _elliptical(sen: Sentence) -> list[str]:
    """Outside a topic section, the kinds of the ruling just before in
    the block (``ctx.block_kinds``, one ruling back) for a sentence that
    is only an event, a verdict word and ``elliptical_words``:
    ``被一时除外的场合丢失。`` after ``『攻击过』的情报在变成里侧表示后不会丢失。``
    goes on speaking of it; ``魔法·陷阱卡被盖放的场合，…不适用`` does not."""
    if not sen.ctx.block_kinds or "？" in sen.text or "?" in sen.text:  # a question states nothing
        return []
    if _same_case(sen):
        return sen.ctx.block_kinds
    rest = sen.text
    for t in sorted((t for t in sen.terms if t.kind in ("EVENT", "VERDICT")), key=lambda t: -t.start):
        rest = rest[:t.start] + " " + rest[t.end:]
    rest = elliptical_words().sub("", TRAILING_DATES.sub("", rest))
    return sen.ctx.block_kinds if not LETTER.search(rest) else []


def _pointed_back(sen: Sentence) -> list[str]:
    """Outside a topic section, the kinds the ruling's previous sentence
    named (``ctx.before``) when this one points back at its effect
    (``anaphora``: 若这个效果已经适用，再变成里侧的时点不再适用) and names no kind."""
    if not sen.ctx.before or any(t.kind in ("KIND", "KIND*") for t in sen.terms):
        return []
    return list(sen.ctx.before) if any(w in sen.text for w in sen.t["anaphora"]) else []


def _same_case(sen: Sentence) -> bool:
    """Whether the sentence goes on with the case of the ruling just
    before in its block: it names cards, every one of them named there
    too (``ctx.block_cards``), and no kind of its own (``「X」的效果特殊召唤的「Y」…
    不再适用。`` then ``「Y」被一时除外的场合，回到场上后也适用。``)."""
    cards = CARD_QUOTE.findall(sen.text)
    return (bool(cards) and set(cards) <= sen.ctx.block_cards
            and not any(t.kind in ("KIND", "KIND*") for t in sen.terms))


def _strict_outcome_kinds(sen: Sentence, st: State, cl: Clause, objects: list[str],
                          x: Term | None = None) -> list[str]:
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
        implied = reading.implied_kind(sen.text[x.start:x.end], sen.text)
        if implied:
            return [implied]
        blocking = [k for k in cl.kinds_before or st.lead if k in sen.t["freedom_kinds"]]
        if blocking:
            return blocking
    subject = (_strict_subject(sen, st, cl) or [k for k in cl.kinds_before or st.lead if k in sen.ctx.heading]
               or (sen.ctx.block_kinds if sen.ctx.block_kinds and _same_case(sen) else []))
    named = [k for k in objects if k in sen.specific]
    if named and subject and set(named) <= set(sen.t["subject_over_object"]):
        return subject
    return named or subject


def _verdict(sen: Sentence, st: State, cl: Clause, terms: list[Term], i: int, clause_end: int) -> int:
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
        elif y.kind in ("KIND", "KIND*") and (y.kind == "KIND*" or y.value in sen.allowed):
            objects.append(y.value)
        elif y.kind == "KIND":
            cl.other_kind = True
        j += 1
    if cl.hypothetical:
        return j
    verdict, kinds = _verdict_kinds(sen, st, cl, x, objects)
    if x.value == "not_applicable":
        event = sen.t["not_applicable_events"].get(sen.text[x.start:x.end])
        if verdict and kinds and event:
            _emit(sen, st, kinds, [event], verdict, x.start)
        return j
    events = st.pending or st.outcome_events or (
        st.seen_events if objects and objects != st.last_kinds else [])
    if verdict and kinds and events:
        word = sen.text[x.start:x.end]
        for kind in (sen.every_kind if kinds == ["*"] else kinds):
            scheduled = word in sen.t["scheduled_kinds"].get(kind, ())  # "不会归还控制权": it will not happen
            _emit(sen, st, [kind], list(dict.fromkeys(events)), "lost" if scheduled else verdict, x.start)
        st.last_kinds, st.last_verdict, st.pending, st.outcome_events = kinds, verdict, [], []
        st.case_from = clause_end + 1  # the next case starts with the next clause
    return j


def _verdict_kinds(sen: Sentence, st: State, cl: Clause, x: Term,
                   objects: list[str]) -> tuple[str | None, list[str] | None]:
    if x.kind == "SAME":
        if st.last_verdict is None and sen.ctx.section_last and cl.kinds_before:
            # "等级...也一样复原": the events of the section's last statement.
            st.pending = st.pending or list(sen.ctx.section_last[1])
            st.last_verdict = sen.ctx.section_last[2]
            st.last_kinds = sen.ctx.section_last[0]
        return st.last_verdict, objects or cl.kinds_before or st.last_kinds
    if sen.ctx.strict:  # "不再是『从墓地特殊召唤的怪兽』": the kind is what is kept or lost
        implied = reading.implied_kind(sen.text[x.start:x.end], sen.text)
        return x.value, (objects or ([implied] if implied else []) or _strict_subject(sen, st, cl)
                         or _elliptical(sen) or _pointed_back(sen))
    fallback = [] if cl.other_kind else (st.last_kinds or st.subject or sen.ctx.block_kinds
                                         or ([sen.ctx.default] if sen.ctx.default else []))
    # 可以按照自己的意志 in the section 表示形式: the word names the section's kind, whatever monster it is about
    implied = reading.implied_kind(sen.text[x.start:x.end], sen.text)
    return x.value, objects or ([implied] if implied and implied == sen.ctx.default else []) or (
        cl.kinds_before or fallback)


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
