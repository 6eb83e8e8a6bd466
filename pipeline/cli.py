"""The ``rulings`` command line: thin commands over the pipeline library.

Every command that reads the database takes ``--db`` (default: the file
``rulings build`` writes) and most take ``--json`` for machines. Errors are
one ``Error: ...`` line on stderr, with ``--json`` one JSON object on one
line of stderr (:func:`~pipeline.cli_common._json_error`; stdout holds only
results); exit codes: 0 ok, 1 error, 2 bad input (usage, malformed
scenario), the same either way.

This module is the command group (:func:`main`) and the console script (:func:`run`). The
commands live by what they do: :mod:`pipeline.cli_read` (ask, card, show,
sql, changes, vocabulary), :mod:`pipeline.cli_check` (evaluate, scenario,
simulators), :mod:`pipeline.cli_write` (build, refresh, report, export);
what they share (the one output path ``_echo`` / ``_echo_json``, error
handling and exit codes, options) is :mod:`pipeline.cli_common`.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

# Each command -> (its module in pipeline/, its function). A command line imports only its own
# command's module (click's lazily loaded subcommands; `--help` loads them all), and each
# command imports the rest of the pipeline (scraping, parsing, the report's templates) inside
# itself, so that `rulings ask`, `card`, `show` and `sql` start about as fast as a Python
# process that imports DuckDB (the bench's cli_start figures).
COMMANDS = {
    "ask": ("cli_read", "ask"), "card": ("cli_read", "card"), "changes": ("cli_read", "changes"),
    "show": ("cli_read", "show"), "sql": ("cli_read", "sql"), "vocabulary": ("cli_read", "vocabulary"),
    "evaluate": ("cli_check", "evaluate"), "scenario": ("cli_check", "scenario"),
    "simulators": ("cli_check", "simulators_cmd"),
    "build": ("cli_write", "build"), "export": ("cli_write", "export_cmd"), "refresh": ("cli_write", "refresh"),
    "report": ("cli_write", "report"),
}
# The commands that read (sql --write too: it closes its connection before it returns). A process
# that runs one from the console script ends as soon as its output is flushed (:func:`run`).
READ_COMMANDS = frozenset(name for name, (module, _) in COMMANDS.items() if module == "cli_read")
ENDS_AFTER_COMMAND = False  # True in the console script (run): the process ends right after a read command


class _Group(click.Group):
    """The command group: its commands (:data:`COMMANDS`) are imported when
    named (:meth:`get_command`); a command line click refuses (an unknown
    option, a missing argument) is one JSON object on stderr too when it
    holds --json, exit code 2 as click gives."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    read_command = False  # set when a read command (READ_COMMANDS) is loaded: run() may end the process early

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name]
            if cmd_name in READ_COMMANDS:
                _Group.read_command = True
            elif ENDS_AFTER_COMMAND:
                gc.enable()  # run() turned the collector off for a read command: a build or a refresh needs it
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), name), cmd_name)
        return self.commands.get(cmd_name)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command by name, each module imported (for tests and docs)."""
        return {name: self.get_command(None, name) for name in self.list_commands(None)}

    def invoke(self, ctx: click.Context):
        protected = vars(ctx).get("_protected_args", vars(ctx).get("protected_args", []))  # click 8.2+ / 8.1
        given = [*protected, *ctx.args]  # emptied by the call below
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if "--json" not in given:
                raise
            from .cli_common import _json_error

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


def run() -> None:
    """The console script ``rulings`` (and ``python -m pipeline.cli``):
    :func:`main`, and after a read command (:data:`READ_COMMANDS`: ask, card,
    show, sql, changes, vocabulary) the process ends as soon as its output
    is flushed, with the command's exit code (``os._exit``). Python's own
    shutdown would then only free objects: collect DuckDB's and click's,
    tear down their modules and the closed connection (about 15 % of a
    300 ms command: the bench's ``cli_start`` figures). A read command
    leaves nothing to finish: its output is written when it returns, and
    its read-only connections, left open (:func:`pipeline.cli_common.reading`),
    have nothing to write. A build, a refresh, an export or a report ends
    the usual way. Exit codes as :func:`main`'s: 0 ok, 1 error, 2 bad input;
    120 when the output cannot be flushed (as Python's shutdown)."""
    global ENDS_AFTER_COMMAND
    ENDS_AFTER_COMMAND = True  # a read command's read-only connections are left open (cli_common.reading)
    # No cyclic garbage collection for a read command: it makes few cycles and the process ends with it,
    # while a collection walks every object of duckdb's and click's (importing them triggers dozens).
    # Turned back on when a command of another kind is loaded (_Group.get_command).
    gc.disable()
    try:
        main()
    except SystemExit as exc:
        if not _Group.read_command:
            raise
        os._exit(_flushed(_exit_status(exc.code)))


def _exit_status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives: 0 for None, an int as it
    is, anything else printed on stderr and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    from .cli_common import _echo

    _echo(str(code), err=True)
    return 1


def _flushed(status: int) -> int:
    """``status`` once stdout and stderr are flushed; 120 when one cannot
    be (a full disk), as Python's shutdown. A reader that closed the pipe
    (``rulings sql ... | head``) had what it wanted: no error."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # ValueError: a stream the caller closed, as Python skips it
            pass
        except OSError:
            return 120
    return status


if __name__ == "__main__":  # pragma: no cover
    run()
