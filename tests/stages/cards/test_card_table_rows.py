"""The card-table rows a build's helper computes come back packed and
unpack to the rows at each use, staying packed."""

from __future__ import annotations

from pipeline import cardtables
from pipeline.cardtables import card_table_rows, packed_rows, use_card_table_rows
from pipeline.cardtext import card_texts_file, file_version

ROWS = {
    "card_texts": [(99990001, 99991, "ja", "星辰試験竜", "①：このカード…", None)] * 500,
    "card_effects": [(99990001, "monster", "①", 1, "①：このカード…", "①：这张卡…", None, None)],
    "effect_dependencies": [(99990001, "monster", "①", "synchro_summoned", "ja", "Ｓ召喚した", "this_card")],
}


def test_packed_rows_unpack_to_the_rows_at_each_use(monkeypatch):
    path = card_texts_file()
    monkeypatch.setattr(cardtables, "_known", {})
    monkeypatch.setattr(cardtables, "_card_table_rows", lambda version: ROWS)
    version, packed = packed_rows(path)  # in a build: the helper process
    assert version == file_version(path) and isinstance(packed, bytes)
    assert len(packed) < 2_000  # 500 equal rows compress to little
    monkeypatch.setattr(cardtables, "_known", {})
    monkeypatch.setattr(cardtables, "_card_table_rows", lambda version: {"read again": version})
    use_card_table_rows(version, packed)  # in a build: the build process
    assert cardtables._known == {version: packed}  # held packed until the finish reads them
    first = card_table_rows(path)
    assert first == ROWS and card_table_rows(path) == ROWS
    assert card_table_rows(path) is not first  # unpacked again: no use keeps them
    assert cardtables._known == {version: packed}  # still packed: the rows go once used


def test_rows_packed_for_another_version_of_the_file_are_not_used(monkeypatch):
    path = card_texts_file()
    monkeypatch.setattr(cardtables, "_known", {})
    monkeypatch.setattr(cardtables, "_card_table_rows", lambda version: {"read from": version})
    use_card_table_rows((str(path), -1, -1), b"not even rows")
    assert card_table_rows(path) == {"read from": file_version(path)}
    assert list(cardtables._known) == [file_version(path)]
