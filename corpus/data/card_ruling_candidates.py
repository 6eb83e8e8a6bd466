"""Suggest rows for ``corpus/data/card-ruling-names.tsv``: the unlinked card
mentions of a built database, most frequent first, each with the cards
whose names come nearest. Only suggestions: a row goes into the table after
a person has checked it against the card's Japanese name and the rulings
that quote the name (the table is what links mentions; a fuzzy match never
does).

    python corpus/data/card_ruling_candidates.py --db build/rulings.duckdb --limit 100 > candidates.tsv
    make card-ruling-candidates            # the same, on build/rulings.duckdb

Output: tab-separated, columns ``mentions``, ``name``, ``fuzzy`` (the Konami
id :meth:`pipeline.cards.CardIndex.fuzzy` would pick, empty when it leaves
the name alone), ``sample`` (a ruling that quotes the name, cut at 120
characters), then ``candidates``: up to three cards as
``konami_id score en | ja | zh`` (rapidfuzz ratio of the loose keys, 0-100;
zh is the community name, else the official Simplified one).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path


def candidates(db: Path, limit: int, per_name: int = 3) -> list[list[str]]:
    """Rows of the output (see the module's text) for the ``limit`` most
    mentioned unlinked card names of the database at ``db``."""
    from rapidfuzz import fuzz, process

    from pipeline.cards import card_entries, card_index, loose_key
    from pipeline.chinese import name_key
    from pipeline.database import open_database

    index, entries = card_index(), card_entries()
    with open_database(db) as con:
        names = con.execute("SELECT name, count(*) AS n, any_value(r.text) FROM card_mentions m JOIN records r "
                            "USING (record_id) WHERE m.kind = 'card' AND m.konami_id IS NULL GROUP BY 1 "
                            "ORDER BY n DESC, name LIMIT ?", [limit]).fetchall()
    out = []
    for name, count, text in names:
        loose = loose_key(name_key(name))
        picked = index.fuzzy(loose)
        seen: list[str] = []
        cards: set[int] = set()
        for _, score, i in process.extract(loose, index.fuzzy_keys, scorer=fuzz.ratio, limit=4 * per_name):
            card = index.fuzzy_cards[i]
            if card.konami_id in cards:
                continue
            cards.add(card.konami_id)
            names_ = entries[card.konami_id].names
            zh = names_.get("zh-community") or names_.get("zh-CN") or ""
            seen.append(f"{card.konami_id} {score:.0f} {names_.get('en', '')} | {names_.get('ja', '')} | {zh}")
            if len(seen) == per_name:
                break
        at = text.find(name)
        sample = text[max(0, at - 20):at + 100].replace("\n", " ")
        out.append([str(count), name, str(picked.konami_id) if picked else "", sample, *seen])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=Path("build/rulings.duckdb"), help="a built database")
    parser.add_argument("--limit", type=int, default=100, help="how many names (most mentioned first)")
    args = parser.parse_args(argv)
    writer = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    writer.writerow(["mentions", "name", "fuzzy", "sample", "candidates"])
    writer.writerows(candidates(args.db, args.limit))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main()
