"""The report's charts as numbers for its SVG templates: dated rulings -> strips of marks and bars.

:func:`month_chart` (rulings per month, one strip per source),
:func:`rule_strip` (a rule's cited rulings by date, coloured by verdict),
:func:`year_marks` (the year labels under a strip). Units: a strip is
:data:`STRIP_W` x :data:`STRIP_H` SVG user units; months are ``YYYY-MM``.
Pure functions; raise nothing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from .reportwords import VERDICT_LABELS

if TYPE_CHECKING:
    from .reportdata import Entry


STRIP_W, STRIP_H = 1000, 40  # SVG user units of a chart strip, drawn at the page's width (no text in it)


def _month_scale(first: str, last: str) -> tuple[int, callable]:
    """(months spanned, x of a ``YYYY-MM`` month in strip units) for months ``first``..``last``."""
    y0, m0 = int(first[:4]), int(first[5:7])
    span = (int(last[:4]) - y0) * 12 + int(last[5:7]) - m0 + 1

    def x_of(month: str) -> float:
        return ((int(month[:4]) - y0) * 12 + int(month[5:7]) - m0) * STRIP_W / span

    return span, x_of


def year_marks(first: str, last: str) -> list[dict]:
    """The year marks under a strip spanning months ``first``..``last``:
    ``[{"label", "left" (percent of the width), "major" (every fifth year,
    and the first and last: the ones a phone shows)}]``."""
    span, x_of = _month_scale(first, last)
    y0, y1 = int(first[:4]), int(last[:4])
    years = list(range(y0 + (first[5:7] > "01"), y1 + 1))
    marks = [{"label": str(y), "left": round(x_of(f"{y}-01") * 100 / STRIP_W, 2), "major": False,
              "x": round(x_of(f"{y}-01"), 2)} for y in years]
    shown: list[dict] = []  # every fifth year, the first and the last, none closer than 15 % to another
    for mark in marks:
        y = int(mark["label"])
        if y == years[-1] and shown and mark["left"] - shown[-1]["left"] < 15:
            shown.pop()["major"] = False  # the last year's label wins over a close fifth one
        if (y % 5 == 0 or y in (years[0], years[-1])) and (not shown or mark["left"] - shown[-1]["left"] >= 15):
            mark["major"] = True
            shown.append(mark)
    return marks


def month_chart(rulings: list[Entry]) -> dict:
    """The rulings-over-time chart: one strip per source (most dated first),
    one bar per month with rulings dated in it (each ruling once, at its
    latest date, in the source of the place shown in full), superseded
    ones drawn as the bar's marked top part. Returns ``{"rows":
    [{"source_id", "total", "superseded", "bars": [{"x", "w", "h", "sy",
    "sh", "title"}]}], "years"}`` (:func:`year_marks`; units: a strip's
    ``STRIP_W`` x ``STRIP_H`` SVG user units)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    struck: dict[str, Counter] = defaultdict(Counter)
    for entry in rulings:
        if not entry.latest:
            continue
        month, source = entry.latest[:7], entry.ruling.source_id
        counts[source][month] += 1
        if entry.ruling.status == "superseded":
            struck[source][month] += 1
    if not counts:
        return {"rows": [], "years": []}
    months = sorted({m for c in counts.values() for m in c})
    span, x_of = _month_scale(months[0], months[-1])
    step = STRIP_W / span
    rows = []
    for source in sorted(counts, key=lambda s: (-sum(counts[s].values()), s)):
        peak = max(counts[source].values())
        bars = []
        for month, n in sorted(counts[source].items()):
            h = max(2.0, (STRIP_H - 2) * n / peak)
            s = struck[source][month]
            bars.append({"x": round(x_of(month), 2), "w": round(max(step * 0.9, 1.5), 2), "y": round(STRIP_H - h, 2),
                         "h": round(h, 2), "sh": round(h * s / n, 2) if s else 0.0,
                         "title": f"{source} {month}: {n} ruling{'s' if n != 1 else ''}"
                                  + (f", {s} superseded" if s else "")})
        rows.append({"source_id": source, "total": sum(counts[source].values()),
                     "superseded": sum(struck[source].values()), "bars": bars})
    return {"rows": rows, "years": year_marks(months[0], months[-1])}


def rule_strip(rule: dict, cited: list[dict], first: str, last: str) -> dict:
    """A rule's history as a strip: each cited ruling (an entry of
    :func:`pipeline.reportdata.cited_entries`) with a date as a mark at its latest date,
    coloured by the verdict it states, a disputing one marked above, the
    rule's change (``changed_on``) as a line. ``first``/``last``: the
    ``YYYY-MM`` months the site's strips span (one scale for every rule).
    Rulings of one month share its column, stacked. Returns ``{"marks":
    [{"x", "w", "y", "h", "month", "verdict", "record_id", "disputed",
    "title"}], "change_x", "years", "dated", "undated",
    "says": {verdict: n}, "first", "last"}``."""
    span, x_of = _month_scale(first, last)
    w = max(STRIP_W / span, 6.0)
    disputed = set(rule.get("disputed_by") or [])
    marks, says, undated, days = [], Counter(), 0, []
    for c in cited:
        says[c["verdict"]] += 1
        if not c["date"]:
            undated += 1
            continue
        days.append(c["date"])
        is_disputed = bool(disputed & set(c["record_ids"]))
        marks.append({"x": round(min(x_of(c["date"][:7]), STRIP_W - w), 2), "w": round(w, 2),
                      "top": 2.0 if is_disputed else 12.0, "month": c["date"][:7],
                      "verdict": c["verdict"], "record_id": c["record_id"], "disputed": is_disputed,
                      "title": f"{c['date']}: says {VERDICT_LABELS.get(c['verdict'], ('', c['verdict']))[1]}"
                               + (" (disputes the verdict)" if is_disputed else "")
                               + (f" ({c['role']})" if c["role"] != "supports" else "")})
    in_month: dict[str, list[dict]] = defaultdict(list)  # rulings of one month share its column, stacked
    for mark in marks:
        in_month[mark["month"]].append(mark)
    for its in in_month.values():
        its.sort(key=lambda m: (not m["disputed"], m["verdict"], m["record_id"]))  # a disputing one on top
        share = (STRIP_H - 12.0) / len(its)
        for i, mark in enumerate(its):
            mark["y"] = round(12.0 + i * share, 2)
            mark["h"] = round(share, 2)
            if mark.pop("top") < 12.0 and i == 0:  # a disputing ruling reaches above the others
                mark["y"], mark["h"] = 2.0, round(share + 10.0, 2)
    change_x = round(x_of(rule["changed_on"][:7]), 2) if rule.get("changed_on") else None
    return {"marks": marks, "change_x": change_x, "years": year_marks(first, last), "dated": len(marks),
            "undated": undated, "says": dict(says), "first": min(days) if days else "", "last": max(days) if days else ""}
