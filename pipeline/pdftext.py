"""Text extracted from a PDF (format ``pdf-text``) -> :class:`~pipeline.page.Page`.

A PDF's text comes as fragments of its printed lines (the Konami rulebook:
"three cases. 1. You cannot change the battle position of a monster" on
one line, its sentence going on in the next). Here the lines are joined
back into paragraphs: a paragraph goes on until a line ends a sentence
(``.``, ``!``, ``?``, ``:``, a closing quote or parenthesis after one); a
word broken by a hyphen at a line's end is joined again ("acti-" + "vate";
a hyphen before a capital, as in "Quick-" + "Play", is kept). Page
furniture is dropped: page numbers ("34 35", "i ii"), table-of-contents
leaders ("Monster Cards ........ 6") and running heads (a short line that
repeats on at least :data:`RUNNING_HEAD_MIN` pages). A short line in title
case standing alone between sentences is a heading: the paragraphs after
it are in its section. A numbered list inside a paragraph ("... except in
three cases. 1. You cannot ... 2. You cannot ...") becomes list items
(``bullet``) whose ``parent`` is the lead-in before them, so each item is a
ruling read with its lead-in.
"""

from __future__ import annotations

import re
from collections import Counter

from .corpus import Source
from .errors import NormalizeError
from .page import Block, Line, Page

RUNNING_HEAD_MIN = 3  # a short line printed this many times or more is a running head
_PAGE_NUMBER = re.compile(r"^(?:\d{1,3}|[ivxlc]{1,6})(?:\s+(?:\d{1,3}|[ivxlc]{1,6}))?$", re.IGNORECASE)
_LEADERS = re.compile(r"\.{5,}|…{3,}")
_SENTENCE_END = re.compile(r"[.!?:][\"'”’)\]]*$")
_HEADING_WORDS = 6
_HEADING_CHARS = 48
# "1. You cannot ..." at the start of a paragraph or after a sentence: a numbered list item.
_ITEM = re.compile(r"(?:(?<=[.:!?])\s+|^)(\d{1,2})\.\s+(?=[A-Z\"“])")


def _is_heading(line: str, after_sentence: bool) -> bool:
    """A short title-case line that ends no sentence, after a finished one."""
    if not after_sentence or len(line) > _HEADING_CHARS or _SENTENCE_END.search(line) or line.endswith("-"):
        return False
    words = line.split()
    if not words or len(words) > _HEADING_WORDS or not line[0].isupper():
        return False
    if "," in line or ";" in line:
        return False
    return sum(w[:1].isupper() or not w[:1].isalpha() for w in words) * 2 >= len(words)


def _join(paragraph: str, line: str) -> str:
    if not paragraph:
        return line
    if paragraph.endswith("-") and len(paragraph) > 1 and paragraph[-2].isalpha() and line[:1].isalpha():
        return paragraph + line if line[:1].isupper() else paragraph[:-1] + line
    return f"{paragraph} {line}"


def _items(text: str) -> tuple[str, list[str]]:
    """A paragraph -> (its lead-in, its numbered items) when it holds a list
    numbered 1, 2, ... in order; else (the paragraph, [])."""
    marks = list(_ITEM.finditer(text))
    numbered = []
    for m in marks:
        if int(m.group(1)) == len(numbered) + 1:
            numbered.append(m)
    if len(numbered) < 2:
        return text, []
    lead = text[:numbered[0].start()].strip()
    items = [text[m.end():(numbered[k + 1].start() if k + 1 < len(numbered) else len(text))].strip()
             for k, m in enumerate(numbered)]
    return lead, [f"{k + 1}. {item}" for k, item in enumerate(items) if item]


def paragraphs(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """PDF text -> ``[(paragraph, section)]`` in reading order (furniture dropped)."""
    lines = [" ".join(raw.split()) for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    counts = Counter(line for line in lines if line and len(line.split()) <= _HEADING_WORDS)
    out: list[tuple[str, tuple[str, ...]]] = []
    section: tuple[str, ...] = ()
    paragraph = ""
    after_sentence = True

    def flush() -> None:
        nonlocal paragraph
        if paragraph:
            out.append((paragraph, section))
        paragraph = ""

    for line in lines:
        if not line:
            flush()
            after_sentence = True
            continue
        if _PAGE_NUMBER.match(line) or _LEADERS.search(line) or (
                counts[line] >= RUNNING_HEAD_MIN and not _SENTENCE_END.search(line)):
            continue
        if _is_heading(line, after_sentence and not paragraph):
            flush()
            section = (line,)
            continue
        paragraph = _join(paragraph, line)
        after_sentence = bool(_SENTENCE_END.search(line))
        if after_sentence:
            flush()
    flush()
    return out


def normalize_pdf_text(text: str, source: Source) -> Page:
    """PDF text -> Page: one block per paragraph, list items under their lead-in.
    NormalizeError when no paragraph is left."""
    blocks: list[Block] = []
    title = ""
    for paragraph, section in paragraphs(text):
        title = title or (section[0] if section else "")
        lead, items = _items(paragraph)
        parent = None
        if lead:
            blocks.append(Block(len(blocks), section, [Line(lead)]))
            parent = len(blocks) - 1
        for item in items:
            blocks.append(Block(len(blocks), section, [Line(item)], bullet=True, parent=parent))
    if not blocks:
        raise NormalizeError("page has no text blocks", source_id=source.id, place="PDF text")
    return Page(source.id, source.language, source.script, source.region, title, blocks, [])
