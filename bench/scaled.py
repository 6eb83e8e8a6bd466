"""A scaled corpus: the bundled pages copied round-robin to N pages.

Copy ``i`` of a page gets the source id ``<id>-x<i>`` and one small text
change (a line ``(copy i)`` at the end of its content), so no two pages have
the same bytes or the same record ids and nothing can be deduplicated away.
"""

from __future__ import annotations

import csv
from pathlib import Path

from pipeline.corpus import BUNDLED_CORPUS, COLUMNS, MANIFEST_NAME, load_manifest


def _changed(text: str, fmt: str, copy: int) -> str:
    """The page text with one extra line at the end of its content."""
    mark = f"(copy {copy})"
    if fmt == "html":
        for closer in ("</article>", "</main>", "</body>"):
            at = text.rfind(closer)
            if at >= 0:
                return f"{text[:at]}<p>{mark}</p>\n{text[at:]}"
    return f"{text.rstrip()}\n\n{mark}\n"


def make_scaled_corpus(dest: Path, pages: int, source: Path = BUNDLED_CORPUS) -> tuple[int, int]:
    """Write a corpus of ``pages`` pages to ``dest``; returns (pages, bytes).

    Pages cycle through the manifest of ``source`` in order, so the scaled
    corpus has the same mix of languages and formats as the bundled one.
    """
    dest = Path(dest)
    sources = load_manifest(source)
    texts = {s.id: s.snapshot.read_text(encoding="utf-8") for s in sources}
    (dest / "pages").mkdir(parents=True, exist_ok=True)
    total = 0
    with (dest / MANIFEST_NAME).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        writer.writerow(COLUMNS)
        for i in range(pages):
            src = sources[i % len(sources)]
            sid = f"{src.id}-x{i:05d}"
            rel = f"pages/{i:05d}-{Path(src.path).name}"
            data = _changed(texts[src.id], src.format, i).encode("utf-8")
            (dest / rel).write_bytes(data)
            total += len(data)
            writer.writerow([sid, src.url, src.language, src.script, src.region, src.format, src.licence, rel,
                             "no", f"scaled copy {i} of {src.id}"])
    return pages, total
