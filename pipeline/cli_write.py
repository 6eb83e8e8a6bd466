"""The commands that write files: ``rulings build``, ``refresh`` (the database
and the engine), ``report`` (a static site) and ``export`` (the tables).

Each imports the stage it runs inside itself (:mod:`pipeline.run`,
:mod:`pipeline.refresh`, :mod:`pipeline.report`, :mod:`pipeline.export`), so
that loading this module for the command line costs little; build, refresh
and report end like Ctrl-C on SIGTERM (:func:`_exit_on_sigterm`).
"""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from .cli_common import DB_OPTION, ENGINE_OPTION, JSON_OPTION, _echo, _echo_json, _exit_codes, load_engine
from .corpus import DEFAULT_MAX_PAGE_BYTES
from .errors import UsageError
from .export import FORMATS as EXPORT_FORMATS
from .limits import DEFAULT_LIMITS, PageLimits
from .paths import DEFAULT_CORPUS
from .terminal import terminal_safe

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


@click.command()
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


# --------------------------------------------------------------------------- refresh

@click.command()
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


# --------------------------------------------------------------------------- report

@click.command()
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

@click.command("export")
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
