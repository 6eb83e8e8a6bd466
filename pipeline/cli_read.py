"""The commands that read a built database: ``rulings ask``, ``card``, ``show``,
``sql``, ``changes`` and ``vocabulary`` (which reads only the schema).

Each takes ``--db`` (a database ``rulings build`` wrote; read-only but for
``sql --write``), reads through :mod:`pipeline.queries` and prints through
:mod:`pipeline.cli_common` (text, or JSON with ``--json``). Nothing of the
build's stages is imported here: these commands start fast.
"""

from __future__ import annotations

import json
import math
import threading
import unicodedata
from contextlib import nullcontext
from pathlib import Path

import click
import duckdb

from . import queries
from .cli_common import (DB_OPTION, ENGINE_OPTION, JSON_OPTION, _echo, _echo_json, _exit_codes, load_engine,
                         reading)
from .errors import UsageError
from .terminal import json_safe, terminal_safe

# --------------------------------------------------------------------------- ask

@click.command()
@click.argument("info_kind", required=False)
@click.argument("event", required=False)
@click.option("--card", "card_name", metavar="NAME", default=None,
              help="Ask about a card instead: which of its effects still work after EVENT (the one argument).")
@DB_OPTION
@ENGINE_OPTION
@JSON_OPTION
@_exit_codes
def ask(info_kind: str | None, event: str | None, card_name: str | None, db_path: Path, engine_path: Path,
        as_json: bool) -> None:
    """Does INFO_KIND survive EVENT? Prints the verdict and the rulings behind it.

    \b
    Example: rulings ask synchro_summoned face_down
    Events: face_down, temp_banish, flip_face_up. Info kinds: `rulings
    vocabulary` lists them (e.g. counters, attack_declared, pendulum_summoned).

    \b
    With --card NAME (as `rulings card` takes it) and one EVENT, or a
    sequence such as face_down,flip_face_up: per numbered effect of the card,
    what it depends on, each verdict, whether it still works and why (a
    ruling on the card, with its date, over the general rule):
      rulings ask --card 幻龙星-嘲风 face_down
    """
    if card_name is not None:
        if info_kind is None or event is not None:
            raise UsageError("with --card give one EVENT (or a sequence such as face_down,flip_face_up)",
                             place="EVENT")
        _ask_card(card_name, info_kind, db_path, engine_path, as_json)
        return
    if info_kind is None or event is None:
        raise UsageError("give INFO_KIND and EVENT (or --card NAME EVENT)", place="INFO_KIND" if info_kind is None
                         else "EVENT")
    with reading(db_path) as con:
        report = queries.rule_report(con, info_kind, event)
    if as_json:
        _echo_json(report)
        return
    line = f"{info_kind} on {event}: {report['verdict']}"
    if report["condition"] and not report["cases"]:
        line += f" (conditions: {report['condition']})"
    if report["changed_on"]:
        line += f"; changed on {report['changed_on']}"
    if report["disputed_by"]:
        line += f"; disputed by {len(report['disputed_by'])} newer ruling(s) that did not change it"
    _echo(line)
    for case in report["cases"]:
        disputed = f"; disputed by {', '.join(case['disputed_by'])}" if case["disputed_by"] else ""
        _echo(f"  case: {case['en']} ({case['zh']}): {case['verdict']}; records {', '.join(case['record_ids'])}"
              f"{disputed}")
    if report["verdict"] == "unknown":
        _echo("  the corpus has no ruling for this pair")
    for c in report["citations"]:
        dates = ", ".join(c["dates"]) or "undated"
        says = f"{c['verdict']} in case {' / '.join(c['cases'])}" if c["cases"] else c["verdict"]
        _echo(f"  [{c['role']}: {says}] {c['record_id']} {dates} ({c['source']})")
        if c.get("lead_in"):  # a list item is read with the line it hangs under
            _echo(f"      {c['lead_in']}")
            _echo(f"        {c['text']}")
        else:
            _echo(f"      {c['text']}")
    for conflict in report["conflicts"]:
        when = conflict["latest_date"] or "undated"
        disputing = [r for r in conflict["record_ids"] if r in report["disputed_by"]]
        why = ("newer, but neither a principle nor enough agreeing rulings to change it: disputed, for review"
               if disputing else "earlier or undated, the OCG's over another ruleset's, or less supported")
        _echo(f"  not followed: {conflict['verdict']} (latest {when}; {why}); "
              f"records {', '.join(conflict['record_ids'])}")


def _ask_card(name: str, events: str, db_path: Path, engine_path: Path, as_json: bool) -> None:
    """``rulings ask --card NAME EVENT``: the engine's card answer (pipeline/cardask.py)."""
    from . import cardask

    with reading(db_path) as con:
        found = queries.find_card(con, name)
        if found.passcode is None:
            raise UsageError(f"{name}: Konami id {found.konami_id} has no passcode and no card text in the corpus",
                             place="NAME")
        engine = load_engine(engine_path)
        try:
            answer = cardask.card_answer(con, engine, found.passcode, found.names, events)
        except ValueError as exc:
            raise UsageError(str(exc), place="EVENT") from None
    if as_json:
        _echo_json(answer)
        return
    for line in cardask.answer_lines(answer):
        _echo(line)


# --------------------------------------------------------------------------- sql

@click.command()
@click.argument("query")
@DB_OPTION
@click.option("--write", is_flag=True, help="Open the database read-write (default: read-only).")
@JSON_OPTION
@click.option("--max-rows", type=click.IntRange(min=1), default=200, show_default=True,
              help="Rows to fetch and print (table or JSON).")
@_exit_codes
def sql(query: str, db_path: Path, write: bool, as_json: bool, max_rows: int) -> None:
    """Run QUERY on the rulings database and print the result.

    \b
    Examples:
      rulings sql "SELECT r.record_id, r.text FROM records r JOIN record_dates d USING (record_id) WHERE d.date = DATE '2017-03-24'"
      rulings sql "SELECT r.text FROM records r JOIN card_mentions c USING (record_id) WHERE c.norm_name = '月之书'"
      rulings sql "SELECT r.text FROM records r JOIN card_mentions c USING (record_id) WHERE c.match_key = name_key('月之書')"
      rulings sql "SELECT info_kind, event, verdict, latest_date FROM rules ORDER BY ALL"

    name_key(NAME) gives the key of a card name written in either script
    (and either width), to compare with card_mentions.match_key.

    \b
    Read-only (the default): nothing the SQL does can write a file. DuckDB
    runs it with file-system access off (no COPY TO, ATTACH, EXPORT, reading
    other files or installing extensions) and its settings locked (no
    log_query_path, profiling_output, enable_logging). --write opens the
    database read-write with none of these limits, holding the database's
    lock (exit 1 while a build or refresh runs; they wait or refuse while it
    is held). Extensions are never installed or loaded on their own.
    At most --max-rows rows are fetched, in table and JSON form alike; when
    QUERY holds several statements, all run and the last one's result is shown.
    """
    queries.require_file(db_path)
    if write:  # the header checked before the lock is taken: no <file>.lock made beside a file of another kind
        from .database import check_header
        from .locks import database_lock

        lock = database_lock(check_header(db_path), can_wait=False)
    else:
        lock = nullcontext()
    with lock:
        columns, rows = _run_sql(query, db_path, write, max_rows)
    if rows is None:
        _echo("ok")
        return
    more = len(rows) > max_rows
    rows = rows[:max_rows]
    if as_json:
        click.echo(json_safe(json.dumps([dict(zip(columns, map(_json_value, row))) for row in rows],
                                        ensure_ascii=False, indent=2, default=str, allow_nan=False)))
        if more:
            _echo(f"note: the first {max_rows} rows are shown (--max-rows)", err=True)
        return
    _print_table(columns, rows, max_rows, more)


def _run_sql(query: str, db_path: Path, write: bool, max_rows: int) -> tuple[list[str], list[tuple] | None]:
    """Run ``query`` on the database (read-only and sandboxed unless
    ``write``: :func:`pipeline.queries.run_sql`); returns the last
    statement's columns and its first ``max_rows + 1`` rows (None for a
    statement without a result)."""
    con = queries.connect(db_path, read_only=not write, sandboxed=not write)
    try:
        columns, rows, statements = queries.run_sql(con, query, max_rows, lock=not write, db_path=db_path)
    finally:
        con.close()
    if statements > 1:
        _echo(f"note: {statements} statements ran; the result of the last one is shown", err=True)
    return columns, rows


def _json_value(value):
    """A value JSON can hold: NaN and infinities (no JSON number) become
    null, map keys that are not strings (dates, decimals) their text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _json_value(v) for k, v in value.items()}
    return value


def _width(text: str) -> int:
    """Terminal columns of ``text``: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns (marked with …) and padded to it."""
    if _width(text) > width:
        kept, used = [], 0
        for ch in text:
            used += _width(ch)
            if used > width - 1:
                break
            kept.append(ch)
        text = "".join(kept) + "…"
    return text + " " * (width - _width(text))


def _cell(value) -> str:
    """A value as a table cell: lists as [a, b], dates and times in ISO form,
    maps as {k: v}, NULL for None (not Python's repr: [datetime.date(...)])."""
    if value is None:
        return "NULL"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_cell(k)}: {_cell(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ") if hasattr(value, "hour") and hasattr(value, "day") else value.isoformat()
    return str(value)


def _print_table(columns: list[str], rows: list[tuple], max_rows: int, more: bool = False) -> None:
    """An aligned text table, cells cut at 80 columns (--json gives whole values)."""
    shown = rows[:max_rows]
    columns = [terminal_safe(c) for c in columns]
    cells = [[terminal_safe(_cell(v).replace("\n", " ")) for v in row] for row in shown]  # escaped before cut
    widths = [min(80, max([_width(c)] + [_width(r[i]) for r in cells])) for i, c in enumerate(columns)]
    fmt = lambda vals: " | ".join(_fit(v, w) for v, w in zip(vals, widths))  # noqa: E731
    _echo(fmt(columns))
    _echo("-+-".join("-" * w for w in widths))
    for r in cells:
        _echo(fmt(r))
    if more:
        _echo(f"(the first {len(shown)} rows; more not fetched (--max-rows))")
    else:
        _echo(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")


# --------------------------------------------------------------------------- show

@click.command()
@click.argument("record_id")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def show(record_id: str, db_path: Path, as_json: bool) -> None:
    """Print one record with all its provenance: source URL, snapshot hash,
    section, channel, status, dates with official FAQ ids, cards, statements."""
    with reading(db_path) as con:
        rec = queries.record_provenance(con, record_id)
    if as_json:
        _echo_json(rec)
        return
    for key, value in rec.items():
        if isinstance(value, list):
            _echo(f"{key}:")
            for item in value:
                _echo("  " + ", ".join(f"{k}={v}" for k, v in item.items() if v not in (None, "")))
        else:
            _echo(f"{key}: {'' if value is None else value}")


# --------------------------------------------------------------------------- changes

@click.command()
@click.option("--since", type=int, default=None, metavar="RUN",
              help="List what the runs after RUN changed (default: the latest run's changes; 0: all).")
@click.option("--rules", "rules", is_flag=True,
              help="List the rules whose verdict changed or that became disputed, with the rulings behind it.")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def changes(since: int | None, rules: bool, db_path: Path, as_json: bool) -> None:
    """List the rulings that refreshes added, changed and retired.

    \b
    added:   a new ruling (or one back on its page); first_seen_run is the run
    changed: same ruling, other status, dates, cards or statements
    retired: gone from its page; kept in the database with retired_run
    See every run with: rulings sql "SELECT * FROM runs ORDER BY run_id"

    \b
    With --rules: the rules to review before publishing the engine, as
    compared with the rules the database held before each run (a build
    against the database it replaced, a refresh against the stored one):
    verdict:  the verdict changed (a principle said so, or enough newer rulings agree)
    disputed: newer rulings disagree with the verdict but did not change it
    settled:  no longer disputed
    """
    if rules:
        _rule_changes(since, db_path, as_json)
        return
    with reading(db_path) as con:
        since, rows = queries.list_changes(con, since)
    if as_json:
        _echo_json({"since": since, "changes": rows})
        return
    run = None
    for row in rows:
        if row["run_id"] != run:
            run = row["run_id"]
            _echo(f"run {run} ({row['started_at']})")
        section = f" [{row['section_path']}]" if row["section_path"] else ""
        _echo(f"  {row['change']:<8} {row['record_id']} {row['source_id']}{section}")
        _echo(f"      {row['text']}")
    counts = {k: sum(1 for r in rows if r["change"] == k) for k in ("added", "changed", "retired")}
    _echo(f"{counts['added']} added, {counts['changed']} changed, {counts['retired']} retired after run {since}")
    if not rows:
        _echo("(a build starts the history; the changes of each `rulings refresh` are listed here)")


def _rule_changes(since: int | None, db_path: Path, as_json: bool) -> None:
    from .records import change_words, excerpt

    with reading(db_path) as con:
        since, rows = queries.list_rule_changes(con, since)
    if as_json:
        _echo_json({"since": since, "rule_changes": rows})
        return
    run = None
    for row in rows:
        if row["run_id"] != run:
            run = row["run_id"]
            _echo(f"run {run} ({row['started_at']})")
        what = change_words(row["change"], row["old_verdict"], row["new_verdict"])
        case = f" in case {row['case_id']}" if row["case_id"] else ""
        _echo(f"  {row['change']:<8} {row['info_kind']} on {row['event']}{case}: {what}")
        for ruling in row["rulings"]:
            _echo(f"      {ruling['record_id']} {', '.join(ruling['dates']) or 'undated'} ({ruling['source_id']})")
            _echo(f"          {excerpt(ruling['text'], 160)}")
    _echo(f"{len(rows)} rule change(s) after run {since}")


# --------------------------------------------------------------------------- vocabulary

@click.command()
@JSON_OPTION
@_exit_codes
def vocabulary(as_json: bool) -> None:
    """List the identifiers the rules table and the engine use, with their meanings.

    \b
    info kinds  what a monster can keep or lose (by display group)
    events      face_down, temp_banish, flip_face_up
    verdicts    kept, lost, not_applicable, conditional, unknown
    questions   what a scenario may ask the engine (ask.question) and its fields
    scenario events  what a scenario's history may hold (events[].do), fields
    From schema/vocabulary.json and schema/scenario.schema.json (the scenario
    format as a JSON Schema); identifiers never change (kinds are only added).
    """
    from .schema import scenario_format, scenario_schema
    from .schema import vocabulary as schema_vocabulary

    data = schema_vocabulary()
    fmt, spec = scenario_format(), scenario_schema()["$defs"]["event"]["oneOf"]
    group_of = {k: g["id"] for g in data["kind_groups"] for k in g["kinds"]}
    out = {
        "info_kinds": [{"id": k["id"], "meaning": k.get("meaning", ""), "group": group_of.get(k["id"], "")}
                       for k in data["info_kinds"]],
        "kind_groups": [{"id": g["id"], "title": g["title"]} for g in data["kind_groups"]],
        "events": [{"id": e["id"], "meaning": e.get("meaning", "")} for e in data["events"]],
        "verdicts": [{"id": v["id"], "meaning": v.get("meaning", "")} for v in data["verdicts"]],
        "questions": [{"id": q["id"], "fields": q["fields"], "meaning": q["meaning"]} for q in data["questions"]],
        "scenario_events": [{"do": branch["properties"]["do"]["const"], "meaning": branch.get("description", ""),
                             "fields": {f: {"required": req, "allowed": list(allowed) if isinstance(allowed, tuple)
                                            else allowed} for f, (req, allowed) in fmt["events"][branch["properties"]["do"]["const"]].items()
                                        if f != "turn"}} for branch in spec],
    }
    if as_json:
        _echo_json(out)
        return
    for group in data["kind_groups"]:
        _echo(f"info kinds: {group['title']}")
        for k in out["info_kinds"]:
            if k["group"] == group["id"]:
                _echo(f"  {k['id']:<30} {k['meaning']}")
    for section in ("events", "verdicts"):
        _echo(f"{section}:")
        for item in out[section]:
            _echo(f"  {item['id']:<30} {item['meaning']}")
    _echo("questions (scenario ask.question):")
    for q in out["questions"]:
        _echo(f"  {q['id']:<30} needs {', '.join(q['fields'])}: {q['meaning']}")
    _echo("scenario events (events[].do; every event also needs turn):")
    for ev in out["scenario_events"]:
        fields = [f"{f}{'' if v['required'] else '?'}={'|'.join(v['allowed']) if isinstance(v['allowed'], list) else v['allowed']}"
                  for f, v in ev["fields"].items()]
        _echo(f"  {ev['do']:<30} {' '.join(fields) + ': ' if fields else ''}{ev['meaning']}")


# --------------------------------------------------------------------------- card

@click.command()
@click.argument("name", metavar="NAME|PASSCODE")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Print at most N rulings (default: all).")
@DB_OPTION
@ENGINE_OPTION
@JSON_OPTION
@_exit_codes
def card(name: str, limit: int | None, db_path: Path, engine_path: Path, as_json: bool) -> None:
    """The rulings that mention a card, newest first, with dates, FAQ ids and status.

    \b
    NAME in Simplified or Traditional Chinese, Japanese, English or Korean,
    exact or folded (script, width, case, spaces, hyphens, & = and); or
    one of the card's passcodes (or its Konami id, for a card without one):
      rulings card 月之书        rulings card 月之書
      rulings card "Book of Moon"   rulings card 14087893
    A card with several passcodes (alternate artworks) lists them all.
    Rulings found by the card (linked quotes), by a quote whose key is one of
    the card's names, or by the English name in English pages (how).
    """
    engine = _engine_loading(engine_path)
    with reading(db_path) as con:
        found = queries.find_card(con, name)
        rulings = queries.card_rulings(con, found)
        effects = _effect_summaries(con, engine(), found.passcode, found.names) if found.passcode else []
    shown = rulings[:limit] if limit else rulings
    names = found.names
    if as_json:
        _echo_json({"passcode": found.passcode, "passcodes": list(found.passcodes), "konami_id": found.konami_id,
                    "names": names, "count": len(rulings), "rulings": shown, "effects": effects})
        return
    title = " / ".join(dict.fromkeys(names[k] for k in ("zh-CN", "zh-TW", "ja", "en") if names.get(k)))
    _echo(f"{title} ({_card_ids(found)}): {len(rulings)} ruling{'' if len(rulings) == 1 else 's'}")
    if effects:
        from .cardask import summary_line

        _echo("  effects after each event (rulings ask --card NAME EVENT for why):")
        for s in effects:
            _echo(summary_line(s))
    for r in shown:
        status = "" if r["status"] == "current" else f" [{r['status']}]"
        faq = f" FAQ {', '.join(r['faq_ids'])}" if r["faq_ids"] else ""
        _echo(f"  {', '.join(r['dates']) or 'undated'}{status} {r['record_id']} {r['source_id']}{faq}")
        _echo(f"      {r['text']}")
    if limit and len(rulings) > limit:
        _echo(f"  ... {len(rulings) - limit} more (--limit)")


def _card_ids(found) -> str:
    """``46986414`` for a card with one passcode; ``46986414; also passcode
    36996508`` for one with several; ``Konami id 4999, no passcode`` for one without."""
    if not found.passcodes:
        return f"Konami id {found.konami_id}, no passcode"
    others = found.passcodes[1:]
    also = f"; also passcode{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}" if others else ""
    return f"{found.passcodes[0]}{also}"


def _engine_loading(engine_path: Path):
    """Start importing the engine module at ``engine_path`` (:func:`load_engine`)
    in a thread, while the card's rulings are read (DuckDB lets go of the GIL
    while a query runs; the import is a tenth of the command's time). Returns
    a function that waits for it: the module, or None when there is no
    engine or it is not one (UsageError)."""
    done: dict = {}

    def load() -> None:
        try:
            done["engine"] = load_engine(engine_path)
        except UsageError:
            done["engine"] = None
        except BaseException as exc:  # an unreadable file (OSError): raised where the module is waited for
            done["error"] = exc

    thread = threading.Thread(target=load, name="load-engine")  # not a daemon: never cut off mid-import at exit
    thread.start()

    def wait():
        thread.join()
        if "error" in done:
            raise done["error"]
        return done["engine"]
    return wait


def _effect_summaries(con, engine, passcode: int, names: dict[str, str]) -> list[dict]:
    """The card's effects after each event (pipeline/cardask.py) by the
    engine module ``engine``; none when there is no engine (None), it is one
    of before the card table or the database holds no card texts."""
    from . import cardask

    if not hasattr(engine, "card_answer"):  # no engine, or one of before the card table
        return []
    try:
        return cardask.effect_summaries(con, engine, passcode, names)
    except duckdb.Error:  # a database of before the card texts
        return []
