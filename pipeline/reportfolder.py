"""The folder a report writes its site into, kept safe: a path -> a staging folder beside it, swapped in.

The site is written into a new folder beside DIR (:func:`make_staging`,
locked while the report runs) and swapped in (:func:`swap_in`: one atomic
exchange on Linux, else two renames); ``DIR/.rulings-report``
(:data:`MARKER`) lists the files it wrote (:func:`site_files`), the only
files a later report replaces: every other entry of DIR is carried over
(:func:`carry_over`). :func:`clean_leftovers` removes the staging folders
of killed reports. Every name written must be one :data:`SITE_FILE` allows.

Raises :class:`~pipeline.errors.UsageError` (place ``DIR``), with nothing
touched, for an empty DIR, the root, a file, a folder that is no report's
site, one of the folder's own files where the new site writes one, and a
site that cannot be put in place.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import secrets
import shutil
import stat
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # Windows: no leftover cleanup
    fcntl = None

from .errors import UsageError


# --------------------------------------------------------------------------- the site folder

MARKER = ".rulings-report"  # the site's manifest (JSON): the files the report wrote there
WRITTEN_BY = "rulings report"
LEGACY_MARKER = "written by `rulings report`"  # how the text marker of versions before 2026-12-02 starts
# Every name a report writes, relative to DIR: an id becomes a slug, a passcode or run id a number.
SITE_FILE = re.compile(r"(?:index|cards|archetypes|timeline|history|search|simulators|procedural|sources)\.html"
                       r"|(?:rules|sources)/[A-Za-z0-9_~-]+\.html|(?:cards|runs)/-?[0-9]+\.html"
                       r"|assets/(?:search-index\.js|style\.css|search\.js)")
STAGING = "rulings-report-"  # staging folders beside DIR: .<DIR's name>.rulings-report-<random>


def _entries(folder: Path) -> Iterator[tuple[str, os.DirEntry]]:
    """Every entry under ``folder`` as (path relative to it with ``/``,
    entry), a folder before what it holds; symlinks are entries, never
    followed."""
    stack = [("", folder)]
    while stack:
        prefix, here = stack.pop()
        with os.scandir(here) as found:
            entries = sorted(found, key=lambda e: e.name)
        for entry in entries:
            yield prefix + entry.name, entry
            if entry.is_dir(follow_symlinks=False):
                stack.append((prefix + entry.name + "/", Path(entry.path)))


def site_files(folder: Path) -> set[str] | None:
    """The files an earlier report wrote in ``folder``, from its manifest
    :data:`MARKER` (a regular file, not a symlink): only names a report
    writes (:data:`SITE_FILE`) count, whatever else a hand-edited manifest
    lists. A text marker of an older version: every such name in the folder.
    None when ``folder`` holds no report's manifest."""
    path = folder / MARKER
    if path.is_symlink() or not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith(LEGACY_MARKER):
        listed = [rel for rel, _ in _entries(folder)]
    else:
        try:
            manifest = json.loads(text)
        except ValueError:
            return None
        if not (isinstance(manifest, dict) and manifest.get("written_by") == WRITTEN_BY
                and isinstance(manifest.get("files"), list)):
            return None
        listed = manifest["files"]
    return {rel for rel in listed if isinstance(rel, str) and SITE_FILE.fullmatch(rel)}


def _manifest_text(files: set[str], complete: bool) -> str:
    return json.dumps({"written_by": WRITTEN_BY, "complete": complete, "files": sorted(files),
                       "note": "the next `rulings report` of this folder replaces these files; others are kept"},
                      ensure_ascii=False, indent=1) + "\n"


def write_manifest(staging: Path, files: set[str]) -> None:
    """Mark the site written in ``staging`` complete: its manifest lists ``files``."""
    (staging / MARKER).write_text(_manifest_text(files, True), encoding="utf-8")


def target_folder(out_dir: str) -> Path:
    """DIR as an absolute path, symlinks resolved (a symlinked DIR is its
    target's site). UsageError for an empty name, the root, a loop."""
    if not str(out_dir).strip():  # Path("") would be the current folder
        raise UsageError("DIR is empty: give the folder to write the site into", place="DIR")
    try:
        target = Path(out_dir).expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise UsageError(f"{out_dir} cannot be resolved: {exc}", place="DIR") from None
    if target.parent == target:
        raise UsageError(f"{out_dir} is the root folder; give a folder to write the site into", place="DIR")
    return target


def check_target(out_dir: Path) -> set[str] | None:
    """What the report may replace in ``out_dir``: None when it does not
    exist, the files an earlier report wrote there (:func:`site_files`; an
    empty set for an empty folder). UsageError, with nothing touched, for a
    file, or a folder holding anything that is no site a report wrote."""
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise UsageError(f"{out_dir} is a file, not a folder", place="DIR")
    if not out_dir.exists():
        return None
    ours = site_files(out_dir)
    if ours is None:
        held = sorted(os.listdir(out_dir))
        if held:
            shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
            raise UsageError(f"{out_dir} holds {shown} and is no site `rulings report` wrote (no {MARKER} manifest "
                             "in it): choose a new or empty folder", place="DIR")
        return set()
    return ours


def _staging_prefix(target: Path) -> str:
    return f".{target.name[:160]}.{STAGING}"


def make_staging(target: Path) -> tuple[Path, int | None]:
    """A new folder beside ``target`` to write the site into (mode as
    ``mkdir`` gives, or the old site's), holding an incomplete manifest,
    and a descriptor holding an exclusive lock on it (None without
    ``fcntl``): a folder whose lock nobody holds is a leftover."""
    while True:
        staging = target.with_name(_staging_prefix(target) + secrets.token_hex(4))
        try:
            staging.mkdir()
            break
        except FileExistsError:
            continue
    fd = None
    try:
        if target.is_dir():
            os.chmod(staging, stat.S_IMODE(target.stat().st_mode))
        if fcntl is not None:
            fd = os.open(staging, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
        (staging / MARKER).write_text(_manifest_text(set(), False), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if fd is not None:
            os.close(fd)
        raise
    return staging, fd


def clean_leftovers(target: Path) -> None:
    """Remove the staging folders beside ``target`` that killed reports left
    (named after it, holding a report's manifest, locked by no running
    report); one holding the previous site while ``target`` is missing (a
    report killed between the two renames of a system without an atomic
    exchange) is renamed back to ``target``. Without ``fcntl`` nothing is
    removed (a running report's folder cannot be told apart)."""
    if fcntl is None or not target.parent.is_dir():
        return
    prefix = _staging_prefix(target)
    for entry in os.scandir(target.parent):
        if not entry.name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        if site_files(folder) is None:
            continue
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a running report's
            os.close(fd)
            continue
        try:
            if entry.name.endswith("-old") and not os.path.lexists(target):
                os.rename(folder, target)
            else:
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)


def carry_over(old: Path, new: Path, ours: set[str]) -> None:
    """Put into ``new`` every entry of ``old`` that no report wrote (not in
    ``ours``), at the same place: a file as a hard link (a copy where the
    file system has none), a symlink as the same link (never followed), a
    folder as a new folder. ``old`` is not changed. UsageError when the new
    site writes a file at the place of one of them."""
    for rel, entry in _entries(old):
        if rel == MARKER or rel in ours:
            continue
        dest = new / rel
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and dest.is_dir() and not dest.is_symlink():
            continue  # a folder the site has too (rules/, cards/)
        if os.path.lexists(dest):
            raise UsageError(f"{old / rel} is not a file an earlier report wrote, and this report writes {rel}: "
                             "move it out of the folder", place="DIR")
        if is_dir:
            dest.mkdir()
            os.chmod(dest, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
        elif entry.is_symlink():
            os.symlink(os.readlink(entry.path), dest)
        else:
            try:
                os.link(entry.path, dest, follow_symlinks=False)
            except OSError:
                if not entry.is_file(follow_symlinks=False):
                    raise
                shutil.copy2(entry.path, dest, follow_symlinks=False)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one atomic step (Linux's
    ``renameat2`` with ``RENAME_EXCHANGE``); False when the system or its
    file system has no such call. OSError when the exchange fails."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError, TypeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(staging: Path, target: Path) -> Path:
    """Put the site written in ``staging`` at ``target``; returns where the
    previous folder went (to remove), ``staging`` itself when there was
    none. Atomic where the system can exchange two folders; else two
    renames, the previous site beside as ``<staging>-old`` between them."""
    try:
        if not os.path.lexists(target):
            os.rename(staging, target)
            return staging
        if _exchange(staging, target):
            return staging
        aside = staging.with_name(staging.name + "-old")
        os.rename(target, aside)
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(aside, target)
            raise
        return aside
    except OSError as exc:
        raise UsageError(f"cannot put the new site in place at {target}: {exc.strerror or exc} (a mount point? "
                         "write the site to a folder inside it)", place="DIR") from None
