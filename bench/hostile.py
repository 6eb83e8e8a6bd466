"""Hostile pages (issue 32, items 8-10): what one page costs a build.

``python -m bench.hostile [--timeout S] [--only NAME,...] [--json]`` writes, for
each case, a corpus of two good pages and one hostile page, builds it in a
fresh process (``bench/child.py``, which samples the peak memory of the
build and its workers) and prints one line per case: the build's wall time,
its peak memory (MB, PSS of the process tree) and the hostile page's error.
A build still running after ``--timeout`` seconds (default 300) is killed
and reported as such. ``PYTHONPATH=/other/checkout`` measures another
version (the child imports ``pipeline`` and ``bench`` from there).

Cases: ``baseline`` (a third good page: the build's fixed cost), ``deep_div`` (<div> nested 100,000 deep, 1.1 MB), ``deep_span``
(<span> 100,000 deep in a <p>), ``attrs_1m`` (one tag with 1,000,000
attributes, 10 MB), ``attrs_100k`` (100,000 attributes), ``attrs_tags``
(2,000 tags of 1,000 attributes each, 10 MB), ``rulings_200k`` (200,000
rulings in <p>s, 17 MB), ``rulings_19k`` (19,000 of them: under the default limit), ``rulings_li``
(200,000 in <li>s), ``inline_2m`` (a paragraph of 2,000,000 <b>s, 16 MB), ``empty_divs``
(1,500,000 empty <div>s, 16 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = "<html><head><title>t</title></head><body><main><h1>里侧·一时除外</h1><p>放置指示物的卡变成里侧或被一时除外后，指示物全部消失。17/3/24</p>"
TAIL = "</main></body></html>"
GOOD = HEAD + "<h2>指示物</h2><p>里侧的卡片是非公开情报。17/3/24</p>" + TAIL
TEXT = "Battle Position\n\nA monster's battle position can be changed once per turn.\n"
COLUMNS = ("id", "url", "language", "script", "region", "format", "licence", "path", "fetch", "notes")
RULING = "「卡{i}」的效果在对方回合也能发动，不会被无效。17/3/24"


def _attrs(count: int, tags: int = 1) -> str:
    tag = "<span " + " ".join(f'a{i}="x"' for i in range(count)) + ">x</span>"
    return HEAD + "<p>" + tag * tags + "</p>" + TAIL


CASES = {
    "baseline": lambda: GOOD,  # no hostile page: what the build costs anyway (spaCy, the card index, workers)
    "deep_div": lambda: HEAD + "<div>" * 100_000 + "文字" + "</div>" * 100_000 + TAIL,
    "deep_span": lambda: HEAD + "<p>" + "<span>" * 100_000 + "文字" + "</span>" * 100_000 + "</p>" + TAIL,
    "attrs_1m": lambda: _attrs(1_000_000),
    "attrs_100k": lambda: _attrs(100_000),
    "attrs_tags": lambda: _attrs(1_000, 2_000),
    "rulings_200k": lambda: HEAD + "".join(f"<p>{RULING.format(i=i)}</p>" for i in range(200_000)) + TAIL,
    "rulings_19k": lambda: HEAD + "".join(f"<p>{RULING.format(i=i)}</p>" for i in range(19_000)) + TAIL,
    "inline_2m": lambda: HEAD + "<p>" + "<b>x</b>" * 2_000_000 + "</p>" + TAIL,
    "empty_divs": lambda: HEAD + "<div></div>" * 1_500_000 + TAIL,
    "rulings_li": lambda: HEAD + "<ul>" + "".join(f"<li>{RULING.format(i=i)}</li>" for i in range(200_000))
    + "</ul>" + TAIL,
}


def write_corpus(root: Path, hostile: str) -> int:
    """A manifest of ``good`` (HTML), ``text`` and ``hostile`` pages; the hostile page's size in bytes."""
    pages = {"good": ("html", "zh", "Hans", "CN", GOOD), "text": ("text", "en", "Latn", "", TEXT),
             "hostile": ("html", "zh", "Hans", "CN", hostile)}
    rows = ["\t".join(COLUMNS)]
    for sid, (fmt, lang, script, region, content) in pages.items():
        path = f"pages/{sid}.{'txt' if fmt == 'text' else 'html'}"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content, encoding="utf-8")
        rows.append("\t".join([sid, "https://example.org/" + sid, lang, script, region, fmt, "test", path, "no", ""]))
    (root / "manifest.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return len(hostile.encode("utf-8"))


def measure(name: str, timeout: float) -> dict:
    """Build the corpus of case ``name`` in a fresh process; its figures."""
    with tempfile.TemporaryDirectory(prefix=f"hostile-{name}-") as tmp:
        root = Path(tmp)
        size = write_corpus(root / "corpus", CASES[name]())
        cmd = [sys.executable, "-m", "bench.child", "build", str(root / "corpus"), str(root / "r.duckdb"),
               str(root / "e.py")]
        started = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())
        except subprocess.TimeoutExpired:
            return {"case": name, "mb": size / 1e6, "wall_s": None, "peak_mb": None,
                    "outcome": f"still running after {timeout:g} s (killed)"}
        wall = time.perf_counter() - started
        if done.returncode != 0:
            return {"case": name, "mb": size / 1e6, "wall_s": wall, "peak_mb": None,
                    "outcome": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"}
        report = json.loads(done.stdout)
        errors = report["errors"]
        return {"case": name, "mb": size / 1e6, "wall_s": report["wall_s"], "peak_mb": report["peak_rss_mb"],
                "outcome": errors[0] if errors else f"built ({report['records']} records)"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = [measure(name, args.timeout) for name in args.only.split(",")]
    if args.json:
        json.dump(figures, sys.stdout, indent=2, ensure_ascii=False)
        return
    for f in figures:
        wall = "-" if f["wall_s"] is None else f"{f['wall_s']:.1f} s"
        peak = "-" if f["peak_mb"] is None else f"{f['peak_mb']:.0f} MB"
        print(f"{f['case']:<13} {f['mb']:5.1f} MB page  build {wall:>8}  peak {peak:>7}  {f['outcome']}", flush=True)


if __name__ == "__main__":
    main()
