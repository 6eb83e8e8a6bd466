"""Handing freed memory back to the system between the steps of a build's finish."""

from __future__ import annotations

import ctypes
import gc


def give_back_memory() -> None:
    """Collect the garbage and hand the C library's free memory back to the
    system (glibc's ``malloc_trim``; elsewhere only the collection): between
    the finish's steps, each of which frees most of what it made, so that
    the next step's peak does not sit on the last one's leftovers. About
    0.1 s (the collection, over spaCy's objects among others)."""
    gc.collect()
    try:
        trim = ctypes.CDLL(None).malloc_trim  # this process's own symbols: the C library's
    except (OSError, AttributeError):  # no malloc_trim (macOS, musl)
        return
    trim(0)
