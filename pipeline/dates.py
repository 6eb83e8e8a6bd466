"""Ruling dates as the corpus writes them.

* ``YY/M/D`` after a Chinese ruling: ``17/3/24`` is 2017-03-24. Two-digit years
  are 20YY, except ``99`` which is 1999 (the OCG began in 1999), so ``98/1/1``
  is 2098-01-01: in the future, hence invalid.
* ``2019年10月30日`` and ISO ``2019-10-30`` / ``2019/10/30`` anywhere.
* ``YYYY.MM.DD`` (``2017.03.24``) anywhere, ``YY.M.D`` and ``YY-M-D``
  (``17.3.24``, ``17-3-24``) on Chinese pages, only as a valid date (not
  after a letter, ``第`` or another number, not before ``节``, ``条``, ``章``):
  written with dots or a short year with hyphens, ``3.1.2`` may as well be a
  section number, so an impossible or out-of-range one is no date token.
* ``MM/DD/YYYY`` and ``M/D/YY`` (US order) on English pages: ``04/07/2004``
  is 2004-04-07, ``3/24/17`` 2017-03-24; ``13/07/2004`` and ``24/3/17`` are
  impossible dates, never read day first or year first (a guess).
* Full-width digits and slashes (``１７／３／２４``) and spaces inside the
  ``年月日`` form (``2019 年 10 月 30 日``) are read too; ``raw`` is always
  the token as written.

A date the text refers to (``详见2023/1/6的「德梅特爷爷」…裁定``) is no date
of the ruling that mentions it: :func:`mark_references` gives it the kind
``reference`` (by the words before and after it, data of
``schema/markers.json``); the ruling's own dates are ``own``, a yearly log's
day heading ``heading``.

An impossible date (``17/2/30``, ``99/13/1``, ``0/0/0``), one before 1999 or
after ``today`` is kept with its raw token and ``valid=False`` and a reason;
it is never shifted to a neighbouring valid date.
"""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

FIRST_YEAR = 1999

# Each pattern starts with the digit it needs, and the character before that
# digit is checked after it (``\d(?<![\d/.:]\d)``, not ``(?<![\d/.:])\d``): a
# pattern that starts with a lookbehind is tried at every character of the
# text, one that starts with a digit only where a digit is (four times faster).
YMD_SHORT = re.compile(r"(\d(?<![\d/.:]\d)\d?)/(\d{1,2})/(\d{1,2})(?![\d/])")
YMD_CJK = re.compile(r"(\d(?<!\d\d)\d{3})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
# ISO dates take any four-digit year (an impossible one is stored invalid); with
# slashes only 19xx/20xx, so arithmetic such as ``1600/2/2=400`` is no date.
YMD_ISO = re.compile(r"(\d(?<![\d/-]\d)\d{3})-(\d{1,2})-(\d{1,2})(?![\d-])"
                     r"|((?:19|20)(?<![\d/-]..)\d\d)/(\d{1,2})/(\d{1,2})(?![\d/=])")
MDY_US = re.compile(r"(\d(?<![\d/]\d)\d?)/(\d{1,2})/(\d{4})(?![\d/])")
# Dots (a year of two or four digits) and hyphens with a two-digit year; not inside a longer
# run of numbers, a word (``SD17-3-1``) or a path.
# A section or article number (第3.1.2条, 12.3.4节) is none.
YMD_DOT = re.compile(r"(\d(?<![A-Za-z\d./第]\d)\d(?:\d\d)?)\.(\d{1,2})\.(\d{1,2})(?![\d.]\d|\d|[节節条條章款项項])")
YMD_HYPHEN_SHORT = re.compile(r"(\d(?<![A-Za-z\d./第-]\d)\d)-(\d{1,2})-(\d{1,2})(?![\d-]|[节節条條章款项項])")


# Date stamps as the segment pass reads them (pipeline.segment): what a stamp is written with (its
# parentheses aside), a stamp alone on a line, a stamp's note (17/3/24（邮件）), something shaped like a
# date, the stamps that close a sentence (。17/3/24 18/1/5) and the first number of a stamp (its shape).
STAMP_CLASS = r"\d/.\-年月日\s"
STAMP = f"[{STAMP_CLASS}]*"
STAMP_CHARS = re.compile(f"[{STAMP_CLASS}（）()]+")
STAMP_NOTE = re.compile(r"[（(][^（）()]{1,8}[）)]")
DATE_LIKE = re.compile(r"\d\s*[/.\-年]\s*\d")
TRAILING_DATES = re.compile(r"(?:\s*\d{1,2}([/.\-])\d{1,2}\1\d{1,2}(?![\d/]|[.\-]\d))+")
STAMP_FIRST_NUMBER = re.compile(r"\D*(\d+)(\D?)")
# Date stamps in any written form, and white space: what compile drops from a ruling's text for its key.
DATE_STAMPS = re.compile(r"\d{1,4}\s*[/／年.．\-]\s*\d{1,2}\s*[/／月.．\-]\s*\d{1,2}日?|\s+")


# Not frozen, as pipeline.records.CardMention (a frozen init is 3.6 times slower); unsafe_hash: hashable as before.
@dataclass(slots=True, unsafe_hash=True)
class RulingDate:
    """A date token: ``raw`` at characters ``start:end``; ``iso`` when valid."""

    raw: str
    start: int
    end: int
    iso: str | None
    valid: bool
    reason: str  # "" when valid, else why not
    kind: str = "own"  # own | reference (a date the text refers to) | heading (a yearly log's day)

    @property
    def counts(self) -> bool:
        """A valid date of the ruling itself (not one it refers to)."""
        return self.valid and self.kind != "reference" and bool(self.iso)


def _make(raw: str, start: int, end: int, y: int, m: int, d: int, today: dt.date) -> RulingDate:
    return RulingDate(raw, start, end, *_judge(y, m, d, today))


@lru_cache(maxsize=1 << 14)  # a corpus writes the same days over and over
def _judge(y: int, m: int, d: int, today: dt.date) -> tuple[str | None, bool, str]:
    """(ISO date or None, valid, why not) of year ``y``, month ``m``, day ``d``."""
    try:
        value = dt.date(y, m, d)
    except ValueError:
        return None, False, "impossible date"
    if value.year < FIRST_YEAR:
        return None, False, f"before {FIRST_YEAR}"
    if value > today:
        return None, False, "in the future"
    return value.isoformat(), True, ""


# Full-width digits, slash, hyphen and full stop -> ASCII: one character for one, so offsets hold.
_FOLD = str.maketrans("０１２３４５６７８９／－．", "0123456789/-.")
_FULL_WIDTH = re.compile("[０-９／－．]")
# A date token holds one of these; one character class, which a search skips through four times
# faster than an alternation (most texts hold none).
_SEPARATORS = re.compile("[/年\\-／－.．]")


def _year(digits: str) -> int:
    """A two-digit year is 20YY, except ``99`` (1999: the OCG began in 1999)."""
    yy = int(digits)
    return yy if len(digits) == 4 else 1900 + yy if yy == 99 else 2000 + yy


class _Taken:
    """The character ranges already read as dates (disjoint, kept sorted):
    whether a new one overlaps is two comparisons, not a scan, so a
    paragraph of thousands of dates is read in linear time."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, a: int, b: int) -> bool:
        """Take ``a:b`` unless it overlaps a range taken; whether it was free."""
        i = bisect_left(self.starts, a)
        if (i < len(self.starts) and self.starts[i] < b) or (i and self.ends[i - 1] > a):
            return False
        self.starts.insert(i, a)
        self.ends.insert(i, b)
        return True


def find_dates(text: str, language: str = "zh", today: dt.date | None = None) -> list[RulingDate]:
    """Every date token in ``text`` in order of position, valid or not."""
    if not _SEPARATORS.search(text):  # most sentences: no date token possible
        return []
    # str.translate goes character by character in Python's slow path for CJK text: only when needed
    folded = text.translate(_FOLD) if _FULL_WIDTH.search(text) else text
    today = today or dt.date.today()
    found: list[RulingDate] = []
    taken = _Taken()

    def add(m: re.Match, y: int, mo: int, d: int) -> None:
        if taken.add(m.start(), m.end()):
            found.append(_make(text[m.start():m.end()], m.start(), m.end(), y, mo, d, today))

    slash = "/" in folded
    for m in YMD_CJK.finditer(folded) if "年" in folded else ():
        add(m, int(m.group(1)), int(m.group(2)), int(m.group(3)))
    # YMD_ISO needs a hyphen, or a year 19xx / 20xx before a slash: most texts have neither (its scan is the slowest)
    hyphen = "-" in folded
    iso = hyphen or (slash and ("19" in folded or "20" in folded))
    for m in YMD_ISO.finditer(folded) if iso else ():
        y, mo, d = (g for g in m.groups() if g is not None)
        add(m, int(y), int(mo), int(d))
    dotted = "." in folded
    if hyphen or dotted:
        for pattern in (YMD_DOT if dotted else None, YMD_HYPHEN_SHORT if hyphen else None):
            for m in pattern.finditer(folded) if pattern else ():
                digits = m.group(1)
                y, mo, d = _year(digits), int(m.group(2)), int(m.group(3))
                # a short year is YY.M.D on a Chinese page only: English pages write D.M.YY as often
                short_ok = len(digits) == 2 and language != "en"
                if (short_ok or digits[:2] in ("19", "20")) and _judge(y, mo, d, today)[1]:
                    add(m, y, mo, d)
    if language == "en" and slash:
        for m in MDY_US.finditer(folded):
            add(m, int(m.group(3)), int(m.group(1)), int(m.group(2)))
        # US order with a short year too (3/24/17); a token that is no date in US order is kept
        # invalid, never read in another order (24/3/17 may be day first or year first)
        for m in YMD_SHORT.finditer(folded):
            add(m, _year(m.group(3)), int(m.group(1)), int(m.group(2)))
    elif slash:
        # Most dated texts hold only these; the tokens of one pattern never overlap each other.
        check = bool(found)
        for m in YMD_SHORT.finditer(folded):
            start, end = m.start(), m.end()
            if not check or taken.add(start, end):
                found.append(_make(text[start:end], start, end, _year(m.group(1)), int(m.group(2)), int(m.group(3)),
                                   today))
    return sorted(found, key=lambda r: r.start)


_CLAUSE_END = re.compile(r"[。；;！？!?]")


def mark_references(text: str, dates: list[RulingDate], before: tuple[str, ...],
                    after: tuple[str, ...], window: int = 12) -> list[RulingDate]:
    """``dates`` with the kind ``reference`` where the text refers to an
    earlier ruling by its date (words in lower case; the text is compared
    lower-cased): a word of ``before`` (``详见``, ``参照``)
    within ``window`` characters before the date in the same clause, or a
    word of ``after`` (``的``) right after it (the date used as an
    attribute: ``2023/1/6的「德梅特爷爷」``)."""
    out = []
    longest = max(map(len, after), default=0)
    for d in dates:
        lead = _CLAUSE_END.split(text[max(0, d.start - window):d.start])[-1].lower()  # "See the ruling of…"
        tail = text[d.end:d.end + longest].lower()
        refers = any(w in lead for w in before) or any(tail.startswith(w) for w in after)
        out.append(RulingDate(d.raw, d.start, d.end, d.iso, d.valid, d.reason, "reference") if refers else d)
    return out


DAY_HEADING = re.compile(r"^(\d{1,2})/(\d{1,2})$")
MONTH_HEADING = re.compile(r"^(\d{2})/(\d{1,2})$")


def heading_date(section: tuple[str, ...], today: dt.date | None = None) -> RulingDate | None:
    """The date of a yearly-log day heading: ``('2019', '19/01', '1/9')`` -> 2019-01-09.

    The deepest day heading (``M/D``) that sits right under a month heading
    (``YY/MM``) of the same month counts, so notes under a day (``备注``) get
    the day's date too; returns None when the path has no such pair.
    """
    for i in range(len(section) - 1, 0, -1):
        day = DAY_HEADING.match(section[i])
        month = MONTH_HEADING.match(section[i - 1])
        if day and month and int(month.group(2)) == int(day.group(1)):
            raw = f"{month.group(1)}/{day.group(1)}/{day.group(2)}"
            d = _make(raw, -1, -1, 2000 + int(month.group(1)), int(day.group(1)), int(day.group(2)),
                      today or dt.date.today())
            return RulingDate(d.raw, d.start, d.end, d.iso, d.valid, d.reason, "heading")
    return None
