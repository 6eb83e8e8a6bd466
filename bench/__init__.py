"""Benchmarks of the build and the generated engine: ``python -m bench``.

Run from the project root (``make bench`` does). Prints one figure per line,
``name: value unit (note)`` (``--json`` for machines). MB means 10**6 bytes of
page snapshots as stored in the corpus; times are wall-clock unless a figure
says otherwise. Figures:

1. ``floor``: read every page, parse it with lxml and convert its text with
   OpenCC (Chinese pages), nothing else: the cost no build can go below;
   the best of three runs after a warm-up (of two for a scaled corpus: a
   floor measured too high flatters every floor ratio).
   ``floor_beautifulsoup``: the same with a BeautifulSoup tree, to compare.
2. ``build_*``: ``rulings build`` of the bundled corpus, per stage
   (normalize, extract, compile, load, generate; normalize and extract are
   CPU time summed over the worker processes) and in total, and the ratio
   of the build's wall time to the floor.
3. ``scaled_*``: the same for a scaled corpus (the bundled pages copied to
   ``--pages`` pages with distinct source ids and a small text change each),
   with the build's peak memory (``scaled_peak_rss``: PSS of the build
   process and its workers, see ``bench/child.py``).
4. ``refresh_nothing_changed_fraction`` and ``scaled_…``: a refresh with
   nothing changed, as a fraction of the full build of the same corpus
   (pages served from 127.0.0.1, see ``bench/refresh.py``).
5. ``engine_*``: ``retains()`` and a scenario answer in microseconds per
   call, the generated module's import time in a fresh interpreter, and the
   same retention question asked through DuckDB SQL for comparison.
   ``cli_start_*``: process start to exit of ``rulings ask``, ``card``,
   ``show`` and ``sql`` on the bundled database and of a Python process that
   only imports duckdb (ms, the best of 15 runs taken in turns), and the
   slowest command's time over the duckdb process's (``cli_start_ratio``);
   ``python -m bench.cli`` prints these alone.

Each build and refresh runs in a child process so its time and memory are
its own. Timings are figures to read, never pass/fail tests.

``python -m bench.profile`` prints the CPU per main function of normalize
and extract over the bundled corpus (``bench/profile.py``);
``python -m bench.instructions`` the instructions of one pass of the
per-page work over it, counted by valgrind, the same from run to run
(``bench/instructions.py``).
"""
