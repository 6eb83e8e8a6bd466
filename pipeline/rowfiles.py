"""Rows on their way into DuckDB: JSON files read in bulk.

Takes rows (dicts with exactly a table's columns of ``schema/ddl.sql``,
:func:`check_row`) or pages' rows already made into JSON arrays
(:func:`json_array`, in the build's worker processes); gives them to DuckDB
with ``read_json`` in one ``INSERT ... SELECT`` per table and batch
(:func:`bulk_insert`), never row by row. Pages' arrays are appended to one
file per table and batch (:class:`RowBatch`); rows made at the end are
streamed as newline-delimited JSON (:func:`write_ndjson`). Used by the
writers of :mod:`pipeline.load`.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import BinaryIO, Iterable, Sequence

import duckdb
import orjson

from .database import columns
from .errors import LoadError

# What every error of a build's writing says: nothing of the previous outputs was touched.
KEPT = "the previous database and engine stay"


def check_row(table: str, row: dict) -> None:
    """Raise LoadError when a row builder's ``row`` has not exactly the
    columns of ``table`` in ``schema/ddl.sql`` (a column added to the DDL
    must be filled by its row builder, or it would load as NULL unnoticed)."""
    expected = columns()[table]
    if row.keys() != expected.keys():
        missing = [c for c in expected if c not in row]
        extra = [c for c in row if c not in expected]
        raise LoadError(f"rows of table {table} do not match schema/ddl.sql: missing {missing}, unknown {extra}",
                        place="pipeline/load.py")


# The longest row: a record holds at most two texts (text, norm_text) of at most
# 1,000,000 characters (extract's sentence limit), at most 6 bytes each in JSON
# (a control character is escaped as \u0000). DuckDB's JSON reader keeps a
# buffer of twice this per thread, so it is not set higher than rows need.
MAX_ROW_BYTES = 16 * 1024 * 1024


def json_array(rows: list[dict]) -> bytes:
    """Rows as one JSON array (UTF-8): the build's workers hand back a
    page's rows so, and :class:`RowBatch` joins them into a batch's files.
    One ``orjson.dumps`` of the whole list takes a fifth of the time of one
    call per row (the call's own cost dominates for rows of a few fields)."""
    return orjson.dumps(rows, default=str)


def write_ndjson(path: Path, rows: Iterable[dict], table: str) -> int:
    """Write ``rows`` to ``path`` as NDJSON one row at a time (no row list
    or joined bytes held in memory: the rule citations of a large corpus are
    hundreds of thousands of rows), checking the first row's columns
    (:func:`check_row`). Returns the number of rows."""
    n = 0
    with open(path, "wb", buffering=1 << 20) as fh:
        for row in rows:
            if n == 0:
                check_row(table, row)
            fh.write(orjson.dumps(row, default=str, option=orjson.OPT_APPEND_NEWLINE))
            n += 1
    return n


def bulk_insert(con: duckdb.DuckDBPyConnection, table: str, rows: Iterable[dict], workdir: Path,
                files: Sequence[Path] = ()) -> None:
    """Insert the row ``files`` (each one JSON array: a batch of pages'
    rows, :class:`RowBatch`), then ``rows`` (a list or any iterable,
    streamed to an NDJSON file under ``workdir`` and deleted once read),
    into ``table``: one ``read_json`` a form."""
    if files:
        _read_json_into(con, table, [str(f) for f in files], "array")
    path = workdir / f"{table}.ndjson"
    try:
        if write_ndjson(path, rows, table):  # (workers' rows: checked by record_rows)
            _read_json_into(con, table, [str(path)], "newline_delimited")
    finally:
        path.unlink(missing_ok=True)


class RowBatch:
    """Pages' rows (:func:`json_array`, one array per table and page)
    appended as they come to one JSON array file per table under a folder,
    until :meth:`close`. On disk, not in memory: a build's batch is 32 MB of
    rows. One file a table and batch, not one a page: DuckDB's
    ``read_json`` costs about a millisecond a file whatever its size, and
    creating a file about 0.6 ms of CPU on this machine's disk (4,000 files
    of 1 KB: 3.3 s; on tmpfs 0.4 s)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.files: dict[str, BinaryIO] = {}
        self.bytes = 0

    def add(self, arrays: dict[str, bytes]) -> None:
        """Append one page's ``arrays`` (table -> JSON array). Raises
        LoadError naming the table for bytes that are no JSON array (and
        then adds none of the page's rows), or when the file cannot be
        written (a full disk: the build stops, the previous database stays)."""
        for table, data in arrays.items():
            if data[:1] != b"[" or data[-1:] != b"]":
                raise LoadError(f"table {table}: a page's rows are not a JSON array (cut short?)",
                                place=str(self.folder))
        for table, data in arrays.items():
            inner = memoryview(data)[1:-1]
            if inner:
                try:
                    self._append(table, inner)
                except OSError as exc:
                    raise LoadError(f"table {table}: cannot write the batch of rows: {exc.strerror or exc}; {KEPT}",
                                    place=str(exc.filename or self.folder)) from exc
                self.bytes += len(inner)

    def _append(self, table: str, inner: memoryview) -> None:
        fh = self.files.get(table)
        if fh is None:
            fh = self.files[table] = open(self.folder / f"{table}.json", "wb")
            fh.write(b"[")
        else:
            fh.write(b",")
        fh.write(inner)

    def close(self) -> dict[str, Path]:
        """End each file's array and close it; returns table -> file (the
        caller deletes them). The batch is empty again, even when a file
        cannot be written: LoadError then (its files are left in the folder)."""
        files, self.files, self.bytes = self.files, {}, 0
        failed = None
        for table, fh in files.items():
            try:
                try:
                    fh.write(b"]")
                finally:
                    fh.close()
            except OSError as exc:
                failed = failed or (table, exc)
        if failed:
            table, exc = failed
            raise LoadError(f"table {table}: cannot write the batch of rows: {exc.strerror or exc}; {KEPT}",
                            place=str(exc.filename or self.folder)) from exc
        return {table: Path(fh.name) for table, fh in files.items()}

    def discard(self) -> None:
        """Close and delete the files of an unfinished batch; never raises
        (it runs while an error is on its way)."""
        files, self.files, self.bytes = self.files, {}, 0
        for fh in files.values():
            with suppress(OSError):
                fh.close()
            with suppress(OSError):
                Path(fh.name).unlink(missing_ok=True)


def _read_json_into(con: duckdb.DuckDBPyConnection, table: str, paths: list[str], form: str) -> None:
    """``INSERT INTO table SELECT ... FROM read_json(paths)``, each column
    read as its DDL type; ``form``: ``array`` or ``newline_delimited``."""
    types = columns()[table]
    spec = "{" + ", ".join(f"'{k}': '{v}'" for k, v in types.items()) + "}"
    names = ", ".join(types)
    con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, format='{form}', "
                f"columns={spec}, maximum_object_size={MAX_ROW_BYTES})", [paths])
