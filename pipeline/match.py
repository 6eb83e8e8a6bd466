"""Extract pass 3, match: :class:`~pipeline.annotate.Annotated` rulings -> :class:`MatchedRuling` s (spaCy).

Takes the annotated rulings of one page and returns each with the
sentences the statement readers read (a :class:`Matched` each: the spaCy
doc of its canonical text, whether it is struck through, its range in the
ruling; None for a ruling nothing can be read from) and the procedural
rules it states. Terms are
matched the way spaCy's rule-based components do it (blank pipelines, no
model download), sentence by sentence and only on the rulings that can
state something, batched through ``nlp.pipe``:

* ``rulings_retention`` (Chinese, rulings of a retention topic section of
  ``schema/retention_terms.json`` or naming its words; English rulings
  naming a retention term): a ``SpanRuler`` over its term lists ->
  ``doc.spans["retention"]``;
* ``rulings_procedural`` (English rulings naming a trigger word): a
  ``Matcher`` over the token patterns of ``schema/procedural_rules.json``
  -> ``doc.user_data["procedural_features"]``, read into rule ids by
  :func:`procedural_rules` (a list item with its lead-in).

:func:`match_card_rulings` matches, for the card_text statements only, the
Chinese rulings :func:`match` left that cite a card's numbered effect.
Raises :class:`~pipeline.errors.ExtractError` naming the block for a ruling
over spaCy's length limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from . import procedural
from .annotate import Annotated
from .errors import ExtractError
from .orthography import alternation
from .records import CardMention, Ruling, Sentence
from .schema import retention_terms, retention_terms_en
from . import retention

if TYPE_CHECKING:  # spaCy is imported when the first pipeline is made (see pipeline_for)
    from spacy.language import Language
    from spacy.tokens import Doc


@dataclass(slots=True)  # slots and positional, as Annotated (pipeline.annotate)
class Matched:
    """One sentence of a ruling as matched: its spaCy doc, its canonical
    text (the doc's text), whether it is struck through, its range in the ruling."""

    doc: Doc
    norm: str
    struck: bool
    start: int
    end: int


Matches = list[tuple[Matched, ...] | None]


@dataclass(slots=True)  # slots and positional, as Annotated (pipeline.annotate)
class MatchedRuling:
    """An annotated ruling and what the match pass gives it: the sentences
    the statement reader reads (None: nothing to read), those the card_text
    readers read (Chinese: the same, or those :func:`match_card_rulings`
    matched for them only; English: None), and the procedural rule ids it
    states (English)."""

    annotated: Annotated
    sentences: tuple[Matched, ...] | None
    card_sentences: tuple[Matched, ...] | None
    procedural: tuple[str, ...]


def match_page(annotated: list[Annotated], language: str) -> list[MatchedRuling]:
    """The pass: :func:`match` the rulings, then the card rulings left
    (Chinese: :func:`match_card_rulings`, by their card mentions) and the
    procedural rules (English: :func:`procedural_rules`)."""
    rulings = [a.ruling for a in annotated]
    sentences = match(rulings, language)
    if language == "zh":
        card_sentences = match_card_rulings(rulings, [a.cards for a in annotated], sentences)
        procedural_ids = [()] * len(rulings)
    else:
        card_sentences, procedural_ids = [None] * len(rulings), procedural_rules(rulings, sentences)
    # annotated, sentences, card_sentences, procedural
    return [MatchedRuling(*row) for row in zip(annotated, sentences, card_sentences, procedural_ids)]


# --------------------------------------------------------------------------- spaCy components

def _retention_patterns() -> list[dict]:
    t = retention_terms()
    patterns = []
    for kind, terms in t["kinds"].items():
        patterns += [{"label": f"KIND|{kind}", "pattern": term} for term in terms]
    for kind, terms in t["kinds_anywhere"].items():
        patterns += [{"label": f"KIND*|{kind}", "pattern": term} for term in terms]
    for event, terms in t["events"].items():
        patterns += [{"label": f"EVENT|{event}", "pattern": term} for term in terms]
    for verdict, terms in t["verdicts"].items():
        patterns += [{"label": f"VERDICT|{verdict}", "pattern": term} for term in terms]
    for key, label in (("outcomes", "OUTCOME"), ("abilities", "ABILITY"), ("freedoms", "FREEDOM")):
        for value, terms in t[key].items():
            patterns += [{"label": f"{label}|{value}", "pattern": term} for term in terms]
    for key, label in (("sequel", "SEQUEL"), ("same", "SAME"), ("all_kinds", "ALL"),
                       ("hypothetical", "HYPO"), ("out_of_scope", "SCOPE"), ("continuity", "CONTINUITY"),
                       ("neutral", "NONE")):
        patterns += [{"label": label, "pattern": term} for term in t[key]]
    return patterns


def _retention_patterns_en() -> list[dict]:
    t = retention_terms_en()
    return [{"label": f"{label}|{key}", "pattern": phrase}
            for section, label in (("kinds", "KIND"), ("events", "EVENT"), ("verdicts", "VERDICT"))
            for key, phrases in t[section].items() for phrase in phrases]


# "Normal / Flip / Tribute Summoned", "Gemini or Flip Summoned": one "X Summoned" per word.
_COORDINATED_SUMMONS = re.compile(r"\b((?:[A-Z][a-z]+\s*(?:/|,|\bor\b|\band\b)\s*)+)([A-Z][a-z]+) Summoned\b")


def expand_coordination(text: str) -> str:
    """English summon words coordinated before one 'Summoned', each made a
    phrase of its own: 'Normal / Flip Summoned' -> 'Normal Summoned / Flip Summoned'."""
    def expand(m: re.Match) -> str:
        words = re.findall(r"[A-Z][a-z]+", m.group(1)) + [m.group(2)]
        return " / ".join(f"{w} Summoned" for w in words)
    return _COORDINATED_SUMMONS.sub(expand, text)


RETENTION = "rulings_retention"  # the component's factory and pipe name
CHAR_TOKENIZER = "rulings.char_tokenizer.v1"  # the Chinese pipeline's tokenizer in spaCy's registry
SPANS_KEY = "retention"  # doc.spans[SPANS_KEY]: the retention terms found


def register() -> None:
    """Make the rulings components known to spaCy (once): the tokenizer
    ``rulings.char_tokenizer.v1`` (:class:`CharTokenizer`), ``rulings_retention``
    (:func:`retention_ruler`) and ``rulings_procedural`` (:mod:`pipeline.procedural`)."""
    from spacy.language import Language
    from spacy.util import registry

    procedural.register()
    if not Language.has_factory(RETENTION):  # both at once: registered together
        registry.tokenizers.register(CHAR_TOKENIZER, func=lambda: lambda nlp: CharTokenizer(nlp.vocab))
        Language.factory(RETENTION, default_config={"terms": "zh"}, assigns=["doc.spans"],
                         func=retention_ruler)


def retention_ruler(nlp: Language, name: str, terms: str):
    """The ``rulings_retention`` component: a ``SpanRuler`` over the term
    lists of ``schema/retention_terms.json`` (``terms`` ``zh``: as written,
    character by character) or ``retention_terms_en.json`` (``en``: lower
    case), labels ``KIND|id``, ``EVENT|id``, ``VERDICT|id`` ... into
    ``doc.spans["retention"]``."""
    from spacy.pipeline import SpanRuler

    ruler = SpanRuler(nlp, name, spans_key=SPANS_KEY, phrase_matcher_attr="ORTH" if terms == "zh" else "LOWER",
                      validate=False, overwrite=True)
    ruler.add_patterns(_retention_patterns() if terms == "zh" else _retention_patterns_en())
    return ruler


@lru_cache(maxsize=None)
def pipeline_for(language: str) -> Language:
    """The blank spaCy pipeline for ``zh`` (character tokens: :class:`CharTokenizer`,
    then ``rulings_retention``) or ``en`` (``rulings_procedural``, then ``rulings_retention``).

    spaCy is imported here, not at the top of the module: it takes about
    1.5 s, and the commands that never extract (``ask``, ``sql``, a refresh
    that finds nothing changed) must not pay for it."""
    import spacy

    register()
    if language == "zh":
        nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"@tokenizers": CHAR_TOKENIZER}}})
        nlp.add_pipe(RETENTION, config={"terms": "zh"})
    else:
        nlp = spacy.blank("en")
        nlp.add_pipe("rulings_procedural")
        nlp.add_pipe(RETENTION, config={"terms": "en"})
    return nlp


# One token per non-space character, a single space after it kept as its
# trailing space, any other whitespace run a token of its own.
_CHAR_TOKEN = re.compile(r"(\S)( ?)|(\s+)")


class CharTokenizer:
    """spaCy's Chinese ``char`` tokenizer: the same tokens and spaces, with
    the whitespace aligned by one regex pass instead of
    ``spacy.util.get_words_and_spaces`` (a Python loop that slices the text
    at every character: a tenth of extract's time on a yearly log)."""

    def __init__(self, vocab):
        from spacy.tokens import Doc as SpacyDoc  # spaCy is loaded: a pipeline is being made

        self.vocab, self._doc = vocab, SpacyDoc

    def __call__(self, text: str) -> Doc:
        words, spaces = [], []
        for char, space, run in _CHAR_TOKEN.findall(text):
            words.append(char or run)
            spaces.append(space == " ")
        return self._doc(self.vocab, words=words, spaces=spaces)


# --------------------------------------------------------------------------- which rulings

@lru_cache(maxsize=1)
def _english_retention_words() -> re.Pattern:
    t = retention_terms_en()
    return re.compile(alternation([p for section in ("kinds", "events", "verdicts")
                                   for phrases in t[section].values() for p in phrases]))


def needs_matching(ruling: Ruling, language: str) -> bool:
    """Whether the spaCy matchers can find anything the ruling uses: a
    Chinese ruling in a retention topic section (only those state
    something), an English ruling naming a retention term or a word the
    procedural reader starts from (``triggers``: a superset of what it reads)."""
    if language == "zh":
        # through the module: tests read a page without its topics, or with a wider gate
        return (retention.section_config(ruling.norm_section or ruling.section) is not None
                or retention.speaks_of_retention(ruling.norm, example=ruling.role == "example"))
    lowered = ruling.norm.lower()
    if _english_retention_words().search(expand_coordination(ruling.norm).lower()):
        return True
    return procedural.trigger_words().search(lowered) is not None


# --------------------------------------------------------------------------- the pass

def _sentence_jobs(ruling: Ruling, i: int, language: str) -> list[tuple[int, Matched]]:
    """(index, sentence without its doc yet) for each sentence of ``ruling``
    (its canonical text as segment found it; English summons coordinated
    before one 'Summoned' expanded: :func:`expand_coordination`)."""
    jobs = []
    for s in ruling.sentences or (Sentence(0, len(ruling.text), ruling.norm),):
        norm = expand_coordination(s.norm) if language != "zh" else s.norm
        jobs.append((i, Matched(None, norm, s.struck, s.start, s.end)))  # doc (in _piped), norm, struck, start, end
    return jobs


def _piped(jobs: list[tuple[int, Matched]], nlp: Language, out: Matches) -> Matches:
    """``out`` with the sentences of ``jobs`` run through ``nlp`` (batched), appended per ruling."""
    grouped: dict[int, list[Matched]] = {}
    for (i, sentence), doc in zip(jobs, nlp.pipe((sentence.norm for _, sentence in jobs), batch_size=256)):
        # doc, norm, struck, start, end
        grouped.setdefault(i, []).append(Matched(doc, sentence.norm, sentence.struck, sentence.start, sentence.end))
    for i, sentences in grouped.items():
        out[i] = (out[i] or ()) + tuple(sentences)
    return out


def match(rulings: list[Ruling], language: str) -> Matches:
    """Per ruling, its matched sentences, or None where no matching was
    needed (:func:`needs_matching`; an English list item is matched when
    its lead-in is). Raises ExtractError naming the block for a ruling over
    spaCy's length limit."""
    nlp = pipeline_for("zh" if language == "zh" else "en")
    for ruling in rulings:  # every ruling, matched or not: the limit bounds what a page can store
        if len(ruling.norm) > nlp.max_length:
            raise ExtractError(f"a ruling of {len(ruling.norm)} characters is over the limit of {nlp.max_length}",
                               source_id=ruling.source_id,
                               place=f"block {ruling.block} (section {' / '.join(ruling.section) or '-'})")
    jobs: list[tuple[int, Matched]] = []
    matched: set[str] = set()
    for i, ruling in enumerate(rulings):
        # an English list item is read with its lead-in ("... may not be changed manually:" before
        # "- in the turn in which the turn player Summoned or Set it."), whatever words it uses
        if needs_matching(ruling, language) or (language != "zh" and ruling.parent_id in matched):
            matched.add(ruling.id)
            jobs += _sentence_jobs(ruling, i, language)
    return _piped(jobs, nlp, [None] * len(rulings))


def match_card_rulings(rulings: list[Ruling], cards: list[tuple[CardMention, ...]], matches: Matches) -> Matches:
    """``matches`` with the sentences of the Chinese rulings :func:`match`
    left unmatched that name an event and cite a card's numbered effect
    (:func:`pipeline.cardrulings.cites_an_effect`) or deny one in their
    words (:func:`pipeline.carddenials.may_deny`; ``cards``: each ruling's
    card mentions): read for the card_text statements only, so the
    statement reader's input stays as it was."""
    from .cardrulings import cites_an_effect
    from .carddenials import may_deny

    events_ = retention.retention_words()[0]
    link, texts = _card_lookup()

    def card_ruling(ruling: Ruling, named: tuple[CardMention, ...]) -> bool:
        return cites_an_effect(ruling.norm) or (texts is not None and may_deny(
            ruling.norm, [c.norm_name or c.name for c in named if c.kind == "card"], link, texts))

    picked = [i for i, (r, m) in enumerate(zip(rulings, matches))
              if m is None and events_.search(r.norm) and card_ruling(r, cards[i])]
    if not picked:
        return matches
    jobs = [job for i in picked for job in _sentence_jobs(rulings[i], i, "zh")]
    return _piped(jobs, pipeline_for("zh"), list(matches))


def _card_lookup() -> tuple:
    """(name -> passcode, card texts by passcode) for reading card rulings;
    (None, None) without card texts."""
    from .cardtext import card_texts
    texts = card_texts()
    if not texts:
        return None, None
    from .cards import card_index
    index = card_index()
    return (lambda name: index.link(name).passcode), texts


def procedural_rules(rulings: list[Ruling], matches: Matches) -> list[tuple[str, ...]]:
    """The procedural rules each English ruling states
    (:func:`pipeline.procedural.stated_rules`), sentence by sentence, a list
    item read with its lead-in (its ``parent_id``); struck sentences state nothing."""
    last_sentence: dict[str, procedural.Features] = {}
    out: list[tuple[str, ...]] = []
    for ruling, sentences in zip(rulings, matches):
        rules: list[str] = []
        out.append(())
        if sentences is None:
            continue
        lead_in = last_sentence.get(ruling.parent_id) if ruling.parent_id else None
        seen: list[procedural.Features] = []
        for sentence in sentences:
            feats = procedural.features(sentence.doc.user_data.get(procedural.USER_DATA_KEY, {}))
            if not sentence.struck:
                for rule_id in procedural.stated_rules(feats, seen, lead_in):
                    if rule_id not in rules:
                        rules.append(rule_id)
            seen.append(feats)
        out[-1] = tuple(rules)
        if seen:
            last_sentence[ruling.id] = seen[-1]
    return out
