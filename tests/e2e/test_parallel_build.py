"""The build spread over worker processes gives the same database and the
same engine bytes as a build in one process, and a broken page in a worker
is handled as in the build's own process."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import pipeline.run as run_module
from bench.child import children
from conftest import make_corpus
from pipeline.compile import for_compile
from pipeline.corpus import BUNDLED_CORPUS, load_manifest
from pipeline.errors import GenerateError, LoadError
from pipeline.run import SpilledRecords, build, pack_for_compile, process_page, unpack_for_compile
from pipeline.workers import read_pages

TABLES = {
    "records": "record_id, source_id, seq, section_path, status, text, norm_text, snapshot_hash",
    "record_dates": "record_id, ord, raw, date, valid, from_heading, faq_id",
    "card_mentions": "record_id, ord, name, passcode, linked_by",
    "statements": "record_id, info_kind, event, verdict, basis, principle_id",
    "rules": "info_kind, event, verdict, latest_date, record_ids",
    "rule_citations": "info_kind, event, record_id, role, date",
}


def _contents(db) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT {cols} FROM {t} ORDER BY ALL").fetchall() for t, cols in TABLES.items()}
    finally:
        con.close()


def _build_with(workers: int, built, tmp_path):
    """(BuildResult, db, engine) of the bundled corpus with ``workers``: the
    session's build when it used that many (one worker per core), else a new one."""
    if built[0].workers == workers:
        return built
    db, engine = tmp_path / f"{workers}.duckdb", tmp_path / f"{workers}.py"
    return build(BUNDLED_CORPUS, db, engine, workers=workers), db, engine


def test_two_workers_build_what_one_process_builds(tmp_path, built):
    one, one_db, one_engine = _build_with(1, built, tmp_path)
    two, two_db, two_engine = _build_with(2, built, tmp_path)
    assert (one.workers, two.workers) == (1, 2)
    assert one_engine.read_bytes() == two_engine.read_bytes() == built[2].read_bytes()
    contents = _contents(one_db)
    assert len(contents["records"]) == 13038 and len(contents["statements"]) == 638
    assert _contents(two_db) == contents
    assert one.summary()["records"] == two.summary()["records"] == 13038
    assert (one.card_mentions, one.linked_mentions) == (two.card_mentions, two.linked_mentions) == (33947, 31761)


# Four pages, a big one among them: enough for two workers, a fraction of a bundled build.
SOURCES = ["seed-000-battle-position", "seed-004-face-down-temp-banish", "ocg-rule-c03-pledges",
           "ocg-rule-c06-rulings-2019"]


def test_a_page_broken_in_a_worker_keeps_its_earlier_records(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", SOURCES)
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    first = build(corpus, db, engine, workers=2)
    page = corpus / "pages/ocg-rule/c06-rulings-2019.html"
    page.write_bytes(b"\x00\x01\x02\x03" * 2000)  # binary: normalize refuses it
    second = build(corpus, db, engine, workers=2)
    assert first.errors == [] and len(second.errors) == 1
    assert "ocg-rule-c06-rulings-2019" in second.errors[0] and "binary" in second.errors[0]
    assert "ocg-rule-c06-rulings-2019: kept 1172 records of the previous build" in second.warnings
    assert second.records == first.records and second.rules_hash == first.rules_hash
    assert second.pages_ok == len(SOURCES) - 1


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_end_when_the_build_is_killed(tmp_path, built):
    """A build killed with SIGKILL mid-way leaves no worker behind, and the
    previous database and engine as they were."""
    _, db, engine = built
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(db, out / "r.duckdb")
    shutil.copy(engine, out / "e.py")
    before = (out / "r.duckdb").read_bytes(), (out / "e.py").read_bytes()
    child = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "build", "--db", str(out / "r.duckdb"),
                              "--engine-out", str(out / "e.py"), "--workers", "2", "--json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
        workers = children(child.pid)
    assert len(workers) >= 2, "the build did not start its workers"
    child.kill()
    child.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)
    assert ((out / "r.duckdb").read_bytes(), (out / "e.py").read_bytes()) == before


def test_a_page_whose_rows_cannot_be_made_fails_alone(tmp_path, monkeypatch):
    """An error after extract (making the page's rows: a bug, memory) names
    the page; the other pages are built. Workers are forked, so they
    inherit the patched function."""
    real = run_module.page_rows

    def page_rows(records, snapshot_hash, source, *args):
        if source.id == "ocg-rule-c03-pledges":
            raise MemoryError("out of memory")
        return real(records, snapshot_hash, source, *args)

    monkeypatch.setattr(run_module, "page_rows", page_rows)
    corpus = make_corpus(tmp_path / "corpus", SOURCES)
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py", workers=2)
    assert len(result.errors) == 1
    assert result.errors[0] == ("[load] ocg-rule-c03-pledges, pages/ocg-rule/c03-pledges.html: making the page's "
                                "rows: MemoryError: out of memory")
    assert result.pages_ok == len(SOURCES) - 1 and (tmp_path / "e.py").is_file()


def test_an_output_folder_that_cannot_be_written_stops_the_build_before_any_page(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(GenerateError, match="cannot write in this folder") as info:
        build(BUNDLED_CORPUS, tmp_path / "r.duckdb", blocker / "e.py", workers=2)
    assert str(blocker) in str(info.value)
    assert not (tmp_path / "r.duckdb").exists()


def _dying_page_job(job):
    if job[0].id == "ocg-rule-c03-pledges":
        os._exit(9)  # as the kernel's out-of-memory killer would end it
    return _real_page_job(job)


_real_page_job = run_module._page_job


def test_a_worker_that_dies_fails_the_build_clearly_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "_page_job", _dying_page_job)
    corpus = make_corpus(tmp_path / "corpus", SOURCES)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(LoadError, match="a worker process died while reading pages"):
        build(corpus, out / "r.duckdb", out / "e.py", workers=2)
    assert sorted(p.name for p in out.iterdir()) == ["r.duckdb.lock"]  # the lock's file stays, empty


def _helper_dies():
    os._exit(1)


def _index_tables(index) -> tuple:
    return index.exact, index.by_key, index.community_exact, index.community_key, index._sorted_names, index.zh_keys


@pytest.mark.parametrize("helper", ["builds the index", "dies"])
def test_the_card_index_is_built_beside_spacy_or_here_when_the_helper_dies(monkeypatch, helper):
    import multiprocessing

    from pipeline import cards, workers

    expected = _index_tables(cards.CardIndex())
    monkeypatch.setattr(cards, "_index", None)
    if helper == "dies":
        monkeypatch.setattr(workers, "CardIndex", _helper_dies)
    workers._warm_up(multiprocessing.get_context("fork"))
    assert cards.card_index_built()
    assert _index_tables(cards.card_index()) == expected


def test_workers_load_every_module_a_page_imports_before_they_fork():
    """After :func:`pipeline.workers.load_page_work` (what the build process
    loads before its workers fork), reading a page of every format and
    language of the bundled corpus imports no pipeline module and no
    BeautifulSoup: no worker pays for an import on its first page."""
    code = """
import json, sys
from collections import Counter
from pipeline.corpus import BUNDLED_CORPUS, load_manifest
from pipeline.run import page_rows, process_page
from pipeline.workers import load_page_work
load_page_work()
kinds = {}
for source in load_manifest(BUNDLED_CORPUS):
    kinds.setdefault((source.format, source.language), source)
before = set(sys.modules)
for source in kinds.values():
    result = process_page(source, {"normalize": 0.0, "extract": 0.0})
    page_rows(result.records, result.snapshot.content_hash, source, Counter())
print(json.dumps(sorted(kinds)))
print(json.dumps(sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("pipeline", "bs4", "spacy"))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert out.returncode == 0, out.stderr
    read, imported = (json.loads(line) for line in out.stdout.strip().splitlines())
    assert {("html", "zh"), ("pdf-text", "en"), ("text", "en"), ("markdown", "en")} <= {tuple(k) for k in read}
    assert imported == []


def _freeze_count(job) -> int:
    return gc.get_freeze_count()


@pytest.mark.parametrize("read", ["every page", "closed after one"])
def test_the_build_process_freezes_what_its_workers_share_only_while_they_read(read):
    """While the workers read, the build process's collector leaves alone
    the objects they share with it (a full collection would copy their
    pages); once they are gone, or the build stops taking pages, those
    objects are collectable again."""
    gc.collect()
    before = gc.get_freeze_count()
    pages = read_pages(_freeze_count, list(range(6)), 2)
    in_workers = next(pages)
    frozen_here = gc.get_freeze_count()
    if read == "every page":
        in_workers = max(in_workers, *pages)
    else:
        pages.close()
    assert in_workers > 0  # the workers freeze what they inherit (their initializer)
    assert frozen_here > before
    assert gc.get_freeze_count() == before


def test_compile_records_wait_in_a_file_and_come_back_in_page_order(tmp_path):
    sources = load_manifest(BUNDLED_CORPUS)[:3]
    pages = [[]] + [process_page(s, dict.fromkeys(run_module.STAGES, 0.0)).records for s in sources] + [[]]
    spilled = SpilledRecords(tmp_path)
    for records in pages:
        spilled.append(pack_for_compile(records))
    assert list(tmp_path.iterdir()) == []  # an unnamed file: nothing a killed build could leave behind
    wanted = [r.id for page in pages for r in for_compile(page)]
    assert len(wanted) > 10
    assert [r.id for r in unpack_for_compile(spilled)] == wanted
    assert [r.id for r in unpack_for_compile(spilled)] == wanted  # read again: the same
    spilled.close()
