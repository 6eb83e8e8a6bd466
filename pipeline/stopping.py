"""Stopping a build or refresh cleanly: signal handling and the temporary files it must remove.

Ctrl-C and SIGTERM stop a run by raising (KeyboardInterrupt, SystemExit
143) at whatever line the main thread is on; every temporary file is then
removed by the ``finally`` or ``except`` of the code that made it. Two
things make that hold at every line:

* :func:`deferred`: a short stretch (making a temporary file and keeping
  its name, renaming the outputs into place, removing temporary files) in
  which a stop signal is held back and raised at its end, so no file is
  made without its owner knowing it and no cleanup is cut short;
* :func:`track`: a temporary path is recorded *before* the file exists
  (:func:`temp_path` gives it a fresh name), and whatever is still recorded
  when the process ends is removed (:mod:`atexit`), as a last line of
  defence for a path whose owner never got to clean up.

:func:`install` sets the handlers; the CLI calls it before a build or
refresh makes any file. A second signal while a run is stopping is ignored:
the cleanup finishes (SIGKILL still ends the process at once).
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import threading
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Iterator

_tracked: set[Path] = set()
_depth = 0  # nesting of deferred() in the main thread
_pending: int | None = None  # a signal held back by deferred()
_stopping = False
_signum: int | None = None  # the signal that began stopping the run


def install() -> None:
    """Handle SIGTERM (SystemExit 143) and SIGINT (KeyboardInterrupt) with
    :func:`deferred` in mind. Call it in the main thread, before any temporary file exists."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _handler)


def _handler(signum: int, frame) -> None:
    global _pending
    if _stopping:
        return  # already stopping: let the cleanup run to its end
    if _depth:
        _pending = signum
        return
    _stop(signum)


def _stop(signum: int) -> None:
    global _stopping, _signum
    _stopping, _signum = True, signum
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def raise_if_stopping() -> None:
    """Raise the stop of the signal that began stopping this run, if one
    did. A signal that comes while DuckDB runs a query reaches the handler
    inside DuckDB, which turns the handler's SystemExit into its own error
    ("Query interrupted"): the CLI calls this on any error, so such a run
    still ends as the signal asks (exit 143 for SIGTERM, Ctrl-C's
    KeyboardInterrupt), not as a failed query."""
    if _signum is not None:
        if _signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + _signum)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold back a stop signal (of :func:`install`'s handlers) until the
    block ends, then raise it. A no-op outside the main thread, where
    Python runs no signal handler anyway."""
    global _depth, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending is not None:
            signum, _pending = _pending, None
            _stop(signum)


def temp_path(folder: Path, prefix: str, suffix: str = "") -> Path:
    """A fresh path ``folder/<prefix><random><suffix>`` that does not exist
    yet, already :func:`track`-ed: the caller creates it (exclusively)."""
    while True:
        path = Path(folder) / f"{prefix}{secrets.token_hex(6)}{suffix}"
        if not os.path.lexists(path):
            track(path)
            return path


def track(*paths: Path) -> None:
    """Record ``paths`` (files or folders, existing or about to): removed when the process ends unless :func:`untrack`-ed."""
    _tracked.update(Path(p) for p in paths)


def untrack(*paths: Path) -> None:
    """Forget ``paths`` (renamed into place, or removed by their owner)."""
    _tracked.difference_update(Path(p) for p in paths)


def remove(*paths: Path) -> None:
    """Remove ``paths`` (a folder with its content; a symlink itself, never
    its target) and forget them; never raises (it runs while an error is on its way)."""
    with deferred():
        for path in paths:
            path = Path(path)
            with suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            untrack(path)


@atexit.register
def _remove_tracked() -> None:
    remove(*sorted(_tracked))


def _forget_in_child() -> None:
    """A forked worker owns none of its parent's temporary files."""
    global _depth, _pending, _stopping
    _tracked.clear()
    _depth, _pending, _stopping = 0, None, False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
