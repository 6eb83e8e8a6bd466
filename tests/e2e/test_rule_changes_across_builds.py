"""Rule changes across builds: successive builds with newer rulings list each
rule whose verdict changed or became disputed; the bundled rules keep their
verdicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb
from click.testing import CliRunner

from corpus_kit import PageSpec, write_corpus
from pipeline.cli import main
from pipeline.run import build


PAIR = ("synchro_summoned", "face_down")


def _page(title: str, lines: list[str]) -> str:
    body = "".join(f'<div class="line">{line}</div>' for line in lines)
    return (f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><h2>裁定</h2>"
            f'<div class="line-block">{body}</div></main></body></html>')

def _engine(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"engine_policy_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _verdict(db: Path) -> tuple:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT verdict, changed_on, disputed_by FROM rules WHERE info_kind = ? AND event = ?",
                           list(PAIR)).fetchone()
    finally:
        con.close()


def _corpus(root: Path, logs: list[str]) -> Path:
    pages = [PageSpec("topic", _page("出场方式", ["S召唤的怪兽变成里侧或被一时除外后，仍然是S召唤的怪兽。18/1/1"]),
                      url="https://ocg-rule.readthedocs.io/zh-cn/latest/topic.html")]
    pages += [PageSpec(f"log{i}", _page(f"裁定 {i}", [line]), url=f"https://ocg-rule.readthedocs.io/log{i}.html")
              for i, line in enumerate(logs)]
    return write_corpus(root, pages)



def test_builds_with_new_rulings_review_each_rule_change(tmp_path):
    db, engine = tmp_path / "r.duckdb", tmp_path / "engine" / "ocg_rules.py"
    example = "S召唤的「甲」变成里侧后，不再是S召唤的怪兽。25/6/1"
    principle = "S召唤的怪兽变成里侧后，不再是S召唤的怪兽。26/1/8"
    build(_corpus(tmp_path / "c1", []), db, engine)
    assert _verdict(db)[:2] == ("kept", None)

    result = build(_corpus(tmp_path / "c2", [example]), db, engine)  # one newer example: disputed, not flipped
    verdict, changed_on, disputed_by = _verdict(db)
    assert (verdict, changed_on, len(disputed_by)) == ("kept", None, 1)
    assert [(c.info_kind, c.event, c.change) for c in result.rule_changes] == [(*PAIR, "disputed")]
    out = CliRunner().invoke(main, ["changes", "--rules", "--db", str(db), "--json"])
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.output)["rule_changes"]
    assert (row["change"], row["new_verdict"], row["record_ids"]) == ("disputed", "kept", list(disputed_by))
    assert row["rulings"][0]["dates"] == ["2025-06-01"] and "「甲」" in row["rulings"][0]["text"]
    module = _engine(engine)
    assert module.retains(*PAIR).disputed_by == tuple(disputed_by)

    result = build(_corpus(tmp_path / "c3", [example, principle]), db, engine)  # a newer principle: changed
    assert _verdict(db)[:2] == ("lost", __import__("datetime").date(2026, 1, 8))
    [change] = result.rule_changes
    assert (change.change, change.old_verdict, change.new_verdict) == ("verdict", "kept", "lost")
    out = CliRunner().invoke(main, ["changes", "--rules", "--db", str(db)])
    assert "synchro_summoned on face_down: kept -> lost" in out.output and "2026-01-08" in out.output


def test_the_bundled_rules_keep_their_verdicts_and_the_one_real_change(built):
    """The verdict gold holds (tests/gold), no rule of the bundled corpus is
    disputed, and the one real change of ruling in it stays a change: a
    monster back from a temporary banish is no longer summoned this turn
    (the 2020 ruling that said kept is overturned by the agreeing rulings of
    2023 and the topic page's 24/5/30 examples)."""
    con = duckdb.connect(str(built[1]), read_only=True)
    try:
        disputed = con.execute("SELECT info_kind, event FROM rules WHERE len(disputed_by) > 0").fetchall()
        verdict, changed_on, conflicts = con.execute(
            "SELECT verdict, changed_on, conflicts FROM rules WHERE info_kind = 'summoned_this_turn' "
            "AND event = 'temp_banish'").fetchone()
    finally:
        con.close()
    assert disputed == []
    assert verdict == "lost" and changed_on is not None and changed_on.year == 2023
    assert [c["verdict"] for c in conflicts] == ["kept"] and str(conflicts[0]["latest_date"]) == "2020-06-24"
