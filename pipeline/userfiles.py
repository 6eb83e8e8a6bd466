"""Reading a file the user names on the command line (a scenario file, a
gold file, an export's manifest): only a regular file is read.

A FIFO would block the command forever waiting for a writer, a device
(``/dev/zero``, ``/dev/tty``) gives endless bytes or waits for a key, a
folder or a socket cannot be read at all. The kind of file is checked by
``stat`` before it is opened, and again on the opened file (``fstat``: it
may have been replaced in between); the file is opened without waiting
(``O_NONBLOCK``) and never as the controlling terminal (``O_NOCTTY``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import UsageError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def _not_regular(path: Path, mode: int, place: str) -> UsageError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return UsageError(f"{path} is {kind}, not a regular file", place=place)


def require_regular_file(path: Path | str, place: str) -> None:
    """UsageError (as :func:`read_user_file` gives it) when something other
    than a regular file is at ``path``; nothing when it is one or there is
    nothing there (the caller says what is missing)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(mode):
        raise _not_regular(Path(path), mode, place)


def read_user_file(path: Path | str, place: str) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed).

    ``place`` names where the user gave it (``FILE``, ``--gold``). Raises
    UsageError (the CLI's exit code 2, one ``Error: PLACE: ...`` line) when
    there is no such file, when it is a folder, FIFO, device or socket
    (checked before opening and on the opened file) or cannot be read."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file", place=place) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        raise UsageError(f"{path}: {getattr(exc, 'strerror', None) or exc}", place=place) from None
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode, place)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}", place=place) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced since the stat above
            raise _not_regular(path, mode, place)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}", place=place) from None
    finally:
        os.close(fd)
