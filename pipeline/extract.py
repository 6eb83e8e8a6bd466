"""Stage 2, extract: :class:`~pipeline.normalize.Page` -> ruling :class:`~pipeline.records.Record` s.

A record is one ruling as the page writes it (a line, paragraph, list item's
own text or table row) with all its sentences, its section path, its dates
(own stamps and FAQ links; dates it refers to marked ``reference``), the
cards it names, its status (a struck part is ``withdrawn``) and what it
states. Dates and card names are found by their regular expressions
(:mod:`pipeline.dates`, ``CARD_QUOTE``) in the original text, so their
offsets match the page's links. Terms are matched the way spaCy's rule-based
components do it (blank pipelines, no model download), sentence by sentence
and only on the records that can state something, batched through ``nlp.pipe``:

* ``rulings_retention`` (Chinese, records of a retention topic section of
  ``schema/retention_terms.json``): a ``SpanRuler`` over its term lists ->
  ``doc.spans["retention"]``;
* ``rulings_procedural`` (English records naming a trigger word): a
  ``Matcher`` over the token patterns of ``schema/procedural_rules.json``
  -> ``doc.user_data["procedural_features"]``, read into rule ids by
  :mod:`pipeline.procedural` (a list item with its lead-in).

:func:`resolve_statements` then reads the matched terms clause by clause:
an information kind (named, inherited from the previous sentence of the block,
or the section's default unless the clause names a kind the section does not
treat), the events before a verdict word, and the verdict (``kept``, ``lost``,
``not_applicable``; a negator before it says the opposite; ``conditional``
when a ``如果是...`` clause states a condition). Sentences about what happens
"at resolution" (``处理时``) and hypothetical verdicts (``如果仍然是``) state
nothing. An example (after ``例：``, naming a card) states what its own words
show and supports the principle before it only on the events it names; each
statement carries the dates of the sentence that makes it.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from .cards import card_index
from .chinese import canonical_text, name_key, to_simplified
from .dates import RulingDate, find_dates, heading_date, mark_references
from .errors import ExtractError
from .normalize import LETTER, Line, Page, is_title, reference_words, stamp_only, stamps_lead
from .pagemarkers import alternation, bare_label, label_line
from . import exams, procedural, reading
from .records import CardMention, Record, Statement, unnumbered
from .schema import channel_labels, markers, retention_terms, retention_terms_en

if TYPE_CHECKING:  # spaCy is imported when the first pipeline is made (see pipeline_for)
    from spacy.language import Language
    from spacy.tokens import Doc

CARD_QUOTE = re.compile(r"「([^「」]{1,80})」")
EXEMPLAR = re.compile(r"「[^「」]{1,80}」等")  # 「神影依·米德拉什」等效果: cards named as examples of a kind
OTHER_QUOTES = re.compile(r"“([^“”]{1,60})”|《([^《》]{1,60})》")
# Quotes that name game terms but never cards (『』 quotes effect text and information: 『攻击过』).
TERM_QUOTES = re.compile(r"『([^『』]{1,60})』|\"([^\"\n]{1,60})\"")
FAQ_ID = re.compile(r"[?&]fid=(\d+)")
TRAILING_DATES = re.compile(r"(?:\s*\d{1,2}([/.\-])\d{1,2}\1\d{1,2}(?![\d/]|[.\-]\d))+")
ZH_SENTENCE_MARKS = re.compile(r"[（()）。！？「」『』]")
EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”')\]]?\s+(?=[A-Z\"“(\[])")


# --------------------------------------------------------------------------- markers (schema/markers.json)

@lru_cache(maxsize=1)
def example_prefix() -> re.Pattern:
    """An example label opening a line (``例：「月之书」…``)."""
    return re.compile(rf"^\s*({alternation(markers()['example_prefixes'])})\s*[：:]\s*(?=\S)", re.I)


@lru_cache(maxsize=1)
def _channel_line() -> re.Pattern:
    return re.compile(rf"^\s*({alternation(list(channel_labels()))})\s*[：:]?\s*$", re.I)  # a label alone: no colon needed


@lru_cache(maxsize=1)
def _pending_pattern() -> re.Pattern:
    """A pending marker (``调整中``) not followed by one of its answer
    suffixes (``调整中确认``: the answer to a question that was under review)."""
    m = markers()
    answered = alternation(m["answered_suffixes"])
    return re.compile(rf"(?:{alternation(m['pending_markers'])})(?!{answered})")


@lru_cache(maxsize=1)
def _pending_markers() -> tuple[str, ...]:
    return tuple(markers()["pending_markers"])


def _pending(sentence: str) -> bool:
    # The pattern needs one of the markers as written: a substring test each (0.2 µs in all, where
    # the pattern's scan takes 0.8 µs) spares most sentences that scan.
    for marker in _pending_markers():
        if marker in sentence:
            return _pending_pattern().search(sentence) is not None
    return False


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


# --------------------------------------------------------------------------- spaCy components

@lru_cache(maxsize=None)
def pipeline_for(language: str) -> Language:
    """The blank spaCy pipeline for ``zh`` (character tokens) or ``en``.

    spaCy is imported here, not at the top of the module: it takes about
    1.5 s, and the commands that never extract (``ask``, ``sql``, a refresh
    that finds nothing changed) must not pay for it."""
    import spacy

    procedural.register()
    if language == "zh":
        nlp = spacy.blank("zh")
        nlp.tokenizer = CharTokenizer(nlp.vocab)
        ruler = nlp.add_pipe("span_ruler", name="rulings_retention",
                             config={"spans_key": "retention", "phrase_matcher_attr": "ORTH", "validate": False})
        ruler.add_patterns(_retention_patterns())
    else:
        nlp = spacy.blank("en")
        nlp.add_pipe("rulings_procedural")
        ruler = nlp.add_pipe("span_ruler", name="rulings_retention",
                             config={"spans_key": "retention", "phrase_matcher_attr": "LOWER", "validate": False})
        ruler.add_patterns(_retention_patterns_en())
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


# --------------------------------------------------------------------------- segmentation

def _merge_continued(lines: list[Line]) -> list[Line]:
    """Join a line ending in a comma with the next one (one sentence across
    lines), and a line of date stamps alone with the ruling it dates (see
    :func:`_dates_first`); drop lines with no word and no date (page
    numbers, bullets, stray marks)."""
    kept = [(line, stamp_only(line.text)) for line in lines]
    kept = [(line, stamp) for line, stamp in kept if not stamp or find_dates(line.text)]
    date_first = _dates_first(kept)
    out: list[Line] = []
    held: Line | None = None  # a stamp waiting for the ruling after it
    for line, stamp in kept:
        if stamp and (date_first or not out):  # before its ruling, or before the block's first one
            held = _joined(held, line, " ") if held else line
            continue
        if held is not None:
            line, held = _joined(held, line, " "), None
        if out and (out[-1].text.endswith(("，", "、", ",")) or stamp):
            glue = " " if stamp else ""  # a stamp alone stays apart from the text it dates
            out.append(_joined(out.pop(), line, glue))
        else:
            out.append(line)
    if held is not None:  # a stamp after the block's last ruling: it dates that one
        out.append(_joined(out.pop(), held, " ") if out else held)
    return out


def _dates_first(kept: list[tuple[Line, bool]]) -> bool:
    """Whether a block's stamps alone (``kept``: its lines, each with
    whether it is one) stand before the rulings they date: :func:`stamps_lead`."""
    stamps = [line.text for line, stamp in kept if stamp]
    if not stamps:
        return False
    opens = kept[0][1] or (len(kept) > 1 and kept[1][1] and is_title(kept[0][0].text))
    return stamps_lead(opens, kept[-1][1], stamps)


def _joined(first: Line, second: Line, glue: str) -> Line:
    """``first`` and ``second`` as one line, ``glue`` between them."""
    shift = len(first.text) + len(glue)
    return Line(first.text + glue + second.text,
                first.struck + tuple((a + shift, b + shift) for a, b in second.struck),
                first.links + tuple(type(l)(l.start + shift, l.end + shift, l.href) for l in second.links))


def split_sentences(text: str, language: str) -> list[tuple[int, int]]:
    """Character ranges of the sentences of a line; trailing dates stay with
    their sentence, 。！？ inside （）, 「」 or 『』 do not end a sentence
    (「强韧！」 is a card name), and a parenthesis right after a sentence end
    stays with it."""
    if language != "zh":
        spans, start = [], 0
        for m in EN_SENTENCE_END.finditer(text):
            spans.append((start, m.start() + len(m.group(0).rstrip())))
            start = m.end()
        spans.append((start, len(text)))
        return [(a, b) for a, b in spans if text[a:b].strip()]
    if _one_sentence(text):
        return [(len(text) - len(text.lstrip()), len(text))] if text.strip() else []
    spans, start, depth, quoted = [], 0, 0, 0
    # Jump between the characters that matter (brackets, quotes, sentence ends).
    for m in ZH_SENTENCE_MARKS.finditer(text):
        i, ch = m.start(), m.group(0)
        if i < start:  # inside trailing dates already taken into a sentence
            continue
        if ch in "「『":
            quoted += 1
            continue
        if ch in "」』":
            quoted = max(0, quoted - 1)
            continue
        if quoted:
            continue
        if ch in "（(":
            depth += 1
        elif ch in "）)":
            depth = max(0, depth - 1)
        # A parenthesis right after a sentence end belongs to that sentence.
        if (ch in "。！？" and depth == 0 and text[i + 1:i + 2] not in ("（", "(")) or (
                ch in "）)" and depth == 0 and text[i - 1:i] in ("。", "！", "？")):
            end = i + 1
            dates = TRAILING_DATES.match(text, end)
            if dates:
                end = dates.end()
            spans.append((start, end))
            start = end
    if text[start:].strip():
        spans.append((start, len(text)))
    return [(a + (len(text[a:b]) - len(text[a:b].lstrip())), b) for a, b in spans if text[a:b].strip()]


def _one_sentence(text: str) -> bool:
    """Whether ``text`` is surely one Chinese sentence: no sentence end but
    the last one, followed by nothing or by dates only. Most rulings are;
    :func:`split_sentences` then skips its walk over brackets and quotes."""
    ends = text.count("。") + text.count("！") + text.count("？")
    if ends == 0:
        return True
    if ends > 1:
        return False
    after = max(text.rfind("。"), text.rfind("！"), text.rfind("？")) + 1
    if after == len(text):
        return True
    dates = TRAILING_DATES.match(text, after)
    return dates is not None and dates.end() == len(text)


def record_id(source_id: str, section: tuple[str, ...], norm: str, occurrence: int) -> str:
    """Stable id from source, section path and normalized text (not row order).
    ``segment`` passes the canonical section path, so the script of the headings
    does not change a record's id."""
    key = "\x1f".join((source_id, "/".join(section), norm, str(occurrence)))
    return "r" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:15]


class _StruckShare:
    """Share of the non-space characters of ``text[a:b]`` that are struck
    through, for any range in constant time (prefix sums built once in time
    linear in the text: a paragraph of thousands of struck spans stays linear)."""

    def __init__(self, text: str, struck):
        n = len(text)
        opens, closes = [0] * (n + 1), [0] * (n + 1)  # ranges starting / ending at each position
        for s, e in struck:
            opens[min(s, n)] += 1
            closes[min(e, n)] += 1
        self.chars, self.hit = [0] * (n + 1), [0] * (n + 1)
        depth = 0
        for i, ch in enumerate(text):
            depth += opens[i] - closes[i]
            solid = not ch.isspace()
            self.chars[i + 1] = self.chars[i] + solid
            self.hit[i + 1] = self.hit[i] + (solid and depth > 0)

    def __call__(self, a: int, b: int) -> float:
        chars = self.chars[b] - self.chars[a]
        return (self.hit[b] - self.hit[a]) / chars if chars else 0.0


def _unstruck(text: str, struck) -> str:
    """``text`` without its struck-through ranges: what the ruling still says."""
    kept, last = [], 0
    for a, b in sorted(struck):
        kept.append(text[last:a])
        last = max(last, b)
    return "".join(kept) + text[last:]


def _withdrawn_text(text: str, struck) -> str:
    if not struck:  # most records: no generator to start
        return ""
    return " ".join(part for part in (text[a:b].strip() for a, b in struck) if part)


def segment(page: Page) -> list[Record]:
    """Blocks -> records (no annotations yet): one record per line as the
    page writes it, with its sentences, role, channel, status and id; a
    nested list item's record points to its parent's."""
    records: list[Record] = []
    seen: Counter = Counter()
    last_of_block: dict[int, str] = {}  # block index -> id of its last record
    norm_sections: dict[tuple[str, ...], tuple[str, ...]] = {}  # a section's blocks share its headings
    for block in page.blocks:
        example_mode = block.examples
        channel = ""
        norm_section = norm_sections.get(block.section)
        if norm_section is None:
            norm_section = norm_sections[block.section] = tuple(
                canonical_text(h, page.language, page.script, page.region) for h in block.section)
        parent_id = last_of_block.get(block.parent, "") if block.parent is not None else ""
        for line in _merge_continued(block.lines):
            text = line.text
            if label_line().match(text):
                example_mode = True
                continue
            m = _channel_line().match(text)
            if m:
                channel = channel_labels()[m.group(1).lower()]
                example_mode = False
                continue
            if bare_label(text):  # the label word alone, without its colon: no ruling
                continue
            prefix = example_prefix().match(text)
            # An "example" line that names no card states a principle.
            line_is_example = (example_mode or bool(prefix)) and (page.language != "zh" or "「" in text)
            role = "note" if block.note else "example" if line_is_example else "principle"
            record = _record(page, block.group, block.section, norm_section, line, prefix.end() if prefix else 0,
                             role, channel, seen, len(records))
            if record is None:
                continue
            record.parent_id = parent_id
            records.append(record)
            last_of_block[block.index] = record.id
    return records


def _record(page: Page, block: int, section: tuple[str, ...], norm_section: tuple[str, ...], line: Line, skip: int,
            role: str, channel: str, seen: Counter, seq: int) -> Record | None:
    """The record of one line (from character ``skip``: after an example
    label), or None when nothing is left."""
    raw = line.text
    text = raw[skip:].strip()
    if not text:
        return None
    a = raw.index(text, skip)
    b = a + len(text)
    struck = [(max(s, a) - a, min(e, b) - a) for s, e in line.struck if min(e, b) > max(s, a)]
    sentences = split_sentences(text, page.language)
    still_said = _unstruck(text, struck) if struck else text
    if struck and not LETTER.search(TRAILING_DATES.sub("", still_said)):
        status, withdrawn = "superseded", ""  # all its words struck through (a date or a full stop may remain)
    else:
        status, withdrawn = "current", _withdrawn_text(text, struck)
        if channel == "under_review" or _pending(still_said):
            status = "pending"
    norm = canonical_text(text, page.language, page.script, page.region)
    seen[(norm_section, norm)] += 1
    return Record(
        id=record_id(page.source_id, norm_section, norm, seen[(norm_section, norm)]),
        source_id=page.source_id, seq=seq, block=block, section=section, role=role, channel=channel, status=status,
        text=text, norm=norm, links=[(l.start - a, l.end - a, l.href) for l in line.links if l.start >= a and l.end <= b],
        norm_section=norm_section, sentences=sentences, struck=struck, withdrawn=withdrawn,
        cells=list(line.cells) if not skip else [],
    )


# --------------------------------------------------------------------------- annotations

@dataclass
class _Sentence:
    """One sentence of a record for statement resolution: its spaCy doc, its
    canonical text, whether it is struck through, its range in the record."""

    doc: Doc | None
    norm: str
    struck: bool
    start: int
    end: int


@lru_cache(maxsize=1)
def _english_retention_words() -> re.Pattern:
    t = retention_terms_en()
    return re.compile(alternation([p for section in ("kinds", "events", "verdicts")
                                   for phrases in t[section].values() for p in phrases]))


def needs_matching(record: Record, language: str) -> bool:
    """Whether the spaCy matchers can find anything the record uses: a
    Chinese record in a retention topic section (only those state
    something), an English record naming a retention term or a word the
    procedural reader starts from (``triggers``: a superset of what it reads)."""
    if language == "zh":
        return (_section_config(record.norm_section or record.section) is not None
                or _speaks_of_retention(record.norm, example=record.role == "example"))
    lowered = record.norm.lower()
    if _english_retention_words().search(expand_coordination(record.norm).lower()):
        return True
    return procedural.trigger_words().search(lowered) is not None


def annotate(records: list[Record], language: str, script: str = "Hans",
             region: str = "") -> list[list[_Sentence] | None]:
    """Copy dates, cards (with their names in Simplified script, converted for
    ``script`` and ``region``) and procedural rules onto the records; run the
    spaCy pipeline (batched) over the sentences of the records
    :func:`needs_matching` picks. Returns per record its sentences' (doc,
    canonical text, struck through) for statement resolution (None where no
    matching was needed; an English list item is matched when its lead-in is). Raises ExtractError naming the block for a record
    over spaCy's length limit."""
    nlp = pipeline_for("zh" if language == "zh" else "en")
    for record in records:  # every record, matched or not: the limit bounds what a page can store
        if len(record.norm) > nlp.max_length:
            raise ExtractError(f"a ruling of {len(record.norm)} characters is over the limit of {nlp.max_length}",
                               source_id=record.source_id,
                               place=f"block {record.block} (section {' / '.join(record.section) or '-'})")
    jobs: list[tuple[int, _Sentence]] = []
    matched: set[str] = set()
    for i, record in enumerate(records):
        # an English list item is read with its lead-in ("... may not be changed manually:" before
        # "- in the turn in which the turn player Summoned or Set it."), whatever words it uses
        if needs_matching(record, language) or (language != "zh" and record.parent_id in matched):
            matched.add(record.id)
            share = _StruckShare(record.text, record.struck) if record.struck else None
            for a, b in record.sentences or [(0, len(record.text))]:
                norm = canonical_text(record.text[a:b], language, script, region)
                if language != "zh":
                    norm = expand_coordination(norm)
                jobs.append((i, _Sentence(None, norm, bool(share and share(a, b) > 0.5), a, b)))
    docs: list[list[_Sentence] | None] = [None] * len(records)
    for (i, sentence), doc in zip(jobs, nlp.pipe((sentence.norm for _, sentence in jobs), batch_size=256)):
        sentence.doc = doc
        if docs[i] is None:
            docs[i] = []
        docs[i].append(sentence)
    if language != "zh":
        read_procedural(records, docs)
    for record in records:
        _dates_and_cards(record, language, script, region)
    return docs


def annotate_card_rulings(records: list[Record], docs: list[list[_Sentence] | None], script: str = "Hans",
                          region: str = "") -> list[list[_Sentence] | None]:
    """``docs`` with the sentences of the Chinese records :func:`annotate`
    left unread that name an event and cite a card's numbered effect
    (:func:`pipeline.cardrulings.cites_an_effect`): read for the card_text
    statements only, so the statement reader's input stays as it was."""
    from .cardrulings import cites_an_effect
    from .carddenials import may_deny

    events_ = _retention_words()[0]
    link, texts = _card_lookup()

    def card_ruling(record: Record) -> bool:  # cites an effect, or denies one in its words (carddenials)
        return cites_an_effect(record.norm) or (texts is not None and may_deny(
            record.norm, [c.norm_name or c.name for c in record.cards if c.kind == "card"], link, texts))

    picked = [i for i, (r, d) in enumerate(zip(records, docs))
              if d is None and events_.search(r.norm) and card_ruling(r)]
    if not picked:
        return docs
    jobs: list[tuple[int, _Sentence]] = []
    for i in picked:
        record = records[i]
        share = _StruckShare(record.text, record.struck) if record.struck else None
        for a, b in record.sentences or [(0, len(record.text))]:
            norm = canonical_text(record.text[a:b], "zh", script, region)
            jobs.append((i, _Sentence(None, norm, bool(share and share(a, b) > 0.5), a, b)))
    out = list(docs)
    for (i, sentence), doc in zip(jobs, pipeline_for("zh").pipe((x.norm for _, x in jobs), batch_size=256)):
        sentence.doc = doc
        out[i] = (out[i] or []) + [sentence]
    return out


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


def read_procedural(records: list[Record], docs: list[list[_Sentence] | None]) -> None:
    """The procedural rules each English record states
    (:func:`pipeline.procedural.stated_rules`), sentence by sentence, a list
    item read with its lead-in (its ``parent_id``); struck sentences state nothing."""
    last_sentence: dict[str, procedural.Features] = {}
    for record, sentences in zip(records, docs):
        if sentences is None:
            continue
        lead_in = last_sentence.get(record.parent_id) if record.parent_id else None
        seen: list[procedural.Features] = []
        for sentence in sentences:
            feats = procedural.features(sentence.doc.user_data.get(procedural.USER_DATA_KEY, {}))
            if not sentence.struck:
                for rule_id in procedural.stated_rules(feats, seen, lead_in):
                    if rule_id not in record.procedural:
                        record.procedural.append(rule_id)
            seen.append(feats)
        if seen:
            last_sentence[record.id] = seen[-1]


def _dates_and_cards(record: Record, language: str, script: str, region: str) -> None:
    """Dates (with the FAQ id of a date's link; dates the text refers to
    marked ``reference``) and card mentions, from the original text so
    offsets match links: every 「」 quote (an archetype when a kind word
    such as 怪兽 follows and the name starts other cards' names), and “” or
    《》 quotes that name a known card."""
    dates = find_dates(record.text, language)
    if dates:
        dates = mark_references(record.text, dates, *reference_words())
    record.dates = dates
    if record.links and record.dates:
        faq_links = [(start, end, href, fid) for start, end, href in record.links if (fid := _faq_id(href))]
        for d in record.dates if faq_links else ():
            for start, end, href, fid in faq_links:
                if start <= d.start and d.end <= end + 1:
                    record.faq.append((d.raw, fid, href))
    text = record.text
    quoted, other_quoted = "「" in text, "“" in text or "《" in text
    term_quoted = "『" in text or '"' in text
    # The links are indexed only for a record that quotes a name: most linked records quote one, not all.
    links = _Links(record.links) if record.links and (quoted or other_quoted) else _NO_LINKS
    if quoted:
        for q in CARD_QUOTE.finditer(text):
            name = q.group(1)
            norm_name, is_term = _quoted_name(name, script, region) if language == "zh" else _quoted_name(name)
            kind = "term" if is_term else "archetype" if _archetype(text, q.end(), norm_name) else _card_kind(name, norm_name)
            record.cards.append(CardMention(name, q.start(1), q.end(1), links.at(q), norm_name, kind))
    if other_quoted:
        for q in OTHER_QUOTES.finditer(text):
            name = q.group(q.lastindex)
            norm_name, is_term = _quoted_name(name, script, region) if language == "zh" else _quoted_name(name)
            if is_term or any(card_index().link(n).linked for n in (name, norm_name)):
                record.cards.append(CardMention(name, q.start(q.lastindex), q.end(q.lastindex), links.at(q),
                                                norm_name, "term" if is_term else "card",
                                                quote=q.group(0)[0] + q.group(0)[-1]))
    if term_quoted:
        for q in TERM_QUOTES.finditer(text):
            name = q.group(q.lastindex)
            norm_name, is_term = _quoted_name(name, script, region) if language == "zh" else _quoted_name(name)
            if is_term:
                record.cards.append(CardMention(name, q.start(q.lastindex), q.end(q.lastindex), None, norm_name,
                                                "term", quote=q.group(0)[0] + q.group(0)[-1]))
    if other_quoted or term_quoted:
        record.cards.sort(key=lambda c: c.start)


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
    the term: no card of ``corpus/data`` is (tests/test_terms_and_sections.py)."""
    norm_name = to_simplified(name, script, region) if script else name
    return norm_name, _term_quote().search(name_key(norm_name, "Hans")) is not None


class _Links:
    """A record's links (start, end, target), for finding the one on a quoted name."""

    def __init__(self, links: list[tuple[int, int, str]]):
        self.links = links
        # Links come in text order, each ending after it starts; were they not, every one would be looked
        # at. A few links are looked at one by one anyway: no check needed (most records have one or two).
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


def fill_heading_dates(records: list[Record]) -> None:
    """Yearly logs: a record with no date of its own takes its day heading's date."""
    by_section: dict[tuple[str, ...], RulingDate | None] = {}  # a day's rulings share its heading
    for record in records:
        if not record.dated:
            if record.section not in by_section:
                by_section[record.section] = heading_date(record.section)
            d = by_section[record.section]
            if d is not None:
                record.dates = record.dates + [d]
                record.date_from_heading = True


# --------------------------------------------------------------------------- statements

@dataclass
class _Term:
    kind: str  # KIND, KIND*, EVENT, VERDICT, OUTCOME, ABILITY, FREEDOM, SEQUEL, SAME, ALL, HYPO, SCOPE, CONTINUITY, NONE
    value: str
    start: int
    end: int


def _quote_ranges(text: str, opener: str, closer: str) -> list[tuple[int, int]]:
    """The outermost ``opener``...``closer`` ranges of ``text`` (nested quotes
    inside them, an unmatched closer ignored); only the quote marks are visited."""
    if opener not in text:
        return []
    ranges, stack = [], []
    for m in _quote_marks(opener, closer).finditer(text):
        if m.group() == opener:
            stack.append(m.start())
        elif stack:
            start = stack.pop()
            if not stack:
                ranges.append((start, m.end()))
    return ranges


@lru_cache(maxsize=8)
def _quote_marks(opener: str, closer: str) -> re.Pattern:
    return re.compile(f"[{re.escape(opener)}{re.escape(closer)}]")


def _inside(ranges: list[tuple[int, int]], a: int, b: int, strict: bool = True) -> bool:
    return any(s <= a and b <= e for s, e in ranges) if strict else any(a < e and s < b for s, e in ranges)


def _terms(doc: Doc, text: str) -> list[_Term]:
    """Matched terms, longest-then-leftmost, minus those inside quotes;
    ``text`` is the doc's text (``doc.text`` joins its tokens anew each time).
    Read once per doc (an example's sentence is read twice); callers never
    change the list or its terms."""
    cached = doc.user_data.get("terms")
    if cached is None:
        cached = doc.user_data["terms"] = _read_terms(doc, text)
    return cached


def _read_terms(doc: Doc, text: str) -> list[_Term]:
    from spacy.util import filter_spans  # spaCy is loaded: a doc exists

    card_ranges = _quote_ranges(text, "「", "」")
    quoted = _quote_ranges(text, "『", "』")
    terms = []
    for span in filter_spans(list(doc.spans.get("retention", []))):
        label, _, value = span.label_.partition("|")
        a, b = span.start_char, span.end_char
        if _inside(card_ranges, a, b, strict=False):
            continue
        if label not in ("KIND", "KIND*", "ALL") and _inside(quoted, a, b):
            continue
        if label == "VERDICT" and value in _FLIPPED and _negated(text, a, terms):
            value = _FLIPPED[value]
        terms.append(_Term(label, value, a, b))
    return _drop_listed_events(_read_more(terms, text, card_ranges, quoted), text)


def _read_more(terms: list[_Term], text: str, card_ranges: list[tuple[int, int]],
               quoted: list[tuple[int, int]]) -> list[_Term]:
    """``terms`` with what :mod:`pipeline.reading` finds on top: an event
    written in two parts (除外…回到场上) where no term names that event, and
    the turn a summon kind's words name too (…特殊召唤的战斗阶段); in text order."""
    named = {x.value for x in terms if x.kind == "EVENT"}
    taken = [(x.start, x.end) for x in terms if x.kind == "EVENT"]
    more = [x for x in reading.split_events(text, taken, card_ranges + quoted) if x[1] not in named]
    more += reading.turn_kinds(text, [(x.kind, x.value, x.start, x.end) for x in terms if x.kind == "KIND"])
    if not more:
        return terms
    return sorted(terms + [_Term(*x) for x in more], key=lambda x: (x.start, x.end))


def _drop_listed_events(terms: list[_Term], text: str) -> list[_Term]:
    """Without the event words that are items of a list of ways a monster
    came to be (``召唤·特殊召唤·反转·反转召唤``: 反转 joined by ``·`` to a
    kind) rather than something that happens to it."""
    def listed(i: int) -> bool:
        x = terms[i]
        before = terms[i - 1] if i else None
        after = terms[i + 1] if i + 1 < len(terms) else None
        return ((before is not None and before.kind == "KIND" and before.end == x.start - 1
                 and text[x.start - 1] == "·")
                or (after is not None and after.kind == "KIND" and after.start == x.end + 1
                    and text[x.end] == "·"))
    return [x for i, x in enumerate(terms) if x.kind != "EVENT" or not listed(i)]


_FLIPPED = {"kept": "lost", "lost": "kept"}


def _negated(text: str, start: int, before: list[_Term], window: int = 8) -> bool:
    """Whether a negator (``不会``, ``没有``: ``schema/retention_terms.json``)
    stands before the verdict word at ``start`` in its clause, with no other
    verdict between: ``不会复原`` says kept, ``攻击过的事实不会因变成里侧消失`` too,
    and so does a negator before a cause (``不会因为变成里侧表示而消失``)."""
    after_verdict = max([t.end for t in before if t.kind == "VERDICT"], default=0)
    clause = _clause_delimiter().split(text[after_verdict:start])[-1]  # since the last verdict, in this clause
    if any(neg in clause[-window:] for neg in retention_terms()["negators"]):
        return True
    # "不会因为变成里侧表示而消失": the negator stands before the cause, any length back in the clause
    return clause.endswith("而") and ("不因" in clause or "不会因" in clause)


@lru_cache(maxsize=1)
def _clause_delimiter() -> re.Pattern:
    return re.compile("[" + re.escape(markers()["clause_delimiters"]) + "]")


def _clause_bounds(text: str) -> list[tuple[int, int]]:
    """Clauses split at the delimiters of ``schema/markers.json`` (，；：,; （） 。)
    outside 「」『』 quotes."""
    delimiters = markers()["clause_delimiters"]
    bounds, start, depth = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "「『":
            depth += 1
        elif ch in "」』":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in delimiters:
            bounds.append((start, i))
            start = i + 1
    bounds.append((start, len(text)))
    return [(a, b) for a, b in bounds if b > a]


@dataclass
class _Context:
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


def _without_history(terms: list[_Term], text: str) -> list[_Term]:
    """Without the event words that describe the monster's past rather than
    what happens to it (``当回合反转的怪兽…被一时除外``: an event word followed
    by ``的``, not by ``的场合`` or another of ``case_nouns``, when another
    event comes later in the sentence)."""
    last_event = max((i for i, x in enumerate(terms) if x.kind == "EVENT"), default=-1)
    cases = _case_suffixes()  # 变成里侧的场合: the case itself

    def history(i: int, x: _Term) -> bool:
        return (x.kind == "EVENT" and i < last_event and text.startswith("的", x.end)
                and not text.startswith(cases, x.end))
    return [x for i, x in enumerate(terms) if not history(i, x)]


@lru_cache(maxsize=1)
def _case_suffixes() -> tuple[str, ...]:
    return tuple("的" + noun for noun in retention_terms()["case_nouns"])


def _after_flip(terms: list[_Term]) -> list[_Term]:
    """The terms of a case at resolution time (``处理时``: the monster was
    face-down when the effect resolved, which is no retention event) that
    still speak of retention: from its first later flip (``之后反转成表侧表示``,
    ``再反转``) on, that flip its event; the kinds named before stay as its
    subject. Empty when the case has no later flip."""
    for i, x in enumerate(terms):
        if (x.kind == "EVENT" and x.value == "flip_face_up") or x.kind == "SEQUEL":
            flip = _Term("EVENT", "flip_face_up", x.start, x.end)
            return [y for y in terms[:i] if y.kind in ("KIND", "KIND*")] + [flip] + terms[i + 1:]
    return []


def _subject_of_verdict(terms: list[_Term], i: int, text: str) -> bool:
    """Whether the kind ``terms[i]`` is what the verdict right after it speaks
    of (``攻击力复原``, ``守备力都不会再上升``: at most 2 characters between)."""
    nxt = terms[i + 1] if i + 1 < len(terms) else None
    return (nxt is not None and nxt.kind in ("VERDICT",) + _OUTCOME_TERMS and nxt.start - terms[i].end <= 2
            and not _clause_delimiter().search(text[terms[i].end:nxt.start]))


def _outside_parens(text: str) -> str:
    return re.sub(r"（[^（）]*）|\([^()]*\)", "", text)


def _sentence_statements(doc: Doc, text: str, ctx: _Context,
                         all_kinds: list[str]) -> tuple[list[Statement], list[str] | None]:
    """Statements of one sentence (``text``, the text of ``doc``) and the
    kinds it spoke of (for the next sentence)."""
    terms = _without_history(_terms(doc, text), text)
    if not any(term in _outside_parens(text) for term in retention_terms()["out_of_scope"]):
        return _SentenceReader(text, terms, ctx, all_kinds).read()
    # At resolution time the effect applied to a face-down monster: only what
    # its later flip keeps is a retention (an effect that never applied loses nothing).
    terms = _after_flip(terms)
    statements, kinds = _SentenceReader(text, terms, ctx, all_kinds).read() if terms else ([], None)
    return [s for s in statements if s.verdict == "kept"], kinds


class _SentenceReader:
    """Reads a sentence clause by clause (clauses: :func:`_clause_bounds`).

    Events gather as *pending* until a verdict word (不再是, 仍然是: the
    kinds named after it, else before it, else the sentence's subject, the
    block's or the section's), an outcome word (仍然可以发动, 不能再发动:
    :func:`_outcome_kinds`) or, in a topic section, a continuity phrase
    (持续…表侧表示) says what became of them. Outside a topic section
    (``ctx.strict``) the kind must be one the ruling names: a verdict's
    object, or a specific kind of its subject (:meth:`_strict_subject`). ``；`` starts a case
    of its own; a condition opener (``如果是…``, ``对于「…」…``) sets the
    condition of what follows."""

    def __init__(self, text: str, terms: list[_Term], ctx: _Context, all_kinds: list[str]):
        self.t = retention_terms()
        self.text, self.terms, self.ctx = text, terms, ctx
        self.specific = _specific_kinds(tuple(all_kinds))
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
        for a, b in _clause_bounds(self.text):
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
                if (s.info_kind, s.event, _FLIPPED.get(s.verdict)) in self.ctx.section_said}

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
            elif x.kind in _OUTCOME_TERMS:
                self._outcome(terms, i, b)
            elif x.kind in ("VERDICT", "SAME"):
                i = self._verdict(terms, i, b)
                continue
            i += 1
        self._stated_by_words(terms)
        if not self.last_kinds and self.kinds_before:
            self.subject = list(dict.fromkeys(self.subject + self.kinds_before))
        self.recent = self.kinds_before or self.recent

    def _stated_by_words(self, terms: list[_Term]) -> None:
        """A grant's own words after an event, in a clause with no verdict or
        outcome word (``stated_by_words``: 那个怪兽翻开后可以作2次攻击): it still holds."""
        if self.has_verdict or self.hypothetical or not self.pending:
            return
        if any(x.kind in _OUTCOME_TERMS for x in terms):
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

    def _kind(self, terms: list[_Term], i: int) -> None:
        x = terms[i]
        if x.kind == "KIND*" or x.value in self.allowed or _subject_of_verdict(terms, i, self.text):
            self.kinds_before.append(x.value)
            if not self.seen_events:
                self.lead.append(x.value)
            if self._named_as_information(x):
                self.named_info.add(x.value)  # 『攻击过』的情报: the information itself, not a description
        else:
            self.other_kind = True

    def _named_as_information(self, x: _Term) -> bool:
        """Whether kind term ``x`` is named as information (``『攻击过』的情报``
        …), the ruling's subject: not a modifier of another noun
        (``持有『攻击过』的情报的怪兽``: the information noun before ``的``)."""
        after = self.text[x.end:x.end + 8].lstrip("』")
        noun = next((n for n in self.t["information_nouns"] if after.startswith(n)), None)
        return noun is not None and not after[len(noun):].startswith("的")

    def _event(self, x: _Term) -> None:
        if self.ctx.strict and self.text[x.start:x.end] in self.t["events_in_topics_only"]:
            return
        self.pending.append(x.value)
        self.seen_events.append(x.value)
        self.event_end[x.value] = self.clause[1]

    def _continuity(self, x: _Term) -> None:
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

    def _outcome(self, terms: list[_Term], i: int, clause_end: int) -> None:
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
        objects = [y.value for y in _kinds_after(terms, i) if y.value in self.specific]
        if self.text[x.start:x.end] in self.t["outcome_objects"] and not objects:
            return  # 正常地回到场上: an adverb, no outcome
        quote = reading.quoted_effect(self.text, x.end, clause_end) if x.kind == "ABILITY" else None
        depends = [y.value for y in terms if quote and y.kind in ("KIND", "KIND*")
                   and quote[0] <= y.start and y.end <= quote[1]
                   and (self.ctx.strict or y.value in self.allowed)]  # 『③：融合召唤的这张卡…』: what it needs
        if not depends and self.ctx.strict and x.kind == "ABILITY" and reading.points_back(self.text, x.end):
            quoted = _quote_ranges(self.text, "『", "』")  # 持有『反转的回合』发动的效果…不能再发动这类效果
            depends = [y.value for y in self.terms if y.kind in ("KIND", "KIND*") and y.end <= x.start
                       and _inside(quoted, y.start, y.end)]
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
        verdicts = {kind: _outcome_verdict(x, kind) for kind in kinds}
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
        rest = _elliptical_words().sub("", TRAILING_DATES.sub("", rest))
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

    def _strict_outcome_kinds(self, objects: list[str], x: _Term | None = None) -> list[str]:
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

    def _verdict(self, terms: list[_Term], i: int, clause_end: int) -> int:
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

    def _verdict_kinds(self, x: _Term, objects: list[str]) -> tuple[str | None, list[str] | None]:
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
    words = _clause_delimiter().sub(" ", case).strip()
    for opener in retention_terms()["exception_openers"]:
        words = words.removeprefix(opener).strip()
    return words


# Term kinds that tell what became of an effect (schema/retention_terms.json
# outcomes, abilities, freedoms).
_OUTCOME_TERMS = ("OUTCOME", "ABILITY", "FREEDOM")


def _kinds_after(terms: list[_Term], i: int) -> list[_Term]:
    """The kind terms right after ``terms[i]`` (no other term between)."""
    out = []
    for y in terms[i + 1:]:
        if y.kind not in ("KIND", "KIND*"):
            break
        out.append(y)
    return out


def _outcome_kinds(x: _Term, named: list[str], ctx: _Context, text: str, clause_end: int) -> list[str]:
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


@lru_cache(maxsize=1)
def _elliptical_words() -> re.Pattern:
    """``elliptical_words`` of ``schema/retention_terms.json`` (longest first) and the negators."""
    t = retention_terms()
    return re.compile(alternation(t["elliptical_words"] + t["negators"]))


@lru_cache(maxsize=4)
def _specific_kinds(all_kinds: tuple[str, ...]) -> frozenset[str]:
    """Kinds read in any retention topic section: all but ``generic_kinds``."""
    return frozenset(all_kinds) - frozenset(retention_terms()["generic_kinds"])


def _outcome_verdict(x: _Term, kind: str) -> str:
    """kept/lost shown by an outcome term of ``schema/retention_terms.json``:
    ``outcomes`` (OUTCOME) say kept or lost as such; ``abilities`` (ABILITY:
    able/unable to activate the effect) say kept when able for a kind that
    enables an effect, lost when able for one of ``restricting_kinds``;
    ``freedoms`` (FREEDOM: free/bound to attack or change position) say the
    restriction is lost when free."""
    if x.kind == "OUTCOME":
        return x.value
    if x.kind == "FREEDOM":
        return "lost" if x.value == "free" else "kept"
    restricting = kind in retention_terms()["restricting_kinds"]
    return "kept" if (x.value == "able") != restricting else "lost"


@lru_cache(maxsize=1)
def _retention_words() -> tuple[re.Pattern, ...]:
    """Patterns of the event words, the verdict words, the outcome words
    (outcomes, abilities, freedoms), the words of the kinds, the
    ``continuity`` phrases and the words of the specific kinds (all but
    ``generic_kinds``) of ``schema/retention_terms.json``."""
    t = retention_terms()
    generic = set(t["generic_kinds"])
    words = {
        "events": [w for ws in t["events"].values() for w in ws],
        "verdicts": [w for ws in t["verdicts"].values() for w in ws],
        "outcomes": [w for key in ("outcomes", "abilities", "freedoms") for ws in t[key].values() for w in ws],
        # an outcome word may speak of a generic kind the ruling names (a freedom_kinds one, or one
        # inside the quoted effect an ability word activates): the reader decides
        "kinds": [w for kind, ws in t["kinds"].items() for w in ws],
        "continuity": t["continuity"],
        "specific": [w for kind, ws in t["kinds"].items() if kind not in generic for w in ws],
    }
    return tuple(re.compile(alternation(ws)) for ws in words.values())


def _speaks_of_retention(norm: str, example: bool = False) -> bool:
    """Whether a ruling outside the topic sections may state a retention:
    it names an event (变成里侧, 一时除外, 除外…回到场上) and a verdict word
    (不再是, 仍然是), or an outcome word (不能再发动, 仍然可以攻击) and, unless
    it is an ``example`` (which may show the kinds of its principle), a kind
    (:meth:`_SentenceReader._strict_outcome_kinds` decides which count); or a
    continuity phrase (持续在怪兽区域表侧表示…才会发动: both events) and a
    specific kind. The others state nothing and are not matched at all."""
    events_, verdicts_, outcomes_, kinds_, continuity_, specific_ = _retention_words()
    if continuity_.search(norm) and specific_.search(norm):  # 持续在怪兽区域表侧表示…才会发动: both events
        return True
    return bool((events_.search(norm) or reading.split_events(norm, [], [])) and (verdicts_.search(norm) or (
        outcomes_.search(norm) and (example or kinds_.search(norm)))))


# Outside a retention topic section a ruling states only what it names itself:
# every kind allowed, no section default, the kind the object of the verdict.
_ANY_SECTION = (None, frozenset())


@lru_cache(maxsize=4096)
def _unnumbered(heading: str) -> str:
    """``heading`` without a leading section number (:func:`pipeline.records.unnumbered`)."""
    return unnumbered(heading)


def _section_config(section: tuple[str, ...]) -> tuple[str | None, frozenset[str]] | None:
    """(default kind, allowed kinds) of the deepest configured heading, or None
    when the section is not part of a retention topic. Headings are compared
    without their section numbers (a site may number them)."""
    topics = retention_terms()["topics"]
    topic = topics.get(_unnumbered(section[0])) if section else None
    if topic is None:
        return None
    for heading in reversed(section[1:]):
        cfg = topic.get(_unnumbered(heading))
        if cfg is not None:
            return cfg["default"], frozenset(cfg["allowed"])
    return None


def resolve_statements(records: list[Record], docs: list[list[_Sentence] | None], all_kinds: list[str]) -> None:
    """Fill ``record.statements`` from its sentences: principles state,
    examples support.

    A principle's sentences are read in order with what the block and the
    section said before as context; what a struck-through sentence of a
    record that is otherwise current says is kept with basis ``withdrawn``
    (history, never a verdict) and is no context for what follows. An example
    is read by :func:`_example_statements` with the principles just before it
    in its block (those since the previous run of examples).
    """
    block_kinds: dict[int, list[str]] = {}
    # What a 但是 sentence may except: what its section stated before (a 但是
    # paragraph speaks against the paragraphs before it).
    section_said: dict[tuple[str, ...], set[tuple[str, str, str]]] = defaultdict(set)
    section_last: dict[tuple[str, ...], tuple[list[str], list[str], str]] = {}
    principles: dict[int, list[Record]] = {}
    last_role: dict[int, str] = {}
    # Outside topic sections: the kinds the block's ruling just before stated (one ruling back only).
    carried: dict[int, list[str]] = {}
    carried_cards: dict[int, frozenset[str]] = {}  # the cards that ruling named
    for record, sentences in zip(records, docs):
        section = record.norm_section or record.section
        carry = carried.pop(record.block, None) if carried else None
        cards = carried_cards.pop(record.block, frozenset()) if carried_cards else frozenset()
        if sentences is None:
            continue
        cfg = _section_config(section)
        strict = cfg is None
        cfg = cfg or _ANY_SECTION
        heading = reading.heading_kinds(section[-1]) if strict and section else frozenset()
        said = section_said[section]
        if record.role == "example":
            last_role[record.block] = "example"
            _example_statements(record, sentences, principles.get(record.block, []),
                                _Context(cfg[0], cfg[1], block_kinds.get(record.block), strict=strict,
                                         section_said=said, heading=heading), all_kinds)
            continue
        ctx_key = section[:2]
        superseded = record.status == "superseded"
        before: tuple[str, ...] = ()
        for sentence in sentences:
            withdrawn = sentence.struck and not superseded  # a struck part of a current ruling
            ctx = (_Context(cfg[0], cfg[1], carry, strict=True, section_said=said, heading=heading,
                            block_cards=cards, before=before) if strict else
                   _Context(cfg[0], cfg[1], block_kinds.get(record.block), section_last.get(ctx_key),
                            section_said=said))
            statements, kinds = _sentence_statements(sentence.doc, sentence.norm, ctx, all_kinds)
            before = _named_kinds(sentence, all_kinds) if strict else ()
            dates = _sentence_dates(record, sentence)
            for x in statements:
                record.add_statement(replace(x, basis="withdrawn" if withdrawn else x.basis, dates=dates))
            if statements and not superseded and not withdrawn:
                said.update(x.key[:3] for x in statements)
                if kinds and kinds != ["*"]:  # "任何情报" (every kind) is not carried to the next sentence
                    block_kinds[record.block] = kinds
                    carry = carried[record.block] = kinds
                    cards = carried_cards[record.block] = frozenset(CARD_QUOTE.findall(record.norm))
                section_last[ctx_key] = (sorted({x.info_kind for x in statements}),
                                         sorted({x.event for x in statements}), statements[-1].verdict)
        if any(x.basis in ("stated", "exception") for x in record.statements) and not superseded:
            if last_role.get(record.block) == "example":
                principles[record.block] = []
            last_role[record.block] = "principle"
            principles.setdefault(record.block, []).append(record)


def _named_kinds(sentence: _Sentence, all_kinds: list[str]) -> tuple[str, ...]:
    """The specific kinds ``sentence`` names (in text order, each once): what
    ``anaphora`` in the next sentence of its ruling may point back at."""
    specific = _specific_kinds(tuple(all_kinds))
    terms = _terms(sentence.doc, sentence.norm)
    return tuple(dict.fromkeys(t.value for t in terms if t.kind in ("KIND", "KIND*") and t.value in specific))


def _sentence_events(sentence: _Sentence) -> list[tuple[int, str]]:
    """The events ``sentence`` names, in order, as (position, event id); in
    a sentence that names no other event, a sequel flip (``之后再反转``,
    ``sequel`` of schema/retention_terms.json) is
    :data:`pipeline.cardrulings.SEQUEL_FLIP` (the card readers take it for
    a flip only when their record names no other event either)."""
    from .cardrulings import SEQUEL_FLIP

    terms = _terms(sentence.doc, sentence.norm)
    events = [(t.start, t.value) for t in terms if t.kind == "EVENT"]
    return events or [(t.start, SEQUEL_FLIP) for t in terms if t.kind == "SEQUEL"]


def _sentence_dates(record: Record, sentence: _Sentence) -> tuple[str, ...]:
    """The valid dates written inside ``sentence`` (its trailing stamps and
    date links); empty when it has none (the record's dates stand for it)."""
    return tuple(sorted({d.iso for d in record.dates if d.counts and sentence.start <= d.start < sentence.end}))


def _example_statements(record: Record, sentences: list[_Sentence], principles: list[Record], ctx: _Context,
                        all_kinds: list[str]) -> None:
    """What an example says, read with the principle it illustrates:

    * what its own words state (kind, event and verdict found in it, the
      principle's kinds as context): support (basis ``example``) where a
      principle just before it says the same, else its own ruling (``stated``);
    * a principle's statement about an event the example names, unless the
      example shows the opposite verdict for it or names other kinds: the
      example shows that case (``仍然会被…破坏``, ``可以发动②效果``).

    A statement a principle makes of every kind at once (``不会丢失任何情报``)
    is never passed on: an example supports it only through its own words."""
    made: dict[tuple[str, str, str], Record] = {}
    for principle in principles:
        for s in principle.statements:
            if s.basis in ("stated", "exception"):  # an example of an exception is one too
                made.setdefault((s.info_kind, s.event, s.verdict), principle)
    shown: list[Statement] = []
    events: set[str] = set()
    named: set[str] = set()
    out_of_scope = retention_terms()["out_of_scope"]
    for sentence in sentences:
        if sentence.struck and record.status != "superseded":
            continue
        said, _ = _sentence_statements(sentence.doc, sentence.norm, ctx, all_kinds)
        dates = _sentence_dates(record, sentence)
        shown += [replace(s, principle_id="", dates=dates) for s in said]  # basis: exception or stated
        if any(term in _outside_parens(sentence.norm) for term in out_of_scope):
            continue  # a case at resolution time (处理时) shows no retained information
        for term in _without_history(_terms(sentence.doc, sentence.norm), sentence.norm):
            if term.kind == "EVENT":
                events.add(term.value)
            elif term.kind in ("KIND", "KIND*"):
                named.add(term.value)
    for s in shown:
        principle = made.get((s.info_kind, s.event, s.verdict)) if s.basis != "exception" else None
        record.add_statement(replace(s, basis="example" if principle else s.basis,
                                     principle_id=principle.id if principle else ""))
    contradicted = {(s.info_kind, s.event) for s in shown}
    own_events = {s.event for s in shown}  # an event the example speaks of in its own words
    for principle in principles:
        every_kind = _all_kind_keys(principle.statements, len(all_kinds))
        for s in principle.statements:
            if (s.basis != "stated" or s.event not in events or s.event in own_events
                    or (s.event, s.verdict) in every_kind
                    or (s.info_kind, s.event) in contradicted or (named and s.info_kind not in named)):
                continue
            record.add_statement(Statement(s.info_kind, s.event, s.verdict, s.condition, "example", principle.id,
                                           reading="outcome"))


def _all_kind_keys(statements: list[Statement], kinds: int) -> set[tuple[str, str]]:
    """The (event, verdict) pairs stated of (nearly) every kind at once."""
    counts: dict[tuple[str, str], int] = {}
    for s in statements:
        counts[(s.event, s.verdict)] = counts.get((s.event, s.verdict), 0) + 1
    return {key for key, n in counts.items() if n >= kinds - 1}


_IMPERATIVE = re.compile(r"[A-Z][a-z]+,")  # a capitalized verdict word opening its sentence before a comma


def _english_terms(sentences: list[_Sentence]) -> tuple[list[str], list[str], str | None]:
    """(kinds, events, verdict) an English record names; a negator in the
    12 characters before a verdict word says the opposite; a verdict word
    opening its sentence as an imperative ("Remember, ...") is none."""
    negators = retention_terms_en()["negators"]
    kinds: list[str] = []
    events_: list[str] = []
    verdict = None
    for sentence in sentences:
        if sentence.struck:
            continue
        lowered = sentence.norm.lower()
        for term in _terms(sentence.doc, sentence.norm):
            if term.kind == "KIND" and term.value not in kinds:
                kinds.append(term.value)
            elif term.kind == "EVENT" and term.value not in events_:
                events_.append(term.value)
            elif term.kind == "VERDICT" and verdict is None:
                if _IMPERATIVE.match(sentence.norm, term.start) and not sentence.norm[:term.start].strip():
                    continue  # "Remember, you can only ..." (a paragraph of the rulebook): no verdict
                lead = lowered[max(0, term.start - 12):term.start]
                verdict = _FLIPPED[term.value] if any(n in lead for n in negators) else term.value
    return kinds, events_, verdict


def _returning_lead_ins(records: list[Record]) -> dict[int, str]:
    """Lead-ins (index -> event) that name how a monster leaves the field
    and no event of their own, whose list (the records after them in their
    section, up to the next line ending with ':') says the monster comes
    back: ``returning_events`` of ``schema/retention_terms_en.json``
    ("A monster removed from play by this effect:" … "returns to the field
    in the same Battle Position", edisonrul-interdimensional-matter-transporter)."""
    terms = retention_terms_en()
    named = [phrase for phrases in terms["events"].values() for phrase in phrases]
    found: dict[int, str] = {}
    for i, record in enumerate(records):
        if not record.text.rstrip().endswith(":"):
            continue
        lowered = record.norm.lower()
        if any(phrase in lowered for phrase in named):
            continue
        listed = []
        for later in records[i + 1:]:
            if later.section != record.section or later.text.rstrip().endswith(":"):
                break
            listed.append(later.norm.lower())
        for event, words in terms["returning_events"].items():
            if (any(w in lowered for w in words["leaves"])
                    and any(_says(line, w) for line in listed for w in words["returns"])):
                found[i] = event
                break
    return found


_ENGLISH_NEGATION = re.compile(r"\b(?:not|never|cannot|no longer)\b|n't")


def _says(lowered: str, phrase: str) -> bool:
    """Whether lower-cased ``lowered`` holds ``phrase`` without a negation in
    the 12 characters before it ("is not returned to the field", "cannot return")."""
    at = lowered.find(phrase)
    while at >= 0:
        if not _ENGLISH_NEGATION.search(lowered[max(0, at - 12):at]):
            return True
        at = lowered.find(phrase, at + 1)
    return False


def resolve_english_statements(records: list[Record], docs: list[list[_Sentence] | None]) -> None:
    """Statements of an English page: a record states the kinds it names
    with the event and verdict it names, or those of the lead-in it follows.

    A lead-in names an event (and maybe a verdict) but no kind and ends
    with ':' ("A monster flipped face-down remembers:"); it passes both on
    to the records after it in its section, until the next line ending with
    ':' or a record naming its own event or verdict without a kind
    (edisonrul-book-of-moon); a line of its list that names its own verdict
    ("remembers it was Flip Summoned") states that one. A lead-in naming how
    a monster leaves and comes back states its event too
    (:func:`_returning_lead_ins`)."""
    returning = _returning_lead_ins(records)
    scope: tuple[tuple[str, ...], list[str], str | None] | None = None  # section, events, verdict
    for i, (record, sentences) in enumerate(zip(records, docs)):
        lead_in = record.text.rstrip().endswith(":")
        if scope and scope[0] != record.section:
            scope = None
        if i in returning:
            verdict = _english_terms(sentences)[2] if sentences is not None else None
            scope = (record.section, [returning[i]], verdict)
            continue
        if sentences is None:
            if lead_in:
                scope = None
            continue
        kinds, events_, verdict = _english_terms(sentences)
        if not kinds:
            scope = (record.section, events_, verdict) if (lead_in and events_) else (
                None if (lead_in or events_ or verdict) else scope)
            continue
        events_ = events_ or (scope[1] if scope else [])
        verdict = verdict or (scope[2] if scope else None)
        if not verdict:
            continue
        for kind in kinds:  # a superseded record's statements are history: compile reads its status
            for event in events_:
                record.add_statement(Statement(kind, event, verdict, reading="principle"))
        if lead_in:
            scope = None


# --------------------------------------------------------------------------- entry point

# The corpus's longest lists of dated examples hold 15 stamps; a record with more has
# rulings run together (a page in one table cell or <pre>, lines without breaks).
RUN_TOGETHER_DATES = 20


def layout_warnings(records: list[Record], source_id: str) -> list[str]:
    """Warnings about how a page was cut into records (a list of at most one
    line): records holding :data:`RUN_TOGETHER_DATES` or more date stamps of
    their own, the first named by its position (1-based) and section."""
    crowded = [(r, n) for r in records if len(r.dates) >= RUN_TOGETHER_DATES
               and (n := sum(1 for d in r.dates if d.kind != "reference")) >= RUN_TOGETHER_DATES]
    if not crowded:
        return []
    first, stamps = crowded[0]
    where = " > ".join(first.section) or "no section"
    more = f" (and {len(crowded) - 1} more records hold {RUN_TOGETHER_DATES} or more)" if len(crowded) > 1 else ""
    return [f"{source_id}: record {first.seq + 1} ({where}) holds {stamps} date stamps{more}: rulings "
            f"run together in a layout the pipeline does not separate? See `rulings show {first.id}`"]


def extract(page: Page, all_kinds: list[str]) -> list[Record]:
    """Page -> records with dates, card mentions, statements and procedural rules."""
    records = segment(page)
    docs = annotate(records, page.language, page.script, page.region)
    fill_heading_dates(records)
    if page.language == "zh":
        resolve_statements(records, docs, all_kinds)
        from .cardrulings import card_text_statements  # the card texts: statements on a named card's effect
        card_text_statements(records, annotate_card_rulings(records, docs, page.script, page.region),
                             _sentence_events, _sentence_dates)
    else:
        resolve_english_statements(records, docs)
    exams.keep_answers(records)  # an exam's options: only the key's right answers say something
    return records
