"""A corpus whose seeds 000 and 003 are rewritten in other words
(cases/procedural) builds the 14 procedural rules and answers every public
scenario as expected."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import CASES, GOLD, ROOT
from corpus_kit import PageSpec, write_corpus
from pipeline.cli import main


PROCEDURAL = CASES / "procedural"
BUNDLED = ROOT / "corpus"
REWRITES = {"a": ("000-rewrite-a.txt", "003-rewrite-a.txt"), "b": ("000-rewrite-b.txt", "003-rewrite-b.txt"),
            "c": ("000-rewrite-c.txt", "003-rewrite-c.txt")}  # c: "switch it by hand", list items with no trigger word


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_rewrites_answer_the_public_scenarios(name, tmp_path):
    """A corpus whose seeds 000 and 003 are the rewrites (no rulebook): every public scenario as expected."""
    pages = [PageSpec(f"rewrite-{i}", (PROCEDURAL / f).read_text(encoding="utf-8"), format="text", language="en",
                      script="Latn", region="") for i, f in enumerate(REWRITES[name])]
    manifest = (BUNDLED / "manifest.tsv").read_text(encoding="utf-8").splitlines()
    keep = [line.split("\t") for line in manifest[1:]
            if line.split("\t")[0] in ("seed-004-face-down-temp-banish", "ocg-rule-c03-face-down-temp-banish",
                                       "edisonrul-book-of-moon", "edisonrul-interdimensional-matter-transporter")]
    for row in keep:
        pages.append(PageSpec(row[0], (BUNDLED / row[7]).read_bytes(), format=row[5], language=row[2],
                              script=row[3], region=row[4]))
    corpus = write_corpus(tmp_path / "corpus", pages)
    db, engine = tmp_path / "r.duckdb", tmp_path / "engine" / "ocg_rules.py"
    runner = CliRunner()
    out = runner.invoke(main, ["build", "--corpus", str(corpus), "--db", str(db), "--engine-out", str(engine)])
    assert out.exit_code == 0, out.output
    assert "procedural rules 14" in out.output
    out = runner.invoke(main, ["scenario", str(GOLD / "scenarios_public.json"), "--engine-out", str(engine), "--json"])
    assert out.exit_code == 0, out.output
    answers = {r["id"]: r["answer"] for r in json.loads(out.output)}
    assert answers == {s["id"]: s["expect"] for s in json.loads((GOLD / "scenarios_public.json").read_text())}
