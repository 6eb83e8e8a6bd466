"""Export: every table of the database as Parquet, CSV or JSON Lines files.

Takes a built database (opened through the read side, :func:`pipeline.queries.connect`)
and a folder; gives the files and an :class:`ExportSummary`.

``rulings export DIR --format parquet|csv|jsonl`` writes ``DIR/<table>.<ext>``
for each table of ``schema/ddl.sql`` and ``DIR/export.json`` (format, tables,
row counts, columns with their DuckDB types, rules hash). DuckDB's own
``COPY ... TO`` writes the files, so types are real: in Parquet dates are
dates, lists are lists and ``rules.conflicts`` a list of structs; JSON Lines
has ISO date strings and JSON arrays and objects; CSV, being text, writes
lists as DuckDB's ``[a, b]`` text. Rows are sorted (``ORDER BY ALL``), so the
same database gives the same rows in the same order.

Each file is written into a hidden staging folder inside DIR and renamed
into place, so an interrupted export never leaves a half-written table file
(and a failing one no staging folder); files of DIR that are not the
export's own are never touched: of what an ``export.json`` lists, only
files named ``<table>.<ext>`` are ever removed. A folder that holds files
with those names that no export listed, or an ``export.json`` that is no
export's, is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .database import columns, duckdb_path, is_damage, unreadable
from .errors import LoadError, UsageError
from .queries import build_value, connect, row_count
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


def own_names(tables: list[str]) -> set[str]:
    """The file names an export of ``tables`` may write, in any format:
    ``<table>.<ext>`` (the names an earlier export's files can have)."""
    return {f"{t}.{ext}" for t in tables for ext, _ in FORMATS.values()}


def _read_manifest(target: Path) -> dict | None:
    """``target/export.json`` when it is an export's manifest (a regular
    file, not a symlink, holding a JSON object with a known ``format`` and a
    ``tables`` object), else None (missing, someone else's, malformed)."""
    path = target / MANIFEST
    if path.is_symlink() or not path.is_file():
        return None
    try:
        # a regular file only (is_file above follows no FIFO): read_user_file checks again as it opens
        manifest = json.loads(read_user_file(path, "DIR").decode("utf-8"))
    except (UsageError, OSError, ValueError):
        return None
    if not (isinstance(manifest, dict) and manifest.get("format") in FORMATS
            and isinstance(manifest.get("tables"), dict)):
        return None
    return manifest


def _earlier_files(target: Path, manifest: dict | None, tables: list[str]) -> list[Path]:
    """The files of ``target`` an earlier export wrote: those its manifest
    lists (under ``tables``, or ``replacing`` while an export was swapping
    its files) whose name is one an export writes (:func:`own_names`: no
    separator, no ``..``, no absolute path) and that are regular files, not
    symlinks. Anything else it lists is not the export's and is never
    touched."""
    if manifest is None:
        return []
    listed = [entry.get("file") for entry in manifest["tables"].values() if isinstance(entry, dict)]
    replacing = manifest.get("replacing")
    listed += replacing if isinstance(replacing, list) else []
    names = own_names(tables)
    return [target / name for name in dict.fromkeys(f for f in listed if isinstance(f, str) and f in names)
            if (target / name).is_file() and not (target / name).is_symlink()]


def _target(out_dir: str, tables: list[str]) -> tuple[Path, list[Path]]:
    """The folder to write into (absolute, made if needed) and the files an
    earlier export of it wrote (to remove once the new ones are in place).
    UsageError, before anything is written, for a folder holding anything
    at a name the export writes that no export's manifest lists (a file, a
    symlink, a folder), or an ``export.json`` that is no export's manifest."""
    if not out_dir.strip():
        raise UsageError("DIR is empty: name the folder to write the files into", place="DIR")
    target = Path(out_dir).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise UsageError(f"{out_dir} exists and is not a folder", place="DIR")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the folder {out_dir}: {exc.strerror or exc}", place="DIR") from None
    manifest = _read_manifest(target)
    earlier = _earlier_files(target, manifest, tables)
    clash = [name for name in sorted(own_names(tables)) if os.path.lexists(target / name) and target / name not in earlier]
    if clash:
        raise UsageError(f"{out_dir} holds {', '.join(clash[:3])}, which no export listed in its {MANIFEST}; "
                         "choose an empty or new folder", place="DIR")
    if manifest is None and os.path.lexists(target / MANIFEST):
        raise UsageError(f"{out_dir} holds an {MANIFEST} that is no export's manifest (an export writes its own "
                         "there); choose an empty or new folder", place="DIR")
    return target, earlier


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` to the new file ``path`` (in the staging folder: never an existing file or link)."""
    with open(path, "x", encoding="utf-8") as fh:
        fh.write(text)


def _manifest(fmt: str, rules_hash: str | None, tables: dict[str, int], described: dict, ext: str,
              replacing: list[str] | None = None) -> str:
    """The text of ``export.json``; ``replacing`` lists an earlier export's
    files while they are being replaced (so an export killed then leaves a
    manifest naming every export file in the folder)."""
    manifest = {"format": fmt, "rules_hash": rules_hash,
                **({"note": "CSV is text: list and struct columns are written as DuckDB's text form of the type "
                            "named here (e.g. [a, b]); use Parquet or JSON Lines to read them as values"}
                   if fmt == "csv" else {}),
                "tables": {t: {"file": f"{t}.{ext}", "rows": n, "columns": described[t]} for t, n in tables.items()},
                **({"replacing": replacing} if replacing else {})}
    return json.dumps(manifest, ensure_ascii=False, indent=1) + "\n"


def export(db_path: Path, out_dir: str, fmt: str = "parquet") -> ExportSummary:
    """Write every table of the database at ``db_path`` into ``out_dir`` in
    ``fmt`` (a key of :data:`FORMATS`) plus ``export.json``. Every file is
    written first into a new hidden folder inside ``out_dir``
    (``.export-*.partial``, removed on any failure) and renamed into place;
    the earlier export's files (:func:`_earlier_files`) are removed only once
    the new ones are in. Returns an :class:`ExportSummary`. Raises
    UsageError for an unknown format or an unusable DIR, LoadError when
    there is no database or DuckDB cannot write a file (a full disk)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", place="--format")
    started = time.perf_counter()
    con = connect(db_path)
    staging: Path | None = None
    try:
        duckdb_path(Path(out_dir).expanduser(), "DIR")  # COPY TO would write a path with a backslash elsewhere
        target, earlier = _target(out_dir, list(columns()))
        staging = Path(tempfile.mkdtemp(prefix=".export-", suffix=".partial", dir=target))
        ext, options = FORMATS[fmt]
        tables, described = {}, {}
        for table, cols in columns().items():  # connect checked that the database has each one
            con.execute(f"COPY (SELECT * FROM {table} ORDER BY ALL) TO {_literal(staging / f'{table}.{ext}')} "
                        f"{options}")
            tables[table] = row_count(con, table)
            described[table] = [{"name": c, "type": t} for c, t in cols.items()]
        rules_hash = build_value(con, "rules_hash")
        con.close()
        names = [f"{t}.{ext}" for t in tables]
        old = [p.name for p in earlier if p.name not in names]
        _write_text(staging / MANIFEST, _manifest(fmt, rules_hash, tables, described, ext, old))
        os.replace(staging / MANIFEST, target / MANIFEST)  # lists old and new files until the old are gone
        for name in names:
            os.replace(staging / name, target / name)
        for name in old:
            (target / name).unlink(missing_ok=True)
        _write_text(staging / MANIFEST, _manifest(fmt, rules_hash, tables, described, ext))
        os.replace(staging / MANIFEST, target / MANIFEST)
    except duckdb.Error as exc:
        if is_damage(exc):
            raise unreadable(exc, db_path) from None
        raise LoadError(f"cannot export: {exc}", place=str(out_dir)) from None
    finally:
        con.close()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return ExportSummary(str(target), fmt, tables, time.perf_counter() - started)
