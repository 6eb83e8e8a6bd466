"""CPU per function of the per-page work: ``python -m bench.profile``.

Normalizes and extracts every page of the bundled corpus in this one process
(the cyclic garbage collector off, as a build's workers read a page) and
prints, per stage and per main function of each stage, the CPU milliseconds
(``time.process_time``) of the best of ``--runs`` runs: the least disturbed
by other work on the machine. Unlike cProfile, whose cost per call distorts
a profile of many small functions, only the functions listed in
:data:`FUNCTIONS` are timed, each around its whole call.

To compare two versions, run this script against each checkout in turns
(``PYTHONPATH=/path/to/other/checkout python bench/profile.py``, alternating
a few times) and keep the smallest figure of each: on a shared machine one
run can be 30 % slower than the next.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script (``python bench/profile.py``), this file's folder comes first on
# the path and this file would be the standard library's ``profile`` module, which
# spaCy's ``cProfile`` import then finds: take the folder off the path.
if __name__ == "__main__" and sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import functools  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import click

# (module, function) timed around each call; nested ones are included in their callers' figures.
# HTML is read by pipeline.htmlpage and pipeline.htmlwalk (in normalize itself in older checkouts).
FUNCTIONS = (
    ("htmlpage", "normalize_html"), ("htmlpage", "_parse"), ("htmlpage", "page_head"),
    ("htmlwalk", "line_of"), ("normalize", "normalize_html"), ("normalize", "_parse"), ("normalize", "page_head"),
    ("normalize", "_line_of"), ("normalize", "settle_script"), ("normalize", "language_warning"),
    # extract's passes (pipeline/extract.py), and the main functions of the segment pass
    ("extract", "segment"), ("extract", "annotate"), ("extract", "match_page"), ("extract", "read_statements"),
    ("segment", "merge_lines"), ("segment", "split_sentences"), ("segment", "ruling_dates"),
    # an older checkout's extract (before the passes): skipped where missing
    ("extract", "split_sentences"), ("extract", "_record"), ("extract", "_dates_and_cards"),
    ("extract", "find_dates"), ("extract", "fill_heading_dates"), ("extract", "resolve_statements"),
)


def _timed(module, name: str, totals: dict[str, float]) -> None:
    """Replace ``module.name`` by a wrapper adding its CPU seconds to ``totals``."""
    inner = getattr(module, name)

    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.process_time() - started

    setattr(module, name, wrapper)


def profile(runs: int) -> dict[str, int]:
    """CPU ms per stage (``normalize``, ``extract``) and per function of
    :data:`FUNCTIONS` over the bundled corpus, the best of ``runs``."""
    from pipeline import corpus, extract, normalize  # whichever checkout is first on the path
    from pipeline.cards import card_index
    from pipeline.schema import info_kinds

    modules = {"normalize": normalize, "extract": extract}
    for name in ("htmlpage", "htmlwalk"):
        try:
            modules[name] = importlib.import_module(f"pipeline.{name}")
        except ImportError:  # an older checkout: normalize holds them
            pass
    try:  # the passes' modules (an older checkout has none)
        from pipeline import match, segment
        modules["segment"], pipeline_for = segment, match.pipeline_for
    except ImportError:
        pipeline_for = extract.pipeline_for
    pipeline_for("zh"), pipeline_for("en"), card_index()  # loaded once, before any timing
    totals: dict[str, float] = {}
    for module, name in FUNCTIONS:
        if module in modules and hasattr(modules[module], name):  # an older checkout may lack one
            _timed(modules[module], name, totals)
    pages = [(s, corpus.read_snapshot(s, 1 << 30)) for s in corpus.load_manifest(corpus.BUNDLED_CORPUS)]
    best: dict[str, float] = {}
    gc.disable()
    try:
        for _ in range(runs):
            totals.clear()
            for source, data in pages:
                started = time.process_time()
                page = normalize.normalize(data, source)
                middle = time.process_time()
                extract.extract(page, info_kinds())
                totals["normalize (all)"] = totals.get("normalize (all)", 0.0) + middle - started
                totals["extract (all)"] = totals.get("extract (all)", 0.0) + time.process_time() - middle
            for key, seconds in totals.items():
                best[key] = min(best.get(key, seconds), seconds)
    finally:
        gc.enable()
    return {key: round(seconds * 1000) for key, seconds in sorted(best.items(), key=lambda kv: -kv[1])}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--runs", default=5, show_default=True, help="Runs over the corpus; the best of each figure is kept.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of lines.")
def main(runs: int, as_json: bool) -> None:
    """CPU milliseconds per stage and per main function of normalize and
    extract over the bundled corpus (see bench/profile.py)."""
    figures = profile(max(1, runs))
    if as_json:
        click.echo(json.dumps(figures))
        return
    for key, ms in figures.items():
        click.echo(f"{key}: {ms} ms (CPU, best of {runs})")


if __name__ == "__main__":
    main()
