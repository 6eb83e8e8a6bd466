"""A refresh of the card texts: fetch the data set's published file again and
rewrite the corpus' card-texts file for the cards the corpus names.

The manifest's ``card-texts`` data row (``yaml-yugi-card-texts``) points at
YAML Yugi's ``cards.json`` (one JSON array of every card, about 100 MB). Its
objects are read one at a time (:func:`iter_cards`), the cards whose
passcode the corpus names kept (those of the file in force and those the
database's card mentions link), their community Chinese texts kept from the
file in force when the fetched object has none (the data set's Chinese
stage is a snapshot), and the file rewritten in place (a temporary file
renamed over it) when its bytes differ. The refresh then rewrites the
``card_texts``, ``card_effects`` and ``effect_dependencies`` tables in its
transaction; the card_text statements of pages that did not change follow
at the next build.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

from .cardtext import load_card_texts, bundle_bytes
from .corpus import Source
from .errors import FetchError

# cards.json is far larger than any page: its own cap (the default page cap is 20 MB).
MAX_CARD_DATA_BYTES = 400 * 1024 * 1024


def iter_cards(body: bytes, place: str) -> Iterator[dict]:
    """The objects of the JSON array ``body``, decoded one at a time (no
    list of every card is built). FetchError naming ``place`` when the body
    is not a JSON array of objects."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FetchError(f"the card data is not UTF-8 (byte {exc.start})", place=place) from None
    decoder = json.JSONDecoder()
    i = _skip(text, 0)
    if i >= len(text) or text[i] != "[":
        raise FetchError("the card data is not a JSON array", place=place)
    i = _skip(text, i + 1)
    if i < len(text) and text[i] == "]":
        return
    while True:
        try:
            obj, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise FetchError(f"the card data is not valid JSON: {exc.msg} at character {exc.pos}", place=place) from None
        if not isinstance(obj, dict):
            raise FetchError(f"the card data holds a {type(obj).__name__} where a card object belongs", place=place)
        yield obj
        i = _skip(text, i)
        if i < len(text) and text[i] == ",":
            i = _skip(text, i + 1)
            continue
        if i < len(text) and text[i] == "]":
            return
        raise FetchError("the card data ends before its array is closed", place=place)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _with_community(obj: dict, known: dict) -> dict:
    """``obj`` with the community Chinese name and texts of the card in force
    where it has none."""
    old = known.get(obj.get("password"))
    if old is None:
        return obj
    obj = dict(obj)
    for key, values in (("name", old.name), ("text", old.text), ("pendulum_effect", old.pendulum)):
        community = values.get("zh-community")
        if community and not (isinstance(obj.get(key), dict) and obj[key].get("zh-community")):
            obj[key] = {**(obj.get(key) if isinstance(obj.get(key), dict) else {}), "zh-community": community}
    return obj


def refresh_card_texts(source: Source, fetcher, passcodes: set[int]) -> tuple[str, str, int]:
    """Fetch ``source`` (a ``card-texts`` data row) with ``fetcher`` and
    rewrite its file for the cards of the file in force and ``passcodes``:
    ``(outcome, reason, cards)``, outcome ``changed`` or ``unchanged``.
    FetchError (from the fetch, or for a body that is not a JSON array of
    cards, or that holds none of the cards: a file that lost them all is no
    update); OSError when the file cannot be written. The file in force
    stays on any error."""
    path = source.snapshot
    known = load_card_texts(path) if path.is_file() else {}
    wanted = set(known) | set(passcodes)
    fetched = fetcher.fetch(source)
    if fetched.data is None:
        return "unchanged", "not modified (HTTP 304)", len(known)
    cards = (_with_community(c, known) for c in iter_cards(fetched.data, source.url))
    data, count = bundle_bytes(cards, wanted)
    if count == 0:
        raise FetchError(f"the card data holds none of the {len(wanted)} cards the corpus names", place=source.url)
    if path.is_file() and path.read_bytes() == data:
        return "unchanged", "same cards and texts", count
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return "changed", f"{count} cards written", count


def named_passcodes(con) -> set[int]:
    """The passcodes the card mentions of the database (connection ``con``) link."""
    return {row[0] for row in con.execute(
        "SELECT DISTINCT passcode FROM card_mentions WHERE passcode IS NOT NULL").fetchall()}


def refresh_data_sources(sources: list[Source], db_path: Path, config, record) -> Path | None:
    """Refresh each ``card-texts`` data source (:func:`refresh_card_texts`)
    with a fetcher of ``config`` whose size cap admits the card data; calls
    ``record(source_id, outcome, reason)`` for each (``failed`` with the
    error: the file in force stays). Returns the file rewritten, if any."""
    from .database import connect
    from .errors import CorpusError
    from .fetch import Fetcher

    if not sources:
        return None
    con = connect(db_path, read_only=True)
    try:
        passcodes = named_passcodes(con)
    finally:
        con.close()
    changed = None
    with Fetcher(dataclasses.replace(config, max_page_bytes=max(config.max_page_bytes, MAX_CARD_DATA_BYTES))) as fetcher:
        for source in sources:
            try:
                outcome, reason, _ = refresh_card_texts(source, fetcher, passcodes)
            except (FetchError, CorpusError) as exc:
                record(source.id, "failed", f"{exc}; the card texts in force stay")
                continue
            except OSError as exc:
                record(source.id, "failed", f"[fetch] {source.id}: cannot write {source.path}: {exc.strerror or exc}; "
                                            f"the card texts in force stay")
                continue
            record(source.id, outcome, reason)
            if outcome == "changed":
                changed = source.snapshot
    return changed
