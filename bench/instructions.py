"""Instructions per pass over the bundled corpus: ``python -m bench.instructions``.

CPU time on a shared machine varies by 20-40 % from one run to the next,
more than most single changes to the per-page work save. The number of
instructions the CPU runs does not vary: this script counts them with
valgrind's cachegrind (``apt-get install valgrind``; about 4 minutes on
2 cores) for the per-page work of a build's workers (normalize, extract and
writing the rows of every page of the bundled corpus, once) and prints
millions of instructions per pass and per MB of pages.

Two processes run under valgrind side by side: one loads what a worker
loads (spaCy, the card index) and reads no page, the other also reads every
page once; the difference is the pass. To compare two versions, run it
against each checkout (``PYTHONPATH=/path/to/checkout python -m
bench.instructions``): a difference of 0.5 % is real.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click

# What one worker does, ``passes`` times over the bundled corpus (0: only the loading).
CHILD = """
import gc, inspect, sys, tempfile
# An editable install's finder would hand over its own checkout's modules where the measured one
# (on PYTHONPATH) has none of that name, such as pipeline.match before 2026-12-01: only PYTHONPATH's.
sys.meta_path[:] = [f for f in sys.meta_path if "Editable" not in getattr(f, "__name__", "")]
from collections import Counter
from pathlib import Path
from pipeline.cards import card_index
from pipeline.corpus import BUNDLED_CORPUS, load_manifest, read_snapshot
try:
    from pipeline.match import pipeline_for
except ImportError:  # a checkout before the extract passes
    from pipeline.extract import pipeline_for
from pipeline.load import RECORD_TABLES
from pipeline.run import page_rows, process_page
from pipeline.schema import info_kinds
try:  # what a worker loads before its first page (pipeline.workers._warm_up), card texts aside
    from pipeline.workers import load_page_work
except ImportError:  # a checkout before 2026-12-02: its page readers were imported with pipeline.run
    load_page_work = lambda: (pipeline_for("zh"), pipeline_for("en"), info_kinds())
load_page_work(), card_index()
sources = load_manifest(BUNDLED_CORPUS)
pages = [(s, read_snapshot(s, 1 << 30)) for s in sources]
out = Path(tempfile.mkdtemp())
for table in RECORD_TABLES:
    (out / table).mkdir()
# a checkout before 2026-12-01's in-memory rows writes them to files under ``out``
files = list(inspect.signature(page_rows).parameters)[3] == "workdir"
gc.disable()  # as in a worker, which collects only between pages
for _ in range(int(sys.argv[1])):
    for i, (source, data) in enumerate(pages):
        result = process_page(source, {"normalize": 0.0, "extract": 0.0}, data=data)
        where = (out, f"{i:06d}") if files else ()
        page_rows(result.records, result.snapshot.content_hash, source, *where, Counter())
print(sum(len(data) for _, data in pages))
"""

REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _count(passes: int, workdir: Path) -> subprocess.Popen:
    script = workdir / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    # NumPy's idle BLAS threads would add instructions; a fixed hash seed, the same set and dict layouts
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    # the checkout measured: PYTHONPATH's when given, else the one this script belongs to
    env.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    return subprocess.Popen(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                             f"--cachegrind-out-file={workdir / f'cachegrind-{passes}.out'}",
                             sys.executable, str(script), str(passes)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def count_instructions(keep: Path | None = None) -> dict[str, float]:
    """{"instructions_per_pass_m", "instructions_per_mb_m", "bytes"}: millions
    of instructions of one pass over the bundled corpus, and per MB of pages.
    ``keep``: a folder that receives the two children's cachegrind.out files
    (``cachegrind-0.out``, ``cachegrind-1.out``) for ``cg_annotate``/``cg_diff``.
    Raises click.ClickException when valgrind is missing or a child fails."""
    if shutil.which("valgrind") is None:
        raise click.ClickException("valgrind is not installed (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            workdir = keep
        runs = {passes: _count(passes, workdir) for passes in (0, 1)}
        refs, size = {}, 0
        for passes, proc in runs.items():
            out, err = proc.communicate()
            found = REFS.search(err)
            if proc.returncode != 0 or not found:
                raise click.ClickException(f"the child reading {passes} pass(es) failed:\n{err[-2000:]}")
            refs[passes] = int(found.group(1).replace(",", ""))
            size = int(out.split()[-1])
    per_pass = (refs[1] - refs[0]) / 1e6
    return {"instructions_per_pass_m": round(per_pass, 1),
            "instructions_per_mb_m": round(per_pass / (size / 1e6), 1), "bytes": size}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of lines.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the cachegrind.out files (cachegrind-0.out: loading only, cachegrind-1.out: with the "
                   "pass) in this folder, for cg_annotate or cg_diff.")
def main(as_json: bool, keep: Path | None) -> None:
    """Millions of instructions (valgrind's cachegrind) of one pass of the
    per-page work over the bundled corpus (see bench/instructions.py)."""
    figures = count_instructions(keep)
    if as_json:
        click.echo(json.dumps(figures))
        return
    click.echo(f"per pass: {figures['instructions_per_pass_m']:,.1f} M instructions "
               f"({figures['bytes'] / 1e6:.1f} MB of pages)")
    click.echo(f"per MB: {figures['instructions_per_mb_m']:,.1f} M instructions")


if __name__ == "__main__":
    main()
