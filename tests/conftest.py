"""Shared fixtures: one build of the bundled corpus per test run (shared by
every test process), and helpers to build a small corpus of chosen pages
(optionally edited).

Layout: ``stages/<stage>/`` holds the tests of one pipeline stage that need
no build of the bundled corpus (``make test-fast`` runs them alone);
``e2e/`` the tests that build, refresh, report or run the commands end to
end. Test data: ``gold/`` (measuring only), ``cases/``, ``fixtures/`` (a
folder of input/expected files per extract pass), ``js/``."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import pickle
import shutil
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from pipeline.corpus import BUNDLED_CORPUS
from pipeline.run import build

HERE = Path(__file__).resolve().parent  # tests/
ROOT = HERE.parent  # the checkout
GOLD = HERE / "gold"
CASES = HERE / "cases"
STAGES = HERE / "stages"


def _shared_root(tmp_path_factory) -> Path:
    """The temporary folder every process of this test run shares (pytest-xdist
    gives each worker a folder below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def bundled_build(tmp_path_factory) -> tuple:
    """(BuildResult, folder) of the one build of the bundled corpus in this
    test run: the first process that asks builds it (under a file lock, with
    the build's default worker processes), the others wait and read it. Read
    only: tests get a copy through ``built``."""
    root = _shared_root(tmp_path_factory)
    out = root / "bundled-build"
    with FileLock(str(root / "bundled-build.lock")):
        done = root / "bundled-build.pickle"
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            result = build(BUNDLED_CORPUS, out / "rulings.duckdb", out / "ocg_rules.py")
            done.write_bytes(pickle.dumps(result))
        return pickle.loads(done.read_bytes()), out


@pytest.fixture(scope="session")
def built(bundled_build, tmp_path_factory):
    """(BuildResult, db path, engine path) for the bundled corpus: this
    process's own copy of the run's one build (database, engine files)."""
    result, shared = bundled_build
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return result, shared / "rulings.duckdb", shared / "ocg_rules.py"
    out = tmp_path_factory.mktemp("build")
    for path in shared.iterdir():
        if path.is_file():
            shutil.copyfile(path, out / path.name)
    db, engine = out / "rulings.duckdb", out / "ocg_rules.py"
    return dataclasses.replace(result, db_path=db, engine_path=engine), db, engine


@pytest.fixture(scope="session")
def build_copy(tmp_path_factory):
    """``copy(source_ids, dest)`` -> (corpus, db, engine): ``dest/c`` (a
    :func:`make_corpus` of those bundled pages) and ``dest/out/r.duckdb``,
    ``dest/out/e.py`` (their build, without errors), copied from one build
    made the first time this test process asks for those pages. Tests that
    edit or break what an earlier build left start from their own copy."""
    made: dict[tuple[str, ...], Path] = {}

    def copy(source_ids: list[str], dest: Path) -> tuple[Path, Path, Path]:
        key = tuple(source_ids)
        if key not in made:
            root = tmp_path_factory.mktemp("small-build")
            corpus = make_corpus(root / "c", list(source_ids))
            assert build(corpus, root / "out" / "r.duckdb", root / "out" / "e.py").errors == []
            made[key] = root
        shutil.copytree(made[key] / "c", dest / "c")
        shutil.copytree(made[key] / "out", dest / "out")
        return dest / "c", dest / "out" / "r.duckdb", dest / "out" / "e.py"

    return copy


def pytest_collection_modifyitems(config, items):
    """Stage tests need no bundled build: ``make test-fast`` runs them alone."""
    for item in items:
        if STAGES in Path(str(item.fspath)).parents and {"built", "bundled_build"} & set(item.fixturenames):
            raise pytest.UsageError(f"{item.nodeid}: a stage test uses the bundled build; move it to tests/e2e/")


def import_module_from(path: Path, name: str | None = None):
    """Import a generated engine module from a file, under a unique name."""
    name = name or f"engine_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def engine_module(built):
    return import_module_from(built[2], "engine_bundled")


def make_corpus(dest: Path, source_ids: list[str], edits: dict[str, list[tuple[str, str]]] | None = None) -> Path:
    """Copy the manifest rows ``source_ids`` and their pages to ``dest``,
    applying ``edits`` ({source_id: [(old, new), ...]}) to the page text.
    Each edit must apply (the old text must be in the page)."""
    edits = edits or {}
    lines = (BUNDLED_CORPUS / "manifest.tsv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], [l for l in lines[1:] if l.split("\t")[0] in source_ids]
    assert len(rows) == len(source_ids), "unknown source id in make_corpus"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "manifest.tsv").write_text("\n".join([header] + rows) + "\n", encoding="utf-8")
    for row in rows:
        sid, rel = row.split("\t")[0], row.split("\t")[7]
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUNDLED_CORPUS / rel, target)
        if sid in edits:
            text = target.read_text(encoding="utf-8")
            for old, new in edits[sid]:
                assert old in text, f"edit target not in {sid}: {old}"
                text = text.replace(old, new)
            target.write_text(text, encoding="utf-8")
    return dest
