"""Shared fixtures: one build of the bundled corpus per test session, and
helpers to build a small corpus of chosen pages (optionally edited)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from pipeline.corpus import BUNDLED_CORPUS
from pipeline.run import build

HERE = Path(__file__).resolve().parent
GOLD = HERE / "gold"


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """(BuildResult, db path, engine path) for the bundled corpus."""
    out = tmp_path_factory.mktemp("build")
    result = build(BUNDLED_CORPUS, out / "rulings.duckdb", out / "ocg_rules.py")
    return result, out / "rulings.duckdb", out / "ocg_rules.py"


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
