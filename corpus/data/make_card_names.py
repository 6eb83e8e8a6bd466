"""Write ``corpus/data/card-names.tsv.gz`` from the card-text data set.

    python corpus/data/make_card_names.py ../shared/cards/card-texts.jsonl

The input is one JSON object per card (YAML Yugi, DawnbrandBots/yaml-yugi,
with the OurOCG names of DawnbrandBots/yaml-yugi-zh as ``zh-community``);
the output keeps its names and ids only (no effect texts): one row per
(Konami id, passcode) in file order, columns ``konami_id``, ``password``
(empty for the cards that have none), ``en``, ``ja``, ``zh-CN``,
``zh-TW``, ``ko``, ``zh-community``, ``card_type``. gzip with mtime 0, so
the same input writes the same bytes.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from pathlib import Path

COLUMNS = ("konami_id", "password", "en", "ja", "zh-CN", "zh-TW", "ko", "zh-community", "card_type")
OUT = Path(__file__).resolve().parent / "card-names.tsv.gz"


def rows(path: Path):
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            card = json.loads(line)
            names = card.get("name") or {}
            yield {"konami_id": card.get("konami_id") or "", "password": card.get("password") or "",
                   **{k: (names.get(k) or "").strip() for k in COLUMNS[2:8]}, "card_type": card.get("card_type") or ""}


def main(source: str) -> None:
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
