"""A build killed with SIGKILL leaves the previous database and the previous
engine module intact and usable.

Each test starts a real build in a child process, lets it reach a chosen
point (the child announces it in a file and waits there), kills it with
SIGKILL and checks both files. The points are reached by wrapping pipeline
functions inside the child only: the pipeline has no test hook.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import import_module_from, make_corpus
from corpus_kit import db_fingerprint
from pipeline.run import build

# Builds killed at every stage, end to end: `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow

SOURCES = ["seed-000-battle-position", "seed-004-face-down-temp-banish"]
EDIT = ("仍然是S召唤的怪兽", "不再是S召唤的怪兽")  # a finished build turns synchro_summoned/face_down to "lost"

CHILD = r"""
import os, sys, time
from pathlib import Path
import pipeline.load as load
import pipeline.run as run

point, marker, corpus, db, engine = sys.argv[1:6]

def reached(name):
    if name == point:
        Path(marker + ".tmp").write_text(name)
        real_replace(marker + ".tmp", marker)  # whole: the test reads it as soon as it exists
        time.sleep(120)  # wait to be killed

real_insert, real_replace = load.bulk_insert, os.replace

def bulk_insert(con, table, rows, workdir, files=()):
    real_insert(con, table, rows, workdir, files)
    reached("inserted:" + table)

def replace(src, dst):
    reached("rename:" + Path(dst).name)
    return real_replace(src, dst)

load.bulk_insert, os.replace = bulk_insert, replace
run.build(Path(corpus), Path(db), Path(engine))
reached("done")
"""


@pytest.fixture(scope="module")
def first_build(tmp_path_factory):
    """A finished build of a small corpus, then an edit of the corpus that the
    next build would pick up: (folder with ``c`` and ``out``, fingerprint, engine bytes)."""
    root = tmp_path_factory.mktemp("first")
    corpus = make_corpus(root / "c", SOURCES)
    db, engine = root / "out" / "rulings.duckdb", root / "out" / "ocg_rules.py"
    build(corpus, db, engine)
    page = corpus / "pages/seeds/004-face-down-temp-banish.txt"
    page.write_text(page.read_text(encoding="utf-8").replace(*EDIT), encoding="utf-8")
    return root, db_fingerprint(db), engine.read_bytes()


@pytest.fixture
def previous_build(first_build, tmp_path):
    """This test's copy of the first build (corpus, database, engine files)
    and what it holds: (corpus, db, engine, fingerprint, engine bytes)."""
    root, fingerprint, module = first_build
    shutil.copytree(root / "c", tmp_path / "c")
    shutil.copytree(root / "out", tmp_path / "out")
    out = tmp_path / "out"
    return tmp_path / "c", out / "rulings.duckdb", out / "ocg_rules.py", fingerprint, module


def kill_at(point: str, corpus: Path, db: Path, engine: Path, tmp_path: Path) -> None:
    """Run the build in a child process until it reaches ``point``, then SIGKILL it."""
    marker = tmp_path / "reached"
    child = subprocess.Popen([sys.executable, "-c", CHILD, point, str(marker), str(corpus), str(db), str(engine)],
                             stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, f"build ended before {point}: {child.stderr.read().decode()}"
            assert time.monotonic() < deadline, f"build never reached {point}"
            time.sleep(0.02)
        assert marker.read_text() == point
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL


_copies = itertools.count()


def load_engine(path: Path):
    """Import a copy of the engine under a new name: the bytecode cache of a
    path rewritten within the same second could otherwise answer for it."""
    copy = path.with_name(f"copy{next(_copies)}_{path.name}")
    shutil.copyfile(path, copy)
    return import_module_from(copy, copy.stem)


def assert_previous_intact(db: Path, engine: Path, fingerprint, module: bytes) -> None:
    assert db_fingerprint(db) == fingerprint
    assert engine.read_bytes() == module
    assert load_engine(engine).retains("synchro_summoned", "face_down").verdict == "kept"


@pytest.fixture(scope="module")
def next_build(first_build, tmp_path_factory):
    """What the interrupted build would write if it finished: (database fingerprint, engine bytes)."""
    out = tmp_path_factory.mktemp("expected")
    corpus = shutil.copytree(first_build[0] / "c", out / "c")
    db, engine = out / "rulings.duckdb", out / "ocg_rules.py"
    build(corpus, db, engine)
    return db_fingerprint(db), engine.read_bytes()


@pytest.mark.parametrize("point", [
    "inserted:records",       # the new database half written
    "rename:rulings.duckdb",  # the new database and engine complete, not yet in place
])
def test_killed_build_leaves_previous_outputs(previous_build, tmp_path, point):
    corpus, db, engine, fingerprint, module = previous_build
    kill_at(point, corpus, db, engine, tmp_path)
    assert_previous_intact(db, engine, fingerprint, module)
    # Leftover temporary files do not disturb the next build, which picks up the edit.
    build(corpus, db, engine)
    assert load_engine(engine).retains("synchro_summoned", "face_down").verdict == "lost"
    assert db_fingerprint(db) != fingerprint


def test_kill_between_the_two_renames_leaves_two_complete_files(previous_build, next_build, tmp_path):
    """The only window where the files disagree: the new database is in place,
    the engine is still the previous one. Both are complete; the rules hashes tell them apart."""
    corpus, db, engine, fingerprint, module = previous_build
    kill_at("rename:ocg_rules.py", corpus, db, engine, tmp_path)
    assert engine.read_bytes() == module and load_engine(engine).RULES_HASH == fingerprint[2]
    assert db_fingerprint(db) == next_build[0] and next_build[0][2] != fingerprint[2]


# The child spends about 1 s importing, then reads pages, then loads the
# database; these delays land in those stages on a 2-core machine.
@pytest.mark.parametrize("delay", [1.3, 2.0])
def test_build_killed_after_a_delay_leaves_complete_files(previous_build, next_build, delay):
    """No hook at all: the real command, killed wherever it happens to be.
    Each file is the previous one or the new one, never a partial one, and
    the engine is never newer than the database."""
    corpus, db, engine, fingerprint, module = previous_build
    child = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "build", "--corpus", str(corpus),
                              "--db", str(db), "--engine-out", str(engine)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    child.kill()
    child.wait()
    state = (db_fingerprint(db), engine.read_bytes())
    assert state in [(fingerprint, module), next_build, (next_build[0], module)]
    assert load_engine(engine).RULES_HASH in (fingerprint[2], next_build[0][2])
