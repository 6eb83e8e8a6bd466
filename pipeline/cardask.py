"""``rulings ask --card NAME EVENT`` and the per-effect lines of ``rulings card``.

The answer is the generated engine's ``card_answer`` (engine/runtime_cards.py:
the same answer the Python and JavaScript modules give), with the card's
names from the database. A card the engine's card table leaves out (none of
its effects depends on an information kind, no ruling names one) is answered
from the database's ``card_effects``: every effect works after any event, by
the no-dependency rule the engine cites. A read command: imports no build stage.
"""

from __future__ import annotations

import duckdb

EVENT_NAMES = ("face_down", "temp_banish", "flip_face_up")
_WORKS = {True: "works", False: "does not work", None: "unknown"}


def _outside_table(engine, passcode: int) -> bool:
    """Whether the card is surely not in the engine's card table, read from
    the table's JSON text (``CARD_TABLE``) without parsing it: the parse takes
    10-17 ms of the bundled build's 0.66 MB text (more for a larger corpus's),
    and most cards are not in the table. In
    the compact, key-sorted text of pipeline/cardengine.py a card's key
    ``"PASSCODE":{`` stands nowhere else (a quote inside a string is escaped,
    the other keys are names and record ids). False for a text of another
    form: the engine decides (KeyError)."""
    table = getattr(engine, "CARD_TABLE", None)
    return isinstance(table, str) and table.startswith('{"cards":{') and f'"{passcode}":{{' not in table


def _effect_rows(con: duckdb.DuckDBPyConnection, passcode: int, texts: bool = True) -> list[tuple]:
    """The card's numbered effects from ``card_effects``: (part, effect, text), monster effects first;
    without ``texts`` each text is "" (the effect summaries show none: the text columns are most of
    what the query reads)."""
    text = "coalesce(text_zh, text_zh_tw, text_ja, text_en, '')" if texts else "''"
    return con.execute(f"SELECT part, effect, {text} FROM card_effects "
                       "WHERE passcode = ? AND effect <> '' ORDER BY part = 'pendulum', ord", [passcode]).fetchall()


def _fallback(rows: list[tuple], engine, passcode: int, names: dict[str, str], events: list[str]) -> dict:
    """The answer for a card outside the engine's card table: its effects (``rows``, :func:`_effect_rows`), each working."""
    rule = {"rule": "no_dependency", "summary": engine._NO_DEPENDENCY}
    effects = [{"effect": effect, "part": part, "text": text, "depends_on": [], "verdicts": {}, "works": True,
                "again": None, "decided_by": "no_dependency", "because": [], "rules": [rule], "card_rulings": []}
               for part, effect, text in rows]
    name = {"zh": names.get("zh-community") or names.get("zh-CN") or names.get("zh-TW") or "",
            "ja": names.get("ja", ""), "en": names.get("en", "")}
    return {"card": {"passcode": passcode, "konami_id": None, "name": name}, "events": events,
            "facts": {"summon_this_turn": None, "can_normal_summon": None, "count_scope": None},
            "effects": effects, "rulings": {}}


def card_answer(con: duckdb.DuckDBPyConnection, engine, passcode: int, names: dict[str, str], events,
                rows: list[tuple] | None = None) -> dict:
    """The engine's answer for the card (see engine/runtime_cards.py), with
    ``card.names`` (every language, from the database); ValueError for an
    event outside the vocabulary. ``rows``: the card's effects when already
    read (:func:`_effect_rows`), for a card outside the engine's table."""
    try:
        if _outside_table(engine, passcode):
            raise KeyError(passcode)
        answer = engine.card_answer(passcode, events)
    except KeyError:
        rows = _effect_rows(con, passcode) if rows is None else rows
        answer = _fallback(rows, engine, passcode, names, engine._event_list(events))
    answer["card"]["names"] = dict(names)
    return answer


def answer_lines(answer: dict) -> list[str]:
    """The answer as text: a line per effect (works or not, why), its text,
    then the rulings on the card, each with its date."""
    names = answer["card"]["names"]
    title = " / ".join(dict.fromkeys(names[k] for k in ("zh-CN", "zh-TW", "ja", "en") if names.get(k)))
    lines = [f"{title} ({answer['card']['passcode']}) after {' then '.join(answer['events'])}:"]
    if not answer["effects"]:
        lines.append("  no numbered effect in the card's text")
    for e in answer["effects"]:
        kinds = ", ".join(f"{k} {v}" for k, v in e["verdicts"].items()) or "nothing the events change"
        if e["decided_by"] == "card_ruling":
            why = f"ruling on the card: {', '.join(e['because'])}"
        elif e["decided_by"] == "general_rule":
            why = "general rule: retention of " + ", ".join(e["verdicts"])
        else:
            why = "general rule: it depends on no information the events change"
        again = "" if e["again"] is None else f"; its limit {'is gone' if e['again'] else 'stays'}"
        part = " (pendulum)" if e["part"] == "pendulum" else ""
        lines.append(f"  {e['effect'] or '-'}{part}: {_WORKS[e['works']]} ({why}); depends on: {kinds}{again}")
        lines.append(f"      {e['text']}")
    for rid, r in sorted(answer["rulings"].items(), key=lambda kv: (kv[1]["date"] or "", kv[0]), reverse=True):
        says = "; ".join(f"{s['effect']} {'can' if s['can'] else 'cannot'} after "
                         f"{' / '.join(s['events']) or 'a flip'}{' and a flip' if s['flip'] and s['events'] else ''}"
                         for s in r["says"])
        lines.append(f"  ruling {rid} {r['date'] or 'undated'} ({r['source']}): {says}")
        lines.append(f"      {r['text']}")
    return lines


def effect_summaries(con: duckdb.DuckDBPyConnection, engine, passcode: int, names: dict[str, str]) -> list[dict]:
    """Per effect of the card: ``{"effect", "part", "depends_on", "works":
    {event: True | False | None}, "decided_by": {event: ...}, "because":
    {event: [record ids]}}`` after each of the three events alone."""
    try:
        if _outside_table(engine, passcode):
            raise KeyError(passcode)
        answers = {ev: engine.card_answer(passcode, ev) for ev in EVENT_NAMES}
    except KeyError:  # outside the engine's card table: its effects read once for the three events
        rows = _effect_rows(con, passcode, texts=False)
        answers = {ev: card_answer(con, engine, passcode, names, ev, rows) for ev in EVENT_NAMES}
    return _summaries(answers)


def _summaries(answers: dict[str, dict]) -> list[dict]:
    out = []
    for i, e in enumerate(answers[EVENT_NAMES[0]]["effects"]):
        out.append({"effect": e["effect"], "part": e["part"], "depends_on": e["depends_on"],
                    "works": {ev: answers[ev]["effects"][i]["works"] for ev in EVENT_NAMES},
                    "decided_by": {ev: answers[ev]["effects"][i]["decided_by"] for ev in EVENT_NAMES},
                    "because": {ev: answers[ev]["effects"][i]["because"] for ev in EVENT_NAMES}})
    return out


def table_summaries(engine, passcodes) -> dict[int, list[dict]]:
    """:func:`effect_summaries` of each of ``passcodes`` the engine's card
    table holds (the report's card pages; the others depend on nothing)."""
    out = {}
    for passcode in passcodes:
        try:
            out[passcode] = _summaries({ev: engine.card_answer(passcode, ev) for ev in EVENT_NAMES})
        except KeyError:
            continue
    return out


def summary_line(s: dict) -> str:
    """One line for an effect: ``② (synchro_summoned): face_down works, temp_banish works, flip_face_up works``."""
    word = {True: "works", False: "fails", None: "unknown"}
    after = ", ".join(f"{ev} {word[w]}{' (ruling)' if s['decided_by'][ev] == 'card_ruling' else ''}"
                      for ev, w in s["works"].items())
    part = " pendulum" if s["part"] == "pendulum" else ""
    return f"  {s['effect'] or '-'}{part} ({', '.join(s['depends_on']) or 'no dependency'}): {after}"
