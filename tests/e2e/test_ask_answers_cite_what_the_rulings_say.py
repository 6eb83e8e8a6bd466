"""`rulings ask` on the first four audit findings of issue 13, on the
bundled build: each answer and its citations are what the rulings say."""

from __future__ import annotations

import json

from click.testing import CliRunner

from pipeline.cli import main

FACE_DOWN_WORDS = ("里侧", "盖放")


def ask(db, kind: str, event: str) -> dict:
    out = CliRunner().invoke(main, ["ask", kind, event, "--db", str(db), "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def supports(answer: dict, verdict: str | None = None) -> list[dict]:
    return [c for c in answer["citations"] if c["role"] == "supports" and verdict in (None, c["verdict"])]


def test_a_general_sentence_is_not_copied_onto_every_example(built):
    """Finding 1: "反转等…不会丢失任何情报" once made every flip_face_up rule cite
    the same 14 unrelated records (a 「飞行象」 win-condition ruling supported
    "counters are kept when flipped"); Link monsters are never face-down."""
    _, db, _ = built
    counters = ask(db, "counters", "flip_face_up")
    assert counters["verdict"] == "kept"
    assert [c["text"] for c in supports(counters)] == [
        "反转等，里侧的卡片变成表侧的状况，不会丢失任何情报，对其适用的效果也就那样适用。"]
    link = ask(db, "link_summoned", "flip_face_up")
    assert link["verdict"] == "not_applicable"
    assert all("连接怪兽不会变成里侧表示" in c["text"] for c in supports(link))


def test_examples_of_another_event_or_verdict_are_not_support(built):
    """Finding 2: temporary-banish examples supported control_temporary /
    face_down; "①效果不再适用" supported summoned_by_own_procedure /
    temp_banish = kept."""
    _, db, _ = built
    control = ask(db, "control_temporary", "face_down")
    assert control["verdict"] == "kept" and supports(control)
    assert all(any(w in c["text"] for w in FACE_DOWN_WORDS) for c in supports(control))
    procedure = ask(db, "summoned_by_own_procedure", "temp_banish")
    kept_texts = [c["text"] for c in supports(procedure, "kept")]
    assert kept_texts and not any("①效果不再适用，结果攻击力是0" in t for t in kept_texts)
    assert all("一时除外" in t or "除外" in t for t in kept_texts)


def test_negation_is_not_read_backwards(built):
    """Finding 3: "上升的攻击力在变成里侧后不会复原" gave stat_changes /
    face_down = lost; the rule is lost on the page's own words (回到卡片记载的数值)
    and no supporting ruling says 不会复原."""
    _, db, _ = built
    stats = ask(db, "stat_changes", "face_down")
    assert stats["verdict"] == "lost"
    assert supports(stats) and not any("不会复原" in c["text"] for c in supports(stats))


def test_summoned_by_own_procedure_on_face_down_has_dated_support(built):
    """Finding 4: the examples under a lead-in stated nothing, so
    summoned_by_own_procedure / face_down had no dated support at all."""
    _, db, _ = built
    answer = ask(db, "summoned_by_own_procedure", "face_down")
    assert answer["verdict"] == "lost" and answer["latest_date"] is not None
    assert sum(1 for c in supports(answer) if c["dates"]) >= 3
