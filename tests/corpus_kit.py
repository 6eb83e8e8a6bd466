"""Helpers to write small corpora of hand-made pages (hostile or broken ones)
and to read back what a build stored, for the data-safety tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.corpus import COLUMNS

# A ruling page shaped like the OCG-Rule site: one retention ruling with a date.
GOOD_HTML = """<html><head><title>里侧·一时除外</title></head><body>
<nav class="sidebar-drawer"><a href="../index.html">OCG Rule</a></nav>
<main><h1>里侧·一时除外</h1>
<h2>前言</h2>
<p>里侧的卡片是非公开情报。基本上不能判断卡片的具体种类·等级·攻击力等情报。</p>
<h2>指示物</h2>
<p>放置指示物的卡变成里侧或被一时除外后，指示物全部消失。17/3/24</p>
</main></body></html>
"""
RULING = "放置指示物的卡变成里侧或被一时除外后，指示物全部消失。17/3/24"

OTHER_TEXT = "Battle Position\n\nA monster's battle position can be changed once per turn. Version {n}.\n"


@dataclass
class PageSpec:
    """One manifest row and its page; ``path`` is relative to the corpus folder."""

    id: str
    content: bytes | str
    format: str = "html"
    language: str = "zh"
    script: str = "Hans"
    region: str = "CN"
    url: str = "https://example.org/page"
    licence: str = "test"
    path: str = ""

    def row(self) -> list[str]:
        return [self.id, self.url, self.language, self.script, self.region, self.format, self.licence,
                self.path or self.default_path(), "no", "test page"]

    def default_path(self) -> str:
        ext = {"html": "html", "text": "txt", "markdown": "md"}[self.format]
        return f"pages/{self.id}.{ext}"


def write_corpus(root: Path, pages: list[PageSpec]) -> Path:
    """Write ``root/manifest.tsv`` and each page (pages with an explicit
    ``path`` are not written: the test places them)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(COLUMNS)] + ["\t".join(p.row()) for p in pages]
    (root / "manifest.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for page in pages:
        if page.path:
            continue
        target = root / page.default_path()
        target.parent.mkdir(parents=True, exist_ok=True)
        data = page.content.encode("utf-8") if isinstance(page.content, str) else page.content
        target.write_bytes(data)
    return root


def good_corpus(root: Path, version: int = 1) -> Path:
    """A Chinese HTML ruling page (``ruling-page``) and an English text page
    (``other-page``) whose text names ``version``."""
    return write_corpus(root, [
        PageSpec("ruling-page", GOOD_HTML),
        PageSpec("other-page", OTHER_TEXT.format(n=version), format="text", language="en", script="Latn", region=""),
    ])


def stored_records(db: Path, source_id: str) -> list[tuple]:
    """(record_id, text, dates) of one source, as the database holds them."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            """SELECT r.record_id, r.text, coalesce(list(d.raw ORDER BY d.ord) FILTER (WHERE d.raw IS NOT NULL), [])
               FROM records r LEFT JOIN record_dates d USING (record_id)
               WHERE r.source_id = ? GROUP BY r.record_id, r.text, r.seq ORDER BY r.seq""", [source_id]).fetchall()
    finally:
        con.close()


def db_fingerprint(db: Path) -> tuple:
    """Everything a user reads back: row counts of each table, the rules and the build's rules hash."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        counts = tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                       for t in ("sources", "records", "record_dates", "statements", "rules"))
        rules = con.execute("SELECT info_kind, event, verdict, record_ids FROM rules ORDER BY ALL").fetchall()
        rules_hash = con.execute("SELECT value FROM build_info WHERE key = 'rules_hash'").fetchone()[0]
        return counts, tuple(map(tuple, rules)), rules_hash
    finally:
        con.close()


# --------------------------------------------------------------------------- an independent reading of a site page

HAS_CLASS = "contains(concat(' ', normalize-space(@class), ' '), ' {} ')"


def ruling_lines(html: bytes) -> list[str]:
    """The ruling lines of an OCG-Rule site page read with lxml alone, as a
    reader would list them, to check the pipeline against: every line of a
    line-block, paragraph and list item without blocks inside (its text with
    whitespace collapsed, links kept apart), but block and example labels,
    admonition titles, footnote labels and lines with no word; an example's
    ``例：`` prefix is not its text; a line ending in a comma runs on into the
    next."""
    import re

    import lxml.html

    from pipeline.schema import channel_labels

    root = lxml.html.fromstring(html)
    [article] = root.xpath("//article[@role='main']")
    for el in article.xpath(f".//*[{HAS_CLASS.format('headerlink')} or {HAS_CLASS.format('label')}]"):
        el.drop_tree()
    for link in article.iter("a"):
        if (link.tail or "")[:1].isdigit() or (link.text or "")[:1].isdigit():
            link.tail = " " + (link.tail or "")
    elements = article.xpath(f".//div[{HAS_CLASS.format('line')}] | .//p[not({HAS_CLASS.format('admonition-title')})]"
                             " | .//li[not(.//p) and not(.//div)]")
    labels = set(channel_labels()) | {"例"}
    lines: list[str] = []
    for el in elements:
        text = re.sub(r"\s+", " ", el.text_content()).strip()
        if not re.search(r"[^\W\d_]", text) or re.sub(r"\s*[：:]\s*$", "", text).lower() in labels:
            continue
        text = re.sub(r"^例\s*[：:]\s*", "", text)
        if lines and lines[-1].endswith(("，", "、", ",")):
            lines[-1] += text
        else:
            lines.append(text)
    return lines
