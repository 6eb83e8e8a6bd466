"""What keeps a large build's memory and engine bounded (issue 17): the
engine's citations (newest records, excerpts), the slim records compile
holds, rows streamed to disk, record ids unique without a primary key."""

import json
from pathlib import Path

import duckdb
import pytest

from pipeline.compile import Citation, ProceduralRule, Rule, for_compile, ruling_key
from pipeline.errors import LoadError
from pipeline.generate import MAX_CITED, engine_tables
from pipeline.load import check_unique_records, create_schema
from pipeline.rowfiles import write_ndjson
from pipeline.records import EXCERPT_CHARS, Record, Statement, excerpt


def _record(i: int, text: str = "") -> Record:
    return Record(f"r{i:04d}", "src", i, i, ("面", "节"), "example", "", "current", text or f"裁定{i}。" * 3,
                  f"裁定{i}。", statements=[Statement("counters", "face_down", "kept")])


def test_a_rule_cites_at_most_the_newest_records_with_excerpts():
    n = MAX_CITED + 15
    records = [_record(i, "长" * (EXCERPT_CHARS + 50) if i == 14 else "") for i in range(n)]  # 14: among the newest
    dates = [(f"20{10 + i % 15:02d}-01-{1 + i % 28:02d}",) for i in range(n)]
    rule = Rule("counters", "face_down", "kept",
                citations=[Citation(r.id, "src", "supports", "kept", d, "stated") for r, d in zip(records, dates)],
                conflicts=[{"verdict": "lost", "record_ids": [r.id for r in records], "latest_date": None}])
    procedural = [ProceduralRule("battle.x", "summary", tuple(r.id for r in records), ())]
    tables = engine_tables([rule], procedural, records, {"src": ("https://example.org", "CC")})
    [row] = tables["RULES"]
    ids, record_dates = row[7], row[9]
    assert len(ids) == MAX_CITED and len(record_dates) == MAX_CITED
    newest = sorted(range(n), key=lambda i: (dates[i][0], records[i].id), reverse=True)[:MAX_CITED]
    assert ids == tuple(records[i].id for i in sorted(newest))  # the newest, in their original order
    assert [tuple(d) for d in record_dates] == [dates[i] for i in sorted(newest)]
    assert len(row[8][0]["record_ids"]) == MAX_CITED and len(tables["PROCEDURAL"]["battle.x"][1]) == MAX_CITED
    long = tables["CITATIONS"][records[14].id][3]
    assert len(long) == EXCERPT_CHARS and long.endswith("…")
    assert all(len(c[3]) <= EXCERPT_CHARS for c in tables["CITATIONS"].values())
    # texts may come from elsewhere (the build reads them back from its database)
    slim = for_compile(records)
    from_db = engine_tables([rule], procedural, slim, {}, texts=lambda ids: {i: f"text of {i}" for i in ids})
    assert {c[3] for c in from_db["CITATIONS"].values()} == {f"text of {i}" for i in from_db["CITATIONS"]}


def test_compile_holds_slim_records_that_compile_to_the_same_rules():
    from pipeline.compile import compile_rules

    records = [_record(i) for i in range(5)] + [Record("r9999", "src", 9, 9, ("面",), "note", "", "current", "无", "无")]
    slim = for_compile(records)
    assert [r.id for r in slim] == [r.id for r in records[:5]]  # a record stating nothing is left out
    assert all(r.text == "" and r.norm == "" and r.cards == [] and r.ruling_key for r in slim)
    assert [r.ruling_key for r in slim] == [ruling_key(r) for r in records[:5]]
    full, light = compile_rules(records[:5]), compile_rules(slim)
    assert [(r.info_kind, r.event, r.verdict, r.record_ids) for r in full] == \
        [(r.info_kind, r.event, r.verdict, r.record_ids) for r in light]


def test_compile_records_read_back_share_their_values_and_compile_alike():
    from pipeline.compile import compile_rules
    from pipeline.run import pack_for_compile, unpack_for_compile

    pages = [[_record(i + 10 * page) for i in range(4)] for page in range(3)]  # each page pickled on its own
    slim = [r for page in pages for r in for_compile(page)]
    back = unpack_for_compile([pack_for_compile(page) for page in pages])
    assert [r.id for r in back] == [r.id for r in slim]
    first, last = back[0], back[-1]
    assert first.statements[0] is last.statements[0] and first.section is last.section  # one object across pages
    assert first.status is last.status and first.role is last.role
    assert all(r.cards == () and r.faq == () and r.links == () and r.cells == () for r in back)
    assert [(r.info_kind, r.event, r.verdict, r.record_ids, r.dates) for r in compile_rules(back)] == \
        [(r.info_kind, r.event, r.verdict, r.record_ids, r.dates) for r in compile_rules(slim)]


def test_long_literals_are_escaped_in_pieces_as_a_whole():
    from pipeline.enginejs import json_string_parts
    from pipeline.generate import str_literal_parts

    texts = ["", "短", "a'b", 'a"b', "x\"y'z\\\n\t\x00\u2028\U0001F600中文" * 50, "'\"" * 9, "'" * 20]
    for text in texts:
        for size in (1, 2, 5, 64, 1 << 20):
            assert "".join(str_literal_parts(text, size)) == repr(text), (text, size)
            assert "".join(json_string_parts(text, size)) == json.dumps(text, ensure_ascii=True), (text, size)


def test_excerpt_keeps_short_text_and_cuts_long_text():
    assert excerpt("短") == "短" and excerpt("x" * EXCERPT_CHARS) == "x" * EXCERPT_CHARS
    assert excerpt("x" * (EXCERPT_CHARS + 1)) == "x" * (EXCERPT_CHARS - 1) + "…"


def test_rows_are_streamed_to_disk_and_checked(tmp_path):
    rows = ({"key": f"k{i}", "value": str(i)} for i in range(1000))  # a generator: never a list in memory
    assert write_ndjson(tmp_path / "b.ndjson", rows, "build_info") == 1000
    lines = (tmp_path / "b.ndjson").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000 and json.loads(lines[-1]) == {"key": "k999", "value": "999"}
    with pytest.raises(LoadError, match="rows of table build_info do not match"):
        write_ndjson(tmp_path / "c.ndjson", iter([{"key": "k"}]), "build_info")


def test_duplicate_record_ids_are_found_without_a_primary_key():
    con = duckdb.connect()
    create_schema(con)
    con.execute("INSERT INTO records (record_id, source_id) VALUES ('r1', 'a'), ('r2', 'a')")
    check_unique_records(con, "test")
    con.execute("INSERT INTO records (record_id, source_id) VALUES ('r1', 'b')")
    with pytest.raises(LoadError, match=r"record ids are not unique: r1 \(2 rows\)"):
        check_unique_records(con, "test")


def test_a_batch_of_page_rows_and_streamed_rows_load_the_same_values(tmp_path):
    """Pages' rows as JSON arrays (the build's workers hand them back so)
    appended to a batch's file, and rows streamed as NDJSON (the end of a
    build, a refresh), load the same values, whatever the text holds:
    quotes, backslashes, line breaks, NULLs, lists; no file of them is left
    once loaded."""
    from pipeline.load import DatabaseWriter, columns
    from pipeline.rowfiles import bulk_insert, json_array

    def row(i: int, text: str, cells) -> dict:
        return {**dict.fromkeys(columns()["records"]), "record_id": f"r{i}", "source_id": "s", "seq": i,
                "block": 0, "section_path": "节 / 小节", "role": "principle", "status": "current", "withdrawn": "",
                "text": text, "cells": cells, "norm_text": text, "first_seen_run": 1}

    texts = ['「引号」"x" \\ 反斜杠', "两行\n文字\t制表", "", "𠀀 astral ™"]
    in_batch = [row(i, t, ["a", 'b "c"'] if i % 2 else None) for i, t in enumerate(texts)]
    streamed = [row(i + 10, t, ["ｘ"] if i % 2 else None) for i, t in enumerate(texts)]
    with DatabaseWriter(tmp_path / "r.duckdb") as writer:
        work = Path(writer._workdir)
        # four pages, one of them without rows, in two batches
        for rows in (in_batch[:1], [], in_batch[1:3]):
            writer.add_rows({"records": json_array(rows)})
        assert sorted(p.name for p in work.iterdir()) == ["records.json"]  # one file a table and batch
        writer.insert_batch()
        assert writer.add_rows({"records": json_array(in_batch[3:])}) > 0
        writer.insert_batch()
        bulk_insert(writer.con, "records", streamed, work)
        got = writer.con.execute("SELECT record_id, text, cells, norm_text, parent_id, seq FROM records").fetchall()
        assert list(work.iterdir()) == []  # the batch files and the NDJSON file are gone once loaded
    assert got == [(r["record_id"], r["text"], r["cells"], r["text"], None, r["seq"]) for r in in_batch + streamed]


def test_page_rows_that_are_no_json_array_are_named_and_none_of_the_page_is_added(tmp_path):
    from pipeline.rowfiles import RowBatch, json_array

    good = json_array([{"key": "k", "value": "v"}])
    batch = RowBatch(tmp_path)
    for bad in (good[:-3], b"", b'{"key": "k"}'):
        with pytest.raises(LoadError, match=r"table runs: a page's rows are not a JSON array") as err:
            batch.add({"build_info": good, "runs": bad})
        assert err.value.place == str(tmp_path)
    assert batch.bytes == 0 and list(tmp_path.iterdir()) == []
    batch.add({"build_info": b"[]"})
    batch.add({"build_info": good})
    batch.add({"build_info": good, "runs": b"[]"})
    files = batch.close()
    assert files == {"build_info": tmp_path / "build_info.json"}
    assert files["build_info"].read_bytes() == b"[" + good[1:-1] + b"," + good[1:-1] + b"]"
    assert batch.bytes == 0 and batch.files == {}


def test_a_batch_that_cannot_be_written_stops_with_a_load_error(tmp_path):
    from pipeline.rowfiles import RowBatch, json_array

    batch = RowBatch(tmp_path / "gone")  # the folder was removed: open() fails as on a full disk
    with pytest.raises(LoadError, match=r"table records: cannot write the batch of rows: No such file") as err:
        batch.add({"records": json_array([{"record_id": "r1"}])})
    assert err.value.place == str(tmp_path / "gone" / "records.json")  # the file it could not write


class _FullDisk:
    """A batch file on a full disk: every write and the close fail (ENOSPC)."""

    def __init__(self, name):
        self.name = str(name)

    def write(self, data):
        raise OSError(28, "No space left on device")

    def close(self):
        raise OSError(28, "No space left on device")


def test_a_batch_that_cannot_be_closed_is_a_load_error_and_empty_again(tmp_path):
    from pipeline.rowfiles import RowBatch, json_array

    batch = RowBatch(tmp_path)
    batch.add({"build_info": json_array([{"key": "k", "value": "v"}])})
    batch.files["runs"] = _FullDisk(tmp_path / "runs.json")
    with pytest.raises(LoadError, match="cannot write the batch of rows: No space left on device"):
        batch.close()
    assert batch.files == {} and batch.bytes == 0
    batch.files["runs"] = _FullDisk(tmp_path / "runs.json")
    batch.discard()  # never raises: it runs while another error is on its way
    assert batch.files == {}


def test_a_writer_whose_batch_cannot_be_written_leaves_nothing_on_disk(tmp_path):
    from pipeline.load import DatabaseWriter
    from pipeline.rowfiles import json_array

    writer = DatabaseWriter(tmp_path / "r.duckdb")
    writer.add_rows({"build_info": json_array([{"key": "k", "value": "v"}])})
    writer._batch.files["runs"] = _FullDisk(tmp_path / "runs.json")
    with pytest.raises(LoadError, match="No space left on device"):
        writer.insert_batch()
    writer.close()
    assert list(tmp_path.iterdir()) == []  # no temporary database, WAL or work folder



def test_pages_are_handed_out_at_most_a_window_ahead_and_come_back_in_order():
    """``pool.map`` hands out every page at once: behind a slow page, every
    page read after it waits in memory with its rows. _in_order keeps at
    most ``ahead`` pages handed out whose outcome the build has not taken
    (at least one: a window of 0 must not lose every page)."""
    from concurrent.futures import Future

    from pipeline import workers

    for ahead, most in ((3, 3), (1, 1), (0, 1), (50, 10)):
        handed_out, taken, in_flight = [], [], []

        class Done(Future):
            def result(self, timeout=None):  # the build takes this page's outcome
                taken.append(self)
                return super().result(timeout)

        class Pool:
            def submit(self, fn, job):
                handed_out.append(job)
                in_flight.append(len(handed_out) - len(taken))
                done = Done()
                done.set_result(f"outcome {job}")
                return done

        outcomes = list(workers._in_order(Pool(), list(range(10)), ahead=ahead))
        assert outcomes == [f"outcome {i}" for i in range(10)] and handed_out == list(range(10))
        assert max(in_flight) == most, ahead


def test_a_writer_closes_quietly_and_cleanly_when_duckdb_cannot_close(tmp_path):
    """close() runs while another error is on its way: a connection that
    fails to close must not hide that error, nor leave files behind."""
    import duckdb as duckdb_module

    from pipeline.load import DatabaseWriter

    class FailingClose:
        def __init__(self, con):
            self.con = con

        def close(self):
            self.con.close()
            raise duckdb_module.IOException("No space left on device")

    writer = DatabaseWriter(tmp_path / "r.duckdb")
    writer.con = FailingClose(writer.con)
    writer.close()
    writer.close()  # idempotent
    assert list(tmp_path.iterdir()) == []
