"""The files the tool writes for you never cost you yours (issue 32, items 2-4).

* ``rulings report DIR`` writes the site into a folder beside DIR and swaps
  it in: it refuses a folder that is no site it wrote, replaces only the
  files its manifest (DIR/.rulings-report) lists, keeps everything else,
  never follows a symlink planted in DIR, and an interrupted report
  (exception, SIGTERM, SIGKILL) leaves the previous site whole.
* ``rulings export DIR`` removes only files named ``<table>.<ext>`` that its
  own export.json lists, whatever a hand-edited export.json says, and leaves
  no ``.partial`` file or folder on any failure.
* ``rulings build --engine-out F`` replaces F and the .json and .mjs beside it
  only when each is an engine the generator wrote (its header), and refuses
  before any page is read otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.export as export_module
import pipeline.report as report_module
import pipeline.reportfolder as folder_module
from conftest import make_corpus
from pipeline.cli import main
from pipeline.errors import UsageError
from pipeline.export import export
from pipeline.generate import engine_paths
from pipeline.paths import PROJECT_ROOT
from pipeline.report import write_report
from pipeline.reportfolder import MARKER
from pipeline.run import build

# Data-safety end to end (every page, refresh and file case): `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_dbs(tmp_path_factory):
    """Two databases of different pages (one page each) and the engine the
    first build generated: (db_a, db_b, engine_a)."""
    tmp = tmp_path_factory.mktemp("outputs")
    made = []
    for name, source in (("a", "seed-000-battle-position"), ("b", "seed-004-face-down-temp-banish")):
        corpus = make_corpus(tmp / f"corpus-{name}", [source])
        result = build(corpus, tmp / f"{name}.duckdb", tmp / f"{name}-engine" / "ocg_rules.py", workers=1)
        assert not result.errors
        made.append(tmp / f"{name}.duckdb")
    return made[0], made[1], tmp / "a-engine" / "ocg_rules.py"


def tree(folder: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ``folder`` (symlinks not followed): relative path ->
    ("file", bytes) / ("link", target) / ("dir", "")."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", "")
            else:
                found[rel] = ("file", path.read_bytes())
    return found


def leftovers(folder: Path) -> list[str]:
    """Staging folders or partial files a run left beside or inside ``folder``."""
    names = os.listdir(folder.parent) + (os.listdir(folder) if folder.is_dir() else [])
    return [n for n in names if "rulings-report-" in n or n.endswith(".partial")]


def error_line(run) -> str:
    """The one line a refused command printed (asserting it is one line),
    as ``Error: PLACE: MESSAGE``; a --json command's one JSON object is read
    back into that form (its exit code the object's ``exit_code``)."""
    lines = run.stderr.splitlines()
    if len(lines) == 1 and lines[0].startswith("{"):
        error = json.loads(lines[0])
        assert error["exit_code"] == run.exit_code, run.stderr
        place = error["place"] if error["type"] == "UsageError" else None
        return f"Error: {place + ': ' if place else ''}{error['error']}"
    assert len(lines) == 1 and lines[0].startswith("Error: "), run.stderr
    return lines[0]


def report(out: Path, db: Path):
    return CliRunner().invoke(main, ["report", str(out), "--db", str(db)])


# --------------------------------------------------------------------------- report: refusing what is not its own

@pytest.mark.parametrize("files", [
    {"history.html": "my history"},
    {"search.html": "<p>my search</p>", "timeline.html": "mine", "cards.html": "mine", "archetypes.html": "mine"},
    {"index.html": "home", "notes.txt": "notes"},
    {".htaccess": "Deny from all"},
    {"rules/x.html": "my rule", "assets/style.css": "body{}"},
    {MARKER: "a file of mine that has the manifest's name"},
    {MARKER: json.dumps({"written_by": "someone else", "files": ["index.html"]}), "index.html": "home"},
])
def test_report_refuses_a_folder_of_the_users_own_files(two_dbs, tmp_path, files):
    out = tmp_path / "mine"
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    before = tree(out)
    run = report(out, two_dbs[0])
    assert run.exit_code == 2
    line = error_line(run)
    assert line.startswith(f"Error: DIR: {out} holds ") and line.endswith(
        "and is no site `rulings report` wrote (no .rulings-report manifest in it): choose a new or empty folder")
    assert tree(out) == before and leftovers(out) == []


@pytest.mark.parametrize("planted", ["timeline.html", "history.html", "index.html"])
def test_a_symlink_planted_in_a_users_folder_is_refused_and_never_written(two_dbs, tmp_path, planted):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious", encoding="utf-8")
    out = tmp_path / "site"
    out.mkdir()
    (out / planted).symlink_to(outside)
    run = report(out, two_dbs[0])
    assert run.exit_code == 2 and f"holds {planted} and is no site" in error_line(run)
    assert outside.read_text(encoding="utf-8") == "precious" and (out / planted).is_symlink()


@pytest.mark.parametrize("planted", ["timeline.html", "cards.html", "assets/style.css", "notes.txt"])
def test_a_symlink_planted_in_a_report_folder_is_never_followed(two_dbs, tmp_path, planted):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious", encoding="utf-8")
    out = tmp_path / "site"
    write_report(two_dbs[0], out)
    (out / planted).unlink(missing_ok=True)
    (out / planted).symlink_to(outside)
    assert report(out, two_dbs[0]).exit_code == 0
    assert outside.read_text(encoding="utf-8") == "precious"
    if planted == "notes.txt":  # not the report's: kept as the link it is
        assert (out / planted).is_symlink() and os.readlink(out / planted) == str(outside)
    else:  # the report's own name: the new site's file, the link gone
        assert not (out / planted).is_symlink() and (out / planted).read_text(encoding="utf-8") != "precious"
    assert leftovers(out) == []


def test_a_symlinked_folder_in_a_report_folder_is_never_entered(two_dbs, tmp_path):
    out = tmp_path / "site"
    write_report(two_dbs[0], out)
    a_rule = sorted(os.listdir(out / "rules"))[0]
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / a_rule).write_text("theirs", encoding="utf-8")
    (theirs / "keep.txt").write_text("keep", encoding="utf-8")
    shutil.rmtree(out / "rules")
    (out / "rules").symlink_to(theirs, target_is_directory=True)
    # the manifest lists rules/*.html, but the link is someone else's folder: never entered, and in the way
    run = report(out, two_dbs[0])
    assert run.exit_code == 2 and error_line(run) == (
        f"Error: DIR: {out / 'rules'} is not a file an earlier report wrote, and this report writes rules: "
        "move it out of the folder")
    assert tree(theirs) == {a_rule: ("file", b"theirs"), "keep.txt": ("file", b"keep")}
    assert (out / "rules").is_symlink() and leftovers(out) == []


@pytest.mark.parametrize("listed", [["notes.txt"], ["../victim.txt", "/etc/hostname"], ["sub/notes.txt", ".."],
                                    ["index.html/../notes.txt", "rules/../../victim.txt"]])
def test_a_hand_edited_site_manifest_is_no_licence_to_delete(two_dbs, tmp_path, listed):
    victim = tmp_path / "victim.txt"
    victim.write_text("victim", encoding="utf-8")
    out = tmp_path / "site"
    write_report(two_dbs[0], out)
    (out / "notes.txt").write_text("notes", encoding="utf-8")
    (out / "sub").mkdir()
    (out / "sub" / "notes.txt").write_text("sub notes", encoding="utf-8")
    manifest = json.loads((out / MARKER).read_text(encoding="utf-8"))
    manifest["files"] += listed
    (out / MARKER).write_text(json.dumps(manifest), encoding="utf-8")
    assert report(out, two_dbs[0]).exit_code == 0
    assert (out / "notes.txt").read_text(encoding="utf-8") == "notes"
    assert (out / "sub" / "notes.txt").read_text(encoding="utf-8") == "sub notes"
    assert victim.read_text(encoding="utf-8") == "victim"
    assert "notes.txt" not in json.loads((out / MARKER).read_text(encoding="utf-8"))["files"]


# --------------------------------------------------------------------------- report: replacing its own

def test_an_older_report_is_replaced_cleanly_and_the_users_files_kept(two_dbs, tmp_path):
    db_a, db_b, _ = two_dbs
    fresh = tmp_path / "fresh"
    write_report(db_b, fresh)
    out = tmp_path / "site"
    write_report(db_a, out)
    old = tree(out)
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    (out / "photos").mkdir()
    (out / "photos" / "a.png").write_bytes(b"png")
    (out / "rules" / "mine.html").write_text("my page", encoding="utf-8")
    os.chmod(out, 0o750)
    summary = write_report(db_b, out)
    mine = {"notes.txt": ("file", b"mine"), "photos": ("dir", ""), "photos/a.png": ("file", b"png"),
            "rules/mine.html": ("file", b"my page")}
    assert tree(out) == tree(fresh) | mine  # exactly the new site and the user's files
    assert set(old) - set(tree(fresh)), "the two sites should differ in their files"
    assert summary.out_dir == out and summary.files == len(json.loads((out / MARKER).read_text())["files"])
    assert os.stat(out).st_mode & 0o777 == 0o750 and leftovers(out) == []


def test_a_report_of_an_earlier_version_is_replaced(two_dbs, tmp_path):
    out = tmp_path / "site"
    (out / "cards").mkdir(parents=True)
    (out / MARKER).write_text("written by `rulings report`; the next report replaces index.html and the "
                              "folders rules, cards, sources, runs and assets here\n", encoding="utf-8")
    (out / "index.html").write_text("old", encoding="utf-8")
    (out / "cards" / "1.html").write_text("old card", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert report(out, two_dbs[0]).exit_code == 0
    assert not (out / "cards" / "1.html").exists() and (out / "index.html").read_text() != "old"
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert json.loads((out / MARKER).read_text())["complete"] is True


def test_an_empty_folder_and_a_new_one_are_written(two_dbs, tmp_path):
    empty, new = tmp_path / "empty", tmp_path / "a" / "b" / "new"
    empty.mkdir()
    for out in (empty, new):
        assert report(out, two_dbs[0]).exit_code == 0
        assert (out / "index.html").is_file() and leftovers(out) == []
    assert tree(empty) == tree(new)


def test_without_an_atomic_exchange_two_renames_replace_the_site(two_dbs, tmp_path, monkeypatch):
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    write_report(two_dbs[0], out)
    write_report(two_dbs[1], fresh)
    monkeypatch.setattr(folder_module, "_exchange", lambda a, b: False)
    write_report(two_dbs[1], out)
    assert tree(out) == tree(fresh) and leftovers(out) == []


# --------------------------------------------------------------------------- report: interrupted

@pytest.mark.parametrize("fail_at", [1, 40, "swap"])
def test_a_report_failing_midway_leaves_the_previous_site(two_dbs, tmp_path, monkeypatch, fail_at):
    out = tmp_path / "site"
    write_report(two_dbs[0], out)
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    before = tree(out)
    if fail_at == "swap":
        def exchange(a, b):
            raise OSError(16, "Device or resource busy", str(b))
        monkeypatch.setattr(folder_module, "_exchange", exchange)
        with pytest.raises(UsageError, match="cannot put the new site in place"):
            write_report(two_dbs[1], out)
    else:
        real = report_module._Writer.write

        def write(self, rel, text):
            if self.files + 1 == fail_at:
                raise RuntimeError("disk gone")
            real(self, rel, text)
        monkeypatch.setattr(report_module._Writer, "write", write)
        with pytest.raises(RuntimeError, match="disk gone"):
            write_report(two_dbs[1], out)
    assert tree(out) == before and leftovers(out) == []


KILL_AT = """
import os, signal, sys
import pipeline.report as report
real = report._Writer.write
def write(self, rel, text):
    real(self, rel, text)
    if self.files == 30:
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
report._Writer.write = write
from pipeline.cli import main
main(["report", sys.argv[2], "--db", sys.argv[3]])
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_report_killed_while_writing_leaves_the_previous_site(two_dbs, tmp_path, sig):
    out = tmp_path / "site"
    write_report(two_dbs[0], out)
    before = tree(out)
    run = subprocess.run([sys.executable, "-c", KILL_AT, sig, str(out), str(two_dbs[1])], cwd=PROJECT_ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == (143 if sig == "SIGTERM" else -9), run.stderr
    assert tree(out) == before
    if sig == "SIGTERM":  # the handler removed its staging folder
        assert leftovers(out) == []
    else:  # SIGKILL leaves it; the next report of the folder removes it
        assert len(leftovers(out)) == 1
        assert report(out, two_dbs[1]).exit_code == 0 and leftovers(out) == []


def test_a_running_reports_staging_folder_is_left_alone(two_dbs, tmp_path):
    out = tmp_path / "site"
    write_report(two_dbs[0], out)
    staging, lock = folder_module.make_staging(out)  # as a report running now holds it
    try:
        write_report(two_dbs[0], out)
        assert staging.is_dir()
    finally:
        os.close(lock)
    write_report(two_dbs[0], out)
    assert not staging.exists()


# --------------------------------------------------------------------------- export

def export_cli(out: Path, db: Path, fmt: str = "jsonl"):
    return CliRunner().invoke(main, ["export", str(out), "--format", fmt, "--db", str(db)])


@pytest.mark.parametrize("listed", [["notes.txt"], [".."], ["../victim.txt"], ["/ABS/victim.txt"],
                                    ["sub/notes.txt", "sub"], ["export.json", "."], [7, None, {"a": 1}]])
def test_a_hand_edited_export_json_deletes_only_the_exports_own_files(two_dbs, tmp_path, listed):
    victim = tmp_path / "victim.txt"
    victim.write_text("victim", encoding="utf-8")
    out = tmp_path / "out"
    export(two_dbs[0], str(out), "parquet")
    (out / "notes.txt").write_text("notes", encoding="utf-8")
    (out / "sub").mkdir()
    (out / "sub" / "notes.txt").write_text("sub notes", encoding="utf-8")
    manifest = json.loads((out / "export.json").read_text(encoding="utf-8"))
    for i, name in enumerate(listed):
        name = name.replace("/ABS", str(tmp_path)) if isinstance(name, str) else name
        manifest["tables"][f"extra{i}"] = {"file": name}
    (out / "export.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert export_cli(out, two_dbs[0]).exit_code == 0
    assert (out / "notes.txt").read_text(encoding="utf-8") == "notes"
    assert (out / "sub" / "notes.txt").read_text(encoding="utf-8") == "sub notes"
    assert victim.read_text(encoding="utf-8") == "victim"
    assert not list(out.glob("*.parquet")) and (out / "rules.jsonl").is_file()  # the old export's files went
    assert leftovers(out) == [] and not list(tmp_path.rglob("*.partial"))


@pytest.mark.parametrize("hostile", ["malformed", "not an object", "symlinked manifest", "symlinked table",
                                     "folder at a table's name"])
def test_an_export_folder_that_is_not_all_the_exports_is_refused(two_dbs, tmp_path, hostile):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious", encoding="utf-8")
    out = tmp_path / "out"
    if hostile in ("symlinked table", "folder at a table's name"):
        export(two_dbs[0], str(out), "jsonl")
        (out / "rules.jsonl").unlink()
        if hostile == "symlinked table":
            (out / "rules.jsonl").symlink_to(outside)
        else:
            (out / "rules.jsonl").mkdir()
            (out / "rules.jsonl" / "keep.txt").write_text("keep", encoding="utf-8")
        expected = "holds rules.jsonl, which no export listed in its export.json"
    else:
        out.mkdir()
        if hostile == "symlinked manifest":  # a real export's manifest, but elsewhere
            export(two_dbs[0], str(tmp_path / "real"), "jsonl")
            (out / "export.json").symlink_to(tmp_path / "real" / "export.json")
        else:
            (out / "export.json").write_text('{"format": "jsonl", "tables": ' if hostile == "malformed"
                                             else '["format", "jsonl"]', encoding="utf-8")
        expected = "holds an export.json that is no export's manifest"
    before, real_before = tree(out), tree(tmp_path / "real") if (tmp_path / "real").exists() else None
    run = export_cli(out, two_dbs[0])
    assert run.exit_code == 2 and expected in error_line(run)
    assert tree(out) == before and outside.read_text(encoding="utf-8") == "precious"
    if real_before is not None:
        assert tree(tmp_path / "real") == real_before
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.parametrize("fail_on", [1, 3])
def test_an_export_failing_midway_leaves_no_partial_files(two_dbs, tmp_path, monkeypatch, fail_on):
    out = tmp_path / "out"
    export(two_dbs[0], str(out), "parquet")
    (out / "notes.txt").write_text("notes", encoding="utf-8")
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == fail_on:
            raise OSError(28, "No space left on device", str(dst))
        real(src, dst)
    monkeypatch.setattr(export_module.os, "replace", replace)
    with pytest.raises(OSError, match="No space left"):
        export(two_dbs[0], str(out), "jsonl")
    monkeypatch.setattr(export_module.os, "replace", real)
    assert leftovers(out) == [] and not [p for p in os.listdir(out) if p.startswith(".export-")]
    # what the failed export left is still the exports' own: the next one replaces it
    assert export_cli(out, two_dbs[0]).exit_code == 0
    assert sorted(p.suffix for p in out.iterdir() if p.name != "export.json") == \
        [".jsonl"] * len(json.loads((out / "export.json").read_text())["tables"]) + [".txt"]


def test_a_duckdb_error_midway_leaves_no_partial_files(two_dbs, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(export_module, "FORMATS", dict(export_module.FORMATS, jsonl=("jsonl", "(FORMAT nonsense)")))
    with pytest.raises(export_module.LoadError, match="cannot export"):
        export(two_dbs[0], str(out), "jsonl")
    assert os.listdir(out) == []


# --------------------------------------------------------------------------- build --engine-out

def _generated(engine_a: Path, dest: Path, keys=("py", "json", "mjs", "dts")) -> None:
    """Copies of a generated engine's files at ``dest`` (the .py path)."""
    for key in keys:
        shutil.copyfile(engine_paths(engine_a)[key], engine_paths(dest)[key])


def build_cli(tmp_path: Path, engine: Path):
    corpus = make_corpus(tmp_path / "corpus", ["seed-000-battle-position"])
    return CliRunner().invoke(main, ["build", "--corpus", str(corpus), "--db", str(tmp_path / "new.duckdb"),
                                     "--engine-out", str(engine), "--workers", "1", "--json"])


def _user_py(tmp_path, engine_a):
    (tmp_path / "mytool.py").write_text("print('my tool')\n", encoding="utf-8")
    return "mytool.py"


def _user_json_beside(tmp_path, engine_a):
    _generated(engine_a, tmp_path / "mytool.py", ("py", "mjs"))
    (tmp_path / "mytool.json").write_text('{"my": "settings"}\n', encoding="utf-8")
    return "mytool.json"


def _user_mjs_beside(tmp_path, engine_a):
    _generated(engine_a, tmp_path / "mytool.py", ("py", "json"))
    (tmp_path / "mytool.mjs").write_text("export const mine = 1;\n", encoding="utf-8")
    return "mytool.mjs"


def _header_line_only(tmp_path, engine_a):  # the first line alone is no generated header
    (tmp_path / "mytool.py").write_text('"""OCG information-retention and battle rules engine: GENERATED, do not '
                                        'edit.\n"""\nprint("mine")\n', encoding="utf-8")
    return "mytool.py"


def _symlink_to_user_py(tmp_path, engine_a):
    (tmp_path / "real.py").write_text("print('mine')\n", encoding="utf-8")
    (tmp_path / "mytool.py").symlink_to(tmp_path / "real.py")
    return "real.py"  # the build would write the link's target: the error names it


def _symlinked_json_to_user_file(tmp_path, engine_a):
    _generated(engine_a, tmp_path / "mytool.py", ("py", "mjs"))
    (tmp_path / "real.json").write_text("[1, 2]\n", encoding="utf-8")
    (tmp_path / "mytool.json").symlink_to(tmp_path / "real.json")
    return "mytool.json"


def _folder_at_mjs(tmp_path, engine_a):
    (tmp_path / "mytool.mjs").mkdir()
    return "mytool.mjs"


@pytest.mark.parametrize("setup", [_user_py, _user_json_beside, _user_mjs_beside, _header_line_only,
                                   _symlink_to_user_py, _symlinked_json_to_user_file, _folder_at_mjs])
def test_build_refuses_an_engine_out_of_the_users_own_files(two_dbs, tmp_path, monkeypatch, setup):
    work = tmp_path / "work"
    work.mkdir()
    named = setup(work, two_dbs[2])
    before = tree(work)

    def no_page(*args):
        raise AssertionError("a page was read")
    monkeypatch.setattr("pipeline.run._read_page", no_page)
    run = build_cli(tmp_path, work / "mytool.py")
    assert run.exit_code == 2
    line = error_line(run)
    assert line.startswith(f"Error: --engine-out: {work / named} ")
    assert ("is not a regular file" if setup is _folder_at_mjs else "is not a generated engine file") in line
    assert tree(work) == before and not (tmp_path / "new.duckdb").exists()


@pytest.mark.parametrize("present", [("py", "json", "mjs"), ("py",), ("json", "mjs"), ()])
def test_build_replaces_a_generated_engine_and_empty_files(two_dbs, tmp_path, present):
    work = tmp_path / "work"
    work.mkdir()
    _generated(two_dbs[2], work / "mytool.py", present)
    for key in {"py", "json", "mjs"} - set(present):
        engine_paths(work / "mytool.py")[key].write_bytes(b"")  # an empty file holds nothing to lose
    run = build_cli(tmp_path, work / "mytool.py")
    assert run.exit_code == 0, run.output
    for key, path in engine_paths(work / "mytool.py").items():
        assert path.read_bytes() == engine_paths(two_dbs[2])[key].read_bytes()  # same page, same engine bytes


def test_build_replaces_a_stale_or_truncated_generated_engine(two_dbs, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    _generated(two_dbs[2], work / "mytool.py")
    for key, path in engine_paths(work / "mytool.py").items():  # another hash, cut short: still the generator's
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("sha256:", "sha256:0", 1).replace('"rules_hash": "', '"rules_hash": "0', 1)[:700],
                        encoding="utf-8")
    assert build_cli(tmp_path, work / "mytool.py").exit_code == 0
    for key, path in engine_paths(work / "mytool.py").items():
        assert path.read_bytes() == engine_paths(two_dbs[2])[key].read_bytes()


def test_refresh_refuses_an_engine_out_of_the_users_own(tmp_path):
    (tmp_path / "mytool.py").write_text("print('my tool')\n", encoding="utf-8")
    corpus = make_corpus(tmp_path / "corpus", ["seed-000-battle-position"])
    run = CliRunner().invoke(main, ["refresh", "--corpus", str(corpus), "--db", str(tmp_path / "r.duckdb"),
                                    "--engine-out", str(tmp_path / "mytool.py")])
    assert run.exit_code == 2 and error_line(run).startswith(f"Error: --engine-out: {tmp_path / 'mytool.py'} ")
    assert (tmp_path / "mytool.py").read_text(encoding="utf-8") == "print('my tool')\n"
    assert not (tmp_path / "r.duckdb").exists()


@pytest.mark.parametrize("how", ["read-only parent", "disk full"])
def test_a_site_that_cannot_be_staged_beside_dir_is_refused_with_nothing_touched(two_dbs, tmp_path, monkeypatch,
                                                                               how):
    parent = tmp_path / "parent"
    write_report(two_dbs[0], parent / "site")
    before = tree(parent)
    if how == "read-only parent":
        if os.geteuid() == 0:
            pytest.skip("root writes in any folder")
        os.chmod(parent, 0o555)
        reason = "Permission denied"
    else:
        def full(files, complete):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(folder_module, "_manifest_text", full)
        reason = "No space left on device"
    try:
        run = report(parent / "site", two_dbs[1])
    finally:
        os.chmod(parent, 0o755)
    assert run.exit_code == 2 and error_line(run) == (
        f"Error: DIR: cannot write beside {parent / 'site'} (the site is written into a new folder in {parent} "
        f"and swapped in): {reason}")
    assert tree(parent) == before
