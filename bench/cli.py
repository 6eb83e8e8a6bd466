"""``python -m bench.cli``: only the CLI start-time figures (``cli_start_*``
of ``python -m bench``), on a database already built (default: the one
``rulings build`` writes), without the builds of the full bench."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.errors import RulingsError
from pipeline.paths import DEFAULT_DB

from .run import Report, _cli_figures


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=DEFAULT_DB,
              show_default=True, help="A database `rulings build` wrote.")
@click.option("--repeats", type=click.IntRange(min=1), default=15, show_default=True,
              help="Runs of each command, taken in turns; the best of each is printed.")
def main(db_path: Path, repeats: int) -> None:
    """Print cli_start_duckdb_import, cli_start_{ask,card,show,sql} (ms) and cli_start_ratio."""
    try:
        _cli_figures(Report(quiet=False), db_path, repeats)
    except (RuntimeError, RulingsError) as exc:  # not a database of this version, or a command failed on it
        raise click.ClickException(str(exc)) from exc


if __name__ == "__main__":
    main()
