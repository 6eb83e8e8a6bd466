"""The bundled site, checked against the pages themselves: every date stamp
of every page is a valid date of that page's records (counted independently
of the pipeline), and every record is a whole ruling."""

from __future__ import annotations

import re
from collections import Counter

import duckdb
import lxml.html
import pytest

from pipeline.corpus import load_manifest
from pipeline.schema import channel_labels, markers

STAMP = re.compile(r"(?<![\d/.:])\d{1,2}/\d{1,2}/\d{1,2}(?![\d/])")
HTML_SOURCES = [s for s in load_manifest() if s.format == "html"]


@pytest.fixture(scope="module")
def con(built):
    return duckdb.connect(str(built[1]), read_only=True)


def page_stamps(source) -> Counter:
    """The YY/M/D stamps of the page's article text (date links included),
    read with lxml alone: heading anchors dropped, links kept apart."""
    root = lxml.html.fromstring(source.snapshot.read_bytes())
    [article] = root.xpath("//article[@role='main']")
    for anchor in article.xpath(".//*[contains(concat(' ', normalize-space(@class), ' '), ' headerlink ')]"):
        anchor.drop_tree()
    for link in article.iter("a"):
        link.tail = " " + (link.tail or "")
    return Counter(STAMP.findall(article.text_content()))


@pytest.mark.parametrize("source", HTML_SOURCES, ids=[s.id for s in HTML_SOURCES])
def test_every_date_stamp_of_the_page_is_a_valid_date_of_its_records(con, source):
    stored = con.execute("""SELECT d.raw, d.valid FROM record_dates d JOIN records r USING (record_id)
                            WHERE r.source_id = ? AND NOT d.from_heading""", [source.id]).fetchall()
    stamps = Counter(raw for raw, _ in stored if STAMP.fullmatch(raw))
    assert stamps == page_stamps(source)  # none lost, none that is not on the page
    assert all(valid for raw, valid in stored if STAMP.fullmatch(raw))


def test_the_site_has_thousands_of_dated_rulings(con):
    total = sum(sum(page_stamps(s).values()) for s in HTML_SOURCES)
    assert total > 3500
    dated = con.execute("SELECT count(DISTINCT record_id) FROM record_dates WHERE valid AND kind <> 'reference'"
                        ).fetchone()[0]
    assert dated > 8000  # own stamps and yearly-log day headings


def test_every_record_is_a_whole_ruling(con):
    labels = "|".join(map(re.escape, list(channel_labels()) + markers()["example_labels"]))
    only_marks = re.compile(rf"^[\W_]*$|^[\s\d/.:：,，。()（）\-|]*$|^\s*(?:{labels})\s*[:：]?\s*$", re.I)
    bad = []
    for rid, source_id, text in con.execute("SELECT record_id, source_id, text FROM records").fetchall():
        opened = text.count("「") - text.count("」"), text.count("『") - text.count("』")
        if only_marks.match(text) or text.startswith(("」", "』")) or any(n > 0 for n in opened):
            bad.append((source_id, text[:60]))
    assert bad == []
