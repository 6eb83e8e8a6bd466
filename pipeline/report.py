"""``rulings report``: the database as a static site for people to browse.

Reads a database ``rulings build`` wrote (read-only) and writes plain files
that open from disk or any static server, with nothing fetched at view time:

A ruling printed on several pages (the same text, dates and spacing aside:
:func:`pipeline.compile.text_key`) is one :class:`Entry`, shown once with all
its places; counts count entries.

* ``index.html``: the rules matrix, info kinds (rows, in the display groups
  of ``schema/vocabulary.json``) x events (columns), headers in words in
  English and Chinese, each cell its verdict (colour and a symbol with
  words, so colour is never the only cue), the number of supporting
  rulings, the latest date and the rule as a sentence (:func:`rule_sentence`);
* ``rules/KIND--EVENT.html``: a rule as a sentence in both languages, a
  conditional one by case, a strip of its rulings by date (:func:`rule_strip`,
  SVG), every cited ruling once, labelled with what it says;
* ``cards/PASSCODE.html``: a card's names in each language, the rules its
  rulings support and its rulings, newest first; ``cards.html`` lists the
  cards, ``archetypes.html`` the archetypes (quoted families such as
  「女武神」怪兽);
* ``sources/SOURCE.html``: every current ruling of a page by section (the
  place search results and the change history link to); ``sources.html``:
  every source with its licence; ``procedural.html``: the procedural rules
  with the rulings that state them;
* ``timeline.html``: dated rulings per month, one strip per source
  (:func:`month_chart`); ``history.html``: the runs and what each added,
  changed or retired, linking to ``runs/RUN.html``;
* ``search.html`` with ``assets/search-index.js``: client-side search over
  rules, card names (every language) and ruling text, either Chinese script
  (OpenCC's character table, :func:`pipeline.chinese.character_map`).
* ``simulators.html``: the rulings against the simulator cores
  (:mod:`pipeline.simulators`), disagreements first with the cited lines of
  each core's source, then every (kind, event) pair.

Pages are rendered with Jinja2 templates (``pipeline/templates/report/``)
with autoescaping on: ruling text is a stranger's text and is only ever
rendered as text. Links to other sites are kept only when they are http(s).

The site is written into a new folder beside DIR and swapped in
(:func:`write_report`); ``DIR/.rulings-report`` lists the files it wrote,
the only files a later report replaces.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import secrets
import shutil
import stat
import time
from collections import Counter, defaultdict
from contextlib import closing
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from datetime import date
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import duckdb
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

try:
    import fcntl
except ImportError:  # Windows: no leftover cleanup
    fcntl = None

from . import queries, simulators
from .cards import card_names
from .chinese import character_map
from .compile import text_key
from .errors import UsageError
from .schema import events as vocabulary_events
from .schema import kind_groups, procedural_rules, vocabulary
from .schema import simulators as schema_simulators

TEMPLATES = Path(__file__).resolve().parent / "templates" / "report"
VERDICT_LABELS = {  # symbol and word: the matrix never relies on colour alone
    "kept": ("✓", "kept"),
    "lost": ("✗", "lost"),
    "not_applicable": ("–", "not applicable"),
    "conditional": ("◐", "conditional"),
    "unknown": ("?", "unknown"),
    "not_modelled": ("∅", "not modelled"),  # a simulator's verdict (pipeline/simulators.py)
}
SEARCH_TEXT_CHARS = 240  # ruling text kept per entry of the search index


@dataclass
class Ruling:
    """One current record as the site shows it."""

    record_id: str
    source_id: str
    seq: int
    section: str
    role: str
    status: str
    text: str
    norm: str = ""  # records.norm_text: Simplified, canonical terms
    dates: list[str] = field(default_factory=list)  # ISO, own and heading dates (not references)
    faqs: list[tuple[str, str]] = field(default_factory=list)  # (FAQ id, URL)
    cards: list[tuple[str, int]] = field(default_factory=list)  # (name as quoted, passcode)
    lead_in: str = ""  # the text of the line a list item hangs under ("A monster flipped face-down remembers:")

    @property
    def latest(self) -> str:
        return max(self.dates) if self.dates else ""

    @cached_property
    def key(self) -> str:
        """The ruling regardless of page, date stamps and spacing
        (:func:`pipeline.compile.text_key`): one entry of the site."""
        return text_key(self.norm or self.text)


@dataclass
class Entry:
    """One ruling as the site lists it: ``ruling`` (the place shown in
    full) and ``places`` (every current record of the same ruling,
    ``ruling`` first: the topic page, a yearly log, a frozen extract)."""

    ruling: Ruling
    places: list[Ruling]

    @property
    def record_id(self) -> str:
        return self.ruling.record_id

    @property
    def latest(self) -> str:
        return max(p.latest for p in self.places)

    @property
    def dates(self) -> list[str]:
        return sorted({d for p in self.places for d in p.dates})


def _place_rank(ruling: Ruling) -> tuple:
    """Which place of a ruling is shown in full: a current one, with the most dates, then page order."""
    return (ruling.status != "current", -len(ruling.dates), ruling.source_id, ruling.seq)


def entries(rulings: list[Ruling], every: dict[str, list[Ruling]] | None = None) -> list[Entry]:
    """``rulings`` as entries, one per ruling (:attr:`Ruling.key`), in the
    order of each ruling's first place. ``every``: all places by key (the
    whole site's), so an entry lists places beyond ``rulings`` too."""
    grouped: dict[str, list[Ruling]] = {}
    for ruling in rulings:
        grouped.setdefault(ruling.key, []).append(ruling)
    out = []
    for key, its in grouped.items():
        places = sorted({r.record_id: r for r in [*its, *(every or {}).get(key, [])]}.values(), key=_place_rank)
        out.append(Entry(places[0], places))
    return out


@dataclass
class ReportSummary:
    """What :func:`write_report` wrote: page counts and seconds taken."""

    out_dir: Path
    rules: int
    cards: int
    archetypes: int
    sources: int
    runs: int
    files: int
    seconds: float

    def as_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "rules": self.rules, "cards": self.cards,
                "archetypes": self.archetypes, "sources": self.sources, "runs": self.runs,
                "files": self.files, "seconds": round(self.seconds, 2)}


# --------------------------------------------------------------------------- reading the database

def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[tuple]:
    return con.execute(sql, params or []).fetchall()


def read_rulings(con: duckdb.DuckDBPyConnection) -> dict[str, Ruling]:
    """Every current record (not retired) with its dates, FAQ links, linked
    cards and the lead-in of a list item (its parent record's text)."""
    rulings = {r[0]: Ruling(*r[:8], lead_in=r[8] or "") for r in _rows(con, """
        SELECT r.record_id, r.source_id, r.seq, coalesce(r.section_path, ''), coalesce(r.role, ''),
               coalesce(r.status, ''), r.text, coalesce(r.norm_text, ''), p.text
        FROM records r LEFT JOIN records p ON p.record_id = r.parent_id
        WHERE r.retired_run IS NULL ORDER BY r.source_id, r.seq""")}
    for record_id, day, faq_id, faq_url in _rows(con, """
            SELECT record_id, date, faq_id, faq_url FROM record_dates
            WHERE valid AND coalesce(kind, 'own') <> 'reference' ORDER BY record_id, ord"""):
        ruling = rulings.get(record_id)
        if ruling is None:
            continue
        if day is not None and day.isoformat() not in ruling.dates:
            ruling.dates.append(day.isoformat())
        if faq_id and (faq_id, faq_url) not in ruling.faqs:
            ruling.faqs.append((faq_id, faq_url or ""))
    for record_id, name, passcode in _rows(con, """
            SELECT record_id, name, passcode FROM card_mentions
            WHERE passcode IS NOT NULL AND coalesce(kind, 'card') = 'card' ORDER BY record_id, ord"""):
        ruling = rulings.get(record_id)
        if ruling is not None and (name, passcode) not in ruling.cards:
            ruling.cards.append((name, passcode))
    return rulings


def text_segments(ruling: Ruling) -> list[tuple[str, int | None]]:
    """The ruling's text cut at its linked card names: ``[(text, passcode
    or None)]``, the quote marks outside the linked part. The template
    escapes each piece; no markup is ever built from the text."""
    names = {name: passcode for name, passcode in ruling.cards if name}
    text = ruling.text
    found: list[tuple[int, int, int]] = []  # (start, end, passcode) of each quoted linked name
    for name in sorted(names, key=len, reverse=True):  # longest first: a name inside a longer one loses
        at = text.find("「" + name + "」")
        while at != -1:
            a, b = at + 1, at + 1 + len(name)
            if not any(a < e and s < b for s, e, _ in found):
                found.append((a, b, names[name]))
            at = text.find("「" + name + "」", b)
    pieces: list[tuple[str, int | None]] = []
    at = 0
    for a, b, passcode in sorted(found):
        pieces.append((text[at:a], None))
        pieces.append((text[a:b], passcode))
        at = b
    pieces.append((text[at:], None))
    return [p for p in pieces if p[0]]


def read_rules(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict]:
    """Rules by (info kind, event) with their citations (``role``,
    ``verdict``, ``record_id``, ``date``), overridden verdicts, the newer
    rulings that dispute them and, for a conditional rule, its cases in
    words (:func:`pipeline.queries.case_list`)."""
    rules = {}
    for kind, event, verdict, condition, latest, changed_on, conflicts, disputed_by, cases in _rows(con, """
            SELECT info_kind, event, verdict, condition, latest_date, changed_on, conflicts, disputed_by, cases
            FROM rules"""):
        rules[(kind, event)] = {"verdict": verdict, "condition": condition or "",
                                "latest_date": latest.isoformat() if latest else "",
                                "changed_on": changed_on.isoformat() if changed_on else "",
                                "conflicts": queries.conflict_list(conflicts), "citations": [],
                                "disputed_by": list(disputed_by or []), "cases": queries.case_list(cases)}
    for kind, event, record_id, role, verdict, day in _rows(con, """
            SELECT info_kind, event, record_id, role, verdict, date FROM rule_citations
            ORDER BY info_kind, event, date DESC NULLS LAST, record_id"""):
        rule = rules.get((kind, event))
        if rule is not None:
            rule["citations"].append({"record_id": record_id, "role": role, "verdict": verdict,
                                      "date": day.isoformat() if day else "",
                                      "cases": [c["en"] for c in rule["cases"] if record_id in c["record_ids"]]})
    return rules


def read_history(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Runs, newest first, each with its record changes (``added``,
    ``changed``, ``retired``: lists of record ids)."""
    runs = [{"run_id": r[0], "kind": r[1], "started_at": str(r[2] or ""), "ended_at": str(r[3] or ""),
             "tried": r[4], "unchanged": r[5], "changed_pages": r[6], "failed": r[7],
             "changes": {"added": [], "changed": [], "retired": []}}
            for r in _rows(con, "SELECT run_id, kind, started_at, ended_at, tried, unchanged, changed, failed "
                                "FROM runs ORDER BY run_id DESC")]
    by_id = {run["run_id"]: run for run in runs}
    for run_id, record_id, change in _rows(con, "SELECT run_id, record_id, change FROM record_changes "
                                                "ORDER BY run_id, source_id, record_id"):
        run = by_id.get(run_id)
        if run is not None and change in run["changes"]:
            run["changes"][change].append(record_id)
    return runs


def read_archetypes(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Archetype names (Simplified) with the record ids that name them, most named first."""
    found: dict[str, list[str]] = defaultdict(list)
    for name, record_id in _rows(con, """
            SELECT m.norm_name, m.record_id FROM card_mentions m JOIN records r USING (record_id)
            WHERE m.kind = 'archetype' AND r.retired_run IS NULL ORDER BY m.norm_name, r.source_id, r.seq"""):
        if record_id not in found[name]:
            found[name].append(record_id)
    return [{"name": n, "records": ids} for n, ids in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


# --------------------------------------------------------------------------- shaping

@lru_cache(maxsize=None)
def slug(text: str) -> str:
    """A file name for an id: ASCII letters, digits, ``_`` and ``-`` kept,
    every other character (``.`` and ``/`` too) as ``~XX`` per UTF-8 byte,
    so distinct ids give distinct names and none is ``..`` or hidden."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else
                   "".join(f"~{b:02X}" for b in ch.encode("utf-8")) for ch in text) or "~"


def external_url(url: str | None) -> str:
    """``url`` when it is an http(s) address, else '' (no ``javascript:`` or
    ``data:`` links from scraped pages)."""
    if not url:
        return ""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return ""
    return url.strip() if scheme in ("http", "https") else ""


@lru_cache(maxsize=None)
def words() -> dict[str, dict[str, dict[str, str]]]:
    """The words of ``schema/vocabulary.json`` by section and id:
    ``{"events": {id: {"en", "zh", "en_monster", "en_done", "zh_when"}},
    "verdicts": {id: {"en", "zh"}}, "kinds": {id: {"en", "zh", "meaning"}}}``;
    an id without words is said by its id."""
    data = vocabulary()
    out: dict[str, dict[str, dict[str, str]]] = {"events": {}, "verdicts": {}, "kinds": {}}
    for section, name in (("events", "events"), ("verdicts", "verdicts"), ("info_kinds", "kinds")):
        for item in data[section]:
            said = {"en": item["id"].replace("_", " "), "zh": "", "en_monster": "A monster " + item["id"],
                    "en_done": item["id"].replace("_", " "), "zh_when": ""}
            said.update(item.get("words") or {})
            said["meaning"] = item.get("meaning", "")
            out[name][item["id"]] = said
    return out


@lru_cache(maxsize=None)
def verdict_badge(verdict: str) -> Markup:
    """A verdict as the site shows it: its symbol and its words in English
    and Chinese on its colour (a ``<span class="badge v-VERDICT">``)."""
    symbol, word = VERDICT_LABELS.get(verdict, ("?", verdict))
    zh = words()["verdicts"].get(verdict, {}).get("zh", "")
    return Markup('<span class="badge v-{}"><span aria-hidden="true">{}</span> {}{}</span>').format(
        verdict, symbol, word, Markup(' <span lang="zh">{}</span>').format(zh) if zh else "")


def rule_sentence(kind: str, event: str, verdict: str, case: dict | None = None) -> dict[str, str]:
    """What a rule (or one case of a conditional rule: a
    :func:`pipeline.queries.case_list` item) says, as one sentence in
    English and one in Simplified Chinese: ``{"en", "zh"}``."""
    if case is not None:
        said = _sentence(kind, event, case["verdict"])
        return {"en": f"If {case['en']}: {said['en'][0].lower()}{said['en'][1:]}",
                "zh": f"{case['zh'] or case['en']}时：{said['zh']}"}
    return dict(_sentence(kind, event, verdict))


@lru_cache(maxsize=None)
def _sentence(kind: str, event: str, verdict: str) -> dict[str, str]:
    w = words()
    k, e = w["kinds"][kind], w["events"][event]
    if verdict == "kept":
        return {"en": f"{e['en_monster']} keeps {k['en']}.", "zh": f"{e['zh_when']}，{k['zh']}保留。"}
    if verdict == "lost":
        return {"en": f"{e['en_monster']} loses {k['en']}.", "zh": f"{e['zh_when']}，{k['zh']}丢失。"}
    if verdict == "not_applicable":
        return {"en": f"Not applicable: a monster with {k['en']} cannot be {e['en_done']}.",
                "zh": f"不适用：有{k['zh']}的怪兽不会{e['zh']}。"}
    if verdict == "conditional":
        return {"en": f"{e['en_monster']} keeps or loses {k['en']}, by case.",
                "zh": f"{e['zh_when']}，{k['zh']}是否保留视情况而定。"}
    return {"en": f"No ruling says whether {e['en_monster'][0].lower()}{e['en_monster'][1:]} keeps {k['en']}.",
            "zh": f"没有裁定说明{e['zh_when']}{k['zh']}是否保留。"}


def matrix(rules: dict[tuple[str, str], dict], supports: dict[tuple[str, str], int] | None = None) -> list[dict]:
    """Rows of the index matrix: ``[{"group", "title", "rows": [{"kind",
    "meaning", "words", "cells": [{"event", "verdict", "supports",
    "latest_date", "href", "sentence"}]}]}]``; a pair without a rule is
    ``unknown``. ``supports``: the number of distinct rulings supporting
    each rule (else its supporting citations are counted)."""
    meanings = {k["id"]: k.get("meaning", "") for k in vocabulary()["info_kinds"]}
    groups = []
    for group in kind_groups():
        rows = []
        for kind in group["kinds"]:
            cells = []
            for event in vocabulary_events():
                rule = rules.get((kind, event))
                if supports is not None:
                    n = supports.get((kind, event), 0)
                else:
                    n = sum(c["role"] == "supports" for c in rule["citations"]) if rule else 0
                verdict = rule["verdict"] if rule else "unknown"
                cells.append({"event": event, "verdict": verdict,
                              "supports": n, "latest_date": rule["latest_date"] if rule else "",
                              "href": f"rules/{rule_file(kind, event)}",
                              "sentence": rule_sentence(kind, event, verdict)})
            rows.append({"kind": kind, "meaning": meanings.get(kind, ""), "words": words()["kinds"][kind],
                         "cells": cells})
        groups.append({"group": group["id"], "title": group["title"], "rows": rows})
    return groups


def rule_file(kind: str, event: str) -> str:
    return f"{slug(kind)}--{slug(event)}.html"


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
    :func:`_cited_entries`) with a date as a mark at its latest date,
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


def search_index(rulings: list[Entry], cards: dict[int, dict[str, str]], rules: dict) -> dict:
    """The client-side search index: ``{"fold": [traditional, simplified],
    "cards": [[passcode, [names]]], "rulings": [[record_id, href, text,
    places]], "rules": [[href, verdict, sentence_en, sentence_zh, words]]}``.
    ``fold``: two strings of equal length, OpenCC's Traditional to
    Simplified characters (:func:`pipeline.chinese.character_map`), which
    the page applies to the query and the texts alike, so either script
    finds both. Each ruling once (its text cut to SEARCH_TEXT_CHARS),
    linking to the place shown in full."""
    fold = character_map("t2s")
    w = words()
    rule_rows = []
    for (kind, event), rule in sorted(rules.items()):
        said = rule_sentence(kind, event, rule["verdict"])
        extra = [kind, event, kind.replace("_", " "), event.replace("_", " "), w["kinds"][kind]["meaning"],
                 w["kinds"][kind]["zh"], w["events"][event]["en"], w["events"][event]["zh"],
                 w["verdicts"][rule["verdict"]]["en"], w["verdicts"][rule["verdict"]]["zh"],
                 *(f"{c['en']} {c['zh']}" for c in rule["cases"])]
        rule_rows.append([f"rules/{rule_file(kind, event)}", rule["verdict"], said["en"], said["zh"], " ".join(extra)])
    return {
        "fold": ["".join(fold), "".join(fold.values())],
        "cards": [[passcode, sorted(set(names.values()))] for passcode, names in sorted(cards.items())],
        "rulings": [[e.record_id, f"sources/{slug(e.ruling.source_id)}.html#{e.record_id}",
                     e.ruling.text[:SEARCH_TEXT_CHARS], len(e.places)] for e in rulings],
        "rules": rule_rows,
    }


def _cited_entries(rule: dict, rulings: dict[str, Ruling], every: dict[str, list[Ruling]]) -> list[dict]:
    """A rule's citations, one per ruling: ``[{"record_id" (the place
    shown), "record_ids" (every cited place), "says": [{"verdict",
    "cases"}], "verdict", "role", "date", "entry"}]`` in citation order
    (newest first); ``entry`` is None for a record no longer current."""
    grouped: dict[str, list[dict]] = {}
    for c in rule["citations"]:
        ruling = rulings.get(c["record_id"])
        grouped.setdefault(ruling.key if ruling else c["record_id"], []).append(c)
    out = []
    for key, cs in grouped.items():
        places = [rulings[c["record_id"]] for c in cs if c["record_id"] in rulings]
        entry = entries(places, every)[0] if places else None
        says = list({(c["verdict"], tuple(c["cases"])): {"verdict": c["verdict"], "cases": c["cases"]}
                     for c in cs}.values())
        roles = [c["role"] for c in cs]
        role = "supports" if "supports" in roles else roles[0]
        out.append({"record_id": entry.record_id if entry else cs[0]["record_id"],
                    "record_ids": [c["record_id"] for c in cs], "says": says, "verdict": cs[0]["verdict"],
                    "role": role, "date": max(c["date"] for c in cs), "entry": entry})
    return out


# --------------------------------------------------------------------------- writing

def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      auto_reload=False)  # one run: no mtime check per render
    env.globals.update(verdict_badge=verdict_badge, segments=text_segments, slug=slug,
                       rule_file=rule_file, rule_sentence=rule_sentence, words=words(),
                       strip_w=STRIP_W, strip_h=STRIP_H)
    env.filters["external_url"] = external_url
    return env


class _Writer:
    def __init__(self, out_dir: Path, sources: dict):
        self.out_dir = out_dir
        self.env = _environment()
        self.sources = sources
        self.files = 0
        self.written: set[str] = set()  # paths relative to out_dir, as SITE_FILE allows
        self.card_pages = self.source_pages = 0
        self._fragments: dict[tuple[str, str], Markup] = {}

    def page(self, rel: str, template: str, **context) -> None:
        root = "../" * rel.count("/")
        html = self.env.get_template(template).render(
            root=root, sources=self.sources, ruling_html=lambda ruling: self.fragment(ruling, root),
            entry_html=lambda entry: self.entry_fragment(entry, root), **context)
        self.write(rel, html)

    def fragment(self, ruling: Ruling, root: str) -> Markup:
        """A ruling's text and facts, rendered once per link depth (a ruling
        shows on its source page and on the page of every card it names)."""
        key = (ruling.record_id, root)
        html = self._fragments.get(key)
        if html is None:
            html = self._fragments[key] = Markup(self.env.get_template("_ruling.html.j2").render(
                root=root, sources=self.sources, ruling=ruling))
        return html

    def entry_fragment(self, entry: Entry, root: str) -> Markup:
        """A ruling shown once: its place in full, then its other places
        (page, section and dates, each linking to the ruling there)."""
        html = self.fragment(entry.ruling, root)
        if len(entry.places) < 2:
            return html
        key = ("places:" + entry.record_id, root)
        if key not in self._fragments:
            self._fragments[key] = Markup(self.env.get_template("_places.html.j2").render(
                root=root, places=entry.places[1:]))
        return html + self._fragments[key]

    def write(self, rel: str, text: str) -> None:
        """Write ``rel`` (a name :data:`SITE_FILE` allows) under the staging folder, as a new file."""
        if not SITE_FILE.fullmatch(rel) or rel in self.written:
            raise ValueError(f"the report would write {rel!r}, which is not one of its file names")
        path = self.out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as fh:  # the folder is new: nothing there to follow or replace
            fh.write(text)
        self.written.add(rel)
        self.files += 1


# --------------------------------------------------------------------------- the site folder

MARKER = ".rulings-report"  # the site's manifest (JSON): the files the report wrote there
WRITTEN_BY = "rulings report"
LEGACY_MARKER = "written by `rulings report`"  # how the text marker of versions before 2026-12-02 starts
# Every name a report writes, relative to DIR: an id becomes a slug, a passcode or run id a number.
SITE_FILE = re.compile(r"(?:index|cards|archetypes|timeline|history|search|simulators|procedural|sources)\.html"
                       r"|(?:rules|sources)/[A-Za-z0-9_~-]+\.html|(?:cards|runs)/-?[0-9]+\.html"
                       r"|assets/(?:search-index\.js|style\.css|search\.js)")
STAGING = "rulings-report-"  # staging folders beside DIR: .<DIR's name>.rulings-report-<random>


def _entries(folder: Path) -> Iterator[tuple[str, os.DirEntry]]:
    """Every entry under ``folder`` as (path relative to it with ``/``,
    entry), a folder before what it holds; symlinks are entries, never
    followed."""
    stack = [("", folder)]
    while stack:
        prefix, here = stack.pop()
        with os.scandir(here) as found:
            entries = sorted(found, key=lambda e: e.name)
        for entry in entries:
            yield prefix + entry.name, entry
            if entry.is_dir(follow_symlinks=False):
                stack.append((prefix + entry.name + "/", Path(entry.path)))


def site_files(folder: Path) -> set[str] | None:
    """The files an earlier report wrote in ``folder``, from its manifest
    :data:`MARKER` (a regular file, not a symlink): only names a report
    writes (:data:`SITE_FILE`) count, whatever else a hand-edited manifest
    lists. A text marker of an older version: every such name in the folder.
    None when ``folder`` holds no report's manifest."""
    path = folder / MARKER
    if path.is_symlink() or not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith(LEGACY_MARKER):
        listed = [rel for rel, _ in _entries(folder)]
    else:
        try:
            manifest = json.loads(text)
        except ValueError:
            return None
        if not (isinstance(manifest, dict) and manifest.get("written_by") == WRITTEN_BY
                and isinstance(manifest.get("files"), list)):
            return None
        listed = manifest["files"]
    return {rel for rel in listed if isinstance(rel, str) and SITE_FILE.fullmatch(rel)}


def _manifest_text(files: set[str], complete: bool) -> str:
    return json.dumps({"written_by": WRITTEN_BY, "complete": complete, "files": sorted(files),
                       "note": "the next `rulings report` of this folder replaces these files; others are kept"},
                      ensure_ascii=False, indent=1) + "\n"


def _target(out_dir: str) -> Path:
    """DIR as an absolute path, symlinks resolved (a symlinked DIR is its
    target's site). UsageError for an empty name, the root, a loop."""
    if not str(out_dir).strip():  # Path("") would be the current folder
        raise UsageError("DIR is empty: give the folder to write the site into", place="DIR")
    try:
        target = Path(out_dir).expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UsageError(f"{out_dir} cannot be resolved: {exc}", place="DIR") from None
    if target.parent == target:
        raise UsageError(f"{out_dir} is the root folder; give a folder to write the site into", place="DIR")
    return target


def _check_target(out_dir: Path) -> set[str] | None:
    """What the report may replace in ``out_dir``: None when it does not
    exist, the files an earlier report wrote there (:func:`site_files`; an
    empty set for an empty folder). UsageError, with nothing touched, for a
    file, or a folder holding anything that is no site a report wrote."""
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise UsageError(f"{out_dir} is a file, not a folder", place="DIR")
    if not out_dir.exists():
        return None
    ours = site_files(out_dir)
    if ours is None:
        held = sorted(os.listdir(out_dir))
        if held:
            shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
            raise UsageError(f"{out_dir} holds {shown} and is no site `rulings report` wrote (no {MARKER} manifest "
                             "in it): choose a new or empty folder", place="DIR")
        return set()
    return ours


def _staging_prefix(target: Path) -> str:
    return f".{target.name[:160]}.{STAGING}"


def _make_staging(target: Path) -> tuple[Path, int | None]:
    """A new folder beside ``target`` to write the site into (mode as
    ``mkdir`` gives, or the old site's), holding an incomplete manifest,
    and a descriptor holding an exclusive lock on it (None without
    ``fcntl``): a folder whose lock nobody holds is a leftover."""
    while True:
        staging = target.with_name(_staging_prefix(target) + secrets.token_hex(4))
        try:
            staging.mkdir()
            break
        except FileExistsError:
            continue
    fd = None
    try:
        if target.is_dir():
            os.chmod(staging, stat.S_IMODE(target.stat().st_mode))
        if fcntl is not None:
            fd = os.open(staging, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
        (staging / MARKER).write_text(_manifest_text(set(), False), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if fd is not None:
            os.close(fd)
        raise
    return staging, fd


def _clean_leftovers(target: Path) -> None:
    """Remove the staging folders beside ``target`` that killed reports left
    (named after it, holding a report's manifest, locked by no running
    report); one holding the previous site while ``target`` is missing (a
    report killed between the two renames of a system without an atomic
    exchange) is renamed back to ``target``. Without ``fcntl`` nothing is
    removed (a running report's folder cannot be told apart)."""
    if fcntl is None or not target.parent.is_dir():
        return
    prefix = _staging_prefix(target)
    for entry in os.scandir(target.parent):
        if not entry.name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        if site_files(folder) is None:
            continue
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a running report's
            os.close(fd)
            continue
        try:
            if entry.name.endswith("-old") and not os.path.lexists(target):
                os.rename(folder, target)
            else:
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)


def _carry_over(old: Path, new: Path, ours: set[str]) -> None:
    """Put into ``new`` every entry of ``old`` that no report wrote (not in
    ``ours``), at the same place: a file as a hard link (a copy where the
    file system has none), a symlink as the same link (never followed), a
    folder as a new folder. ``old`` is not changed. UsageError when the new
    site writes a file at the place of one of them."""
    for rel, entry in _entries(old):
        if rel == MARKER or rel in ours:
            continue
        dest = new / rel
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and dest.is_dir() and not dest.is_symlink():
            continue  # a folder the site has too (rules/, cards/)
        if os.path.lexists(dest):
            raise UsageError(f"{old / rel} is not a file an earlier report wrote, and this report writes {rel}: "
                             "move it out of the folder", place="DIR")
        if is_dir:
            dest.mkdir()
            os.chmod(dest, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
        elif entry.is_symlink():
            os.symlink(os.readlink(entry.path), dest)
        else:
            try:
                os.link(entry.path, dest, follow_symlinks=False)
            except OSError:
                if not entry.is_file(follow_symlinks=False):
                    raise
                shutil.copy2(entry.path, dest, follow_symlinks=False)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one atomic step (Linux's
    ``renameat2`` with ``RENAME_EXCHANGE``); False when the system or its
    file system has no such call. OSError when the exchange fails."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError, TypeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(staging: Path, target: Path) -> Path:
    """Put the site written in ``staging`` at ``target``; returns where the
    previous folder went (to remove), ``staging`` itself when there was
    none. Atomic where the system can exchange two folders; else two
    renames, the previous site beside as ``<staging>-old`` between them."""
    try:
        if not os.path.lexists(target):
            os.rename(staging, target)
            return staging
        if _exchange(staging, target):
            return staging
        aside = staging.with_name(staging.name + "-old")
        os.rename(target, aside)
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(aside, target)
            raise
        return aside
    except OSError as exc:
        raise UsageError(f"cannot put the new site in place at {target}: {exc.strerror or exc} (a mount point? "
                         "write the site to a folder inside it)", place="DIR") from None


EFFECT_EVENTS = ("face_down", "temp_banish", "flip_face_up")


def write_report(db_path: Path, out_dir: Path | str, engine=None) -> ReportSummary:
    """Write the static site for the database at ``db_path`` at ``out_dir``:
    a new or empty folder, or one an earlier report wrote (:data:`MARKER`).
    The site is written into a new folder beside it and swapped in (one
    atomic exchange on Linux), so an interrupted report leaves the previous
    site whole; the previous site's files are removed, every other entry of
    the folder is kept (:func:`_carry_over`). LoadError when there is no
    database; UsageError, with nothing touched, for an empty DIR, a file, a
    folder that is no report's site, or one of the folder's own files where
    the new site writes one. ``engine``: the generated engine module, whose
    ``card_answer`` gives each card page the table of its effects after the
    three events (none without it)."""
    started = time.perf_counter()
    out_dir = _target(str(out_dir))
    _clean_leftovers(out_dir)
    ours = _check_target(out_dir)
    with closing(queries.connect(db_path)) as con:
        rulings = read_rulings(con)
        rules = read_rules(con)
        history = read_history(con)
        archetypes = read_archetypes(con)
        sources = {r[0]: {"source_id": r[0], "url": external_url(r[1]), "language": r[2], "licence": r[3]}
                   for r in _rows(con, "SELECT source_id, url, language, licence FROM sources ORDER BY source_id")}
        built = dict(_rows(con, "SELECT key, value FROM build_info"))
        compared = simulators.comparison(con)
        stated = {r[0]: list(r[1] or []) for r in _rows(con, "SELECT rule_id, record_ids FROM procedural_rules")}
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging, lock = _make_staging(out_dir)
    except OSError as exc:
        raise UsageError(f"cannot write beside {out_dir} (the site is written into a new folder in "
                         f"{out_dir.parent} and swapped in): {exc.strerror or exc}", place="DIR") from None
    try:
        w = _Writer(staging, sources)
        _write_site(w, rulings, rules, history, archetypes, sources, built, stated, engine)
        _write_simulators(w, compared, built)
        (staging / MARKER).write_text(_manifest_text(w.written, True), encoding="utf-8")
        if ours is not None:
            _carry_over(out_dir, staging, ours)
        previous = _swap_in(staging, out_dir)
        shutil.rmtree(previous, ignore_errors=True)
    finally:
        if os.path.lexists(staging):
            shutil.rmtree(staging, ignore_errors=True)
        if lock is not None:
            os.close(lock)
    return ReportSummary(out_dir, len(rules), w.card_pages, len(archetypes), w.source_pages, len(history),
                         w.files, time.perf_counter() - started)


def _card_effects(engine, passcodes) -> dict[int, list[dict]]:
    """Each card's effects after the three events (pipeline/cardask.py), from the engine's card table."""
    if engine is None or not hasattr(engine, "card_answer"):
        return {}
    from .cardask import table_summaries

    return table_summaries(engine, sorted(passcodes))


def _write_site(w: _Writer, rulings: dict[str, Ruling], rules: dict, history: list[dict], archetypes: list[dict],
                sources: dict, built: dict, stated: dict[str, list[str]], engine=None) -> None:
    """Every page and asset of the site, through ``w``; sets
    ``w.card_pages`` and ``w.source_pages``. ``stated``: the record ids
    stating each procedural rule (table ``procedural_rules``)."""
    names = card_names()
    every: dict[str, list[Ruling]] = defaultdict(list)  # each ruling's places
    for ruling in rulings.values():
        every[ruling.key].append(ruling)
    all_entries = entries(list(rulings.values()), every)
    by_card: dict[int, list[Ruling]] = defaultdict(list)
    for ruling in rulings.values():
        for passcode in dict.fromkeys(p for _, p in ruling.cards):
            by_card[passcode].append(ruling)
    cards = {p: names.get(p, {}) for p in by_card}
    common = {"built": built}

    cited = {pair: _cited_entries(rule, rulings, every) for pair, rule in rules.items()}
    supports = {pair: sum(c["role"] == "supports" for c in cs) for pair, cs in cited.items()}
    supported_by: dict[str, list[tuple[str, str]]] = defaultdict(list)  # record id -> rules it supports
    for pair, rule in sorted(rules.items()):
        for c in rule["citations"]:
            if c["role"] == "supports" and pair not in supported_by[c["record_id"]]:
                supported_by[c["record_id"]].append(pair)
    all_dates = [c["date"][:7] for cs in cited.values() for c in cs if c["date"]]
    first, last = (min(all_dates), max(all_dates)) if all_dates else ("2000-01", "2000-01")

    w.page("index.html", "index.html.j2", groups=matrix(rules, supports), events=vocabulary_events(),
           verdicts=[v["id"] for v in vocabulary()["verdicts"]],
           counts=_counts(all_entries, rules, cards), **common)
    for (kind, event), rule in sorted(rules.items()):
        its = cited[(kind, event)]
        w.page(f"rules/{rule_file(kind, event)}", "rule.html.j2", kind=kind, event=event, rule=rule,
               citations=its, strip=rule_strip(rule, its, first, last),
               sentence=rule_sentence(kind, event, rule["verdict"]),
               case_sentences=[rule_sentence(kind, event, c["verdict"], c) for c in rule["cases"]], **common)
    card_counts = {}
    effects = _card_effects(engine, by_card)
    for passcode, its in by_card.items():
        shown = sorted(entries(its, every), key=lambda e: (e.latest, e.record_id), reverse=True)
        card_counts[passcode] = len(shown)
        its_rules = list(dict.fromkeys(pair for r in its for pair in supported_by.get(r.record_id, [])))
        its_rules = [{"kind": k, "event": e, "verdict": rules[(k, e)]["verdict"],
                      "sentence": rule_sentence(k, e, rules[(k, e)]["verdict"])} for k, e in sorted(its_rules)]
        w.page(f"cards/{passcode}.html", "card.html.j2", passcode=passcode, names=cards[passcode],
               rulings=shown, rules=its_rules, effects=effects.get(passcode, []), effect_events=EFFECT_EVENTS,
               **common)
    card_list = sorted(({"passcode": p, "name": _display_name(cards[p], p), "count": card_counts[p]}
                        for p in by_card), key=lambda c: (-c["count"], c["name"]))
    w.page("cards.html", "cards.html.j2", cards=card_list, **common)
    w.page("archetypes.html", "archetypes.html.j2", archetypes=archetypes, rulings=rulings, **common)
    by_source: dict[str, list[Ruling]] = defaultdict(list)
    for ruling in rulings.values():
        by_source[ruling.source_id].append(ruling)
    for source_id, its in by_source.items():
        w.page(f"sources/{slug(source_id)}.html", "source.html.j2", source=sources.get(source_id, {
            "source_id": source_id, "url": "", "language": "", "licence": ""}), rulings=its, **common)
    w.page("sources.html", "sources.html.j2", source_list=[
        dict(s, rulings=len(by_source.get(sid, [])), shown=sid in by_source) for sid, s in sorted(sources.items())],
        **common)
    procedural = [dict(rule, entries=entries([rulings[r] for r in stated.get(rule_id, []) if r in rulings], every))
                  for rule_id, rule in procedural_rules().items()]
    w.page("procedural.html", "procedural.html.j2", rules=procedural, **common)
    w.page("timeline.html", "timeline.html.j2", chart=month_chart(all_entries), **common)
    w.page("history.html", "history.html.j2", runs=history, **common)
    for run in history:
        w.page(f"runs/{run['run_id']}.html", "run.html.j2", run=run, rulings=rulings, **common)
    w.page("search.html", "search.html.j2", **common)
    w.write("assets/search-index.js", "window.RULINGS_SEARCH = "
            + json.dumps(search_index(all_entries, cards, rules), ensure_ascii=False, separators=(",", ":")) + ";\n")
    for asset in ("style.css", "search.js"):
        w.write(f"assets/{asset}", (TEMPLATES / asset).read_text(encoding="utf-8"))
    w.card_pages, w.source_pages = len(by_card), len(by_source)


def _write_simulators(w: _Writer, rows: list[dict], built: dict) -> None:
    """``simulators.html``: the rulings against the simulator cores
    (:func:`pipeline.simulators.compare` rows), disagreements first with the
    cited lines of each core's source, then every pair."""
    tallies: dict[str, dict[str, int]] = {}
    for row in rows:
        for sid, s in row["simulators"].items():
            tally = tallies.setdefault(sid, {"agree": 0, "disagree": 0, "none": 0})
            tally["none" if s["agrees"] is None else "agree" if s["agrees"] else "disagree"] += 1
    disagreements = [r for r in rows if any(s["agrees"] is False for s in r["simulators"].values())]
    w.page("simulators.html", "simulators.html.j2", rows=rows, disagreements=disagreements, tallies=tallies,
           sims=schema_simulators(), built=built)


def _display_name(names: dict[str, str], passcode: int) -> str:
    return names.get("zh-CN") or names.get("zh-community") or names.get("en") or str(passcode)


def _counts(rulings: list[Entry], rules: dict, cards: dict) -> dict:
    return {"rulings": len(rulings), "dated": sum(bool(e.latest) for e in rulings),
            "rules": len(rules), "known": sum(r["verdict"] != "unknown" for r in rules.values()),
            "cards": len(cards)}
