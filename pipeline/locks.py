"""The output files of a build or refresh: their paths, the lock every
writer takes, and what killed runs leave beside the database.

Takes the ``--db`` and ``--engine-out`` paths a user gave; gives them
resolved and checked (:func:`output_paths`), the writer's lock
``<db>.lock`` (:func:`database_lock`), a write-ahead log a killed writer
left merged in (:func:`merge_leftover_wal`), and the names of the working
folders and temporary files runs make beside the database
(:func:`work_prefix`), which :func:`clean_leftovers` removes. Light: the
read commands' ``rulings sql --write`` takes the lock without loading a
build stage.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
from filelock import FileLock, Timeout

from .database import connect, duckdb_path, file_problem
from .errors import BusyError, UsageError

SIDE_FILES = (".wal", ".lock")


def output_paths(db_path: Path, engine_out: Path) -> tuple[Path, Path]:
    """The database and engine paths with symlinks resolved (a symlinked
    ``--db`` writes its target, and the lock is the target's); UsageError
    when the two outputs, or one and the other's WAL or lock, are one file,
    when ``--db`` is a file but no DuckDB database, or when an engine file
    there is not one the generator wrote (:func:`~pipeline.generate.check_replaceable`)."""
    duckdb_path(db_path)  # UsageError for a path DuckDB would read as another
    try:
        db, engine = Path(db_path).resolve(), Path(engine_out).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UsageError(f"an output path cannot be resolved: {exc}", place="--db / --engine-out") from None
    taken = {db: "--db"} | {Path(f"{db}{side}"): f"--db's {side[1:]} file" for side in SIDE_FILES}
    if engine in taken:
        raise UsageError(f"{engine_out} is the same file as {taken[engine]} ({engine}); give the engine and the "
                         "database different paths", place="--engine-out")
    if db.is_dir() or engine.is_dir():
        folder = db if db.is_dir() else engine
        raise UsageError(f"{folder} is a folder; give a file path", place="--db" if folder == db else "--engine-out")
    for path, option in ((db, "--db"), (engine, "--engine-out")):
        if path.exists() and not path.is_file():  # a device, a FIFO, a socket: the build would replace it
            raise UsageError(f"{path} is not a regular file; give a file path", place=option)
    if db.is_file() and db.stat().st_size and not _is_duckdb_file(db):
        raise UsageError(f"{db} exists and is not a DuckDB database; the build would replace it (give another path "
                         "or remove the file)", place="--db")
    from .generate import check_replaceable  # the engine's own check, loaded by the runs that write it

    check_replaceable(engine)
    return db, engine


def _is_duckdb_file(path: Path) -> bool:
    """Whether ``path`` starts with DuckDB's file header (:func:`pipeline.database.file_problem`)."""
    try:
        return file_problem(path) is None
    except OSError:
        return True  # unreadable: the build's own error names it


@contextmanager
def database_lock(db_path: Path, wait: bool = False, can_wait: bool = True) -> Iterator[None]:
    """Hold ``<db>.lock``, the lock every writer of ``db_path`` takes (a
    build, a refresh, ``rulings sql --write``; give the resolved path, as
    :func:`output_paths` does, so that a symlink and its target share one
    lock). BusyError when another holds it, unless ``wait``: then wait for it
    (``can_wait``: the command has a ``--wait`` to name in the error)."""
    lock = FileLock(f"{db_path}.lock")
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout:
        raise BusyError(f"a refresh or build is running on {db_path} (or a `rulings sql --write`: lock "
                        f"{lock.lock_file} is held); try again later" + (" or pass --wait" if can_wait else ""),
                        place=str(db_path)) from None
    try:
        yield
    finally:
        lock.release()


def merge_leftover_wal(db_path: Path) -> str | None:
    """A write-ahead log left beside ``db_path`` by a writer killed after
    its COMMIT holds committed data: merge it into the database (DuckDB
    replays it on open; CHECKPOINT writes it in). One that cannot be merged
    is moved aside to ``<db>.wal.stale`` so the database opens, and the
    returned warning says so; None when there was no WAL."""
    wal = Path(f"{db_path}.wal")
    if not wal.exists():
        return None
    try:
        con = connect(db_path)
        try:
            con.execute("CHECKPOINT")
        finally:
            con.close()
    except duckdb.Error as exc:
        stale = Path(f"{db_path}.wal.stale")
        os.replace(wal, stale)
        return f"{db_path}: a write-ahead log left by a killed run could not be merged ({exc}); moved to {stale}"
    if wal.exists():  # DuckDB removes it on a clean close; it must not outlive the merge
        wal.unlink()
    return f"{db_path}: merged the write-ahead log a killed run left"


# The work folders of builds and refreshes ("build": row files of versions before 2026-12-01, still cleaned).
WORK_KINDS = ("build", "load", "refresh")


def work_prefix(db_path: Path, kind: str) -> str:
    """The name prefix of a working folder that a ``kind`` (one of
    :data:`WORK_KINDS`) of run of ``db_path`` makes beside it: named after
    the database, so that cleaning one database's leftovers never touches
    the folders of a run on another database in the same folder."""
    return f".{Path(db_path).name}.{kind}-"


def clean_leftovers(db_path: Path) -> list[str]:
    """Remove what killed builds and refreshes of ``db_path`` left in its
    folder (temporary databases, their WALs, row and load folders). Call it
    holding :func:`database_lock`: nothing of a running build is there then.
    Returns the removed paths."""
    folder = Path(db_path).parent
    removed = []
    patterns = (f".{Path(db_path).name}.*.tmp", f".{Path(db_path).name}.*.tmp.wal",
                *(work_prefix(db_path, kind) + "*" for kind in WORK_KINDS))
    for pattern in patterns:
        for path in folder.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(str(path))
    return removed
