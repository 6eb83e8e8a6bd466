"""``python -m bench.cli``: only the CLI start-time figures (``cli_start_*``
of ``python -m bench``), on a database already built (default: the one
``rulings build`` writes), without the builds of the full bench."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.errors import RulingsError
from pipeline.paths import DEFAULT_DB

from . import measure
from .run import Report, _cli_figures


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=DEFAULT_DB,
              show_default=True, help="A database `rulings build` wrote.")
@click.option("--repeats", type=click.IntRange(min=1), default=15, show_default=True,
              help="Runs of each command, taken in turns; the best of each is printed.")
@click.option("--instructions", is_flag=True,
              help="Also count each command's instructions with valgrind (cli_instructions_*; about a minute): "
                   "the same on a busy machine as on an idle one, where times are not.")
def main(db_path: Path, repeats: int, instructions: bool) -> None:
    """Print cli_start_duckdb_import, cli_start_{ask,card,show,sql} (ms) and
    cli_start_ratio (the goal: 1.5 or less); with --instructions also
    cli_instructions_* (millions) and cli_instructions_ratio."""
    report = Report(quiet=False)
    try:
        _cli_figures(report, db_path, repeats)
        if instructions:
            counts = measure.cli_instructions(db_path)
            for name, count in counts.items():
                report.add(f"cli_instructions_{name}", round(count), "M", "valgrind cachegrind, process start to exit")
            slowest = max(measure.CLI_COMMANDS, key=counts.get)
            report.add("cli_instructions_ratio", counts[slowest] / counts["duckdb"], "x",
                       f"the command with the most ({slowest}) over the duckdb-only process")
    except (RuntimeError, RulingsError) as exc:  # not a database of this version, or a command failed on it
        raise click.ClickException(str(exc)) from exc


if __name__ == "__main__":
    main()
