"""The corpus: a manifest of sources and the local snapshot of each page.

``corpus/manifest.tsv`` has one row per source with the columns
``id url language script region format licence path fetch notes``:

* ``id``: stable source id, ``[a-z0-9][a-z0-9._-]*``;
* ``language``: ``zh`` or ``en``; ``script``: ``Hans``, ``Hant`` or ``Latn``;
  ``region``: ``CN``, ``TW``, ``HK`` or empty (chooses the OpenCC config);
* ``format``: ``html``, ``text``, ``markdown`` or ``pdf-text`` (text extracted from a PDF: :mod:`pipeline.pdftext`);
* ``path``: the snapshot, relative to the corpus folder and inside it;
* ``fetch``: ``yes`` when ``rulings refresh`` may fetch ``url`` again.

Raises :class:`~pipeline.errors.CorpusError` naming the manifest line for a
malformed row (or a manifest that is not UTF-8), a duplicate id, or an id or
path that tries to leave the corpus folder (``..``, an absolute path, a
symlink out of the tree). A row with a format or language the pipeline
cannot read is kept with :attr:`Source.problem`: that source alone fails
(:meth:`Source.check_readable`), the others are built. :func:`read_snapshot`
raises NormalizeError for a snapshot that is missing, unreadable, not a
regular file or too large.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import secrets
import stat
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from .errors import CorpusError, NormalizeError
from .paths import BUNDLED_CORPUS, DEFAULT_CORPUS
from .stopping import deferred, remove, temp_path

MANIFEST_NAME = "manifest.tsv"
COLUMNS = ("id", "url", "language", "script", "region", "format", "licence", "path", "fetch", "notes")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
FORMATS = {"html", "text", "markdown", "pdf-text"}
# Data a build reads beside the pages, not pages: card texts (gzip JSON lines, pipeline/cardtext.py).
# load_manifest leaves these rows out; load_data_sources returns them.
DATA_FORMATS = {"card-texts"}
LANGUAGES = {"zh", "en"}
# ISO 15924 scripts a page of each language may declare ('': detected from the text).
SCRIPTS = {"zh": ("", "Hans", "Hant"), "en": ("", "Latn")}
# Regions whose game terms and conversions are known (pipeline.chinese; MO, SG and MY read as HK and CN).
REGIONS = frozenset({"", "CN", "TW", "HK", "MO", "SG", "MY"})
DEFAULT_MAX_PAGE_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    """One manifest row; ``snapshot`` is the absolute path of its local copy."""

    id: str
    url: str
    language: str
    script: str
    region: str
    format: str
    licence: str
    path: str
    fetch: bool
    notes: str
    snapshot: Path
    problem: str = ""  # why the pipeline cannot read this source (an unknown format or language), with its place

    def check_readable(self) -> None:
        """Raise CorpusError naming the manifest row when the source cannot be read."""
        if self.problem:
            place, _, message = self.problem.partition(": ")
            raise CorpusError(message, source_id=self.id, place=place)


def prepare_corpus(corpus_dir: Path | str) -> Path:
    """The corpus folder to use. The default working corpus of an install
    (``DATA/corpus``, see :mod:`pipeline.paths`) is made on first use as a
    copy of the bundled corpus (manifest, pages, card-name data; no
    snapshots), so that a refresh never writes into the installed package.
    Any other folder is returned as given. Raises CorpusError when the
    working corpus folder exists without a manifest, or cannot be made.
    (A package upgrade does not touch a working corpus made earlier.)"""
    corpus_dir = Path(corpus_dir)
    if corpus_dir.resolve() != DEFAULT_CORPUS.resolve() or DEFAULT_CORPUS.resolve() == BUNDLED_CORPUS.resolve():
        return corpus_dir
    if (corpus_dir / MANIFEST_NAME).exists():
        return corpus_dir
    if corpus_dir.exists():
        raise CorpusError("the working corpus folder exists but holds no manifest.tsv; remove it to have the bundled "
                          "corpus copied there again, or pass --corpus", place=str(corpus_dir))
    import shutil

    staging = None
    try:
        corpus_dir.parent.mkdir(parents=True, exist_ok=True)
        with deferred():  # named and tracked before it exists: a stop at any line removes it
            staging = temp_path(corpus_dir.parent, ".corpus-")
            staging.mkdir()
        shutil.copytree(BUNDLED_CORPUS, staging / "corpus", ignore=shutil.ignore_patterns("snapshots", "__pycache__",
                                                                                          "__init__.py"))
        os.rename(staging / "corpus", corpus_dir)  # whole or not at all
    except OSError as exc:
        if not (corpus_dir / MANIFEST_NAME).exists():  # (another run copying at the same time has won)
            raise CorpusError(f"cannot copy the bundled corpus here: {exc.strerror or exc}",
                              place=str(corpus_dir)) from None
    finally:
        if staging is not None:
            remove(staging)
    return corpus_dir


def load_manifest(corpus_dir: Path | str = BUNDLED_CORPUS) -> list[Source]:
    """Read and validate ``corpus_dir/manifest.tsv``; rows keep file order.
    The pages only: a row of a data format (:data:`DATA_FORMATS`) is left
    out (:func:`load_data_sources`)."""
    return [s for s in _manifest_rows(corpus_dir) if s.format not in DATA_FORMATS]


def load_data_sources(corpus_dir: Path | str = BUNDLED_CORPUS) -> list[Source]:
    """The manifest's data rows (a format of :data:`DATA_FORMATS`: the card
    texts), validated as pages are; their ``language`` may be ``mul``."""
    return [s for s in _manifest_rows(corpus_dir) if s.format in DATA_FORMATS]


def _manifest_rows(corpus_dir: Path | str) -> list[Source]:
    corpus_dir = Path(corpus_dir).resolve()
    manifest = corpus_dir / MANIFEST_NAME
    if not manifest.is_file():
        raise CorpusError(f"no manifest at {manifest}", place=str(manifest))
    sources: list[Source] = []
    seen: set[str] = set()
    try:
        manifest.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"manifest is not UTF-8: {exc.reason}", place=f"{MANIFEST_NAME}, byte {exc.start}") from None
    with manifest.open(encoding="utf-8-sig", newline="") as fh:  # a BOM (a spreadsheet saved it) is no column name
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CorpusError(f"manifest lacks columns {missing}", place=f"{MANIFEST_NAME}:1")
        try:
            for row in reader:
                place = f"{MANIFEST_NAME}:{reader.line_num}"  # blank lines skipped by the reader still count
                if _skipped(row):
                    continue
                _check_width(row, reader.fieldnames, place)
                source = _source_from_row(row, corpus_dir, place)
                if source.id in seen:
                    raise CorpusError(f"duplicate source id {source.id!r}", source_id=source.id, place=place)
                seen.add(source.id)
                sources.append(source)
        except csv.Error as exc:
            raise CorpusError(f"malformed manifest row: {exc}", place=f"{MANIFEST_NAME}:{reader.line_num}") from None
    return sources


# Columns a row may leave out at its end (an editor trims a trailing empty field): fetch is "no" then.
OPTIONAL_COLUMNS = ("fetch", "notes")


def _check_width(row: dict, header: list[str], place: str) -> None:
    """A row missing a field the pipeline needs (a tab lost, spaces typed
    instead) fails the manifest naming what it holds; so do extra fields that
    are not empty (a tab inside a field). :data:`OPTIONAL_COLUMNS` may be left out."""
    given = [k for k in header if row.get(k) is not None]
    missing = [k for k in header if row.get(k) is None and k not in OPTIONAL_COLUMNS]
    extra = [v for v in row.get(None) or [] if v.strip()]
    if missing:
        raise CorpusError(f"row has {len(given)} of the header's {len(header)} tab-separated fields "
                          f"({', '.join(given) or 'none'}; {', '.join(missing)} missing): "
                          "fields must be separated by tabs", place=place)
    if extra:
        raise CorpusError(f"row has {len(header) + len(row[None])} tab-separated fields, the header "
                          f"{len(header)} (a tab inside a field?); first extra value {extra[0][:40]!r}", place=place)


def _skipped(row: dict) -> bool:
    """A line of white space only, or a comment (its first field starts with ``#``)."""
    values = [v for k, v in row.items() if k is not None and v is not None]
    return not any(v.strip() for v in values) or (row.get("id") or "").lstrip().startswith("#")


def _source_from_row(row: dict, corpus_dir: Path, place: str) -> Source:
    sid = (row.get("id") or "").strip()
    if not ID_PATTERN.match(sid):
        raise CorpusError(f"source id {sid!r} is not of the form [a-z0-9][a-z0-9._-]*", place=place)
    fmt = (row.get("format") or "").strip()
    language = (row.get("language") or "").strip()
    # A row the pipeline cannot read fails that source alone (the build goes on); a row
    # that tries to leave the corpus folder or reuses an id fails the manifest.
    script, region = (row.get("script") or "").strip(), (row.get("region") or "").strip()
    fetch = (row.get("fetch") or "").strip().lower()
    problem = ""
    if fmt in DATA_FORMATS:
        problem = "" if fetch in ("yes", "no", "") else f"fetch {fetch!r} is not yes or no"
    elif fmt not in FORMATS:
        problem = f"format {fmt!r} is not one of {sorted(FORMATS)}"
    elif language not in LANGUAGES:
        problem = f"language {language!r} is not one of {sorted(LANGUAGES)}"
    elif script not in SCRIPTS[language]:
        problem = f"script {script!r} is not one of {SCRIPTS[language]} for language {language!r} ('': detect it)"
    elif region.upper() not in REGIONS:
        problem = f"region {region!r} is not one of {sorted(r for r in REGIONS if r)} or empty"
    elif fetch not in ("yes", "no", ""):
        problem = f"fetch {fetch!r} is not yes or no"
    rel = (row.get("path") or "").strip()
    snapshot = safe_snapshot_path(corpus_dir, rel, source_id=sid, place=place)
    return Source(
        id=sid,
        url=(row.get("url") or "").strip(),
        language=language,
        script=script,
        region=region,
        format=fmt,
        licence=(row.get("licence") or "").strip(),
        path=rel,
        fetch=fetch == "yes",
        notes=(row.get("notes") or "").strip(),
        snapshot=snapshot,
        problem=f"{place}: {problem}" if problem else "",
    )


def safe_snapshot_path(corpus_dir: Path, rel: str, *, source_id: str, place: str) -> Path:
    """Resolve ``rel`` under ``corpus_dir``; refuse absolute paths, ``..`` and symlinks out."""
    if "\x00" in rel:
        raise CorpusError(f"snapshot path {rel!r} contains a NUL character", source_id=source_id, place=place)
    if not rel or Path(rel).is_absolute() or rel.startswith(("/", "\\")):
        raise CorpusError(f"snapshot path {rel!r} must be relative to the corpus folder", source_id=source_id, place=place)
    try:
        candidate = (corpus_dir / rel).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise CorpusError(f"snapshot path {rel!r} cannot be resolved: {exc}", source_id=source_id,
                          place=place) from None
    try:
        candidate.relative_to(corpus_dir)
    except ValueError:
        raise CorpusError(f"snapshot path {rel!r} leaves the corpus folder", source_id=source_id, place=place) from None
    return candidate


def read_snapshot(source: Source, max_bytes: int = DEFAULT_MAX_PAGE_BYTES) -> bytes:
    """The snapshot's bytes; raises NormalizeError if it is missing, unreadable,
    not a regular file (a folder, a FIFO, a device) or over ``max_bytes``."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        # O_NOFOLLOW: the path was resolved inside the corpus; a symlink put there since is not followed out.
        fd = os.open(source.snapshot, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise NormalizeError(f"snapshot {source.path} is missing", source_id=source.id, place=source.path) from None
    except OSError as exc:
        raise _unreadable(source, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NormalizeError(f"snapshot {source.path} is not a regular file", source_id=source.id,
                                 place=source.path)
        if info.st_size > max_bytes:
            raise _too_large(source, info.st_size, max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)  # the file may have grown since fstat
    except OSError as exc:
        raise _unreadable(source, exc) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _too_large(source, len(data), max_bytes)
    return data


def _unreadable(source: Source, exc: OSError) -> NormalizeError:
    return NormalizeError(f"snapshot {source.path} cannot be read: {exc.strerror or exc}", source_id=source.id,
                          place=source.path)


def _too_large(source: Source, size: int, max_bytes: int) -> NormalizeError:
    return NormalizeError(f"page is {size} bytes, over the limit of {max_bytes} bytes (--max-page-bytes)",
                          source_id=source.id, place=source.path)


def content_hash(data: bytes) -> str:
    """SHA-256 hex digest of a snapshot's bytes."""
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- the snapshot store

SNAPSHOT_DIR = "snapshots"
EXTENSIONS = {"html": "html", "text": "txt", "markdown": "md", "pdf-text": "txt"}


def snapshot_path(corpus_dir: Path, source: Source, digest: str) -> Path:
    """``<corpus>/snapshots/<source_id>/<sha256>.<ext>`` (ids are checked by the manifest loader)."""
    return Path(corpus_dir).resolve() / SNAPSHOT_DIR / source.id / f"{digest}.{EXTENSIONS[source.format]}"


def _inside_corpus(root: Path, path: Path, source_id: str) -> Path:
    """``path`` resolved (symlinks followed, missing parts kept as named);
    CorpusError naming ``path`` when it resolves outside the corpus folder
    ``root`` (itself resolved), or cannot be resolved (a symlink loop)."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise CorpusError(f"cannot be resolved ({exc}); nothing is written there", source_id=source_id,
                          place=str(path)) from None
    if not resolved.is_relative_to(root):
        raise CorpusError(f"leads out of the corpus folder {root} (a symlink to {resolved}); nothing is written "
                          "there and the run stops", source_id=source_id, place=str(path))
    return resolved


def check_snapshot_store(corpus_dir: Path, source: Source, digest: str | None = None) -> Path:
    """The resolved folder of ``source``'s snapshots, after checking that
    ``<corpus>/snapshots``, ``snapshots/<source_id>`` and (given its
    ``digest``) the snapshot file each resolve inside the corpus folder: a
    symlink at any level may lead elsewhere in the corpus, never out of it.
    Raises CorpusError naming the first path that leads out."""
    root = Path(corpus_dir).resolve()
    store = root / SNAPSHOT_DIR
    _inside_corpus(root, store, source.id)
    folder = _inside_corpus(root, store / source.id, source.id)
    if digest is not None:
        _inside_corpus(root, snapshot_path(root, source, digest), source.id)
    return folder


def _open_folder_inside(root: Path, folder: Path, source_id: str) -> int:
    """A file descriptor of ``folder`` (resolved, inside ``root``), made if
    missing, checked again once open (where the system tells an open
    folder's path): every write of the store goes through it, so a symlink
    swapped in after :func:`check_snapshot_store` cannot lead a write out."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return fd  # no /proc: the resolved path was checked
    if not opened.is_relative_to(root):
        os.close(fd)
        raise CorpusError(f"leads out of the corpus folder {root} (to {opened}); nothing is written there and the run "
                          "stops", source_id=source_id, place=str(folder))
    return fd


def store_snapshot(corpus_dir: Path, source: Source, data: bytes) -> tuple[str, Path]:
    """Write a fetched page to the snapshot store (atomically, once per
    content); returns (sha256, path). A refresh keeps every version it
    fetched; the database says which one is in force.

    The store is inside the corpus folder (:func:`check_snapshot_store`):
    CorpusError naming the path when a symlink leads out of it, and when
    the file cannot be written (a full disk: the file is named, nothing of
    the run is stored, the database and engine stay as they were)."""
    digest = content_hash(data)
    root = Path(corpus_dir).resolve()
    folder = check_snapshot_store(root, source, digest)
    name = f"{digest}.{EXTENSIONS[source.format]}"
    try:
        dir_fd = _open_folder_inside(root, folder, source.id)
    except OSError as exc:
        raise _store_error(source, folder, exc) from exc
    try:
        _write_once(dir_fd, name, data)
    except OSError as exc:
        raise _store_error(source, folder / name, exc) from exc
    finally:
        os.close(dir_fd)
    return digest, folder / name


def _write_once(dir_fd: int, name: str, data: bytes) -> None:
    """Write ``name`` in the open folder ``dir_fd`` unless a file of that
    name (its content is its hash) is there: through a temporary file
    renamed into place, never following a symlink."""
    try:
        if stat.S_ISREG(os.stat(name, dir_fd=dir_fd).st_mode):
            return
    except FileNotFoundError:
        pass
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def _store_error(source: Source, path: Path, exc: OSError) -> CorpusError:
    return CorpusError(f"cannot write the snapshot: {exc.strerror or exc}; nothing of this run is stored, the database "
                       "and engine stay as they were", source_id=source.id, place=str(path))
