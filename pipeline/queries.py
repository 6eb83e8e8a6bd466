"""The read side of the database: the questions the CLI (and other tools)
ask, each one function returning plain dicts and lists.

Every function takes an open DuckDB connection (:func:`connect`), binds its
values as parameters, and raises :class:`~pipeline.errors.UsageError` for a
name the database does not know (with a "did you mean").
"""

from __future__ import annotations

import csv
import difflib
import json
import re
import sys
from pathlib import Path

import duckdb

from .database import duckdb_path, is_damage, open_database, unreadable
from .errors import SQLError, UsageError
from .schema import events, info_kinds, rule_policy, verdicts
from .userfiles import read_user_file


def connect(db_path: Path, read_only: bool = True, sandboxed: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the database ``rulings build`` wrote, checked
    (:func:`pipeline.database.open_database`: a DuckDB file of this
    version's schema, extensions never loaded); UsageError when there is
    none at ``db_path`` (exit 2, as a missing engine module), for a path
    DuckDB would misread or a file that is no rulings database; LoadError
    when DuckDB cannot open or read it or its schema is another.
    ``sandboxed``: DuckDB may not touch the file system beyond the database
    (no COPY TO, ATTACH, other files, extensions), for SQL a user types."""
    require_file(db_path)
    return open_database(db_path, read_only=read_only, config={"enable_external_access": False} if sandboxed else None)


def require_file(db_path: Path) -> None:
    """UsageError when ``db_path`` is a path DuckDB would misread
    (:func:`pipeline.database.duckdb_path`) or names no file."""
    duckdb_path(db_path)
    if not Path(db_path).is_file():
        raise UsageError(f"no database at {db_path}; run `rulings build` first (or pass --db)")


def json_problem(exc: ValueError) -> str:
    """What is wrong with a JSON text, for a user: the decoder's message, or
    for a number over Python's digit limit that limit (not Python's advice
    to raise it)."""
    if not isinstance(exc, json.JSONDecodeError) and "integer string conversion" in str(exc):
        return f"a number of more than {sys.get_int_max_str_digits()} digits"
    return str(exc)


def unknown_name(what: str, name: str, known: list[str]) -> str:
    """'unknown event 'x' (did you mean 'y'?)', or the list of known names
    when none is close."""
    hint = difflib.get_close_matches(name, known, n=1)
    if hint:
        return f"unknown {what} {name!r} (did you mean {hint[0]!r}?)"
    return f"unknown {what} {name!r}; known: {', '.join(known)}"


# --------------------------------------------------------------------------- rules

def conflict_list(value) -> list[dict]:
    """``rules.conflicts`` (a list of structs) as ``[{"verdict",
    "record_ids", "latest_date"}]`` with ISO date strings (None when undated)."""
    return [{"verdict": c["verdict"], "record_ids": list(c["record_ids"] or []),
             "latest_date": c["latest_date"].isoformat() if c["latest_date"] else None} for c in value or []]


def rule_report(con: duckdb.DuckDBPyConnection, info_kind: str, event: str) -> dict:
    """The rule for one (info kind, event) pair with its citations:
    ``{"info_kind", "event", "verdict", "condition", "latest_date",
    "changed_on", "conflicts": [...], "disputed_by": [record ids],
    "cases": [{"case", "fact", "values", "verdict", "record_ids",
    "condition", "en", "zh"}], "citations": [{"role", "verdict", "cases",
    "record_id", "source", "section", "status", "text", "dates", "lead_in"}]}``
    (``lead_in``: the text of the line a list item hangs under, or None)
    (dates as ISO strings: those of the sentences that make the statement;
    ``cases``: the cases of a conditional rule a citation states).
    UsageError for an unknown kind or event."""
    row = con.execute("SELECT verdict, condition, latest_date, changed_on, conflicts, disputed_by, cases FROM rules "
                      "WHERE info_kind = ? AND event = ?", [info_kind, event]).fetchone()
    if row is None:
        kinds = [r[0] for r in con.execute("SELECT DISTINCT info_kind FROM rules ORDER BY 1").fetchall()]
        evts = [r[0] for r in con.execute("SELECT DISTINCT event FROM rules ORDER BY 1").fetchall()]
        if info_kind in evts and event in kinds:
            raise UsageError(f"{info_kind!r} is an event and {event!r} an info kind: the info kind comes first "
                             f"(rulings ask {event} {info_kind})")
        if info_kind in evts:
            raise UsageError(f"{info_kind!r} is an event, not an info kind: the info kind comes first "
                             f"(rulings ask INFO_KIND {info_kind}; `rulings vocabulary` lists them)")
        if info_kind not in kinds:
            raise UsageError(unknown_name("info kind", info_kind, kinds))
        raise UsageError(unknown_name("event", event, evts))
    verdict, condition, latest, changed_on, conflicts, disputed_by, cases = row
    cases = case_list(cases)
    case_of: dict[str, list[str]] = {}
    for c in cases:
        for rid in c["record_ids"]:
            case_of.setdefault(rid, []).append(c["case"])
    cites = con.execute(
        """SELECT c.role, c.verdict, r.record_id, r.source_id, r.section_path, r.status, r.text, c.dates, p.text
           FROM rule_citations c JOIN records r USING (record_id) LEFT JOIN records p ON p.record_id = r.parent_id
           WHERE c.info_kind = ? AND c.event = ?
           ORDER BY c.role DESC, r.source_id, r.seq""", [info_kind, event]).fetchall()
    return {
        "info_kind": info_kind, "event": event, "verdict": verdict, "condition": condition or None,
        "latest_date": latest, "changed_on": changed_on, "conflicts": conflict_list(conflicts),
        "disputed_by": list(disputed_by or []), "cases": cases,
        "citations": [{"role": c[0], "verdict": c[1], "cases": case_of.get(c[2], []), "record_id": c[2], "source": c[3],
                       "section": c[4], "status": c[5], "text": c[6], "dates": [str(d) for d in (c[7] or [])],
                       "lead_in": c[8]}
                      for c in cites],
    }


def case_list(value) -> list[dict]:
    """``rules.cases`` (a list of structs) as ``[{"case", "fact", "values",
    "verdict", "record_ids", "condition", "en", "zh"}]``: each case with its
    words in English and Chinese (``schema/rule_policy.json``) and its fact
    values as JSON values (``true`` / ``false`` for a yes-no fact)."""
    words = {c["id"]: c for c in rule_policy()["cases"]}
    out = []
    for c in value or []:
        case = words.get(c["case_id"], {})
        values = [json.loads(v) if v in ("true", "false") else v for v in c["values"] or []]
        out.append({"case": c["case_id"], "fact": c["fact"], "values": values, "verdict": c["verdict"],
                    "record_ids": list(c["record_ids"] or []), "condition": c["condition"],
                    "disputed_by": list(c["disputed_by"] or []),
                    "en": case.get("en", c["case_id"]), "zh": case.get("zh", "")})
    return out


# --------------------------------------------------------------------------- records

def _record_hint(con: duckdb.DuckDBPyConnection, record_id: str) -> str:
    """`` (did you mean 'r…'?)`` for an id cut short (the records it starts,
    up to five) or mistyped (one at most two edits away), else ``""``."""
    if not record_id:
        return ""
    close = [r[0] for r in con.execute("SELECT record_id FROM records WHERE starts_with(record_id, ?) "
                                       "ORDER BY record_id LIMIT 6", [record_id]).fetchall()]
    if not close:
        close = [r[0] for r in con.execute("SELECT record_id FROM records WHERE levenshtein(record_id, ?) <= 2 "
                                           "ORDER BY levenshtein(record_id, ?), record_id LIMIT 1",
                                           [record_id, record_id]).fetchall()]
    if not close:
        return ""
    shown = " or ".join(repr(r) for r in close[:5]) + (" or more" if len(close) > 5 else "")
    return f" (did you mean {shown}?)"


def record_provenance(con: duckdb.DuckDBPyConnection, record_id: str) -> dict:
    """One record with every column of ``records``, its source's URL and
    licence, and lists ``dates`` (raw, date, valid, reason, from_heading,
    faq_id, faq_url), ``cards`` and ``statements``. UsageError when there is
    no such record."""
    record_id = record_id.strip()
    if re.fullmatch(r"r[0-9a-f]+", record_id, re.I):
        record_id = record_id.lower()  # ids are lower-case hex: a pasted "R6F3…" is the same id
    row = con.execute("""SELECT r.*, s.url, s.licence FROM records r JOIN sources s USING (source_id)
                         WHERE record_id = ?""", [record_id]).fetchone()
    if row is None:
        raise UsageError(f"no record {record_id!r}{_record_hint(con, record_id)}")
    rec = dict(zip([d[0] for d in con.description], row))
    rec["dates"] = _dicts(con, "SELECT raw, date, valid, reason, kind, from_heading, faq_id, faq_url FROM record_dates "
                               "WHERE record_id = ? ORDER BY ord", [record_id])
    rec["cards"] = _dicts(con, "SELECT name, norm_name, kind, passcode, name_en, linked_by, name_source, url FROM card_mentions "
                               "WHERE record_id = ? ORDER BY ord", [record_id])
    rec["statements"] = _dicts(con, "SELECT info_kind, event, verdict, condition, basis, principle_id, effect, passcode "
                                    "FROM statements WHERE record_id = ?", [record_id])
    return rec


def _dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


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
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"units": misses, "tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1,
            "scored": scored, "dated_units": dated_units, "dates_ok": dates_ok}


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


# --------------------------------------------------------------------------- the change log

def _since(con: duckdb.DuckDBPyConnection, since: int | None) -> int:
    """The run after which changes are listed: ``since``, or by default the
    one before the latest run. UsageError for a run that does not exist."""
    last = con.execute("SELECT coalesce(max(run_id), 0) FROM runs").fetchone()[0]
    if since is None:
        return max(0, last - 1)
    if not 0 <= since <= last:
        raise UsageError(f"no run {since}: the runs are 1 to {last} (0 lists every change)", place="--since")
    return since


def list_changes(con: duckdb.DuckDBPyConnection, since: int | None = None) -> tuple[int, list[dict]]:
    """Record changes made by the runs after run ``since`` (default: the
    latest run's changes), oldest run first; returns (since, rows of
    run_id, started_at, change, record_id, source_id, section_path,
    status, text). UsageError for a run that does not exist."""
    since = _since(con, since)
    if not _has_table(con, "record_changes"):
        return since, []
    return since, _dicts(con, """
        SELECT c.run_id, u.started_at, c.change, c.record_id, c.source_id, r.section_path, r.status, r.text
        FROM record_changes c LEFT JOIN records r USING (record_id) LEFT JOIN runs u USING (run_id)
        WHERE c.run_id > ?
        ORDER BY c.run_id, c.source_id, list_position(['added', 'changed', 'retired'], c.change), r.seq,
                 c.record_id""", [since])


def list_rule_changes(con: duckdb.DuckDBPyConnection, since: int | None = None) -> tuple[int, list[dict]]:
    """The rules whose verdict changed or that became disputed or settled in
    the runs after run ``since`` (default: the latest run's; a build is run
    1 and reviews against the database it replaced), oldest run first:
    (since, rows of ``run_id``, ``started_at``, ``info_kind``, ``event``,
    ``case_id`` (``""``: the rule itself), ``change`` (verdict | disputed | settled), ``old_verdict``,
    ``new_verdict``, ``record_ids``, ``rulings``: ``[{"record_id",
    "source_id", "dates", "text"}]``). UsageError for a run that does not exist."""
    since = _since(con, since)
    if not _has_table(con, "rule_changes"):
        return since, []
    rows = _dicts(con, """
        SELECT c.run_id, u.started_at, c.info_kind, c.event, c.case_id, c.change, c.old_verdict, c.new_verdict,
               c.record_ids
        FROM rule_changes c LEFT JOIN runs u USING (run_id) WHERE c.run_id > ?
        ORDER BY c.run_id, c.info_kind, c.event, c.case_id""", [since])
    for row in rows:
        row["record_ids"] = list(row["record_ids"] or [])
        row["rulings"] = _dicts(con, """
            SELECT r.record_id, r.source_id, coalesce(list(d.date ORDER BY d.ord) FILTER (WHERE d.valid), []) AS dates,
                   r.text
            FROM records r LEFT JOIN record_dates d USING (record_id)
            WHERE r.record_id IN (SELECT unnest(?)) GROUP BY r.record_id, r.source_id, r.text
            ORDER BY r.record_id""", [row["record_ids"]])
        for ruling in row["rulings"]:
            ruling["dates"] = [d.isoformat() for d in ruling["dates"]]
    return since, rows


# --------------------------------------------------------------------------- cards

def _card_keys(names: dict[str, str]) -> set[str]:
    from .cards import card_name_key  # OpenCC loads only when a card is looked up

    return {card_name_key(language, name) for language, name in names.items()}


def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND schema_name = 'main' AND table_name = ?", [table]).fetchone()[0] > 0


# the order of a card's names, as cards.card_names gives them
_NAME_ORDER = ("en", "ja", "zh-CN", "zh-TW", "ko", "zh-community")


def _table_names(con: duckdb.DuckDBPyConnection, passcode: int) -> dict[str, str]:
    """The names of ``passcode`` in the database's ``card_names`` (language -> name), {} when none."""
    rows = dict(con.execute("SELECT language, name FROM card_names WHERE passcode = ?", [passcode]).fetchall())
    return {language: rows[language] for language in _NAME_ORDER if language in rows}


def find_card(con: duckdb.DuckDBPyConnection, query: str) -> tuple[int, dict[str, str]]:
    """The card ``query`` names: a passcode, or a name in any language of
    ``corpus/data/card-names.tsv`` or the community table (Simplified or
    Traditional Chinese, Japanese, English, Korean), exact, then by key
    (script, width, case and regional terms folded). Returns (passcode,
    names by language). UsageError with the nearest names of the cards the
    corpus mentions ("did you mean") when nothing matches. Read from the
    database's ``card_names`` (the name tables are not loaded: a lookup
    takes milliseconds), or from the tables for a database without it."""
    if not _has_table(con, "card_names"):  # a database built before card_names existed
        return _find_card_in_tables(con, query)
    from .chinese import match_key

    text = query.strip()
    if text.isdigit():
        names = _table_names(con, int(text))
        if names:
            return int(text), names
        raise UsageError(f"no card with passcode {text}", place="NAME")
    for where in ("name = ?", "lower(name) = lower(?)"):
        found = _most_ruled(con, where, text)
        if found is not None:
            return found, _table_names(con, found)
    from .chinese import name_key  # OpenCC: only for a name not found as written

    keys = sorted({name_key(text), match_key(text)} - {""})
    found = _most_ruled(con, "list_contains(?, name_key)", keys)
    if found is not None:
        return found, _table_names(con, found)
    candidates = dict(con.execute(
        "SELECT n.name, min(n.passcode) FROM card_names n WHERE n.passcode IN "
        "(SELECT passcode FROM card_mentions WHERE passcode IS NOT NULL) GROUP BY n.name").fetchall())
    raise UsageError(f"no card named {text!r}{_did_you_mean(text, candidates)}", place="NAME")


def _most_ruled(con: duckdb.DuckDBPyConnection, where: str, value) -> int | None:
    """Of the passcodes whose ``card_names`` rows match ``where`` (one ``?``
    for ``value``), the one the most card mentions link to, then the lowest:
    a name two passcodes share (an alternate artwork: Dark Magician's
    36996508 and 46986414) finds the one its rulings are linked to."""
    row = con.execute(f"""
        SELECT n.passcode FROM (SELECT DISTINCT passcode FROM card_names WHERE {where}) n
        LEFT JOIN card_mentions m USING (passcode)
        GROUP BY n.passcode ORDER BY count(m.passcode) DESC, n.passcode LIMIT 1""", [value]).fetchone()
    return row[0] if row else None


def _did_you_mean(text: str, candidates: dict[str, int]) -> str:
    """`` (did you mean 'A', 'B'?)`` from the names of ``candidates``: names
    holding the query (a partial name: "ash blossom"), shortest first, then
    near spellings; "" when none."""
    from .chinese import match_key

    folded = match_key(text)
    hint = sorted((n for n in candidates if folded and folded in match_key(n)), key=len)[:3]
    hint = hint or difflib.get_close_matches(text, list(candidates), n=3, cutoff=0.5)
    return f" (did you mean {', '.join(repr(h) for h in hint)}?)" if hint else ""


def _find_card_in_tables(con: duckdb.DuckDBPyConnection, query: str) -> tuple[int, dict[str, str]]:
    """:func:`find_card` over the name tables of the bundled corpus."""
    from .cards import card_names
    from .chinese import match_key, name_key

    names = card_names()
    text = query.strip()
    if text.isdigit():
        if int(text) in names:
            return int(text), names[int(text)]
        raise UsageError(f"no card with passcode {text}", place="NAME")
    for passcode, its in names.items():
        if text in its.values() or text.lower() in (n.lower() for n in its.values()):
            return passcode, its
    keys = sorted({name_key(text), match_key(text)} - {""})
    found = sorted(p for p, its in names.items() if set(keys) & _card_keys(its))
    if found and found[0] in names:
        return found[0], names[found[0]]
    mentioned = {r[0] for r in con.execute("SELECT DISTINCT passcode FROM card_mentions "
                                           "WHERE passcode IS NOT NULL").fetchall()}
    candidates = {n: p for p in mentioned for n in names.get(p, {}).values()}
    raise UsageError(f"no card named {text!r}{_did_you_mean(text, candidates)}", place="NAME")


def card_rulings(con: duckdb.DuckDBPyConnection, passcode: int, names: dict[str, str]) -> list[dict]:
    """The current rulings that mention the card, newest first: those linked
    to its passcode, unlinked quotes whose key is one of its names', and the
    rulings of English pages that write its English name. Each: record_id,
    source_id, section, status, text, dates (ISO, own), faq_ids, how
    (linked | key | english_text)."""
    if _has_table(con, "card_names"):  # the keys computed at build time
        keys = sorted(k for (k,) in con.execute("SELECT DISTINCT name_key FROM card_names WHERE passcode = ?",
                                                 [passcode]).fetchall())
    else:
        keys = sorted(_card_keys(names))
    english = names.get("en", "")
    rows = con.execute("""
        WITH hits AS (
            SELECT record_id, 'linked' AS how FROM card_mentions WHERE passcode = ?
            UNION ALL
            SELECT record_id, 'key' FROM card_mentions
            WHERE passcode IS NULL AND coalesce(kind, 'card') = 'card' AND list_contains(?, match_key)
            UNION ALL
            SELECT r.record_id, 'english_text' FROM records r JOIN sources s USING (source_id)
            WHERE s.language = 'en' AND ? <> '' AND contains(lower(r.text), lower(?))
        ), picked AS (SELECT record_id, min(how) AS how FROM hits GROUP BY record_id)
        SELECT r.record_id, r.source_id, r.section_path, r.status, r.text, p.how,
               list(DISTINCT d.date ORDER BY d.date) FILTER (WHERE d.valid AND d.kind <> 'reference') AS dates,
               list(DISTINCT d.faq_id ORDER BY d.faq_id) FILTER (WHERE d.faq_id IS NOT NULL) AS faq_ids
        FROM picked p JOIN records r USING (record_id) LEFT JOIN record_dates d USING (record_id)
        WHERE r.retired_run IS NULL
        GROUP BY ALL""", [passcode, keys, english, english]).fetchall()
    out = [{"record_id": r[0], "source_id": r[1], "section": r[2], "status": r[3], "text": r[4], "how": r[5],
            "dates": [d.isoformat() for d in (r[6] or [])], "faq_ids": list(r[7] or [])} for r in rows]
    return sorted(out, key=lambda x: (x["dates"][-1:] or [""], x["record_id"]), reverse=True)


# --------------------------------------------------------------------------- SQL functions

def _sql_name_key(name: str) -> str:
    from .chinese import name_key  # OpenCC loads only when a query calls name_key

    return name_key(name)


def register_sql_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Add the SQL functions of ad-hoc queries (``rulings sql``) to ``con``:
    ``name_key(name)`` is the card-name key of :func:`pipeline.chinese.name_key`
    (Simplified or Traditional script, full- or half-width, regional terms
    folded), to compare with ``card_mentions.match_key``."""
    try:
        con.create_function("name_key", _sql_name_key)
    except duckdb.CatalogException:
        pass  # connections to one file in one process share the database and its functions


def run_sql(con: duckdb.DuckDBPyConnection, query: str, max_rows: int | None, lock: bool = True,
            db_path: Path | str | None = None) -> tuple[list[str], list[tuple] | None, int]:
    """Run ``query`` (one or several statements) on ``con``: (the last
    statement's columns, its first ``max_rows + 1`` rows (all with None;
    None for a statement without a result), the number of statements).
    ``lock``: set DuckDB's ``lock_configuration`` first, so the SQL cannot
    turn the connection's limits off (a read-only, sandboxed connection).
    UsageError (place QUERY) when there is no statement, SQLError (place
    SQL) for SQL DuckDB refuses; UnusableDatabase when DuckDB finds the
    file damaged while reading (naming ``db_path``)."""
    if "name_key" in query.lower():  # DuckDB's Python functions cost ~0.2 s to set up (NumPy)
        register_sql_functions(con)
    try:
        if lock:
            con.execute("SET lock_configuration = true")
        statements = con.extract_statements(query)
        if not statements:
            raise UsageError("no SQL statement given", place="QUERY")
        rel = con.sql(query)
        if rel is None:
            return [], None, len(statements)
        return rel.columns, (rel.fetchall() if max_rows is None else rel.limit(max_rows + 1).fetchall()), len(statements)
    except duckdb.Error as exc:
        if is_damage(exc):
            raise unreadable(exc, db_path) from None
        raise SQLError(str(exc), place="SQL") from None
