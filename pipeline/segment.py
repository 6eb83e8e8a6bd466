"""Extract pass 1, segment: a normalized :class:`~pipeline.page.Page` -> :class:`~pipeline.records.Ruling` s.

The one owner of where a ruling starts and ends. It takes the page's
blocks (lines as written, their ``<br>`` breaks, struck ranges, links,
section headings) and returns one immutable :class:`Ruling` per ruling in
page order, with everything later passes read and never derive again: the
text as written, its canonical text, its sentences (each marked struck or
not), its date stamps (found once: own dates and dates it refers to), its
links, struck ranges, status, role, channel, parent and table cells.

The layout rules:

* a paragraph's line cut at its breaks into the rulings it holds
  (:func:`split_dated_lines`: dated rulings one after the other; normalize's
  walker calls it where a block's lines are made);
* lines of a block merged where one sentence runs across them (a comma at
  the end) and a date stamp alone glued to the ruling it dates
  (:func:`stamps_lead`, :func:`is_title`);
* example labels (``例：``), channel labels and pending markers
  (``schema/markers.json``) give a ruling its role, channel and status.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import lru_cache

from .chinese import canonical_text, is_canonical
from .dates import (DATE_LIKE, STAMP, STAMP_CHARS, STAMP_FIRST_NUMBER, STAMP_NOTE, TRAILING_DATES, RulingDate,
                    find_dates, mark_references)
from .orthography import (BRACKETED, CJK, EN_SENTENCE_END, LETTER, SENTENCE_END, ZH_SENTENCE_MARKS,
                          alternation)
from .page import Line, Page
from .records import Ruling, Sentence
from .schema import channel_labels, markers

# Questions and answers (问：… / 答：…, Q1: … / A（17/3/24）: …): a question starts a ruling, its
# answer stays with it, a date stamp before either label allowed.
# A Latin Q or A is a label only before a colon or a parenthesis that opens a date: "A (rare) case" is no answer.
QUESTION_LABEL = re.compile(STAMP + r"(?:(?:问|提问)\s*[：:（(]|[QＱ]\d*\s*(?:[：:]|[（(]\d))")
ANSWER_LABEL = re.compile(STAMP + r"(?:(?:答|回答)\s*[：:（(]|[AＡ]\d*\s*(?:[：:]|[（(]\d))")


# --------------------------------------------------------------------------- labels (schema/markers.json)

@lru_cache(maxsize=1)
def label_line() -> re.Pattern:
    """A line that is only an example label (``例：``, ``Example:``)."""
    return re.compile(rf"^\s*({alternation(markers()['example_labels'])})\s*[：:]\s*$", re.I)


def bare_label(text: str) -> bool:
    """``text`` is an example label, with or without its colon (``例``, ``例：``)."""
    return label_line().match(text.rstrip(":：") + "：") is not None


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


@lru_cache(maxsize=1)
def reference_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words before and after a date that make it a date the text refers
    to (``schema/markers.json``, lower case), for :func:`pipeline.dates.mark_references`."""
    m = markers()
    return tuple(w.lower() for w in m["date_reference_before"]), tuple(w.lower() for w in m["date_reference_after"])


def ruling_dates(text: str, language: str) -> list[RulingDate]:
    """Every date written in ``text``, those it refers to marked ``reference``."""
    dates = find_dates(text, language)
    return mark_references(text, dates, *reference_words()) if dates else dates


# --------------------------------------------------------------------------- date stamps and titles

def _own_date_at(text: str, language: str) -> str | None:
    """Where ``text`` carries a date of its own (not one it refers to:
    ``详见17/1/1的…``): ``"alone"`` (a date stamp and no word), ``"start"``
    (at most a short label before it and the ruling's words after it:
    ``17/3/24 「A」…``, ``①17/3/24 …``, ``Ruling (3/24/17): …``), ``"end"``, or None."""
    own = [d for d in ruling_dates(text, language) if d.kind != "reference"]
    if not own:
        return None
    if stamp_only(text):
        return "alone"
    before, after = text[:own[0].start], STAMP_NOTE.sub("", text[own[0].end:])
    # before its ruling: after a label at most (①, 日期：, "Konami FAQ (…):"; "…发动（17/3/24），但…" is
    # no label), never after a sentence's end, and with the ruling's words after it
    # ("可以。（17/3/24）", "No (3/24/17)" end theirs)
    opener = before.rstrip()[-1:]
    label = not SENTENCE_END.search(before) and (
        len(before.strip()) <= 8 or opener in "：:"
        or (opener in "(（" and _CLOSED_LABEL.match(text, own[0].end)))
    return "start" if label and LETTER.search(after) else "end"


# Konami FAQ (3/24/17, email): / Konami ruling (3/24/17) - : the parenthesis closes a label
_CLOSED_LABEL = re.compile(r"[^()（）]{0,20}[)）]\s*[：:\-—–]")


def stamps_lead(opens: bool, ends: bool, stamps: list[str]) -> bool:
    """Whether the date stamps alone on lines of their own (``stamps``, in
    order) stand before the rulings they date. Only where the lines open with
    one, or with a title (:func:`is_title`) and then one (``opens``): yes
    when they do not also end with one (``ends``); when they do, their forms
    decide: a first stamp written otherwise than the others while the last is
    written like them is the day's, over rulings dated after them
    (``2019年1月9日`` / ``「A」…`` / ``17/3/24`` / ``「B」…`` / ``17/3/25``: no);
    else the last is the odd one, an update of the last ruling (``17/3/24`` /
    ``「A」…`` / ``18/1/5`` / ``「B」…`` / ``2019.1.9（更新）``: yes)."""
    if not opens:
        return False
    if not ends or len(stamps) < 3:
        return True
    shape = [_stamp_shape(text) for text in stamps]
    return not (shape[0] != shape[1] and shape[-1] == shape[-2])


def _stamp_shape(text: str) -> tuple[str, int]:
    """How a stamp is written: the separator after its first number, and that number's digits."""
    m = STAMP_FIRST_NUMBER.match(text)
    return (m.group(2), len(m.group(1))) if m else ("", 0)


def is_title(text: str) -> bool:
    """Whether a line is a title over the rulings after it rather than a
    ruling: a label ending in a colon (``「救援兔」的裁定：``), or a line that
    ends no sentence and holds little besides names in brackets (``「救援兔」``,
    ``【救援兔】``, ``「救援兔」的裁定``, ``「救援兔」（レスキュー・ラビット）``: six
    characters at most) or, in Latin script, a few words with capitals at
    both ends (``Rescue Rabbit``, ``Book of Moon``). ``「A」的效果可以对应「B」发动``
    and ``You can activate it`` are rulings."""
    text = text.strip()
    if text.endswith(("：", ":")):
        return True
    if not text or SENTENCE_END.search(text[-1:]):
        return False
    rest = BRACKETED.sub("", text).strip()
    if not rest:
        return True  # names in brackets only
    if CJK.search(text):
        return len(rest) <= 6
    words = rest.split()
    return 1 <= len(words) <= 5 and words[0][:1].isupper() and words[-1][:1].isupper()


def stamp_only(text: str) -> bool:
    """Whether ``text`` holds date stamps and no word (``17/3/24``, ``（2018.1.5）``,
    ``2019年1月9日``, ``17/3/24（邮件）``: a short note in parentheses is the stamp's)."""
    first = LETTER.search(text)
    if first is None:
        return True
    if first.group() not in "年月日" and not (len(text) <= 40 and text.lstrip()[:1].isdigit()
                                            and DATE_LIKE.search(text)):
        return False  # most lines: their first letter is a word's (1.（略）, 2000（攻击力） have no date)
    return not LETTER.search(STAMP_CHARS.sub("", STAMP_NOTE.sub("", text)))


# --------------------------------------------------------------------------- a paragraph's rulings

def split_dated_lines(line: Line, always: bool = False, language: str = "zh") -> list[Line]:
    """``line`` cut at its ``<br>`` (or ``<pre>`` newline) breaks into the rulings it holds:
    every part its own line in a line-block (``always``), else only when at
    least two parts carry a date of their own (dated rulings one after the
    other in one paragraph); else ``[line]``. A table row (cells) is never
    cut: its cells are its fields. See :func:`_rulings` for which parts make
    one ruling."""
    if not line.breaks or line.cells:
        return [line]
    bounds = (-1, *line.breaks, len(line.text))
    spans = [(a + 1, b) for a, b in zip(bounds, bounds[1:]) if line.text[a + 1:b].strip()]
    if always:  # a line-block: every part is a ruling (a stamp alone is glued to its ruling by merge_lines)
        return [line.part(a, b) for a, b in spans]
    dated = [_own_date_at(line.text[a:b], language) for a, b in spans]
    if sum(d is not None for d in dated) < 2:
        return [line]
    return [line.part(a, b) for a, b in _rulings(line.text, spans, dated)]


def _rulings(text: str, spans: list[tuple[int, int]], dated: list[str | None]) -> list[tuple[int, int]]:
    """The character ranges of the rulings among the parts ``spans`` of a
    paragraph's line (``dated``: :func:`_own_date_at` of each): a question
    starts a ruling and its answer stays with it, and the page
    writes its dates before its rulings (stamps alone that lead:
    :func:`stamps_lead`; or most dated parts carry theirs before their
    words: a ruling starts at
    each dated part) or after them (a ruling ends at each dated part; parts
    after the last one are a ruling of their own)."""
    opens = dated[0] == "alone" or (len(dated) > 1 and dated[1] == "alone" and is_title(text[slice(*spans[0])]))
    stamps = [text[a:b] for (a, b), d in zip(spans, dated) if d == "alone"]
    date_first = (stamps_lead(opens, dated[-1] == "alone", stamps)
                  or 2 * sum(d == "start" for d in dated) > sum(d in ("start", "end") for d in dated))
    groups: list[list[int]] = []
    for i, (a, _) in enumerate(spans):
        if groups and ANSWER_LABEL.match(text, a):
            new = False
        elif QUESTION_LABEL.match(text, a):
            new = True
        elif date_first:
            new = bool(dated[i]) and not (dated[i - 1] == "alone" if i else False) or not groups
        else:
            new = not groups or bool(dated[groups[-1][-1]])  # the ruling before ended at its date
        if new:
            groups.append([i])
        else:
            groups[-1].append(i)
    return [(spans[g[0]][0], spans[g[-1]][1]) for g in groups]


# --------------------------------------------------------------------------- a block's rulings

def merge_lines(lines: list[Line]) -> list[Line]:
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


# --------------------------------------------------------------------------- sentences

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


def _sentences(page: Page, text: str, norm: str, struck: list[tuple[int, int]], plain: bool) -> tuple[Sentence, ...]:
    """The sentences of a ruling's ``text`` (``norm``: its canonical text;
    ``plain``: :func:`~pipeline.chinese.is_canonical`, so each part is its own
    canonical text too), each with its canonical text and struck when more
    than half of it is."""
    spans = split_sentences(text, page.language)
    if len(spans) == 1 and spans[0] == (0, len(text)):  # most rulings: one sentence, the ruling's own text
        norms = [norm]
    elif plain:  # most of the others: no sentence to convert (about 10,000 instructions a sentence)
        norms = [text[a:b] for a, b in spans]
    else:
        norms = [canonical_text(text[a:b], page.language, page.script, page.region) for a, b in spans]
    if not struck:
        return tuple([Sentence(a, b, n) for (a, b), n in zip(spans, norms)])  # start, end, norm
    share = _StruckShare(text, struck)
    return tuple([Sentence(a, b, n, share(a, b) > 0.5) for (a, b), n in zip(spans, norms)])  # ..., struck


# --------------------------------------------------------------------------- the pass

def record_id(source_id: str, section: tuple[str, ...], norm: str, occurrence: int) -> str:
    """Stable id from source, section path and normalized text (not row order).
    ``segment`` passes the canonical section path, so the script of the headings
    does not change a record's id."""
    key = "\x1f".join((source_id, "/".join(section), norm, str(occurrence)))
    return "r" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:15]


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


class _Place:
    """Where a ruling stands: its block, section (as written and canonical),
    role, channel and parent."""

    __slots__ = ("block", "section", "norm_section", "role", "channel", "parent_id")

    def __init__(self, block: int, section: tuple[str, ...], norm_section: tuple[str, ...], role: str,
                 channel: str, parent_id: str):
        self.block, self.section, self.norm_section = block, section, norm_section
        self.role, self.channel, self.parent_id = role, channel, parent_id


def segment(page: Page) -> list[Ruling]:
    """Blocks -> rulings in page order: one per ruling as the page writes it
    (:func:`merge_lines`), with its sentences, dates, role, channel, status
    and id; a nested list item's ruling points to its parent's. Example and
    channel label lines are no rulings: they set the role and channel of the
    lines after them."""
    rulings: list[Ruling] = []
    seen: Counter = Counter()
    last_of_block: dict[int, str] = {}  # block index -> id of its last ruling
    norm_sections: dict[tuple[str, ...], tuple[str, ...]] = {}  # a section's blocks share its headings
    for block in page.blocks:
        example_mode = block.examples
        channel = ""
        norm_section = norm_sections.get(block.section)
        if norm_section is None:
            norm_section = norm_sections[block.section] = tuple(
                canonical_text(h, page.language, page.script, page.region) for h in block.section)
        parent_id = last_of_block.get(block.parent, "") if block.parent is not None else ""
        for line in merge_lines(block.lines):
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
            place = _Place(block.group, block.section, norm_section, role, channel, parent_id)
            ruling = _ruling(page, place, line, prefix.end() if prefix else 0, seen, len(rulings))
            if ruling is None:
                continue
            rulings.append(ruling)
            last_of_block[block.index] = ruling.id
    return rulings


def _ruling(page: Page, place: _Place, line: Line, skip: int, seen: Counter, seq: int) -> Ruling | None:
    """The ruling of one line (from character ``skip``: after an example
    label), or None when nothing is left."""
    raw = line.text
    text = raw[skip:].strip()
    if not text:
        return None
    a = raw.index(text, skip)
    b = a + len(text)
    struck = [(max(s, a) - a, min(e, b) - a) for s, e in line.struck if min(e, b) > max(s, a)]
    still_said = _unstruck(text, struck) if struck else text
    if struck and not LETTER.search(TRAILING_DATES.sub("", still_said)):
        status, withdrawn = "superseded", ""  # all its words struck through (a date or a full stop may remain)
    else:
        status, withdrawn = "current", _withdrawn_text(text, struck)
        if place.channel == "under_review" or _pending(still_said):
            status = "pending"
    plain = is_canonical(text, page.language, page.script, page.region)  # the search canonical_text makes
    norm = text if plain else canonical_text(text, page.language, page.script, page.region)
    seen[(place.norm_section, norm)] += 1
    # In the order of Ruling's fields, not by keyword: a class called with keywords builds a dict of
    # them on each call (three times the time, 13,000 times over the bundled corpus).
    return Ruling(
        record_id(page.source_id, place.norm_section, norm, seen[(place.norm_section, norm)]),  # id
        page.source_id, seq, place.block, place.section, place.norm_section, place.role, place.channel, status,
        text, norm, _sentences(page, text, norm, struck, plain), tuple(ruling_dates(text, page.language)),
        tuple([(l.start - a, l.end - a, l.href) for l in line.links if l.start >= a and l.end <= b]),  # links
        tuple(struck), withdrawn, place.parent_id, tuple(line.cells) if not skip else ())  # ..., cells
