"""The bundled build stores card texts, their effects and dependencies, and
cites each card_text effect."""

from __future__ import annotations

import duckdb

from pipeline.cardtext import load_card_texts
from pipeline.compile import info_kinds


def test_the_build_stores_card_texts_effects_and_dependencies_and_cites_each_card_text_effect(built):
    _, db, _ = built
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT passcode) FROM card_texts").fetchone()[0] == len(load_card_texts())
        deps = con.execute("SELECT DISTINCT info_kind FROM effect_dependencies WHERE passcode = 19048328 "
                           "AND effect = '②'").fetchall()
        assert deps == [("synchro_summoned",)]
        rows = con.execute("SELECT s.effect, s.passcode, e.effect FROM statements s LEFT JOIN card_effects e "
                           "ON e.passcode = s.passcode AND e.effect = coalesce(s.effect, '') AND e.part = 'monster' "
                           "WHERE s.basis = 'card_text'").fetchall()
        # a card without numbered effects (a Trap whose text is one effect) cites its one effect, "" (stored NULL)
        assert rows and all(passcode and cited is not None and cited == (effect or "") for effect, passcode, cited in rows)
        assert set(con.execute("SELECT DISTINCT info_kind FROM effect_dependencies").fetchall()) <= {
            (k,) for k in info_kinds()}
