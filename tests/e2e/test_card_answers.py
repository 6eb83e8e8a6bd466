"""Issue 36: answers for a named card (``card_answer`` of the engines,
``rulings ask --card NAME EVENT``, the per-effect lines of ``rulings card``),
from the card table (pipeline/cardengine.py) and the rulings on a card's
effect after an event (pipeline/effectrulings.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pipeline.cardengine import _card_entry, effects_of
from pipeline.effectrulings import read_effect_rulings
from pipeline.cardtext import CardText
from pipeline.cli import main
from conftest import CASES

QUESTIONS = json.loads((CASES / "card_questions.json").read_text(encoding="utf-8"))["questions"]
RIGHT = [q for q in QUESTIONS if q["ruling"]]
SILENT = [q for q in QUESTIONS if not q["ruling"]]


def _effect(answer: dict, number: str) -> dict:
    (effect,) = [e for e in answer["effects"] if e["effect"] == number and e["part"] == "monster"]
    return effect


def test_there_are_enough_questions_of_both_kinds():
    assert len(RIGHT) >= 20 and len(SILENT) >= 20
    assert {q["works"] for q in RIGHT} == {True, False}
    assert len({q["ruling"] for q in RIGHT}) >= 20  # a ruling on two events gives two questions


@pytest.mark.parametrize("q", RIGHT, ids=[q["id"] for q in RIGHT])
def test_a_question_taken_from_a_ruling_is_answered_as_the_ruling_says(engine_module, q):
    answer = engine_module.card_answer(q["card"], q["events"])
    effect = _effect(answer, q["effect"])
    assert effect["works"] is q["works"]
    assert effect["decided_by"] == "card_ruling"
    assert q["ruling"] in effect["because"] and q["ruling"] in effect["card_rulings"]
    ruling = answer["rulings"][q["ruling"]]
    assert ruling["date"] == q["date"] and (q["date"] is None or q["date"] in ruling["dates"])
    assert any(s["effect"] == q["effect"] and s["can"] is q["works"] for s in ruling["says"])


@pytest.mark.parametrize("q", SILENT, ids=[q["id"] for q in SILENT])
def test_a_question_the_corpus_is_silent_on_is_unknown(engine_module, q):
    answer = engine_module.card_answer(q["card"], q["events"])
    effect = _effect(answer, q["effect"])
    assert effect["works"] is None and effect["decided_by"] == "general_rule"
    assert effect["card_rulings"] == [] and "conditional" in effect["verdicts"].values()
    # the rule's cases are cited, each with its verdict
    assert any(r.get("cases") for r in effect["rules"])


def test_a_newer_ruling_on_the_card_decides_over_an_older_one(engine_module):
    # 疾行机人 OMK口香糖 ②: 17/3/16 "情报不丢失，②效果仍可以发动", 23/11/29 "②效果不能发动"
    answer = engine_module.card_answer(70939418, "temp_banish")
    effect = _effect(answer, "②")
    dates = {answer["rulings"][r]["date"] for r in effect["card_rulings"]}
    assert "2017-03-16" in dates and effect["works"] is False
    assert {answer["rulings"][r]["date"] for r in effect["because"]} == {max(d for d in dates if d)}


def test_an_effect_that_depends_on_nothing_works_citing_the_general_rule(engine_module):
    answer = engine_module.card_answer(46565218, "face_down,flip_face_up")  # 撒旦老人 ①: its summon procedure
    effect = _effect(answer, "①")
    assert effect["depends_on"] == [] and effect["works"] is True and effect["decided_by"] == "no_dependency"
    assert [r["rule"] for r in effect["rules"]] == ["no_dependency"] and effect["because"] == []


def test_an_effect_whose_kinds_are_kept_works_citing_the_retention_rule(engine_module):
    table = engine_module._card_data()["cards"]
    passcode, number = next((int(p), e["effect"]) for p, c in sorted(table.items()) for e in c["effects"]
                            if e["depends_on"] == ["synchro_summoned"] and not c["rulings"])
    effect = _effect(engine_module.card_answer(passcode, "face_down"), number)
    kept = engine_module.retains("synchro_summoned", "face_down")
    assert kept.verdict == "kept" and effect["works"] is True and effect["decided_by"] == "general_rule"
    assert effect["verdicts"] == {"synchro_summoned": "kept"}
    assert effect["rules"][0]["rule"] == "retention:synchro_summoned/face_down"
    assert set(effect["because"]) == {r["id"] for r in effect["rules"][0]["records"]} and effect["because"]


def _own_card(ja: str) -> CardText:
    return CardText(1, None, {"ja": "テスト"}, {"ja": ja}, card_type="Monster")


def test_changing_an_effects_text_changes_the_answer(engine_module, monkeypatch):
    """A card text of my own: ② needs 『シンクロ召喚したこのカード』 (kept through a
    temporary banish), then 『この効果で特殊召喚したこのカード』 (lost)."""
    answers = []
    for condition in ("シンクロ召喚したこのカード", "この効果で特殊召喚されたこのカード"):
        card = _own_card(f"①：このカードを手札から特殊召喚する。②：{condition}が破壊された場合に発動できる。1枚ドローする。")
        entry = _card_entry(card, effects_of(card), [])
        data = {"format": 1, "restricting_kinds": [], "cards": {"1": entry}, "citations": {}}
        monkeypatch.setattr(engine_module, "_CARD_DATA", data)
        answers.append(_effect(engine_module.card_answer(1, "temp_banish"), "②"))
    assert answers[0]["depends_on"] == ["synchro_summoned"] and answers[0]["works"] is True
    assert "summoned_by_specific_effect" in answers[1]["depends_on"] and answers[1]["works"] is False
    assert answers[1]["verdicts"]["summoned_by_specific_effect"] == "lost"


def test_a_sequence_applies_each_event_in_turn(engine_module):
    table = engine_module._card_data()["cards"]
    passcode, number = next((int(p), e["effect"]) for p, c in sorted(table.items()) for e in c["effects"]
                            if e["depends_on"] == ["counters"] and not c["rulings"])
    # counters: lost on face_down, kept on flip_face_up: lost stays lost
    assert _effect(engine_module.card_answer(passcode, "flip_face_up"), number)["works"] is True
    effect = _effect(engine_module.card_answer(passcode, ["face_down", "flip_face_up"]), number)
    assert effect["verdicts"] == {"counters": "lost"} and effect["works"] is False
    assert engine_module.card_answer(passcode, "face_down,flip_face_up") == engine_module.card_answer(
        str(passcode), ("face_down", "flip_face_up"))


def test_told_facts_select_the_case_of_a_conditional_rule(engine_module):
    q = SILENT[0]
    kind = next(k for k, v in _effect(engine_module.card_answer(q["card"], q["events"]), q["effect"])["verdicts"].items()
                if v == "conditional")
    rule = engine_module.retains(kind, q["events"])
    case = rule.cases[0]
    told = {case["fact"]: case["values"][0]}
    effect = _effect(engine_module.card_answer(q["card"], q["events"], told), q["effect"])
    assert effect["verdicts"][kind] == case["verdict"]


def test_bad_arguments_are_refused(engine_module):
    with pytest.raises(KeyError, match="not in the card table"):
        engine_module.card_answer(14087893, "face_down")  # 月之书: depends on nothing
    with pytest.raises(ValueError, match="did you mean 'face_down'"):
        engine_module.card_answer(RIGHT[0]["card"], "face_dwn")
    with pytest.raises(ValueError, match="unknown fact"):
        engine_module.card_answer(RIGHT[0]["card"], "face_down", {"summon": "flip"})
    with pytest.raises(TypeError):
        engine_module.card_answer(True, "face_down")


# --------------------------------------------------------------------------- the ruling reader

def test_the_reader_takes_the_subject_and_each_clause_s_event():
    cards = {"急袭猛禽-穿刺伯劳": 1, "月之书": 2}
    read = read_effect_rulings("攻击过的「急袭猛禽-穿刺伯劳」，变成里侧再反转，②效果可以发动，一时除外再回到场上的场合不能发动。", cards)
    assert [(r.passcode, r.effect, r.events, r.flip, r.can) for r in read] == [
        (1, "②", ("face_down",), True, True), (1, "②", ("temp_banish",), False, False)]
    # changing the ruling's words changes what is read
    read = read_effect_rulings("攻击过的「急袭猛禽-穿刺伯劳」，变成里侧再反转，②效果不能发动。", cards)
    assert [(r.events, r.can) for r in read] == [(("face_down",), False)]


def test_the_reader_leaves_out_other_cards_effects_and_other_monsters_events():
    cards = {"炎龙星-狻猊": 1, "幻龙星-嘲风": 2, "拷问车轮": 3, "S：P小夜": 4, "闪刀姬-雫空": 5}
    read = read_effect_rulings("「炎龙星-狻猊」S召唤的「幻龙星-嘲风」在变成里侧再反转或被一时除外后，①效果和「炎龙星-狻猊」的③效果不再适用。",
                               cards)
    assert [(r.passcode, r.effect, r.events, r.can) for r in read] == [(2, "①", ("face_down", "temp_banish"), False)]
    assert read_effect_rulings("「拷问车轮」效果处理时，对象怪兽变成里侧表示的场合，「拷问车轮」的①②效果仍然正常适用。", cards) == []
    read = read_effect_rulings("当回合特殊召唤的「闪刀姬-雫空」被「S：P小夜」的②效果等一时除外的场合，之后回到场上也不能再发动②效果。", cards)
    assert [(r.passcode, r.effect, r.can) for r in read] == [(5, "②", False)]


def test_a_flip_summon_and_quoted_effect_text_are_no_event():
    cards = {"冰剑龙 幻冰龙": 1}
    text = ("「冰剑龙 幻冰龙」的②效果发动并适用后，因卡的效果变成里侧表示时，『下个回合，这张卡不能使用这个效果』效果不再适用了。"
            "之后再反转的状况，下个回合可以再次发动②效果。")
    assert [(r.events, r.flip, r.can) for r in read_effect_rulings(text, cards)] == [(("face_down",), True, True)]
    assert read_effect_rulings("「冰剑龙 幻冰龙」反转召唤的场合，可以发动②效果。", cards) == []


# --------------------------------------------------------------------------- the commands

def test_ask_card_gives_the_engine_s_answer_with_the_card_s_names(built):
    _, db, engine = built
    q = RIGHT[0]
    out = CliRunner().invoke(main, ["ask", "--card", q["name"], q["events"], "--db", str(db), "--engine-out",
                                    str(engine), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["card"]["passcode"] == q["card"] and data["card"]["names"]["en"]
    effect = _effect(data, q["effect"])
    assert effect["works"] is q["works"] and q["ruling"] in effect["because"]
    text = CliRunner().invoke(main, ["ask", "--card", str(q["card"]), q["events"], "--db", str(db), "--engine-out",
                                     str(engine)]).output
    assert f"ruling {q['ruling']} {q['date']}" in text and "works (ruling on the card" in text


def test_ask_card_answers_a_card_outside_the_table_and_refuses_bad_input(built):
    _, db, engine = built
    run = lambda *a: CliRunner().invoke(main, [*a, "--db", str(db), "--engine-out", str(engine)])  # noqa: E731
    data = json.loads(run("ask", "--card", "月之书", "temp_banish", "--json").output)
    assert [(e["effect"], e["works"], e["decided_by"]) for e in data["effects"]] == [("①", True, "no_dependency")]
    assert run("ask", "--card", "月之书", "face_dwn").exit_code == 2
    assert run("ask", "--card", "月之书", "face_down", "temp_banish").exit_code == 2
    assert run("ask", "counters").exit_code == 2


def test_card_prints_a_line_per_effect(built):
    _, db, engine = built
    out = CliRunner().invoke(main, ["card", "46502744", "--db", str(db), "--engine-out", str(engine)]).output
    (line,) = [line for line in out.splitlines() if line.startswith("  ② (")]
    assert line.endswith("): face_down fails (ruling), temp_banish works (ruling), flip_face_up works")
    data = json.loads(CliRunner().invoke(main, ["card", "46502744", "--db", str(db), "--engine-out", str(engine),
                                                "--json"]).output)
    assert [e["effect"] for e in data["effects"]] == ["①", "②", "③"]


def test_the_report_s_card_pages_show_the_table_for_the_three_events(built, engine_module, tmp_path):
    from pipeline.report import write_report

    write_report(built[1], tmp_path / "site", engine_module)
    page = (tmp_path / "site" / "cards" / "46502744.html").read_text(encoding="utf-8")  # 应战的G
    table = page[page.index('<table class="card-effects">'):page.index("</table>")]
    assert "<th>face_down</th><th>temp_banish</th><th>flip_face_up</th>" in table
    assert 'class="works-no">does not work (ruling on the card <a href="#r77fb3cf0557e08c">' in table
    assert table.count("<tr>") == 4  # the header and the three effects


# --------------------------------------------------------------------------- generated output

HOSTILE = "'\"\\ \n\u2028\u2029 */ </script> ${x} `x` \x00 ②"


def _hostile_table() -> str:
    from pipeline.cardengine import card_table_text

    entry = {"konami_id": None, "name": {"zh": HOSTILE, "ja": "", "en": ""}, "can_normal_summon": None,
             "effects": [{"part": "monster", "effect": "①", "text": HOSTILE, "depends_on": []}], "rulings": []}
    return card_table_text({"format": 1, "restricting_kinds": [], "cards": {"1": entry}, "citations": {}})


def test_card_text_is_data_in_both_generated_modules(tmp_path):
    """A card text with quotes, backslashes, line breaks, U+2028, NUL and
    template syntax comes back unchanged from card_answer of both modules."""
    import shutil
    import subprocess

    from conftest import import_module_from
    from pipeline.enginejs import render_js
    from pipeline.generate import render, vocabulary_tables

    tables = {**vocabulary_tables(), "RULES": (), "CITATIONS": {}, "SOURCES": {}, "PROCEDURAL": {}}
    cards = _hostile_table()
    (tmp_path / "hostile.py").write_text(render(tables, "0" * 64, cards), encoding="utf-8")
    module = import_module_from(tmp_path / "hostile.py", "engine_hostile_cards")
    answer = module.card_answer(1, "face_down")
    assert answer["effects"][0]["text"] == HOSTILE and answer["card"]["name"]["zh"] == HOSTILE
    mjs = render_js(tables, "0" * 64, cards)
    assert mjs.isascii() and render_js(tables, "0" * 64, cards) == mjs
    node = shutil.which("node")
    if node is None:
        return
    (tmp_path / "hostile.mjs").write_text(mjs, encoding="utf-8")
    code = ("import { card_answer } from './hostile.mjs'; "
            "process.stdout.write(JSON.stringify(card_answer(1, 'face_down')));")
    out = subprocess.run([node, "--input-type=module", "-e", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads(json.dumps(answer))


def test_the_embedded_card_table_is_the_database_s_and_deterministic(built, engine_module):
    import duckdb

    from pipeline.cardengine import card_table, card_table_text

    with duckdb.connect(str(built[1]), read_only=True) as con:
        first = card_table_text(card_table(con))
        assert card_table_text(card_table(con)) == first
    assert engine_module.CARD_TABLE == first
    table = json.loads(first)
    assert all(c["effects"] for c in table["cards"].values())
    assert set(table["citations"]) == {r["id"] for c in table["cards"].values() for r in c["rulings"]}


def test_the_build_s_effect_rulings_are_what_reading_its_records_finds(built):
    """The rulings on card effects a build read page by page (table effect_rulings) are what
    reading every current record with a circled number from the database finds, with the names
    of its linked card mentions (the first mention of a name winning) and its latest own or
    heading date: the way the card table read them before (all at the end)."""
    import duckdb

    with duckdb.connect(str(built[1]), read_only=True) as con:
        names: dict[str, dict[str, int]] = {}
        for rid, norm_name, name, passcode, kind in con.execute(
                "SELECT record_id, norm_name, name, passcode, kind FROM card_mentions WHERE passcode IS NOT NULL "
                "ORDER BY record_id, ord").fetchall():
            linked = names.setdefault(rid, {})
            for n in (norm_name, name) if (kind or "card") == "card" else ():
                if n:
                    linked.setdefault(n, passcode)
        dates = dict(con.execute("SELECT record_id, max(date) FROM record_dates WHERE valid AND "
                                 "kind IN ('own', 'heading') GROUP BY record_id").fetchall())
        expected = [(rid, i, r.passcode, r.effect, list(r.events), r.flip, r.can, dates.get(rid))
                    for rid, norm in con.execute("SELECT record_id, norm_text FROM records WHERE status = 'current' "
                                                 "AND regexp_matches(norm_text, '[①-⑳]') ORDER BY record_id").fetchall()
                    if rid in names for i, r in enumerate(read_effect_rulings(norm, names[rid]))]
        got = con.execute("SELECT * FROM effect_rulings ORDER BY record_id, ord").fetchall()
    assert got == expected
    assert len(got) == 149 and len({row[0] for row in got}) == 140  # the bundled corpus's


def test_a_card_outside_the_table_is_known_without_parsing_the_table(built):
    """pipeline/cardask.py _outside_table: of every passcode, exactly the table's cards may be in it; a card
    outside is answered (rulings card, ask --card) without the table's parse (10-40 ms of the command)."""
    import duckdb

    from conftest import import_module_from
    from pipeline import cardask

    engine = import_module_from(built[2], "engine_table_unparsed")  # its own module: the table not parsed yet
    in_table = {int(p) for p in json.loads(engine.CARD_TABLE)["cards"]}
    with duckdb.connect(str(built[1]), read_only=True) as con:
        passcodes = {p for (p,) in con.execute("SELECT passcode FROM card_names WHERE passcode IS NOT NULL").fetchall()}
        assert {p for p in passcodes | in_table if not cardask._outside_table(engine, p)} == in_table
        summaries = cardask.effect_summaries(con, engine, 14087893, {})  # Book of Moon: not in the table
        assert engine._CARD_DATA is None
        assert [(s["effect"], s["works"], s["decided_by"]["face_down"]) for s in summaries] == [
            ("①", {"face_down": True, "temp_banish": True, "flip_face_up": True}, "no_dependency")]
        engine.CARD_TABLE = " " + engine.CARD_TABLE  # not the compact form: the engine decides, after its parse
        assert not cardask._outside_table(engine, 14087893)
        assert cardask.effect_summaries(con, engine, 14087893, {}) == summaries and engine._CARD_DATA is not None
