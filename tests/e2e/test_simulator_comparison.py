"""The rulings against the simulators (issue 39): the data files of
``schema/simulators/`` (every kind, every event, every cited line at its line
of the pinned source), the comparison (``pipeline/simulators.py``), the
``simulator_verdicts`` table and ``rulings simulators [--json]``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from conftest import make_corpus
from pipeline import schema
from pipeline.cli import main
from pipeline.paths import PROJECT_ROOT
from pipeline.run import build
from pipeline.simulators import compare


def _pinned_sources() -> Path | None:
    """``../shared/simulators`` (the pinned C++ sources), from the project or
    from a worktree beside it; RULINGS_SIMULATOR_SOURCES names another."""
    named = os.environ.get("RULINGS_SIMULATOR_SOURCES")
    candidates = [Path(named)] if named else [PROJECT_ROOT.parent / "shared" / "simulators",
                                              PROJECT_ROOT.parent.parent / "shared" / "simulators"]
    return next((c for c in candidates if (c / "README.md").is_file()), None)


SOURCES = _pinned_sources()
SIMS = schema.simulators()


# --------------------------------------------------------------------------- the data files

@pytest.mark.skipif(SOURCES is None, reason="../shared/simulators (the pinned simulator sources) is not here")
@pytest.mark.parametrize("sim_id", list(SIMS))
def test_every_cited_line_is_at_its_line_of_the_pinned_source(sim_id):
    sim = SIMS[sim_id]
    assert sim["commit"] in (SOURCES / "README.md").read_text(encoding="utf-8"), "the data file names another commit"
    files: dict[str, list[str]] = {}
    for eid, ev in sim["evidence"].items():
        if ev["file"] not in files:
            files[ev["file"]] = (SOURCES / sim_id / ev["file"]).read_text(encoding="utf-8").split("\n")
        source = files[ev["file"]]
        for offset, quoted in enumerate(ev["lines"]):
            number = ev["line"] + offset
            assert number <= len(source), f"{sim_id} {eid}: {ev['file']} has no line {number}"
            assert source[number - 1].strip() == quoted, f"{sim_id} {eid}: {ev['file']}:{number}"
    # every evidence the file holds is cited by some verdict or event, and each excerpt stays a few lines
    cited = {e for k in sim["kinds"].values() for v in k["verdicts"].values() for e in v["evidence"]}
    cited |= {e for ev in sim["events"].values() for e in ev["evidence"]}
    assert cited == set(sim["evidence"])
    assert max(len(ev["lines"]) for ev in sim["evidence"].values()) <= 8


@pytest.mark.parametrize("sim_id", list(SIMS))
def test_every_kind_and_event_has_an_entry_and_unmodelled_kinds_say_so(sim_id):
    sim = SIMS[sim_id]
    assert list(sim["kinds"]) == schema.info_kinds()
    assert set(sim["events"]) == set(schema.events())
    for kind, entry in sim["kinds"].items():
        assert set(entry["verdicts"]) == set(schema.events()), kind
        for event, given in entry["verdicts"].items():
            assert given["verdict"] in schema.SIMULATOR_VERDICTS and given["evidence"] and given["note"], (kind, event)
        if entry["storage"] == "not_modelled":  # no storage: never a kept or lost verdict
            assert {v["verdict"] for v in entry["verdicts"].values()} == {"not_modelled"}, kind
    # the cores keep the summon type: at least the Synchro Summon is modelled, read from their code
    assert sim["kinds"]["synchro_summoned"]["storage"] == "summon_info"


def _broken_schema(tmp_path, monkeypatch, edit) -> None:
    folder = tmp_path / "schema"
    shutil.copytree(schema.SCHEMA_DIR, folder)
    path = folder / "simulators" / "ygopro-core.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(schema, "SCHEMA_DIR", folder)
    schema.simulators.cache_clear()


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["kinds"].pop("counters"), "kinds.counters is missing"),
    (lambda d: d["kinds"]["battled"]["verdicts"]["face_down"].update(evidence=["nowhere"]),
     "kinds.battled.verdicts.face_down.evidence[0] is not an evidence id"),
    (lambda d: d["kinds"]["battled"]["verdicts"]["temp_banish"].update(verdict="maybe"),
     "kinds.battled.verdicts.temp_banish.verdict is not a simulator verdict"),
    (lambda d: d["events"].pop("flip_face_up"), "events.flip_face_up is missing"),
])
def test_a_broken_simulator_file_is_one_error_naming_file_and_key(tmp_path, monkeypatch, edit, message):
    _broken_schema(tmp_path, monkeypatch, edit)
    try:
        with pytest.raises(schema.SchemaError) as info:
            schema.simulators()
        assert "ygopro-core.json" in str(info.value) and message in str(info.value)
    finally:
        monkeypatch.undo()
        schema.simulators.cache_clear()


# --------------------------------------------------------------------------- the comparison, in memory

def _rule(kind, event, verdict, cases=()):
    return {"info_kind": kind, "event": event, "verdict": verdict, "latest_date": "2020-01-01",
            "record_ids": ["r1"], "cases": [{"case_id": c, "verdict": v} for c, v in cases]}


def test_agreement_of_plain_conditional_and_unmodelled_rules():
    kept_by_both = SIMS["ygopro-core"]["kinds"]["synchro_summoned"]["verdicts"]["face_down"]["verdict"]
    assert kept_by_both == "kept"
    rows = {(r["info_kind"], r["event"]): r for r in compare([
        _rule("synchro_summoned", "face_down", "kept"),
        _rule("synchro_summoned", "temp_banish", "lost"),
        _rule("summoned_by_own_procedure", "temp_banish", "conditional", [("a", "lost"), ("b", "kept")]),
        _rule("summoned_by_own_procedure", "face_down", "conditional", [("a", "kept"), ("b", "kept")]),
        _rule("stat_changes", "face_down", "lost"),
    ])}
    assert len(rows) == len(schema.info_kinds()) * len(schema.events())
    ygo = {pair: row["simulators"]["ygopro-core"] for pair, row in rows.items()}
    assert ygo[("synchro_summoned", "face_down")]["agrees"] is True
    assert ygo[("synchro_summoned", "temp_banish")]["agrees"] is False
    split = ygo[("summoned_by_own_procedure", "temp_banish")]  # kept for every monster: right for case b only
    assert (split["verdict"], split["agrees"], split["cases_agreeing"], split["cases_disagreeing"]) == ("kept", False, ["b"], ["a"])
    assert ygo[("summoned_by_own_procedure", "face_down")]["agrees"] is True
    assert ygo[("stat_changes", "face_down")]["verdict"] == "not_modelled"
    assert ygo[("stat_changes", "face_down")]["agrees"] is None
    assert ygo[("counters", "face_down")]["agrees"] is None  # no rule given: unknown, nothing to compare
    assert rows[("counters", "face_down")]["rulings"]["verdict"] == "unknown"
    evidence = ygo[("synchro_summoned", "face_down")]["evidence"]
    assert evidence and all(e["file"] and e["line"] > 0 and e["lines"] for e in evidence)


def test_disagreements_come_first_then_no_comparison_then_agreements():
    rows = compare([_rule("synchro_summoned", "temp_banish", "lost"), _rule("counters", "face_down", "lost")])
    groups = [0 if any(s["agrees"] is False for s in r["simulators"].values())
              else 1 if any(s["agrees"] is None for s in r["simulators"].values()) else 2 for r in rows]
    assert groups == sorted(groups) and groups[0] == 0 and groups[-1] == 2
    assert (rows[0]["info_kind"], rows[0]["event"]) == ("synchro_summoned", "temp_banish")


# --------------------------------------------------------------------------- a database: table and CLI

@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    """A database built from the face-down / temporary banishment page alone."""
    tmp = tmp_path_factory.mktemp("sims")
    corpus = make_corpus(tmp / "c", ["ocg-rule-c03-face-down-temp-banish"])
    build(corpus, tmp / "r.duckdb", tmp / "e.py")
    return tmp / "r.duckdb"


def _cli(*args):
    return CliRunner().invoke(main, ["simulators", *map(str, args)])


def _json(db) -> list[dict]:
    out = _cli("--db", db, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_cli_json_against_the_rules_table_and_the_stored_table(small_db):
    rows = _json(small_db)
    assert len(rows) == len(schema.info_kinds()) * len(schema.events())
    assert {(r["info_kind"], r["event"]) for r in rows} == {(k, e) for k in schema.info_kinds() for e in schema.events()}
    with duckdb.connect(str(small_db), read_only=True) as con:
        rules = {(k, e): (v, str(d) if d else None, list(ids)) for k, e, v, d, ids in
                 con.execute("SELECT info_kind, event, verdict, latest_date, record_ids FROM rules").fetchall()}
        stored = {(k, e, s): (v, a, list(ids)) for k, e, s, v, a, ids in con.execute(
            "SELECT info_kind, event, simulator, verdict, agrees, record_ids FROM simulator_verdicts").fetchall()}
    assert len(stored) == len(rows) * len(SIMS)
    for r in rows:
        pair = (r["info_kind"], r["event"])
        assert set(r) == {"info_kind", "event", "rulings", "simulators"}
        assert list(r["simulators"]) == ["ygopro-core", "edopro-core"]
        verdict, latest, ids = rules.get(pair, ("unknown", None, []))
        assert (r["rulings"]["verdict"], r["rulings"]["latest_date"], r["rulings"]["record_ids"]) == (verdict, latest, ids)
        for sid, s in r["simulators"].items():
            assert s["verdict"] == SIMS[sid]["kinds"][pair[0]]["verdicts"][pair[1]]["verdict"]
            assert {"verdict", "agrees", "evidence"} <= set(s)
            assert stored[(*pair, sid)] == (s["verdict"], s["agrees"], ids)
            if verdict in ("kept", "lost", "not_applicable") and s["verdict"] != "not_modelled":
                assert s["agrees"] is (s["verdict"] == verdict)
    # a dated rule names its latest ruling, one of its records dated that day, with its FAQ ids
    dated = [r for r in rows if r["rulings"]["latest_date"]]
    assert dated and all(r["rulings"]["latest_record"] in r["rulings"]["record_ids"] for r in dated)
    with duckdb.connect(str(small_db), read_only=True) as con:
        for r in dated:
            faq = con.execute("SELECT list(DISTINCT faq_id ORDER BY faq_id) FILTER (WHERE faq_id IS NOT NULL) "
                              "FROM record_dates WHERE record_id = ? AND kind <> 'reference'",
                              [r["rulings"]["latest_record"]]).fetchone()[0]
            assert r["rulings"]["faq_ids"] == (faq or [])


def test_a_changed_verdict_in_the_rules_table_changes_the_comparison(small_db, tmp_path):
    db = tmp_path / "changed.duckdb"
    shutil.copyfile(small_db, db)
    before = {(r["info_kind"], r["event"]): r for r in _json(db)}
    pair = next(p for p, r in before.items() if r["rulings"]["verdict"] == "kept"
                and all(s["verdict"] == "kept" and s["agrees"] for s in r["simulators"].values()))
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE rules SET verdict = 'lost' WHERE info_kind = ? AND event = ?", list(pair))
    after = _json(db)
    changed = next(r for r in after if (r["info_kind"], r["event"]) == pair)
    assert changed["rulings"]["verdict"] == "lost"
    assert [s["agrees"] for s in changed["simulators"].values()] == [False, False]
    assert after.index(changed) < next(i for i, r in enumerate(after)
                                       if all(s["agrees"] is not False for s in r["simulators"].values()))
    assert {p: r for p, r in before.items() if p != pair} == {
        (r["info_kind"], r["event"]): r for r in after if (r["info_kind"], r["event"]) != pair}


def test_cli_text_lists_disagreements_first_with_the_cited_lines(small_db):
    rows = _json(small_db)
    out = _cli("--db", small_db)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    first = rows[0]
    assert any(s["agrees"] is False for s in first["simulators"].values())
    assert lines[0].startswith(f"{first['info_kind']} on {first['event']}: rulings {first['rulings']['verdict']}")
    wrong = next(sid for sid, s in first["simulators"].items() if s["agrees"] is False)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(wrong))
    assert "DISAGREES" in lines[at]
    evidence = first["simulators"][wrong]["evidence"][0]
    assert f"{evidence['file']}:{evidence['line']}  {evidence['lines'][0]}" in out.output
    for sid in SIMS:
        n = sum(r["simulators"][sid]["agrees"] is False for r in rows)
        assert f"{sid}: {n} disagreement(s)" in out.output
    missing = _cli("--db", small_db.parent / "none.duckdb")  # the same error as every command that reads it
    ask = CliRunner().invoke(main, ["ask", "counters", "face_down", "--db", str(small_db.parent / "none.duckdb")])
    assert missing.exit_code == ask.exit_code != 0 and missing.output == ask.output
    assert missing.output.startswith("Error:") and "rulings build" in missing.output
