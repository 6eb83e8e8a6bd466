"""Write ``corpus/data/card-names.tsv.gz`` and ``card-quoted-names.tsv.gz``
from the card-text data set.

    python corpus/data/make_card_names.py ../shared/cards/card-texts.jsonl

The input is one JSON object per card (YAML Yugi, DawnbrandBots/yaml-yugi,
with the OurOCG names of DawnbrandBots/yaml-yugi-zh as ``zh-community``);
the output keeps its names and ids only (no effect texts): one row per
(Konami id, passcode) in file order, columns ``konami_id``, ``password``
(empty for the cards that have none), ``en``, ``ja``, ``zh-CN``,
``zh-TW``, ``ko``, ``zh-community``, ``card_type``. gzip with mtime 0, so
the same input writes the same bytes.

``card-quoted-names.tsv.gz``: the Chinese names card texts quote for other
cards (the community texts write 「新空间侠·黑暗豹」 where the card's own
community name is another), columns ``konami_id``, ``name``, ``votes``.
A card's Japanese text and its Chinese text (``zh-community``, ``zh-CN``)
are aligned when they quote as many 「names」; the i-th Chinese quote names
the card whose Japanese name (NFKC) is the i-th Japanese quote, when exactly
one card has that name. A Chinese name kept is one every alignment gives the
same card, without kana, and near one of that card's Chinese names
(rapidfuzz ratio >= 60: 新空间侠·黑暗豹 and 新宇宙侠·黑暗豹), and not
the start of two cards' names (a series: 银河眼); names of any card are
left out (the name table has them).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

COLUMNS = ("konami_id", "password", "en", "ja", "zh-CN", "zh-TW", "ko", "zh-community", "card_type")
OUT = Path(__file__).resolve().parent / "card-names.tsv.gz"
QUOTED_OUT = Path(__file__).resolve().parent / "card-quoted-names.tsv.gz"
QUOTE = re.compile(r"「([^「」]{1,60})」")
KANA = re.compile("[\u3040-\u30ff]")


def rows(path: Path):
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            card = json.loads(line)
            names = card.get("name") or {}
            yield {"konami_id": card.get("konami_id") or "", "password": card.get("password") or "",
                   **{k: (names.get(k) or "").strip() for k in COLUMNS[2:8]}, "card_type": card.get("card_type") or ""}


def _texts(card: dict, language: str) -> str:
    return "\n".join(((card.get(k) or {}).get(language) or "") for k in ("pendulum_effect", "text"))


def quoted_names(path: Path) -> list[tuple[int, str, int]]:
    """(konami_id, Chinese name, votes) of the names card texts quote for
    other cards, aligned with the Japanese texts (see the module's text)."""
    cards = [json.loads(line) for line in path.open(encoding="utf-8")]
    by_ja: dict[str, set[int]] = defaultdict(set)
    own: set[str] = set()
    for card in cards:
        if card.get("konami_id") and (card.get("name") or {}).get("ja"):
            by_ja[unicodedata.normalize("NFKC", card["name"]["ja"])].add(card["konami_id"])
        own.update(n for n in (card.get("name") or {}).values() if n)
    votes: dict[str, Counter] = defaultdict(Counter)
    for card in cards:
        ja = QUOTE.findall(_texts(card, "ja"))
        for language in ("zh-community", "zh-CN"):
            zh = QUOTE.findall(_texts(card, language))
            if not ja or len(ja) != len(zh):
                continue
            for ja_name, zh_name in zip(ja, zh):
                kids = by_ja.get(unicodedata.normalize("NFKC", ja_name), set())
                if len(kids) == 1 and zh_name.strip() and zh_name not in own:
                    votes[zh_name.strip()][next(iter(kids))] += 1
    from rapidfuzz import fuzz

    zh_names = {card["konami_id"]: [n for k, n in (card.get("name") or {}).items() if k.startswith("zh") and n]
                for card in cards if card.get("konami_id")}
    all_zh = sorted({n for names in zh_names.values() for n in names})
    kept = []
    for name, counts in votes.items():
        if len(counts) != 1 or KANA.search(name) or sum(n.startswith(name) for n in all_zh) >= 2:
            continue  # two cards' names start with it: a series name (「银河眼」), no card
        kid = next(iter(counts))
        if max((fuzz.ratio(name, n) for n in zh_names.get(kid, [])), default=0) >= 60:
            kept.append((kid, name, counts.total()))
    return sorted(kept)


def _write(path: Path, columns: tuple[str, ...], rows) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t", lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode("utf-8"))


def main(source: str) -> None:
    quoted = quoted_names(Path(source))
    _write(QUOTED_OUT, ("konami_id", "name", "votes"), quoted)
    print(f"{QUOTED_OUT}: {len(quoted)} quoted names")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows(Path(source)):
        writer.writerow(row)
        count += 1
    with OUT.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode("utf-8"))
    print(f"{OUT}: {count} cards")


if __name__ == "__main__":
    main(sys.argv[1])
