"""The measuring side: a built database against gold files.

Takes an open database (:func:`pipeline.queries.connect`) and gold the user
gives: verdicts per (info kind, event) as CSV (:func:`read_gold`,
:func:`compare_verdicts`: ``rulings evaluate --gold``) and ruling-level
statements as JSON Lines (:func:`read_statement_gold`,
:func:`score_statements`, :func:`score_statement_files`: ``rulings evaluate
--statements``); gives plain dicts of figures (agreement, precision,
recall). Gold is for measuring only: nothing here feeds a build. UsageError
naming the file and line for a gold file that cannot be used.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb

from .errors import UsageError
from .queries import json_problem, unknown_name
from .schema import events, info_kinds, verdicts
from .userfiles import read_user_file


# --------------------------------------------------------------------------- evaluation

GOLD_COLUMNS = ("info_kind", "event", "verdict")


def read_gold(path: Path, place: str = "--gold") -> list[dict]:
    """Rows of a gold CSV with columns info_kind, event, verdict and
    optionally dates (ISO, ``;``-separated); a BOM is allowed. UsageError
    naming the file and line for missing columns, a short row or bytes that
    are not UTF-8, naming ``place`` (the option) for a file that is missing
    or not a regular file (:func:`~pipeline.userfiles.read_user_file`)."""
    try:
        text = read_user_file(path, place).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 at byte {exc.start}", place=str(path)) from None
    reader = csv.DictReader(text.splitlines())
    gold, line = [], 1
    try:
        missing = set(GOLD_COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise UsageError(f"missing columns {sorted(missing)}", place=f"{path}:1")
        for line, row in enumerate(reader, start=2):
            if any(not row.get(c) for c in GOLD_COLUMNS):
                raise UsageError(f"row lacks {[c for c in GOLD_COLUMNS if not row.get(c)]}", place=f"{path}:{line}")
            _check_gold_names(row, f"{path}:{line}")
            gold.append(row)
    except csv.Error as exc:  # e.g. a field over the csv module's limit, on the line after the last read
        raise UsageError(f"not a CSV this reads: {exc}", place=f"{path}:{line + 1 if gold or line > 1 else 2}") from None
    if not gold:
        raise UsageError("no gold rows: nothing to compare", place=str(path))
    return gold


def _check_gold_names(row: dict, place: str) -> None:
    """UsageError for a kind, event or verdict the vocabulary does not know:
    a misspelled name in a gold file would otherwise read as a wrong verdict."""
    for column, what, known in (("info_kind", "info kind", info_kinds()), ("event", "event", events()),
                                ("verdict", "verdict", verdicts())):
        if row[column] not in known:
            raise UsageError(unknown_name(what, row[column], list(known)), place=place)


def compare_verdicts(con: duckdb.DuckDBPyConnection, gold: list[dict]) -> dict:
    """The rules table against ``gold`` rows: ``{"rows": [{"info_kind",
    "event", "expected", "got", "correct", "dates_expected", "dates_cited"}],
    "correct": N, "total": M}``."""
    rows = []
    for g in gold:
        found = con.execute("SELECT verdict, dates FROM rules WHERE info_kind = ? AND event = ?",
                            [g["info_kind"], g["event"]]).fetchone()
        got = found[0] if found else "unknown"
        got_dates = sorted(str(d) for d in (found[1] or [])) if found else []
        want_dates = [d for d in (g.get("dates") or "").split(";") if d]
        rows.append({"info_kind": g["info_kind"], "event": g["event"], "expected": g["verdict"], "got": got,
                     "correct": got == g["verdict"], "dates_expected": want_dates,
                     "dates_cited": [d for d in want_dates if d in got_dates]})
    return {"rows": rows, "correct": sum(r["correct"] for r in rows), "total": len(rows)}


# --------------------------------------------------------------------------- ruling-level statement gold

# Compared as one class (the gold's rule): the page draws the line between "its own procedure",
# "its own effect" and "this effect" more finely than the vocabulary does.
SAME_CLASS = {"summoned_by_specific_effect": "summoned_by_own_procedure"}


def read_statement_gold(path: Path, place: str = "--statements") -> list[dict]:
    """Units of a ruling-level gold file (JSON Lines: ``source``, ``n``,
    ``text``, ``quote``, ``dates``, ``statements``, optional ``skip``);
    UsageError naming the line of a malformed one, or ``place`` (the
    option) for a file that is missing or not a regular file."""
    units = []
    try:
        lines = read_user_file(path, place).decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 at byte {exc.start}", place=str(path)) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            unit = json.loads(line)
        except RecursionError:
            raise UsageError("not JSON this reads: nested too deeply", place=f"{path}:{number}") from None
        except ValueError as exc:
            raise UsageError(f"not JSON: {json_problem(exc)}", place=f"{path}:{number}") from None
        problem = _unit_problem(unit)
        if problem:
            raise UsageError(problem, place=f"{path}:{number}")
        units.append(unit)
    if not units:
        raise UsageError("no gold units: nothing to score", place=str(path))
    return units


def _unit_problem(unit) -> str | None:
    """Why ``unit`` is not a gold unit this scorer reads, or None."""
    if not isinstance(unit, dict):
        return "a unit is a JSON object"
    for key, kind in (("source", str), ("text", str), ("statements", list)):
        if not isinstance(unit.get(key), kind):
            return f"{key} is missing or not a {kind.__name__}"
    if not isinstance(unit.get("quote", ""), (str, type(None))):
        return "quote is not a string"
    dates = unit.get("dates") or []
    if not isinstance(dates, list) or not all(isinstance(d, str) for d in dates):
        return "dates is not a list of ISO date strings"
    for i, st in enumerate(unit["statements"]):
        if not isinstance(st, dict) or not all(isinstance(st.get(k), str) for k in ("info_kind", "event", "verdict")):
            return f"statements[{i}] needs info_kind, event and verdict strings"
    return None


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _triples(statements, kinds: list[str]) -> set[tuple[str, str, str]]:
    out = set()
    for st in statements:
        kind = st["info_kind"]
        if kind.startswith("other:"):  # a candidate kind: scored once the vocabulary has it
            kind = kind.removeprefix("other:")
            if kind not in kinds:
                continue
        for k in ([x for x in kinds if x != "link_summoned"] if kind == "*" else [kind]):
            out.add((SAME_CLASS.get(k, k), st["event"], st["verdict"]))
    return out


def score_statements(con: duckdb.DuckDBPyConnection, units: list[dict]) -> dict:
    """The statements of the database against ruling-level gold ``units``,
    by the gold's matching rule: a unit's statements are those of the
    records of its page (a source id containing the unit's ``source``) whose
    text (whitespace removed) lies inside the unit's text or holds its quote;
    sets of (kind, event, verdict) are compared, ``*`` is every kind but
    link_summoned, ``other:NAME`` kinds (candidates) are scored as NAME
    once the vocabulary has that kind, and ``skip`` units are not scored. Only
    what a record states or shows as an example counts (not what its
    struck-through part said). Returns ``{"units": [{"n", "section", "text",
    "missing", "extra", "dates_missing"}...] (units with a miss),
    "tp", "fp", "fn", "precision", "recall", "f1", "scored", "dates_ok"}``."""
    kinds = [r[0] for r in con.execute("SELECT DISTINCT info_kind FROM rules ORDER BY 1").fetchall()]
    pages: dict[str, list] = {}
    tp = fp = fn = scored = dates_ok = dated_units = 0
    misses = []
    for unit in units:
        if unit.get("skip"):
            continue
        page = pages.get(unit["source"])
        if page is None:
            page = pages[unit["source"]] = _page_records(con, unit["source"])
        text, quote = _squeeze(unit["text"]), _squeeze(unit.get("quote") or "\x00")
        matched = [r for r in page if (r["squeezed"] and r["squeezed"] in text) or quote in r["squeezed"]]
        got = {(SAME_CLASS.get(k, k), e, v) for r in matched for k, e, v in r["statements"]}
        want = _triples(unit["statements"], kinds)
        scored += 1
        tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
        dates = set(unit.get("dates") or [])
        have = {d for r in matched for d in r["dates"]}
        if dates:
            dated_units += 1
            dates_ok += dates <= have
        if got != want or not dates <= have:
            misses.append({"n": unit.get("n"), "section": unit.get("section", ""), "text": unit["text"],
                           "missing": sorted(want - got), "extra": sorted(got - want),
                           "dates_missing": sorted(dates - have), "records": [r["record_id"] for r in matched]})
    return {"units": misses, "tp": tp, "fp": fp, "fn": fn, **_figures(tp, fp, fn),
            "scored": scored, "dated_units": dated_units, "dates_ok": dates_ok}


def score_statement_files(con: duckdb.DuckDBPyConnection, files: list[tuple[str, list[dict]]]) -> dict:
    """:func:`score_statements` for each gold file of ``files`` (name,
    units) and for all of them together. Returns the total's report (its
    counts summed over the files, P/R/F1 from the sums, ``units`` every
    file's misses, each with its ``file``) with ``"files": [{"file", "tp",
    "fp", "fn", "precision", "recall", "f1", "scored", "dated_units",
    "dates_ok"}...]`` in the order given."""
    counts = ("tp", "fp", "fn", "scored", "dated_units", "dates_ok")
    total: dict = {key: 0 for key in counts}
    total["units"], per_file = [], []
    for name, units in files:
        report = score_statements(con, units)
        for key in counts:
            total[key] += report[key]
        total["units"] += [{"file": name, **miss} for miss in report["units"]]
        per_file.append({"file": name, **{k: v for k, v in report.items() if k != "units"}})
    total.update(_figures(total["tp"], total["fp"], total["fn"]))
    total["files"] = per_file
    return total


def _figures(tp: int, fp: int, fn: int) -> dict:
    """Precision, recall and F1 from the counts (1.0 where nothing was produced or expected)."""
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def _page_records(con: duckdb.DuckDBPyConnection, source: str) -> list[dict]:
    rows = con.execute("""
        SELECT r.record_id, r.text,
               list(DISTINCT [s.info_kind, s.event, s.verdict]) FILTER (WHERE s.basis <> 'withdrawn'),
               (SELECT list(d.date::VARCHAR) FROM record_dates d
                WHERE d.record_id = r.record_id AND d.valid AND d.kind <> 'reference')
        FROM records r LEFT JOIN statements s USING (record_id)
        WHERE contains(r.source_id, ?) AND r.retired_run IS NULL
        GROUP BY r.record_id, r.text""", [source]).fetchall()
    return [{"record_id": rid, "squeezed": _squeeze(text), "statements": [tuple(x) for x in (st or [])],
             "dates": set(dates or [])} for rid, text, st, dates in rows]
