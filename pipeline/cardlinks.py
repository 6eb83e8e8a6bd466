"""Card mentions linked to passcodes: the one place a mention gets its card.

Takes a record's card mentions (:class:`~pipeline.records.CardMention`, as
extract found them) and its source; gives the rows of ``card_mentions``
(:func:`mention_rows`: passcode, Konami id, English name, how it was linked,
the name in simplified script and its match key), linked through the card
index of ``corpus/data/card-names.tsv.gz`` (:func:`pipeline.cards.card_index`).
Also the rows of ``card_names`` (:func:`card_name_rows`, every name of every
card with the key a mention is matched by) and their insert
(:func:`insert_card_names`).
"""

from __future__ import annotations

import duckdb

from .cards import CardLink, card_entries, card_index, card_name_key, loose_key
from .chinese import name_key, to_simplified
from .corpus import Source
from .records import Record

UNLINKED = CardLink(None, None, None)


def mention_rows(record: Record, source: Source | None) -> list[dict]:
    """The ``card_mentions`` rows of ``record``, in mention order: a
    mention of kind ``card`` with the card the annotate pass linked it to
    (:meth:`pipeline.cards.CardIndex.link`); a mention read back from a
    database (a page whose stored records are kept) is linked here by the
    same lookup, so it follows the card names of this version; other kinds,
    e.g. an archetype, stay unlinked; its name in simplified
    script (extract's, else converted with the source's script and region;
    as written when the source is unknown) and that name's match key."""
    rows = []
    for i, c in enumerate(record.cards):
        link = c.link if c.link is not None else card_index().link(c.name) if c.kind == "card" else UNLINKED
        norm = c.norm_name or (to_simplified(c.name, source.script, source.region) if source else c.name)
        rows.append({
            "record_id": record.id, "ord": i, "name": c.name, "norm_name": norm, "match_key": name_key(norm, "Hans"),
            "url": c.url, "passcode": link.passcode, "name_en": link.name_en, "linked_by": link.linked_by,
            "name_source": link.name_source, "kind": c.kind, "quote": c.quote, "konami_id": link.konami_id})
    return rows


def card_name_rows() -> tuple[tuple[int | None, int, str, str, str, str], ...]:
    """Rows of ``card_names`` (passcode, konami_id, language, name,
    name_key, loose_key): every name of every card of ``corpus/data/card-names.tsv.gz``
    (:func:`pipeline.cards.card_entries`), once per passcode of the card
    (passcode None for a card without one), with its key
    (:func:`pipeline.cards.card_name_key`; a Chinese name's as the card
    index computed it). About 90,000 rows (14 MB, 0.6 s): computed at each call, not kept, as a
    build's commit needs them once and its peak memory comes after."""
    zh_keys = card_index().zh_keys  # made with the index, in a build's helper process (1 s of OpenCC)

    def key(language: str, name: str) -> str:
        known = zh_keys.get(name) if language.startswith("zh") else None
        return known if known is not None else card_name_key(language, name)

    rows = []
    for kid, entry in sorted(card_entries().items()):
        names = sorted(set(entry.names.items()) | set(entry.also))
        for passcode in sorted(entry.passcodes) or [None]:
            rows += [(passcode, kid, language, name, k, loose_key(k))
                     for language, name in names for k in (key(language, name),)]
    return tuple(rows)


def insert_card_names(con: duckdb.DuckDBPyConnection) -> None:
    """Fill ``card_names`` from :func:`card_name_rows`, handed to DuckDB as
    NumPy columns (a replacement scan: 0.1 s, where NDJSON took 0.8 s; a
    missing passcode goes as -1 and is stored as NULL)."""
    import numpy as np  # only a build's final commit needs it

    rows = card_name_rows()
    columns_ = {"passcode": np.array([-1 if r[0] is None else r[0] for r in rows], dtype=np.int32),
                "konami_id": np.array([r[1] for r in rows], dtype=np.int32)}
    for i, name in enumerate(("language", "name", "name_key", "loose_key"), start=2):
        columns_[name] = np.array([r[i] for r in rows], dtype=object)
    con.register("card_name_columns", columns_)
    try:
        con.execute("INSERT INTO card_names SELECT nullif(passcode, -1), konami_id, language, name, name_key, loose_key "
                    "FROM card_name_columns")
    finally:
        con.unregister("card_name_columns")
