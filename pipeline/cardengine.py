"""The engines' card table: per card, its numbered effects, what each
depends on and the rulings on the card that say whether an effect can be
used after a retention event.

Written by a build beside the rules (pipeline/generate.py embeds it in
``engine/ocg_rules.py`` and ``engine/ocg_rules.mjs`` as one JSON text that
``card_answer`` parses on first use). Only cards that need it are in the
table: those with an effect that depends on some info kind
(pipeline/cardtext.py) or with a ruling on an effect after an event
(pipeline/effectrulings.py, read page by page into the table ``effect_rulings``). Its form (:func:`card_table`)::

    {"format": 1,
     "restricting_kinds": [kinds whose loss lifts a limit: a count of uses, a pledge],
     "cards": {"PASSCODE": {"konami_id": int | null, "name": {"zh", "ja", "en"},
                            "can_normal_summon": false | null,
                            "effects": [{"part", "effect", "text", "depends_on": [kinds]}],
                            "rulings": [{"id", "part", "effect", "events", "flip", "can", "date"}]}},
     "citations": {record id: {"source", "dates", "section", "text"}}}

Sorted throughout, so the same corpus gives the same text.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import duckdb

from .cardtext import CardText
from .records import excerpt

FORMAT = 1
_CANNOT_NORMAL_SUMMON = re.compile(r"このカードは通常召喚できない|(?:这张|此)卡(?:不能|无法)通常召唤")
# The rulings were read page by page in the build's workers (pipeline/load.py effect_ruling_rows): here only
# their rows (a few per card) are joined with the records still current, and the cited records' citation
# fields read. Reading the candidate records' texts here instead ran out of DuckDB's 64 MB cap at 8,000 pages.
_RULINGS = """
    SELECT e.record_id, e.passcode, e.effect, e.events, e.flip, e.can, strftime(e.date, '%Y-%m-%d')
    FROM effect_rulings e JOIN records r USING (record_id)
    WHERE r.status = 'current' AND r.retired_run IS NULL
    ORDER BY e.record_id, e.ord"""
_CITATIONS = """
    WITH cited AS (SELECT unnest($ids) AS record_id),
    dates AS (
        SELECT record_id, list(DISTINCT strftime(date, '%Y-%m-%d')) AS dates FROM record_dates
        WHERE record_id IN (SELECT record_id FROM cited) AND valid AND date IS NOT NULL AND kind IN ('own', 'heading')
        GROUP BY record_id)
    SELECT r.record_id, r.source_id, r.section_path, r.text, d.dates
    FROM records r LEFT JOIN dates d USING (record_id)
    WHERE r.record_id IN (SELECT record_id FROM cited) AND r.status = 'current' AND r.retired_run IS NULL"""


def _restricting_kinds() -> list[str]:
    from .schema import card_text_terms, retention_terms

    return sorted(set(retention_terms()["restricting_kinds"]) | set(card_text_terms()["restricting_kinds"]))


def effect_rulings(con: duckdb.DuckDBPyConnection) -> dict[int, list[dict]]:
    """The rulings of the database on a card's effect after an event
    (table ``effect_rulings``): ``{passcode: [{"id", "effect", "events",
    "flip", "can", "date"}]}``, current records only (a struck-through or
    retired ruling decides nothing); ``date`` the record's latest date
    (``YYYY-MM-DD``; None: undated); a record's rulings in the order read."""
    by_card: dict[int, list[dict]] = defaultdict(list)
    for rid, passcode, effect, events, flip, can, date in con.execute(_RULINGS).fetchall():
        by_card[passcode].append({"id": rid, "effect": effect, "events": list(events), "flip": flip, "can": can,
                                  "date": date})
    return by_card


def citations(con: duckdb.DuckDBPyConnection, record_ids: list[str]) -> dict[str, dict]:
    """``{record id: {"source", "dates", "section", "text"}}`` of the current
    records ``record_ids``: dates their valid own and heading dates
    (``YYYY-MM-DD``, sorted), text an excerpt (:func:`pipeline.records.excerpt`)."""
    return {rid: {"source": source, "dates": sorted(dates or []), "section": section or "", "text": excerpt(text or "")}
            for rid, source, section, text, dates in con.execute(_CITATIONS, {"ids": record_ids}).fetchall()}


def _effects(passcode: int, rows: list[tuple], kinds: dict[tuple, list[str]]) -> list[dict]:
    """A card's effects from its ``card_effects`` rows (pipeline/cardtables.py) and their kinds."""
    effects = []
    for _p, part, effect, _ord, ja, zh, zh_tw, en in rows:
        depends_on = kinds.get((passcode, part, effect), [])
        if not effect and not depends_on:
            continue  # the text before the first number: only when it carries a dependency
        effects.append({"part": part, "effect": effect, "text": zh or zh_tw or ja or en or "",
                        "depends_on": depends_on})
    return effects


def effects_of(card: CardText) -> list[dict]:
    """A card's effects as :func:`_effects` gives them, read from its text
    (:func:`pipeline.cardtext.card_effects`): for a card of one's own (tests)."""
    rows, kinds = [], {}
    for e in card.effects:
        t = e.texts
        rows.append((card.passcode, e.part, e.effect, e.ord, t.get("ja"), t.get("zh-community") or t.get("zh-CN"),
                     t.get("zh-TW"), t.get("en")))
        kinds[(card.passcode, e.part, e.effect)] = e.kinds_of("this_card")
    return _effects(card.passcode, rows, kinds)


def _card_entry(card: CardText, effects: list[dict], rulings: list[dict]) -> dict | None:
    numbers: dict[str, str] = {}
    for e in effects:
        numbers.setdefault(e["effect"], e["part"])  # a number of the monster text first, then the pendulum's
    kept = [{**r, "part": numbers[r["effect"]]} for r in rulings if r["effect"] in numbers]
    if not kept and not any(e["depends_on"] for e in effects):
        return None
    texts = " ".join(card.text.get(k, "") for k in ("ja", "zh-CN", "zh-community"))
    name = {"zh": card.name.get("zh-community") or card.name.get("zh-CN") or card.name.get("zh-TW") or "",
            "ja": card.name.get("ja", ""), "en": card.name.get("en", "")}
    kept.sort(key=lambda r: (r["part"], r["effect"], r["date"] or "", r["id"], r["events"], r["flip"]))
    return {"konami_id": card.konami_id, "name": name,
            "can_normal_summon": False if _CANNOT_NORMAL_SUMMON.search(texts) else None,
            "effects": effects, "rulings": kept}


def _cards_of(text_rows: list[tuple]) -> dict[int, CardText]:
    """Cards (names, texts, Konami id) from ``card_texts`` rows (passcode, konami_id, language, name, text, pendulum)."""
    cards: dict[int, CardText] = {}
    for passcode, konami_id, language, name, text, pendulum in text_rows:
        card = cards.setdefault(passcode, CardText(passcode, konami_id, {}, {}, {}))
        if name:
            card.name[language] = name
        if text:
            card.text[language] = text
        if pendulum:
            card.pendulum[language] = pendulum
    return cards


def _table_rows(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """The three card-text tables of ``con`` as rows in the columns of :data:`pipeline.cardtables.COLUMNS`."""
    from .cardtables import COLUMNS

    return {table: con.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall()
            for table, names in COLUMNS.items()}


def card_table(con: duckdb.DuckDBPyConnection, rows: dict[str, list[tuple]] | None = None) -> dict:
    """The card table (see the module docstring) from the database ``con``
    (effect_rulings, records and record_dates) and the card-text rows
    ``rows`` (:func:`pipeline.cardtables.card_table_rows`, which a build
    computes once for its tables and this), by default the database's own
    tables ``card_texts``, ``card_effects`` and ``effect_dependencies``.
    Only what an effect depends on of the card itself counts (a dependency
    of subject ``other``, 『この効果で特殊召喚したモンスター』, is another
    monster's)."""
    rows = _table_rows(con) if rows is None else rows
    cards = _cards_of(rows["card_texts"])
    kinds: dict[tuple, set[str]] = defaultdict(set)
    for passcode, part, effect, kind, _lang, _words, subject in rows["effect_dependencies"]:
        if subject in (None, "this_card"):
            kinds[(passcode, part, effect)].add(kind)
    sorted_kinds = {key: sorted(v) for key, v in kinds.items()}
    by_card: dict[int, list[tuple]] = defaultdict(list)
    for row in sorted(rows["card_effects"], key=lambda r: (r[0], r[1] == "pendulum", r[3])):
        by_card[row[0]].append(row)
    rulings = effect_rulings(con)
    table, cited = {}, set()
    for passcode in sorted(by_card):
        entry = _card_entry(cards[passcode], _effects(passcode, by_card[passcode], sorted_kinds),
                            rulings.get(passcode, []))
        if entry is not None:
            table[str(passcode)] = entry
            cited.update(r["id"] for r in entry["rulings"])
    return {"format": FORMAT, "restricting_kinds": _restricting_kinds(), "cards": table,
            "citations": dict(sorted(citations(con, sorted(cited)).items()))}


def card_table_text(table: dict) -> str:
    """The table as the compact JSON text the engines embed (keys sorted),
    in ASCII (other characters as ``\\uXXXX`` escapes): Python loads an
    ASCII string constant of the module's bytecode by copying it, a text
    with Chinese by decoding it (a tenth of the bundled build's 0.66 MB
    table: 10 M instructions, two thirds of the engine's import)."""
    return json.dumps(table, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
