"""``python -m bench`` runs on a tiny corpus and prints every figure (no timing
is asserted: the figures are for reading)."""

import json
import re
import subprocess
import sys

import pytest

from pipeline.corpus import load_manifest
from conftest import ROOT

STAGES = ["normalize", "extract", "compile", "load", "generate"]
FIGURES = (["floor", "floor_beautifulsoup"] + [f"build_{s}" for s in STAGES]
           + ["build_cpu", "build_total", "build_floor_ratio"]
           + ["scaled_pages", "scaled_floor"] + [f"scaled_build_{s}" for s in STAGES]
           + ["scaled_build_cpu", "scaled_build_total", "scaled_build_floor_ratio", "scaled_peak_rss",
              "refresh_nothing_changed_fraction", "scaled_refresh_nothing_changed_fraction",
              "engine_retains", "engine_scenario", "engine_import", "engine_import_first", "engine_card_table",
              "engine_card_answer", "duckdb_retention_query"]
           + ["cli_start_duckdb_import", "cli_start_ask", "cli_start_card", "cli_start_show", "cli_start_sql",
              "cli_start_ratio"]
           + ["size_12_pages", "size_12_floor"] + [f"size_12_{s}" for s in STAGES]
           + ["size_12_cpu", "size_12_total", "size_12_floor_ratio", "size_12_wall", "size_12_peak_memory",
              "size_12_engine_size", "size_12_engine_import"])
LINE = re.compile(r"^([a-z0-9_]+): ([0-9.e+-]+) (\S+)")


@pytest.mark.slow
def test_bench_prints_every_figure_with_a_positive_number(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench", "--pages", "24", "--sizes", "12", "--quick",
                          "--keep", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    figures = {}
    for line in out.stdout.splitlines():
        m = LINE.match(line)
        assert m, f"not a figure line: {line!r}"
        figures[m.group(1)] = (float(m.group(2)), m.group(3), line)
    assert list(figures) == FIGURES
    for name, (value, unit, line) in figures.items():
        assert value > 0, line
    assert figures["scaled_pages"][0] == 24 and figures["size_12_pages"][0] == 12
    assert figures["size_12_peak_memory"][1] == "MB" and "CPU" in figures["size_12_extract"][2]
    assert figures["build_total"][1] == "ms/MB" and figures["engine_retains"][1] == "us/call"
    assert "same answers as retains()" in figures["duckdb_retention_query"][2]
    # The refresh re-processed nothing (bench raises otherwise) and served every page.
    bundled = len(load_manifest())
    assert f"{bundled} pages served locally" in figures["refresh_nothing_changed_fraction"][2]
    assert "24 pages served locally" in figures["scaled_refresh_nothing_changed_fraction"][2]
    # The scaled corpus is really 24 distinct pages.
    manifest = (tmp_path / "scaled-corpus" / "manifest.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert len({row.split("\t")[0] for row in manifest}) == 24
    pages = sorted((tmp_path / "scaled-corpus" / "pages").iterdir())
    assert len({p.read_bytes() for p in pages}) == 24


@pytest.mark.slow
def test_profile_prints_cpu_per_stage_and_function():
    """``python -m bench.profile`` times both stages and every function it
    lists over the bundled corpus; each figure is positive and a stage holds
    at least its own functions' time."""
    out = subprocess.run([sys.executable, "-m", "bench.profile", "--runs", "1", "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert {"normalize (all)", "extract (all)", "normalize_html", "line_of", "segment", "annotate", "match_page",
            "read_statements", "split_sentences", "ruling_dates"} <= set(figures)
    assert all(ms > 0 for ms in figures.values()), figures
    assert figures["normalize (all)"] >= figures["normalize_html"] >= figures["line_of"]
    assert figures["extract (all)"] >= figures["segment"] >= figures["split_sentences"]
    assert figures["extract (all)"] >= figures["match_page"]


def test_instruction_count_needs_valgrind_and_reads_its_total(monkeypatch):
    """``python -m bench.instructions`` says valgrind is missing instead of
    failing later, and reads cachegrind's total from its report line."""
    import click

    from bench import instructions

    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    with pytest.raises(click.ClickException, match="valgrind is not installed"):
        instructions.count_instructions()
    found = instructions.REFS.search("==6904== Collected : 123\n==6904== I   refs:      9,138,717,626\n")
    assert found and int(found.group(1).replace(",", "")) == 9_138_717_626
