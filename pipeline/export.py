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
listed in an ``export.json`` of its own is refused.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .errors import LoadError, UsageError
from .load import columns
from .queries import connect
from .userfiles import read_user_file

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


def _earlier_files(target: Path) -> list[Path] | None:
    """The table files an earlier export listed in ``target/export.json``,
    or None when there is no such manifest (a file of that name that is not
    an export's manifest does not count)."""
    try:
        # a regular file only: a FIFO of that name would block the export forever
        manifest = json.loads(read_user_file(target / MANIFEST, "DIR").decode("utf-8"))
        listed = [entry["file"] for entry in manifest["tables"].values()] if "format" in manifest else None
    except (UsageError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if listed is None or not all(isinstance(f, str) and f == Path(f).name for f in listed):
        return None
    return [target / f for f in listed]


def _target(out_dir: str, tables: list[str]) -> tuple[Path, list[Path]]:
    """The folder to write into (absolute, made if needed) and the files an
    earlier export of it wrote (to remove once the new ones are in place).
    A folder holding a file with a table's name that no export listed is
    refused (UsageError)."""
    if not out_dir.strip():
        raise UsageError("DIR is empty: name the folder to write the files into", place="DIR")
    target = Path(out_dir).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise UsageError(f"{out_dir} exists and is not a folder", place="DIR")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the folder {out_dir}: {exc.strerror or exc}", place="DIR") from None
    earlier = _earlier_files(target) or []
    ours = [target / f"{t}.{ext}" for t in tables for ext, _ in FORMATS.values()]
    clash = [p.name for p in ours if p.exists() and p not in earlier]
    if clash:
        raise UsageError(f"{out_dir} holds {', '.join(clash[:3])}, which no export listed in its {MANIFEST}; "
                         "choose an empty or new folder", place="DIR")
    return target, earlier


def _write_atomic(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def export(db_path: Path, out_dir: str, fmt: str = "parquet") -> ExportSummary:
    """Write every table of the database at ``db_path`` into ``out_dir`` in
    ``fmt`` (a key of :data:`FORMATS`) plus ``export.json``. Every file is
    written under a temporary name first; the earlier export's files (those
    its ``export.json`` lists) are removed only once the new ones are all
    written. Returns an :class:`ExportSummary`. Raises UsageError for an
    unknown format or an unusable DIR, LoadError when there is no database
    or DuckDB cannot write a file (a full disk)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", place="--format")
    started = time.perf_counter()
    con = connect(db_path)
    staged: list[tuple[Path, Path]] = []
    try:
        target, earlier = _target(out_dir, list(columns()))
        ext, options = FORMATS[fmt]
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'main'").fetchall()}
        tables, described = {}, {}
        for table, cols in columns().items():
            if table not in present:
                continue
            partial = target / f".{table}.{ext}.partial"
            staged.append((partial, target / f"{table}.{ext}"))
            con.execute(f"COPY (SELECT * FROM {table} ORDER BY ALL) TO {_literal(partial)} {options}")
            tables[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            described[table] = [{"name": c, "type": t} for c, t in cols.items()]
        row = con.execute("SELECT value FROM build_info WHERE key = 'rules_hash'").fetchone()
    except duckdb.Error as exc:
        for partial, _ in staged:
            partial.unlink(missing_ok=True)
        raise LoadError(f"cannot export: {exc}", place=str(out_dir)) from None
    finally:
        con.close()
    finals = {final for _, final in staged}
    for old in earlier:
        if old not in finals:
            old.unlink(missing_ok=True)
    for partial, final in staged:
        os.replace(partial, final)
    manifest = {"format": fmt, "rules_hash": row[0] if row else None,
                **({"note": "CSV is text: list and struct columns are written as DuckDB's text form of the type "
                            "named here (e.g. [a, b]); use Parquet or JSON Lines to read them as values"}
                   if fmt == "csv" else {}),
                "tables": {t: {"file": f"{t}.{ext}", "rows": n, "columns": described[t]} for t, n in tables.items()}}
    _write_atomic(target / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    return ExportSummary(str(target), fmt, tables, time.perf_counter() - started)
