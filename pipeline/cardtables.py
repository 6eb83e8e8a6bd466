"""The card-text tables of a build: ``card_texts``, ``card_effects`` and
``effect_dependencies`` (``schema/ddl.sql``), from the bundled texts
(:func:`pipeline.cardtext.load_card_texts`), written at a build's commit."""

from __future__ import annotations

import pickle
import zlib
from pathlib import Path

import duckdb

from .cardtext import TEXT_LANGUAGES, CardText, card_texts_file, file_version, load_card_texts

COLUMNS = {
    "card_texts": ("passcode", "konami_id", "language", "name", "text", "pendulum_effect"),
    "card_effects": ("passcode", "part", "effect", "ord", "text_ja", "text_zh", "text_zh_tw", "text_en"),
    "effect_dependencies": ("passcode", "part", "effect", "info_kind", "language", "words", "subject"),
}
INTEGER_COLUMNS = {"passcode", "konami_id", "ord"}


def _text_rows(card: CardText) -> list[tuple]:
    return [(card.passcode, card.konami_id, lang, card.name.get(lang), card.text.get(lang), card.pendulum.get(lang))
            for lang in TEXT_LANGUAGES if card.text.get(lang) or card.name.get(lang)]


# The rows of the latest version of a file read, or packed (:func:`packed_rows`: unpacked at each use).
_known: dict[tuple, dict[str, list[tuple]] | bytes] = {}


def card_table_rows(path: Path) -> dict[str, list[tuple]]:
    """Rows of the three tables (tuples in :data:`COLUMNS` order) for every
    card of the card-texts file ``path``, by passcode; computed once per
    version of the file (about a CPU second: every effect of every card is
    read), or handed over by :func:`use_card_table_rows`."""
    version = file_version(path)
    rows = _known.get(version)
    if isinstance(rows, bytes):  # unpacked at each use (0.1 s), not kept: a build's finish holds them only then
        return pickle.loads(zlib.decompress(rows))
    if rows is None:
        _known.clear()
        rows = _known[version] = _card_table_rows(version)
    return rows


def packed_rows(path: Path) -> tuple[tuple, bytes]:
    """(file version, :func:`card_table_rows` pickled and compressed) of
    ``path``: what a build's helper process computes while the build loads
    spaCy (:func:`pipeline.workers._warm_up`). Packed, the build process
    holds 4 MB all build long where the rows take 23 MB (the bundled texts:
    40,000 rows); they are unpacked at each use (0.1 s: the card table, the
    commit) and dropped after it."""
    rows = card_table_rows(path)
    return file_version(path), zlib.compress(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL), 1)


def use_card_table_rows(version: tuple, packed: bytes) -> None:
    """Take the rows another process computed for ``version`` of a card-texts file (:func:`packed_rows`)."""
    _known.clear()
    _known[version] = packed


def _card_table_rows(version: tuple) -> dict[str, list[tuple]]:
    rows: dict[str, list[tuple]] = {name: [] for name in COLUMNS}
    for passcode, card in sorted(load_card_texts(Path(version[0])).items()):
        rows["card_texts"].extend(_text_rows(card))
        for e in card.effects:
            t = e.texts
            rows["card_effects"].append((passcode, e.part, e.effect, e.ord, t.get("ja"),
                                         t.get("zh-community") or t.get("zh-CN"), t.get("zh-TW"), t.get("en")))
            rows["effect_dependencies"].extend((passcode, e.part, e.effect, d.info_kind, d.language, d.words, d.subject)
                                               for d in e.depends_on)
    return rows


def insert_card_texts(con: duckdb.DuckDBPyConnection, path: Path | None = None) -> None:
    """Fill the three tables from :func:`card_table_rows` of ``path`` (the
    file this process reads by default: :func:`pipeline.cardtext.card_texts_file`),
    handed to DuckDB as NumPy columns (as ``card_names`` is)."""
    import numpy as np  # only a build's final commit and a refresh of the texts need it

    for table, rows in card_table_rows(Path(path or card_texts_file())).items():
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
