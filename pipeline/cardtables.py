"""The card-text tables of a build: ``card_texts``, ``card_effects`` and
``effect_dependencies`` (``schema/ddl.sql``), from the bundled texts
(:func:`pipeline.cardtext.load_card_texts`), written at a build's commit."""

from __future__ import annotations

from functools import lru_cache

import duckdb

from .cardtext import TEXT_LANGUAGES, CardText, load_card_texts

COLUMNS = {
    "card_texts": ("passcode", "konami_id", "language", "name", "text", "pendulum_effect"),
    "card_effects": ("passcode", "part", "effect", "ord", "text_ja", "text_zh", "text_zh_tw", "text_en"),
    "effect_dependencies": ("passcode", "part", "effect", "info_kind", "language", "words", "subject"),
}
INTEGER_COLUMNS = {"passcode", "konami_id", "ord"}


def _text_rows(card: CardText) -> list[tuple]:
    return [(card.passcode, card.konami_id, lang, card.name.get(lang), card.text.get(lang), card.pendulum.get(lang))
            for lang in TEXT_LANGUAGES if card.text.get(lang) or card.name.get(lang)]


@lru_cache(maxsize=1)
def card_table_rows() -> dict[str, list[tuple]]:
    """Rows of the three tables (tuples in :data:`COLUMNS` order) for every
    bundled card, by passcode; computed once per process (about a second:
    the Traditional texts are converted to be read)."""
    rows: dict[str, list[tuple]] = {name: [] for name in COLUMNS}
    for passcode, card in sorted(load_card_texts().items()):
        rows["card_texts"].extend(_text_rows(card))
        for e in card.effects:
            t = e.texts
            rows["card_effects"].append((passcode, e.part, e.effect, e.ord, t.get("ja"),
                                         t.get("zh-community") or t.get("zh-CN"), t.get("zh-TW"), t.get("en")))
            rows["effect_dependencies"].extend((passcode, e.part, e.effect, d.info_kind, d.language, d.words, d.subject)
                                               for d in e.depends_on)
    return rows


def insert_card_texts(con: duckdb.DuckDBPyConnection) -> None:
    """Fill the three tables from :func:`card_table_rows`, handed to DuckDB
    as NumPy columns (as ``card_names`` is)."""
    import numpy as np  # only a build's final commit needs it

    for table, rows in card_table_rows().items():
        if not rows:
            continue
        names = COLUMNS[table]
        cols = {name: np.array([r[i] for r in rows], dtype=object) for i, name in enumerate(names)}
        view = f"{table}_columns"
        con.register(view, cols)
        try:
            select = ", ".join(f"CAST({n} AS INTEGER)" if n in INTEGER_COLUMNS else f"CAST({n} AS VARCHAR)"
                               for n in names)
            con.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {select} FROM {view}")
        finally:
            con.unregister(view)
