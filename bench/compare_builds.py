"""Whether two builds wrote the same output: ``python -m bench.compare_builds A B``.

``A`` and ``B`` are folders each holding a ``rulings build``'s database
(``rulings.duckdb``) and engine files (``ocg_rules.py``, ``.json``, ``.mjs``,
``.d.mts``), e.g. written with ``rulings build --db DIR/rulings.duckdb
--engine-out DIR/ocg_rules.py``. Every table of A is compared with the same
table of B by ``EXCEPT ALL`` both ways (rows in one and not the other,
duplicates counted), leaving out what differs by when a build ran:
``runs.started_at`` / ``ended_at`` and ``build_info.built_at``. The engine
files are compared byte for byte. Prints one line per table and file, and
exits 1 when anything differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

# Columns that record when or where a build ran, not what it read.
TIMING_COLUMNS = {"runs": ("started_at", "ended_at")}
TIMING_KEYS = {"build_info": ("built_at",)}
ENGINE_FILES = ("ocg_rules.py", "ocg_rules.json", "ocg_rules.mjs", "ocg_rules.d.mts")


def _select(con, schema: str, table: str) -> str:
    columns = [row[0] for row in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = ? AND table_name = ? "
        "ORDER BY ordinal_position", [schema, table]).fetchall()]
    kept = [c for c in columns if c not in TIMING_COLUMNS.get(table, ())]
    quoted = ", ".join('"' + c.replace('"', '""') + '"' for c in kept)
    query = f"SELECT {quoted} FROM {schema}.{table}"
    if table in TIMING_KEYS:
        query += " WHERE key NOT IN (" + ", ".join(f"'{k}'" for k in TIMING_KEYS[table]) + ")"
    return query


def compare(a: Path, b: Path) -> list[str]:
    """One line per table and engine file: ``table: n rows, same`` or what differs."""
    from pipeline.database import connect

    lines: list[str] = []
    con = connect(":memory:")
    con.execute(f"ATTACH '{a / 'rulings.duckdb'}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{b / 'rulings.duckdb'}' AS b (READ_ONLY)")
    tables = lambda db: {r[0] for r in con.execute(  # noqa: E731
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = ?", [db]).fetchall()}
    ta, tb = tables("a"), tables("b")
    if ta != tb:
        lines.append(f"tables differ: only in A {sorted(ta - tb)}, only in B {sorted(tb - ta)}")
    for table in sorted(ta & tb):
        qa, qb = _select(con, "a", table), _select(con, "b", table)
        only_a = con.execute(f"SELECT count(*) FROM ({qa} EXCEPT ALL {qb})").fetchone()[0]
        only_b = con.execute(f"SELECT count(*) FROM ({qb} EXCEPT ALL {qa})").fetchone()[0]
        rows = con.execute(f"SELECT count(*) FROM ({qa})").fetchone()[0]
        state = "same" if only_a == only_b == 0 else f"DIFFERENT: {only_a} rows only in A, {only_b} only in B"
        lines.append(f"{table}: {rows} rows, {state}")
    for name in ENGINE_FILES:
        fa, fb = a / name, b / name
        same = fa.exists() and fb.exists() and fa.read_bytes() == fb.read_bytes()
        lines.append(f"{name}: {'same bytes' if same else 'DIFFERENT'}")
    return lines


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("b", type=click.Path(exists=True, file_okay=False, path_type=Path))
def main(a: Path, b: Path) -> None:
    """Compare the builds in folders A and B (see bench/compare_builds.py)."""
    lines = compare(a, b)
    for line in lines:
        click.echo(line)
    sys.exit(1 if any("DIFFERENT" in line or line.startswith("tables differ") for line in lines) else 0)


if __name__ == "__main__":
    main()
