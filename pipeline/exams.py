"""Exam pages (rule tests, quizzes: ``ocg-rule/c05-…``): an option is no
ruling of its own, only the answer the page's key gives to a question that
asks which statement is right says something (issue 34).

A page is an exam page when its records hold runs of options (``A. …`` to
``E. …``: ``exams.option`` of ``schema/markers.json``); a run opening with
the first letter is one question, numbered in page order, and the answer key
is read from lines such as ``1-10 BBECA EAACB`` (``exams.key_line``). An
option keeps its statements only when it is its question's answer and the
question (the lines since the options before) holds one of ``right_words``
and none of ``wrong_words`` (``以下说明正确的是？``; ``不正确的是？`` asks for
the false one). A page with options and no key, or a key that does not
give an answer for each question, keeps none.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from .schema import markers

if TYPE_CHECKING:  # the statements pass's drafts (records in the making)
    from .statements import Draft as Record


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    exams = markers()["exams"]
    return re.compile(exams["option"]), re.compile(exams["key_line"])


def answer_key(records: list[Record]) -> dict[int, str]:
    """Question number (from 1) -> the key's letter, from the page's key
    lines (``1-10 BBECA EAACB``: questions 1 to 10); empty when it has none."""
    _, key_line = _patterns()
    key: dict[int, str] = {}
    for record in records:
        m = key_line.match(record.text)
        if m:
            first = int(m.group(1))
            for i, letter in enumerate(re.sub(r"[^A-E]", "", m.group(2))):
                key[first + i] = letter
    return key


def _questions(records: list[Record]) -> list[tuple[str, list[tuple[str, Record]]]]:
    """The page's questions in order: (the words since the options before,
    its options as (letter, record))."""
    option, _ = _patterns()
    questions: list[tuple[str, list[tuple[str, Record]]]] = []
    words: list[str] = []
    for record in records:
        m = option.match(record.text)
        if m is None:
            words.append(record.text)
            continue
        letter = m.group(1)
        if letter == "A" or not questions or words:
            questions.append((" ".join(words), []))
            words = []
        questions[-1][1].append((letter, record))
    return questions


def keep_answers(records: list[Record]) -> None:
    """Empty the statements of the options that are no answer (see the module)."""
    questions = _questions(records)
    if len(questions) < 2:  # one list of A. B. lines is no exam
        return
    key = answer_key(records)
    aligned = len(key) == len(questions)
    exams = markers()["exams"]
    for number, (asked, options) in enumerate(questions, start=1):
        right = (any(w in asked for w in exams["right_words"])
                 and not any(w in asked for w in exams["wrong_words"]))
        for letter, record in options:
            if record.statements and not (aligned and right and key.get(number) == letter):
                record.statements = []
