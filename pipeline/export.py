"""Export: every table of the database as Parquet, CSV or JSON Lines files.

``rulings export DIR --format parquet|csv|jsonl`` writes ``DIR/<table>.<ext>``
for each table of ``schema/ddl.sql`` and ``DIR/export.json`` (format, tables,
row counts, columns with their DuckDB types, rules hash). DuckDB's own
``COPY ... TO`` writes the files, so types are real: in Parquet dates are
dates, lists are lists and ``rules.conflicts`` a list of structs; JSON Lines
has ISO date strings and JSON arrays and objects; CSV, being text, writes
lists as DuckDB's ``[a, b]`` text. Rows are sorted (``ORDER BY ALL``), so the
same database gives the same rows in the same order.

Each file is written under a temporary name and renamed, so an interrupted
export never leaves a half-written table file; files of DIR that are not the
export's own are never touched. A folder that holds table files no export
wrote (no ``export.json``) is refused.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .load import columns
from .queries import connect

FORMATS = {"parquet": ("parquet", "(FORMAT parquet, COMPRESSION zstd)"),
           "csv": ("csv", "(FORMAT csv, HEADER true)"),
           "jsonl": ("jsonl", "(FORMAT json)")}
MANIFEST = "export.json"


@dataclass
class ExportSummary:
    """What :func:`export` wrote: ``tables`` maps table -> rows."""

    out_dir: str
    format: str
    tables: dict[str, int]
    seconds: float

    def as_dict(self) -> dict:
        return {"dir": self.out_dir, "format": self.format, "tables": self.tables, "files": len(self.tables) + 1,
                "seconds": round(self.seconds, 2)}


def _literal(path: Path) -> str:
    """``path`` as a SQL string literal (COPY takes no parameters)."""
    return "'" + str(path).replace("'", "''") + "'"


def _target(out_dir: str, tables: list[str]) -> Path:
    """The folder to write into, made if needed. A folder an earlier export
    wrote (it holds ``export.json``) has that export's table files removed,
    whatever their format, so no stale table is left beside the new ones; a
    folder of the user's holding a file with a table's name is refused."""
    if not out_dir.strip():
        raise UsageError("DIR is empty: name the folder to write the files into", place="DIR")
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{out_dir} exists and is not a folder", place="DIR")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the folder {out_dir}: {exc.strerror or exc}", place="DIR") from None
    ours = [target / f"{t}.{ext}" for t in tables for ext, _ in FORMATS.values()]
    if (target / MANIFEST).is_file():
        for path in ours:
            path.unlink(missing_ok=True)
    else:
        clash = [p.name for p in ours if p.exists()]
        if clash:
            raise UsageError(f"{out_dir} holds {', '.join(clash[:3])}, which no export wrote (no {MANIFEST}); "
                             "choose an empty or new folder", place="DIR")
    return target


def export(db_path: Path, out_dir: str, fmt: str = "parquet") -> ExportSummary:
    """Write every table of the database at ``db_path`` into ``out_dir`` in
    ``fmt`` (a key of :data:`FORMATS`) plus ``export.json``. Returns an
    :class:`ExportSummary`. Raises UsageError for an unknown format or a DIR
    that is a file, LoadError when there is no database."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", place="--format")
    started = time.perf_counter()
    con = connect(db_path)
    try:
        target = _target(out_dir, list(columns()))
        ext, options = FORMATS[fmt]
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'main'").fetchall()}
        tables, described = {}, {}
        for table, cols in columns().items():
            if table not in present:
                continue
            final = target / f"{table}.{ext}"
            partial = target / f".{table}.{ext}.partial"
            con.execute(f"COPY (SELECT * FROM {table} ORDER BY ALL) TO {_literal(partial)} {options}")
            os.replace(partial, final)
            tables[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            described[table] = [{"name": c, "type": t} for c, t in cols.items()]
        row = con.execute("SELECT value FROM build_info WHERE key = 'rules_hash'").fetchone()
    finally:
        con.close()
    manifest = {"format": fmt, "rules_hash": row[0] if row else None,
                **({"note": "CSV is text: list and struct columns are written as DuckDB's text form of the type "
                            "named here (e.g. [a, b]); use Parquet or JSON Lines to read them as values"}
                   if fmt == "csv" else {}),
                "tables": {t: {"file": f"{t}.{ext}", "rows": n, "columns": described[t]} for t, n in tables.items()}}
    (target / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return ExportSummary(str(target), fmt, tables, time.perf_counter() - started)
