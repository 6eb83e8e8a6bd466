"""The statement gold files scored on the bundled build: each file and the
total printed, the site gold and the face-down page at their figures."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import GOLD
from pipeline.cli import main


def test_several_statement_gold_files_print_each_and_the_total(built):
    _, db, _ = built
    files = [str(GOLD / "statements_public.jsonl"), str(GOLD / "statements_site.jsonl")]
    args = ["evaluate", "--db", str(db)] + [x for f in files for x in ("--statements", f)]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    per_file = [line for line in lines if line.startswith("file ")]
    assert [line.split()[1] for line in per_file] == files
    assert lines[-1].startswith("statements P=")
    data = json.loads(CliRunner().invoke(main, args + ["--json"]).output)
    assert [f["file"] for f in data["files"]] == files
    for key in ("tp", "fp", "fn", "scored"):
        assert data[key] == sum(f[key] for f in data["files"])
    assert data["precision"] == data["tp"] / (data["tp"] + data["fp"])
    assert f"P={data['precision']:.2f} R={data['recall']:.2f}" in lines[-1]
    assert all(miss["file"] in files for miss in data["units"])


def test_the_site_gold_and_the_face_down_page_keep_their_figures(built):
    _, db, _ = built
    data = json.loads(CliRunner().invoke(main, ["evaluate", "--db", str(db), "--json",
                                                "--statements", str(GOLD / "statements_public.jsonl"),
                                                "--statements", str(GOLD / "statements_site.jsonl")]).output)
    public, site = data["files"]
    assert public["precision"] >= 0.95 and public["recall"] >= 0.86
    assert site["scored"] == 141
    assert site["precision"] >= 0.90 and site["recall"] >= 0.85  # measured 0.92 / 0.87 (34/3/5, README)
    assert site["dates_ok"] == site["dated_units"]
