"""Handing freed memory back to the system between the steps of a build's finish."""

from __future__ import annotations

import ctypes


def give_back_memory() -> None:
    """Hand the C library's free memory back to the system (glibc's
    ``malloc_trim``; elsewhere nothing): between the finish's steps, each of
    which frees most of what it made, so that the next step's peak does not
    sit on the last one's leftovers. glibc keeps freed memory at the top of
    its heap, and large blocks freed once raise the size it serves from the
    heap rather than from the system (up to 32 MB), so that the finish's
    texts of several MB each stay with the process when freed. No garbage
    collection: what the finish frees holds no cycles, and a full collection
    over spaCy's objects costs 0.1 s, 1 % of the bundled build."""
    try:
        trim = ctypes.CDLL(None).malloc_trim  # this process's own symbols: the C library's
    except (OSError, AttributeError):  # no malloc_trim (macOS, musl)
        return
    trim(0)
