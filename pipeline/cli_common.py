"""What every ``rulings`` command shares: the one output path, errors and exit codes, options.

- Output: :func:`_echo` (a text line, made safe for a terminal) and
  :func:`_echo_json` (a JSON result) are the only ways a command prints;
  :func:`_json_error` is a ``--json`` command's error (one JSON object on
  one line of stderr).
- Errors: :func:`_exit_codes` wraps every command: UsageError -> exit 2,
  the project's other errors, a damaged database (duckdb.Error) and the
  file system's errors (OSError) -> exit 1, each one ``Error: ...`` line
  (or with ``--json`` one JSON object) on stderr; :func:`_fail` prints one
  and exits.
- Options: ``--db`` (:data:`DB_OPTION`), ``--json`` (:data:`JSON_OPTION`),
  ``--engine-out`` (:data:`ENGINE_OPTION`); :func:`load_engine` imports the
  generated engine module an ``--engine-out`` names.

Light on purpose (click, duckdb and a few small pipeline modules): the read
commands (``rulings ask``, ``card``, ``show``, ``sql``) start about as fast as
a Python process that only imports duckdb (the bench's ``cli_start`` figures).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import click
import duckdb

from .database import unreadable
from .errors import RulingsError, UsageError
from .paths import DEFAULT_DB, DEFAULT_ENGINE
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


# The console script (pipeline.cli.run, its ENDS_AFTER_COMMAND) ends the process as soon as a read
# command returns: its read-only connections are then left open (held here, never collected) rather
# than closed, since closing frees DuckDB's whole instance and joins its threads (about 10 ms of a
# 300 ms command) and a read-only connection has nothing to write. Anywhere else (tests, the API,
# main() called in a process) they are closed.
_LEFT_OPEN: list[duckdb.DuckDBPyConnection] = []


@contextmanager
def reading(db_path: Path):
    """A read-only connection to the database at ``db_path``
    (:func:`pipeline.queries.connect`: checked; its errors), closed after
    the block unless the process ends right after the command."""
    from . import queries

    con = queries.connect(db_path)
    try:
        yield con
    finally:
        cli = sys.modules.get(f"{__package__}.cli")  # not imported here: loaded when the console script runs
        if cli is not None and cli.ENDS_AFTER_COMMAND:
            _LEFT_OPEN.append(con)
        else:
            con.close()

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
                stopping = sys.modules.get(f"{__package__}.stopping")  # none: no handler was installed
                if stopping is not None:
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
