"""The ``rulings`` command line: thin commands over the pipeline library.

Every command that reads the database takes ``--db`` (default: the file
``rulings build`` writes) and most take ``--json`` for machines. Errors are
one ``Error: ...`` line on stderr, with ``--json`` one JSON object on one
line of stderr (:func:`_json_error`; stdout holds only results); exit codes:
0 ok, 1 error, 2 bad input (usage, malformed scenario), the same either way.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sys
import unicodedata
from contextlib import closing, contextmanager, nullcontext
from pathlib import Path

import click
import duckdb

# Only what every command needs is imported here: a command imports the rest
# of the pipeline (scraping, parsing, the report's templates) inside itself,
# so that `rulings ask`, `card`, `show` and `sql` start about as fast as a
# Python process that imports DuckDB (the bench's cli_start figures).
from . import queries, stopping
from .database import unreadable
from .errors import RulingsError, UsageError
from .corpus import DEFAULT_MAX_PAGE_BYTES
from .limits import DEFAULT_LIMITS, PageLimits
from .export import FORMATS as EXPORT_FORMATS
from .paths import DEFAULT_CORPUS, DEFAULT_DB, DEFAULT_ENGINE
from .terminal import json_safe, terminal_safe

DB_OPTION = click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB,
                         show_default=True, help="DuckDB database written by `rulings build`.")
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
ENGINE_OPTION = click.option("--engine-out", "engine_path", type=click.Path(dir_okay=False, path_type=Path),
                             default=DEFAULT_ENGINE, show_default=True, help="Path of the generated engine module.")


def _echo(line: str = "", err: bool = False) -> None:
    """Print one line (stdout, or stderr with ``err``), made safe for a
    terminal by :func:`~pipeline.terminal.terminal_safe`: every text line
    the CLI prints goes through here (ruling text, scenario ids, file names
    and queries may hold ESC, CR, a newline, bidi overrides)."""
    click.echo(terminal_safe(line), err=err)


def _page_limits(command):
    """The options that bound what one page may cost (``--max-nesting``,
    ``--max-attributes``, ``--max-page-elements``, ``--max-page-attributes``, ``--max-page-records``,
    ``--page-timeout``),
    handed to the command as one ``limits`` argument (:class:`PageLimits`)."""
    options = [
        click.option("--max-nesting", type=click.IntRange(min=1), default=DEFAULT_LIMITS.max_nesting,
                     show_default=True, help="Refuse a page with more elements open at once (checked before its "
                                             "tree is built)."),
        click.option("--max-attributes", type=click.IntRange(min=1), default=DEFAULT_LIMITS.max_attributes,
                     show_default=True, help="Refuse a page with an element of more attributes (checked before "
                                             "parsing)."),
        click.option("--max-page-elements", type=click.IntRange(min=1), default=DEFAULT_LIMITS.max_elements,
                     show_default=True, help="Refuse a page of more elements (start tags; checked before "
                                             "parsing)."),
        click.option("--max-page-attributes", type=click.IntRange(min=1),
                     default=DEFAULT_LIMITS.max_page_attributes, show_default=True,
                     help="Refuse a page whose elements hold more attributes in all (checked before parsing)."),
        click.option("--max-page-records", type=click.IntRange(min=1), default=DEFAULT_LIMITS.max_records,
                     show_default=True, help="Refuse a page of more text blocks or records (checked as they are "
                                             "made: memory stays bounded)."),
        click.option("--page-timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_LIMITS.timeout,
                     show_default=True, help="Seconds one page may take to read (in a worker process, ended "
                                             "then); the page fails, the others go on."),
    ]

    @functools.wraps(command)
    def wrapper(*args, max_nesting: int, max_attributes: int, max_page_elements: int, max_page_attributes: int,
                max_page_records: int, page_timeout: float, **kwargs):
        limits = PageLimits(max_nesting, max_attributes, max_page_records, page_timeout, max_page_attributes,
                            max_page_elements)
        return command(*args, limits=limits, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _json_mode() -> bool:
    """Whether the running command was given ``--json``."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.params.get("as_json"))


def _json_error(message: str, code: int, kind: str, place: str | None = None, **more) -> None:
    """The error of a ``--json`` command: one JSON object on one line of
    stderr (stdout holds only results), ``{"error": message, "type": the
    error's class (a class of pipeline.errors, or OSError, SQLError,
    ScenarioError), "place": the option, argument or file at fault or null,
    "exit_code": code}``; the exit code is the same as without --json."""
    data = {"error": message, "type": kind, "place": place, "exit_code": code, **more}
    click.echo(json_safe(json.dumps(data, ensure_ascii=False, default=str)), err=True)


def _fail(message: str, code: int = 1, kind: str | None = None, place: str | None = None) -> None:
    """Print the error (one ``Error: ...`` line, or with --json one JSON
    object: :func:`_json_error`) on stderr and exit with ``code``."""
    if _json_mode():
        _json_error(message, code, kind or ("UsageError" if code == 2 else "RulingsError"), place)
    else:
        _echo(f"Error: {f'{place}: {message}' if place else message}", err=True)
    sys.exit(code)


def _check_utf8(options: dict) -> None:
    """Exit 2 naming the first option or argument whose bytes are not UTF-8
    (Python keeps them as lone surrogates, which DuckDB and the JSON output
    cannot take): ``rulings card $'\\xff'``, ``--db $'db_\\xff'``."""
    for name, value in options.items():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, (str, Path)) and _SURROGATES.search(str(item)):
                _fail(f"{os.fsencode(str(item))!r} is not valid UTF-8", 2, "UsageError", _param_label(name))


_SURROGATES = re.compile("[\udc80-\udcff]")


def _param_label(name: str) -> str:
    """How the user wrote parameter ``name``: its longest option (``--db``) or its metavar (``NAME``)."""
    ctx = click.get_current_context(silent=True)
    for param in ctx.command.params if ctx else ():
        if param.name == name:
            return max(param.opts, key=len) if isinstance(param, click.Option) else param.human_readable_name
    return name


def _exit_codes(command):
    """Map the project's errors to one ``Error:`` line and an exit code, for
    every command in one place: 2 for bad input (UsageError), 1 for the
    rest (a page, the database, a schema file, the file system)."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        _check_utf8(kwargs)
        try:
            try:
                return command(*args, **kwargs)
            except Exception:
                stopping.raise_if_stopping()  # a stop signal DuckDB turned into an error of its own
                raise
        except UsageError as exc:
            _fail(exc.message, 2, type(exc).__name__, exc.place or None)
        except RulingsError as exc:
            if _json_mode():  # the place the error names, and whether running again may help (a network fault)
                _json_error(str(exc), 1, type(exc).__name__, exc.place, retryable=exc.retryable)
                sys.exit(1)
            _fail(str(exc), 1, type(exc).__name__)
        except BrokenPipeError:  # `rulings sql ... | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except duckdb.Error as exc:  # a damaged database: DuckDB finds a bad block when a query reads it
            error = unreadable(exc, kwargs.get("db_path"))
            _fail(str(error), 1, type(error).__name__)
        except OSError as exc:  # an output folder not writable, no space, a data file missing
            # the system's own words: the same error comes from reading a file as from writing one
            _fail(f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc.strerror or exc), 1, "OSError")
    return wrapper


def _echo_json(data) -> None:
    """Print ``data`` as JSON, with the characters JSON leaves raw that a
    terminal acts on (C1 controls, bidi overrides) as ``\\u`` escapes."""
    click.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=2, default=str)))


class _Group(click.Group):
    """The command group: a command line click refuses (an unknown option, a
    missing argument) is one JSON object on stderr too when it holds --json,
    exit code 2 as click gives."""

    def invoke(self, ctx: click.Context):
        protected = vars(ctx).get("_protected_args", vars(ctx).get("protected_args", []))  # click 8.2+ / 8.1
        given = [*protected, *ctx.args]  # emptied by the call below
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if "--json" not in given:
                raise
            place = exc.param.get_error_hint(exc.ctx or ctx).strip("'") if getattr(exc, "param", None) else None
            _json_error(exc.format_message(), 2, "UsageError", place)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rulings")
def main() -> None:
    """Yu-Gi-Oh! OCG rulings: build a DuckDB database of dated ruling records
    and a generated engine that answers information-retention and battle
    questions, citing the rulings behind every answer.

    \b
    Typical use:
      rulings build                                  # bundled corpus -> database + engine
      rulings ask synchro_summoned face_down         # kept / lost / unknown, with rulings
      rulings card "Book of Moon"                    # the rulings that mention a card, newest first
      rulings sql "SELECT * FROM rules"              # query the database
      rulings vocabulary                             # the kinds, events and scenario format
      rulings export out/ --format parquet           # every table, typed, for pandas / DuckDB / Spark

    rulings scenario FILE answers your scenario files; rulings evaluate
    compares the rules with a gold file (tests/gold/ of the source tree).

    \b
    Where things live: in a checkout, build/rulings.duckdb, engine/ocg_rules.py
    (with .json and .mjs beside it) and corpus/. Installed (pip install .) or
    with RULINGS_DATA=DIR set: DIR/rulings.duckdb, DIR/engine/ocg_rules.py and
    DIR/corpus (a copy of the bundled corpus, made on first use); installed
    without RULINGS_DATA, DIR is the user data folder. --db, --engine-out and
    --corpus override each one.
    """
    # Text from pages and input files may hold what the terminal's encoding cannot (a lone
    # surrogate in a scenario id): escape it rather than fail while printing.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


# --------------------------------------------------------------------------- build

def _exit_on_sigterm() -> None:
    """SIGTERM (systemd stopping a job, `timeout`) ends a build or refresh
    like Ctrl-C does: temporary files removed, workers stopped, the previous
    database and engine left as they were; exit code 143. Set before the
    command makes any file (:mod:`pipeline.stopping`)."""
    from . import stopping

    stopping.install()


@contextmanager
def _page_progress(total: int, quiet: bool):
    """A ``progress(source_id)`` callback: a progress bar on a terminal, a
    ``[i/n] id`` line per page otherwise, None when ``quiet``."""
    if quiet:
        yield None
    elif sys.stderr.isatty():
        with click.progressbar(length=total, label="pages", file=sys.stderr, show_pos=True,
                               item_show_func=lambda sid: sid and terminal_safe(sid)) as bar:
            yield lambda source_id: bar.update(1, source_id)
    else:
        done = 0

        def line(source_id: str) -> None:
            nonlocal done
            done += 1
            _echo(f"  [{done}/{total}] {source_id}", err=True)

        yield line


@main.command()
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_CORPUS,
              show_default=True, help="Corpus folder holding manifest.tsv and the page snapshots.")
@DB_OPTION
@ENGINE_OPTION
@click.option("--max-page-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_PAGE_BYTES, show_default=True,
              help="Refuse pages larger than this.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes for the pages (default: one per core; 1 below 4 pages).")
@click.option("--max-shrink", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="A page that gives more than this share fewer records, statements, dated rulings or card "
                   "mentions than the previous database holds for it, or (from 20 records) more than 1/(1-F) "
                   "times the records, keeps its previous records, with a warning (1: accept any page).")
@click.option("--wait", is_flag=True, help="Wait while another writer (a build, a refresh, `rulings sql --write`) "
                                           "holds the database's lock instead of exiting with an error.")
@_page_limits
@JSON_OPTION
@_exit_codes
def build(corpus_dir: Path, db_path: Path, engine_path: Path, max_page_bytes: int, workers: int | None,
          max_shrink: float, wait: bool, as_json: bool, limits: PageLimits) -> None:
    """Normalize, extract, load, compile and generate from the corpus.

    Writes the database (--db) and the engine module (--engine-out), each
    replaced atomically. A page that fails is reported and skipped; the
    build goes on with the others and exits 1 at the end if any failed.
    Progress goes to stderr: a bar on a terminal, one line per page
    otherwise (cron logs), nothing with --json.
    """
    from .corpus import load_manifest, prepare_corpus
    from .run import build as run_build

    _exit_on_sigterm()
    corpus_dir = prepare_corpus(corpus_dir)
    total = len(load_manifest(corpus_dir))
    with _page_progress(total, as_json) as progress:  # the build takes <db>.lock, as a refresh does
        result = run_build(corpus_dir, db_path, engine_path, progress=progress, max_page_bytes=max_page_bytes,
                           workers=workers, max_shrink=max_shrink, wait=wait, limits=limits)
    summary = result.summary()
    if as_json:
        _echo_json(summary)
    else:
        for warning in result.warnings:
            _echo(f"warning: {warning}", err=True)
        for error in result.errors:
            _echo(f"error: {error}", err=True)
        verdicts = ", ".join(f"{k} {v}" for k, v in summary["rules_by_verdict"].items())
        _echo(f"sources          {result.sources} ({result.pages_ok} built)")
        _echo(f"records          {result.records} ({result.dated_records} dated)")
        _echo(f"card mentions    {result.card_mentions} ({result.linked_mentions} linked to a card)")
        _echo(f"statements       {result.statements}")
        _echo(f"rules            {sum(result.rules_by_verdict.values())}: {verdicts}")
        _echo(f"procedural rules {result.procedural_rules}")
        _echo_rule_changes(result.rule_changes)
        _echo(f"database         {result.db_path}")
        _echo(f"engine           {result.engine_path} (rules hash {result.rules_hash[:12]})")
    if result.errors:
        sys.exit(1)


def _echo_rule_changes(changes: list) -> None:
    """The summary's review lines: how many rules changed verdict or became
    disputed or settled against the database before, one line each."""
    if not changes:
        _echo("rule changes     0 (against the database before)")
        return
    _echo(f"rule changes     {len(changes)} to review before publishing the engine "
          "(rulings changes --rules):")
    for change in changes:
        _echo(f"  {change.change:<8} {change.describe()}")


# --------------------------------------------------------------------------- ask

@main.command()
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
    with closing(queries.connect(db_path)) as con:
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

    with closing(queries.connect(db_path)) as con:
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

@main.command()
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


# --------------------------------------------------------------------------- evaluate

@main.command()
@click.option("--gold", "gold_path", type=click.Path(path_type=Path),
              help="CSV with columns info_kind,event,verdict,dates: the rules table's verdicts.")
@click.option("--statements", "statements_paths", type=click.Path(path_type=Path), multiple=True,
              help="Ruling-level gold (JSON Lines, the format of tests/gold/statements_public.jsonl): the "
                   "statements of each ruling. Give it several times to score several files: each file's "
                   "figures, then the total.")
@click.option("--min", "minimum", type=click.IntRange(min=0), default=None,
              help="Verdicts that must be correct for exit code 0 (default: all), so CI can gate on it.")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def evaluate(gold_path: Path | None, statements_paths: tuple[Path, ...], minimum: int | None, db_path: Path,
             as_json: bool) -> None:
    """Compare the rules table with a gold CSV (--gold; last line: N/M
    verdicts correct; exit code 1 when fewer than --min, default all, are
    correct), or the statements of each ruling with ruling-level gold
    (--statements, once or more; the units with a miss, with several
    files a line ``file NAME P=… R=… F1=… (tp/fp/fn)`` for each, then a
    last line ``statements P=… R=… F1=… (tp/fp/fn)`` over all of them;
    see tests/gold/README-gold.md for the matching rule)."""
    if (gold_path is None) == (not statements_paths):
        raise UsageError("give exactly one of --gold FILE and --statements FILE", place="evaluate")
    if statements_paths:
        return _evaluate_statements(list(statements_paths), db_path, as_json)
    from . import evaluation

    gold = evaluation.read_gold(gold_path)
    if minimum is not None and minimum > len(gold):
        raise UsageError(f"--min {minimum} is more than the {len(gold)} rows of {gold_path}", place="evaluate")
    with closing(queries.connect(db_path)) as con:
        report = evaluation.compare_verdicts(con, gold)
    rows, correct = report["rows"], report["correct"]
    if as_json:
        _echo_json(report)
    else:
        for r in rows:
            mark = "ok  " if r["correct"] else "MISS"
            cited = f"dates {len(r['dates_cited'])}/{len(r['dates_expected'])}" if r["dates_expected"] else ""
            _echo(f"{mark} {r['info_kind']:<30} {r['event']:<13} expected {r['expected']:<15} "
                       f"got {r['got']:<15} {cited}")
    if not as_json:
        _echo(f"{correct}/{len(rows)} verdicts correct")
    needed = len(rows) if minimum is None else minimum
    if correct < needed:
        message = f"fewer verdicts correct than required: {correct} < {needed}"
        if as_json:  # the report on stdout, the failure on stderr
            _json_error(message, 1, "EvaluationError", "--min" if minimum is not None else None)
        else:
            _echo(f"{message}{'' if minimum is None else ' (--min)'}", err=True)
        sys.exit(1)


def _evaluate_statements(paths: list[Path], db_path: Path, as_json: bool) -> None:
    from . import evaluation

    files = [(str(path), evaluation.read_statement_gold(path)) for path in paths]
    with closing(queries.connect(db_path)) as con:
        report = evaluation.score_statement_files(con, files)
    if as_json:
        _echo_json(report)
        return
    several = len(files) > 1
    for miss in report["units"]:
        what = [f"missing {'; '.join('/'.join(t) for t in miss['missing'])}" if miss["missing"] else "",
                f"extra {'; '.join('/'.join(t) for t in miss['extra'])}" if miss["extra"] else "",
                f"dates missing {', '.join(miss['dates_missing'])}" if miss["dates_missing"] else ""]
        where = f"{Path(miss['file']).name} " if several else ""
        _echo(f"MISS {where}n={miss['n']} [{miss['section']}] {' | '.join(w for w in what if w)}")
        _echo(f"     {miss['text'][:100]}")
    for one in report["files"] if several else ():
        _echo(f"file {one['file']} P={one['precision']:.2f} R={one['recall']:.2f} F1={one['f1']:.2f} "
              f"({one['tp']}/{one['fp']}/{one['fn']}) dates {one['dates_ok']}/{one['dated_units']}")
    _echo(f"dates {report['dates_ok']}/{report['dated_units']} units' own dates on their records")
    _echo(f"statements P={report['precision']:.2f} R={report['recall']:.2f} F1={report['f1']:.2f} "
               f"({report['tp']}/{report['fp']}/{report['fn']})")


# --------------------------------------------------------------------------- scenario

def load_engine(path: Path):
    """Import the generated engine module from ``path``; UsageError when
    there is none or the file is not one (its header carries no rules hash:
    it is never run; a FIFO or device is never opened)."""
    import importlib.util

    from .enginefile import engine_rules_hash
    from .userfiles import require_regular_file

    require_regular_file(path, "--engine-out")
    if not Path(path).is_file():
        raise UsageError(f"no engine module at {path}; run `rulings build` first (or pass --engine-out)")
    if engine_rules_hash(path) is None:
        raise UsageError(f"{path} is not an engine module generated by `rulings build` (no rules hash in its header)",
                         place="--engine-out")
    spec = importlib.util.spec_from_file_location("rulings_generated_engine", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a damaged module: say so in one line
        raise UsageError(f"{path}: the engine module does not load: {type(exc).__name__}: {exc}",
                         place="--engine-out") from None
    return module


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@ENGINE_OPTION
@JSON_OPTION
@_exit_codes
def scenario(file: Path, engine_path: Path, as_json: bool) -> None:
    """Answer the scenarios in FILE (one JSON object or a list) with the engine.

    Each answer is true, false or "unknown", with the rules and ruling records
    (ids, dates, sources) behind it. Malformed scenarios are reported with
    their id and field and make the exit code 2; the others are answered.
    Scenarios that share an id are all refused, naming their positions.
    FILE must be a regular file (a FIFO or a device is refused, exit 2).
    """
    from .userfiles import read_user_file

    try:
        data = json.loads(read_user_file(file, "FILE").decode("utf-8-sig"))
    except RecursionError:
        _fail("not JSON this engine reads: nested too deeply", 2, "UsageError", str(file))
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, and a number over Python's digit limit
        _fail(f"not JSON: {queries.json_problem(exc)}", 2, "UsageError", str(file))
    engine = load_engine(engine_path)
    scenarios = data if isinstance(data, list) else [data]
    results = engine.answer_all(scenarios)
    if as_json:
        _echo_json(results if isinstance(data, list) else results[0])
    else:
        for res in results:
            if "error" in res:  # said once, on stderr, below
                continue
            _echo(f"{res['id']}: {json.dumps(res['answer'])}")
            for b in res["because"]:
                _echo(f"    {b['rule']}: {b.get('verdict') or b.get('summary', '')}{_records_brief(b)}")
    bad = [r for r in results if "error" in r]
    if bad and as_json:
        _json_error(f"{len(bad)} malformed scenario(s): {bad[0]['error']}", 2, "ScenarioError", str(file),
                    errors=[r["error"] for r in bad])
    for r in bad if not as_json else ():
        _echo(f"Error: {r['error']}", err=True)
    if bad:
        sys.exit(2)


def _records_brief(item: dict, shown: int = 3) -> str:
    """' [N records; latest: id date (source), ...]' for text output."""
    records = item.get("records", [])
    if not records:
        return ""
    latest = sorted(records, key=lambda r: (r["dates"][-1:] or [""], r["id"]))[-shown:][::-1]
    listed = ", ".join(f"{r['id']} {r['dates'][-1] if r['dates'] else 'undated'} ({r['source']})" for r in latest)
    return f" [{len(records)} record{'s' if len(records) != 1 else ''}; {listed}]"


# --------------------------------------------------------------------------- show

@main.command()
@click.argument("record_id")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def show(record_id: str, db_path: Path, as_json: bool) -> None:
    """Print one record with all its provenance: source URL, snapshot hash,
    section, channel, status, dates with official FAQ ids, cards, statements."""
    with closing(queries.connect(db_path)) as con:
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


# --------------------------------------------------------------------------- refresh

@main.command()
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_CORPUS,
              show_default=True, help="Corpus folder: manifest.tsv, pages, and the snapshot store snapshots/.")
@click.option("--source", "source_ids", multiple=True, metavar="ID",
              help="Fetch only this source (repeatable). Default: every source whose manifest fetch is yes.")
@DB_OPTION
@ENGINE_OPTION
@click.option("--wait", is_flag=True, help="Wait for a running refresh to end instead of exiting with an error.")
@click.option("--rate-limit", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Requests per second per host (0: no limit); a robots.txt Crawl-delay can only slow it down.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="Seconds to wait for a server to answer or send more (between two reads).")
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="Retries after timeouts, connection errors, 429 and 5xx (exponential backoff, Retry-After honoured).")
@click.option("--max-page-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_PAGE_BYTES, show_default=True,
              help="Refuse pages larger than this.")
@click.option("--max-shrink", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Refuse a changed page that lost more than this share of its records, statements, dated "
                   "rulings or card mentions, or (from 20 records) grew to more than 1/(1-F) times the records "
                   "(a markup change?).")
@click.option("--max-retry-after", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds a server may ask to wait (Retry-After) before a retry; longer fails the source at once.")
@click.option("--max-crawl-delay", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Longest robots.txt Crawl-delay honoured (seconds); a site asking more is not fetched.")
@click.option("--max-response-seconds", type=click.FloatRange(min=0, min_open=True), default=120.0, show_default=True,
              help="Longest time to read one response, first byte to last (a trickling server is cut off).")
@click.option("--source-deadline", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              help="Seconds one source may take, waits and retries included; then it is recorded as failed.")
@click.option("--deadline", type=click.FloatRange(min=0, min_open=True), default=3600.0, show_default=True,
              help="Seconds the whole run may take, fetching and reading pages; sources not fetched or "
                   "read by then are recorded as failed, and what was done is stored.")
@click.option("--user-agent", envvar="RULINGS_USER_AGENT", default=None,
              help="User-Agent header (env RULINGS_USER_AGENT); default names rulings and its version. "
                   "Add a contact address when you run it on a schedule.")
@_page_limits
@JSON_OPTION
@_exit_codes
def refresh(corpus_dir: Path, source_ids: tuple[str, ...], db_path: Path, engine_path: Path, wait: bool,
            rate_limit: float, timeout: float, retries: int, max_page_bytes: int, max_shrink: float,
            max_retry_after: float, max_crawl_delay: float, max_response_seconds: float, source_deadline: float,
            deadline: float, user_agent: str | None, as_json: bool, limits: PageLimits) -> None:
    """Fetch the sources from their URLs; re-process only the pages that changed.

    \b
    Each fetched page is kept as a snapshot (content hash, fetch time, HTTP
    status, ETag/Last-Modified) in the corpus's snapshots/ folder and in the
    database. A 304 or an unchanged hash costs nothing more; a changed page is
    normalized and extracted again, its vanished rulings are retired (never
    deleted), and the rules and engine are recompiled only if a ruling
    changed. A source that fails (timeout, HTTP error, malformed page) is
    recorded and skipped: its last good snapshot stays in force. Exit code 1
    if any source failed or another refresh holds the lock.

    \b
    Example (cron, daily at 04:17):
      17 4 * * *  cd /srv/rulings && .venv/bin/rulings refresh >> refresh.log 2>&1
    """
    from .corpus import prepare_corpus
    from .fetch import FetchConfig
    from .refresh import refresh as run_refresh

    _exit_on_sigterm()
    config = FetchConfig(timeout=timeout, retries=retries, rate_limit=rate_limit, max_page_bytes=max_page_bytes,
                         max_retry_after=max_retry_after, max_crawl_delay=max_crawl_delay,
                         max_response_seconds=max_response_seconds, source_deadline=source_deadline, deadline=deadline,
                         **({"user_agent": user_agent} if user_agent else {}))

    def progress(source_id: str) -> None:
        if not as_json:
            _echo(f"  fetching {source_id}", err=True)

    result = run_refresh(prepare_corpus(corpus_dir), db_path, engine_path, list(source_ids) or None, config, wait=wait,
                         progress=progress, max_shrink=max_shrink, limits=limits)
    if as_json:
        _echo_json(result.summary())
    else:
        _print_refresh(result)
    if result.failed:
        sys.exit(1)


def _print_refresh(result) -> None:
    s = result.summary()
    _echo(f"run {s['run_id']} refresh {s['started_at']} .. {s['ended_at']}: {s['tried']} tried, "
               f"{s['unchanged']} unchanged, {s['changed']} changed, {s['failed']} failed")
    for warning in result.warnings:
        _echo(f"warning: {warning}", err=True)
    for o in result.outcomes:
        reason = o.reason
        if o.outcome == "changed":
            reason += f": {o.added} added, {o.changed} changed, {o.retired} retired"
        _echo(f"  {o.outcome:<9} {o.source_id:<40} {reason}")
    rules = "recompiled" if result.recompiled else "unchanged"
    _echo(f"rules      {rules} (rules hash {result.rules_hash[:12]})")
    for change in result.rule_changes:
        _echo(f"  review   {change.change:<8} {change.describe()}")
    _echo(f"engine     {result.engine_path}{' (written)' if result.engine_written else ''}")
    _echo(f"database   {result.db_path}")


# --------------------------------------------------------------------------- changes

@main.command()
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
    with closing(queries.connect(db_path)) as con:
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

    with closing(queries.connect(db_path)) as con:
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

@main.command()
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

@main.command()
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
    with closing(queries.connect(db_path)) as con:
        found = queries.find_card(con, name)
        rulings = queries.card_rulings(con, found)
        effects = _effect_summaries(con, engine_path, found.passcode, found.names) if found.passcode else []
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


def _effect_summaries(con, engine_path: Path, passcode: int, names: dict[str, str]) -> list[dict]:
    """The card's effects after each event (pipeline/cardask.py); none when
    the engine is not built (or is not one) or the database holds no card texts."""
    from . import cardask

    try:
        engine = load_engine(engine_path)
    except UsageError:
        return []
    if not hasattr(engine, "card_answer"):  # an engine of before the card table
        return []
    try:
        return cardask.effect_summaries(con, engine, passcode, names)
    except duckdb.Error:  # a database of before the card texts
        return []


# --------------------------------------------------------------------------- simulators

def _agreement_word(sim: dict) -> str:
    if sim["agrees"] is None:
        return "not modelled" if sim["verdict"] == "not_modelled" else "no comparison"
    if sim["agrees"]:
        return "agrees"
    if sim["cases_disagreeing"]:
        return f"DISAGREES in case {', '.join(sim['cases_disagreeing'])}"
    return "DISAGREES"


@main.command("simulators")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def simulators_cmd(db_path: Path, as_json: bool) -> None:
    """The rulings against the simulators: per info kind and event, the rules
    table's verdict beside the verdict of ygopro-core and of the EDOPro core.

    \b
    Disagreements first, each with the simulator's code (file:line of the
    pinned source and the lines it relies on); then the pairs a core does not
    model (card scripts keep that information); then the agreements. A
    conditional rule agrees only when the core's verdict is that of every
    case. The simulators' side is schema/simulators/*.json.
    """
    from . import simulators as sim_compare

    with closing(queries.connect(db_path)) as con:
        rows = sim_compare.comparison(con)
    if as_json:
        _echo_json([{"info_kind": r["info_kind"], "event": r["event"],
                     "rulings": {k: r["rulings"][k] for k in ("verdict", "latest_date", "record_ids", "latest_record",
                                                              "faq_ids", "cases")},
                     "simulators": {sid: {k: s[k] for k in ("verdict", "agrees", "cases_agreeing", "cases_disagreeing",
                                                          "storage", "where", "note", "evidence", "commit")}
                                    for sid, s in r["simulators"].items()}} for r in rows])
        return
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        ru = r["rulings"]
        latest = ", ".join(x for x in (ru["latest_date"], ru["latest_record"],
                                       f"FAQ {', '.join(ru['faq_ids'])}" if ru["faq_ids"] else None) if x)
        cases = "; ".join(f"{c['case_id']}: {c['verdict']}" for c in ru["cases"])
        _echo(f"{r['info_kind']} on {r['event']}: rulings {ru['verdict']}"
              f"{f' ({cases})' if cases else ''} [{latest or 'undated'}; {len(ru['record_ids'])} record(s)]")
        for sid, s in r["simulators"].items():
            word = _agreement_word(s)
            tally = counts.setdefault(sid, {"agree": 0, "disagree": 0, "none": 0})
            tally["none" if s["agrees"] is None else "agree" if s["agrees"] else "disagree"] += 1
            _echo(f"  {sid:<12} {s['verdict']:<15} {word}")
            if s["agrees"] is False:
                _echo(f"      {s['where']}: {s['note']}")
                for ev in s["evidence"]:
                    _echo(f"      {ev['file']}:{ev['line']}  {ev['lines'][0]}")
    for sid, tally in counts.items():
        _echo(f"{sid}: {tally['disagree']} disagreement(s), {tally['agree']} agreement(s), "
              f"{tally['none']} without a comparison (not modelled or no verdict)")


# --------------------------------------------------------------------------- report

@main.command()
@click.argument("out_dir", metavar="DIR", type=str)
@DB_OPTION
@ENGINE_OPTION
@JSON_OPTION
@_exit_codes
def report(out_dir: str, db_path: Path, engine_path: Path, as_json: bool) -> None:
    """Write the rulings as a static website into DIR: open DIR/index.html.

    \b
    index.html      the rules matrix (info kind x event), each cell linking to its rule
    rules/          a page per rule: its rulings with dates and FAQ links, a timeline
    cards/          a page per card mentioned: names in each language, its effects after
                    face_down, temp_banish, flip_face_up (from the engine), rulings newest first
    timeline.html   dated rulings per month per source; history.html: refresh runs
    search.html     search card names (any language or script) and ruling text
    simulators.html the rulings against ygopro-core and the EDOPro core (rulings simulators)
    Plain files: they open from disk or any static server; nothing is fetched
    from the network. DIR must be new, empty, or a site an earlier report
    wrote (DIR/.rulings-report lists its files). The site is written into a
    folder beside DIR and swapped in, so an interrupted report leaves the
    previous site whole; the files the previous report wrote are replaced,
    DIR's other files are kept.
    """
    from .report import write_report

    _exit_on_sigterm()
    try:  # the card pages' tables of effects come from the engine, when there is one
        engine = load_engine(engine_path)
    except UsageError:
        engine = None
    summary = write_report(db_path, out_dir, engine)
    if as_json:
        _echo_json(summary.as_dict())
        return
    _echo(f"wrote {summary.files} files to {out_dir} in {summary.seconds:.1f} s: {summary.rules} rules, "
               f"{summary.cards} cards, {summary.archetypes} archetypes, {summary.sources} sources, "
               f"{summary.runs} runs")
    _echo(f"open {Path(out_dir) / 'index.html'}")


# --------------------------------------------------------------------------- export

@main.command("export")
@click.argument("out_dir", metavar="DIR", type=str)
@click.option("--format", "fmt", type=click.Choice(sorted(EXPORT_FORMATS)), default="parquet", show_default=True,
              help="parquet: typed columns (dates, lists, structs); jsonl: one JSON object per line; csv: text.")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def export_cmd(out_dir: str, fmt: str, db_path: Path, as_json: bool) -> None:
    """Write every table of the database into DIR, one file per table.

    \b
    DIR/records.parquet, DIR/rules.parquet, ...  one file per table of schema/ddl.sql
    DIR/export.json                               format, tables, row counts, column types, rules hash
    Parquet keeps the real types: dates are dates, record_ids a list of
    strings, rules.conflicts a list of {verdict, record_ids, latest_date}.
    JSON Lines writes dates as ISO strings. Rows are sorted, so the same
    database gives the same rows. Files of DIR not named above are left alone.

    \b
    Example: rulings export out/ && duckdb -c "SELECT * FROM 'out/rules.parquet'"
             python -c "import pandas; print(pandas.read_parquet('out/rules.parquet'))"
    """
    from .export import export

    summary = export(db_path, out_dir, fmt)
    if as_json:
        _echo_json(summary.as_dict())
        return
    rows = sum(summary.tables.values())
    _echo(f"wrote {len(summary.tables)} tables ({rows:,} rows) as {fmt} to {out_dir} in {summary.seconds:.1f} s")
    for table, n in summary.tables.items():
        _echo(f"  {table:<16} {n:>8,} rows")


if __name__ == "__main__":  # pragma: no cover
    main()
