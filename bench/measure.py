"""The measurements behind ``python -m bench``; each returns plain numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import lxml.html
from bs4 import BeautifulSoup

from pipeline.corpus import load_manifest
from pipeline.chinese import _converter

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000

# Scenarios answered by the engine benchmark (the formats of the README).
SCENARIOS = [
    {"id": "attacked-then-book-of-moon-then-flip",
     "events": [{"turn": 1, "do": "summon", "method": "synchro", "by": "A", "from": "extra_deck"},
                {"turn": 3, "do": "declare_attack"}, {"turn": 3, "do": "turn_face_down"},
                {"turn": 3, "do": "flip_face_up"}],
     "ask": {"turn": 3, "phase": "battle", "question": "can_declare_attack", "player": "A"}},
    {"id": "xyz-temp-banished-keeps-counters",
     "events": [{"turn": 2, "do": "summon", "method": "xyz", "by": "B"}, {"turn": 2, "do": "place_counter"},
                {"turn": 4, "do": "temp_banish"}],
     "ask": {"turn": 4, "question": "has", "info_kind": "counters"}},
    {"id": "set-then-change-position",
     "events": [{"turn": 1, "do": "set", "by": "A"}],
     "ask": {"turn": 3, "phase": "main1", "question": "can_change_position_manually", "player": "A"}},
]


def floor(corpus_dir: Path, beautifulsoup: bool = False) -> tuple[float, int]:
    """(seconds, bytes) to read every page of ``corpus_dir``, parse it with lxml
    (HTML) and convert its text with OpenCC ``t2s`` (Chinese pages); with
    ``beautifulsoup``, the parse builds a BeautifulSoup tree (lxml parser)."""
    sources = load_manifest(corpus_dir)
    convert = _converter("t2s").convert
    total = 0
    started = time.perf_counter()
    for source in sources:
        data = source.snapshot.read_bytes()
        total += len(data)
        text = data.decode("utf-8", errors="replace")
        if source.format == "html" and beautifulsoup:
            text = BeautifulSoup(text, "lxml").get_text()
        elif source.format == "html":
            text = lxml.html.document_fromstring(text).text_content()
        if source.language == "zh":
            convert(text)
    return time.perf_counter() - started, total


def child(mode: str, corpus_dir: Path, db: Path, engine: Path, workers: int | None = None) -> dict:
    """Run one build or refresh (``mode``) in a fresh interpreter
    (``bench/child.py``); its JSON report. Raises RuntimeError with the
    child's stderr when it fails."""
    cmd = [sys.executable, "-m", "bench.child", mode, str(corpus_dir), str(db), str(engine)]
    if workers:
        cmd.append(str(workers))
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} of {corpus_dir} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


def refresh_fraction(corpus_dir: Path, work: Path, db: Path, engine: Path, build_s: float) -> dict:
    """A refresh with nothing changed against ``build_s``, the wall time of
    the build of ``corpus_dir`` that wrote ``db`` and ``engine``; the corpus
    is served locally (:mod:`bench.refresh`). Returns ``refresh_s``,
    ``fraction`` and ``pages``; raises RuntimeError when the measured
    refresh re-processed or failed any page."""
    from .refresh import local_corpus, serving

    work.mkdir(parents=True, exist_ok=True)
    with serving(work) as url:
        pages = local_corpus(corpus_dir, work / "corpus", f"{url}/corpus")
        child("refresh", work / "corpus", db, engine)  # the first refresh fetches every page once
        refreshed = child("refresh", work / "corpus", db, engine)
    if refreshed["reprocessed"] or refreshed["failed"] or refreshed["unchanged"] != pages:
        raise RuntimeError(f"the refresh with nothing changed did work: {refreshed}")
    return {"refresh_s": refreshed["wall_s"], "fraction": refreshed["wall_s"] / build_s, "pages": pages}


def _per_call_us(func, args_list: list[tuple], min_seconds: float) -> float:
    """Mean microseconds per ``func(*args)`` over ``args_list``, repeated for at
    least ``min_seconds`` (loop overhead included)."""
    calls, started = 0, time.perf_counter()
    while True:
        for args in args_list:
            func(*args)
        calls += len(args_list)
        elapsed = time.perf_counter() - started
        if elapsed >= min_seconds:
            return elapsed / calls * 1e6


def import_ms(engine: Path, repeats: int) -> tuple[float, float]:
    """(first import in ms, best later import in ms) of the engine module, each
    in a fresh interpreter; the first one also compiles the bytecode cache."""
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); t = time.perf_counter(); "
            f"import {engine.stem}; print(time.perf_counter() - t)")
    cache = engine.parent / "__pycache__"
    for stale in cache.glob(f"{engine.stem}.*.pyc") if cache.is_dir() else ():
        stale.unlink()
    times = []
    for _ in range(repeats + 1):
        out = subprocess.run([sys.executable, "-c", code, str(engine.parent)], capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        times.append(float(out.stdout) * 1000)
    return times[0], min(times[1:])


def engine_figures(engine: Path, db: Path, min_seconds: float, import_repeats: int) -> dict[str, float]:
    """Microseconds per ``retains()``, per scenario answer, per
    ``card_answer()`` and per DuckDB retention query; import times and the
    first use of the card table (its parse) in ms."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_engine", engine)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pairs = [(k, e) for k in module.INFO_KINDS for e in module.EVENTS]
    con = duckdb.connect(str(db), read_only=True)
    try:
        def sql(kind: str, event: str):
            return con.execute("SELECT verdict FROM rules WHERE info_kind = ? AND event = ?", [kind, event]).fetchone()

        sql_us = _per_call_us(sql, pairs, min_seconds)
        agree = all(sql(k, e)[0] == module.retains(k, e).verdict for k, e in pairs)
    finally:
        con.close()
    broken = [s["id"] for s in SCENARIOS if "error" in module.answer(s)]
    if broken:  # an error answer is fast and would make the figure meaningless
        raise RuntimeError(f"the engine refused the benchmark's scenarios {broken}")
    first, cached = import_ms(engine, import_repeats)
    t0 = time.perf_counter()
    cards = sorted(int(p) for p in module._card_data()["cards"])  # the card table, parsed on first use
    card_first = (time.perf_counter() - t0) * 1000
    questions = [(c, e) for c in cards[:200] for e in ("face_down", "temp_banish", "face_down,flip_face_up")]
    return {
        "card_table_ms": card_first,
        "card_answer_us": _per_call_us(module.card_answer, questions, min_seconds),
        "retains_us": _per_call_us(module.retains, pairs, min_seconds),
        "scenario_us": _per_call_us(module.answer, [(s,) for s in SCENARIOS], min_seconds),
        "import_ms": cached,
        "import_first_ms": first,
        "sql_us": sql_us,
        "sql_agrees": float(agree),
    }


CLI_COMMANDS = ("ask", "card", "show", "sql")


def cli_commands(db: Path) -> dict[str, list[str]]:
    """The command lines :func:`cli_start` times: ``duckdb`` (a Python
    process that only imports duckdb) and ``rulings ask``, ``card``,
    ``show`` and ``sql`` (one small question each, on the database ``db``;
    ``card`` with the engine beside it, ``ocg_rules.py``, when there is
    one). UsageError / LoadError for a path that holds no database of this
    version (:func:`pipeline.queries.connect`)."""
    console = Path(sys.executable).parent / "rulings"
    rulings = [str(console)] if console.is_file() else [sys.executable, "-m", "pipeline.cli"]
    from pipeline.queries import connect  # checked: a clear error for a database of another schema or none

    con = connect(db)
    try:
        record_id = con.execute("SELECT min(record_id) FROM records").fetchone()[0]
        card = con.execute("SELECT passcode FROM card_mentions WHERE passcode IS NOT NULL "
                           "GROUP BY passcode ORDER BY count(*) DESC, passcode LIMIT 1").fetchone()[0]
        kind, event = con.execute("SELECT info_kind, event FROM rules ORDER BY info_kind, event LIMIT 1").fetchone()
    finally:
        con.close()
    db_option = ["--db", str(db)]
    engine = db.parent / "ocg_rules.py"  # the build's engine: `rulings card` prints the card's effects from it
    engine_option = ["--engine-out", str(engine)] if engine.is_file() else []
    return {
        "duckdb": [sys.executable, "-c", "import duckdb"],
        "ask": rulings + ["ask", kind, event] + db_option,
        "card": rulings + ["card", str(card), "--limit", "5"] + db_option + engine_option,
        "show": rulings + ["show", record_id] + db_option,
        "sql": rulings + ["sql", "SELECT verdict FROM rules WHERE info_kind = 'counters'"] + db_option,
    }


def cli_start(db: Path, repeats: int) -> dict[str, float]:
    """Milliseconds from process start to exit of each of
    :func:`cli_commands`, each the best of ``repeats`` runs taken in turns
    (a busy moment of the machine falls on all of them alike); bytecode
    cached by a run before. RuntimeError with the command's error when one
    fails."""
    commands = cli_commands(db)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}  # as an installed copy runs: bytecode cached
    best = {name: float("inf") for name in commands}
    for round_ in range(repeats + 1):  # round 0 warms the page cache and writes the bytecode
        for name, argv in commands.items():
            started = time.perf_counter()
            done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            if done.returncode:  # a database of another schema version, no engine module: the command's own words
                raise RuntimeError(f"rulings {name} failed (exit {done.returncode}): {done.stderr.strip()}")
            if round_:
                best[name] = min(best[name], time.perf_counter() - started)
    return {name: seconds * 1000 for name, seconds in best.items()}


def cli_instructions(db: Path) -> dict[str, float]:
    """Millions of instructions of each of :func:`cli_commands` from
    process start to exit, counted by valgrind's cachegrind (the same from
    run to run, whatever else the machine does; the disk's and the
    kernel's work are not in it). Each command runs once before, to cache
    its bytecode. RuntimeError when valgrind is missing or a command fails."""
    import shutil

    from .instructions import REFS  # the same count of valgrind's summary as bench.instructions reads

    if shutil.which("valgrind") is None:
        raise RuntimeError("valgrind is not installed (apt-get install valgrind)")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PYTHONHASHSEED": "0"}  # the same set and dict layouts each run
    counts = {}
    for name, argv in cli_commands(db).items():
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                               *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        found = REFS.search(done.stderr)
        if done.returncode or found is None:
            raise RuntimeError(f"rulings {name} under valgrind failed (exit {done.returncode}): {done.stderr[-2000:]}")
        counts[name] = int(found.group(1).replace(",", "")) / 1e6
    return counts
