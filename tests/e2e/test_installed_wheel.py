"""A normal install: the project built as a wheel, installed into a fresh
virtualenv, run from a folder that is not the checkout.

The fresh virtualenv gets the project from the wheel only; its third-party
dependencies come from the test virtualenv through a ``.pth`` line (not an
install: that would download spaCy again on every run). The ``.pth`` line
adds that folder as a plain path, so the editable install there does not
apply and ``pipeline`` can only come from the wheel.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT, make_corpus



@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """(virtualenv folder, its env without RULINGS_DATA) with the wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(ROOT)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    # setuptools has nothing to warn about (each data folder Python could import is a package of pyproject.toml)
    assert "would be ignored" not in built.stdout + built.stderr and "SetuptoolsDeprecationWarning" not in built.stderr
    [wheel] = list((tmp / "dist").glob("rulings-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                              str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_rulings_test_deps.pth").write_text(ours + "\n" + "\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RULINGS_DATA", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update({"HOME": str(tmp / "home"), "XDG_DATA_HOME": str(tmp / "home" / ".local" / "share"),
                "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"})
    return venv, env, Path(purelib)


def _run(venv: Path, env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(venv / "bin" / "rulings"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow  # a wheel built and installed in a fresh virtualenv: make test-slow, CI
def test_the_wheel_carries_the_schema_and_the_whole_bundled_corpus(installed):
    _venv, _env, purelib = installed
    tracked = subprocess.run(["git", "ls-files", "corpus", "schema"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert len(tracked) > 40
    missing = [f for f in tracked if not (purelib / "pipeline" / "bundled" / f).is_file()]
    assert missing == []
    assert (purelib / "engine" / "runtime.mjs").is_file() and (purelib / "pipeline" / "templates" / "report").is_dir()
    assert not (purelib / "corpus").exists() and not (purelib / "schema").exists()  # nothing at the top level


@pytest.mark.slow  # a wheel built and installed in a fresh virtualenv: make test-slow, CI
def test_an_installed_copy_builds_and_answers_from_any_folder(installed, tmp_path):
    venv, env, purelib = installed
    corpus = make_corpus(tmp_path / "corpus", ["seed-000-battle-position", "seed-004-face-down-temp-banish"])
    env = {**env, "RULINGS_DATA": str(tmp_path / "data")}
    anywhere = tmp_path / "somewhere" / "else"
    build = _run(venv, env, anywhere, "build", "--corpus", str(corpus), "--json")
    assert build.returncode == 0, build.stderr[-3000:]
    summary = json.loads(build.stdout)
    assert summary["rules_hash"] and Path(summary["database"]) == tmp_path / "data" / "rulings.duckdb"
    assert (tmp_path / "data" / "engine" / "ocg_rules.mjs").is_file()
    asked = _run(venv, env, anywhere, "ask", "pendulum_summoned", "face_down", "--json")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["verdict"] == "lost"
    vocabulary = _run(venv, env, tmp_path, "vocabulary", "--json")
    assert vocabulary.returncode == 0 and len(json.loads(vocabulary.stdout)["info_kinds"]) == 35
    # import engine in the installed copy finds the engine the build wrote to the data folder
    code = ("import engine, pipeline; print(engine.retains('pendulum_summoned', 'face_down').verdict, pipeline.__file__, "
            "engine.RULES_HASH)")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=anywhere, env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    verdict, where, digest = out.stdout.split()
    assert verdict == "lost" and where.startswith(str(purelib))
    assert digest == summary["rules_hash"]  # the engine this build wrote, not one the wheel may carry
    assert not (anywhere / "build").exists() and list(anywhere.iterdir()) == []  # nothing written into the cwd


@pytest.mark.slow  # a wheel built and installed in a fresh virtualenv: make test-slow, CI
def test_an_installed_copy_names_a_missing_database_plainly(installed, tmp_path):
    venv, env, _ = installed
    env = {**env, "RULINGS_DATA": str(tmp_path / "empty")}
    out = _run(venv, env, tmp_path, "ask", "synchro_summoned", "face_down")
    assert out.returncode == 2
    assert f"no database at {tmp_path / 'empty' / 'rulings.duckdb'}; run `rulings build` first" in out.stderr


@pytest.mark.slow
def test_an_installed_copy_builds_the_bundled_corpus_into_the_user_data_folder(installed, tmp_path):
    """CI: the wheel, its default paths (no RULINGS_DATA: the user data
    folder), the bundled corpus copied there on first use, the whole build."""
    venv, env, _ = installed
    data = Path(env["XDG_DATA_HOME"]) / "rulings"
    build = _run(venv, env, tmp_path, "build", "--json")
    assert build.returncode == 0, build.stderr[-3000:]
    assert json.loads(build.stdout)["sources"] >= 40
    assert (data / "corpus" / "manifest.tsv").is_file() and (data / "rulings.duckdb").is_file()
    asked = _run(venv, env, tmp_path, "ask", "synchro_summoned", "face_down", "--json")
    assert asked.returncode == 0 and json.loads(asked.stdout)["verdict"] == "kept"


def test_the_working_corpus_is_copied_once_whole_and_a_broken_one_is_named(tmp_path, monkeypatch):
    import pipeline.corpus as corpus
    from pipeline.errors import CorpusError

    working = tmp_path / "data" / "corpus"
    monkeypatch.setattr(corpus, "DEFAULT_CORPUS", working)
    assert corpus.prepare_corpus(working) == working
    assert len(corpus.load_manifest(working)) == len(corpus.load_manifest(corpus.BUNDLED_CORPUS))
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["corpus"]  # no staging copy left behind
    (working / "pages" / "note.txt").write_text("a refresh's", encoding="utf-8")
    assert corpus.prepare_corpus(working) == working and (working / "pages" / "note.txt").exists()  # copied once
    other = tmp_path / "other"
    assert corpus.prepare_corpus(other) == other and not other.exists()  # any other folder is left as given
    monkeypatch.setattr(corpus, "DEFAULT_CORPUS", tmp_path / "half")
    (tmp_path / "half").mkdir()
    with pytest.raises(CorpusError, match="holds no manifest.tsv"):
        corpus.prepare_corpus(tmp_path / "half")
