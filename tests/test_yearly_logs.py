"""The yearly ruling logs (c06 2019 and 2020): dates, channels, status,
official FAQ ids and card passcodes, checked on the bundled build."""

import duckdb
import pytest
import lxml.html

from pipeline.corpus import BUNDLED_CORPUS
from pipeline.extract import split_sentences
from pipeline.normalize import _line_from

LOGS = {"ocg-rule-c06-rulings-2019": "pages/ocg-rule/c06-rulings-2019.html",
        "ocg-rule-c06-rulings-2020": "pages/ocg-rule/c06-rulings-2020.html"}


@pytest.fixture(scope="module")
def con(built):
    return duckdb.connect(str(built[1]), read_only=True)


def test_records_per_page(con):
    counts = dict(con.execute("SELECT source_id, count(*) FROM records WHERE source_id IN (SELECT unnest(?)) "
                              "GROUP BY 1", [list(LOGS)]).fetchall())
    assert counts == {"ocg-rule-c06-rulings-2019": 1623, "ocg-rule-c06-rulings-2020": 1640}


def test_every_ruling_has_a_date(con):
    """Every record under a day heading has a valid date (its own date link or
    the day heading's); the only undated records are the page notes directly
    under the year heading ("由于部分调整可能有变动...")."""
    undated = con.execute("""SELECT source_id, section_path FROM records
                             WHERE source_id IN (SELECT unnest(?))
                               AND record_id NOT IN (SELECT record_id FROM record_dates WHERE valid)
                             ORDER BY ALL""", [list(LOGS)]).fetchall()
    assert undated == [("ocg-rule-c06-rulings-2019", "2019"), ("ocg-rule-c06-rulings-2020", "2020"),
                       ("ocg-rule-c06-rulings-2020", "2020")]
    own, heading = con.execute("""SELECT count(*) FILTER (WHERE NOT from_heading), count(*) FILTER (WHERE from_heading)
                                  FROM record_dates d JOIN records r USING (record_id)
                                  WHERE r.source_id IN (SELECT unnest(?)) AND d.valid""", [list(LOGS)]).fetchone()
    assert (own, heading) == (940, 2348)


_HAS_CLASS = "contains(concat(' ', normalize-space(@class), ' '), ' {} ')"


def _struck_sentences(path):
    """Count, independently of the pipeline's block walk, the sentences of the
    page's ruling lines whose text is mostly struck through."""
    root = lxml.html.fromstring((BUNDLED_CORPUS / path).read_bytes())
    count = 0
    for el in root.xpath(f"//article//div[{_HAS_CLASS.format('line')}] | //article//p"):
        if not el.xpath(f".//*[{_HAS_CLASS.format('strike')}]"):
            continue
        line = _line_from(el)
        for a, b in split_sentences(line.text, "zh"):
            chars = [i for i in range(a, b) if not line.text[i].isspace()]
            struck = [i for i in chars if any(s <= i < e for s, e in line.struck)]
            if chars and len(struck) / len(chars) > 0.5:
                count += 1
    return count


@pytest.mark.parametrize("source_id", sorted(LOGS))
def test_superseded_records_are_the_struck_through_rulings(con, source_id):
    superseded = con.execute("SELECT count(*) FROM records WHERE source_id = ? AND status = 'superseded'",
                             [source_id]).fetchone()[0]
    assert superseded == _struck_sentences(LOGS[source_id])
    assert superseded > 150


HAND_PICKED = [
    # text prefix, date, from heading, channel, status, FAQ id, (card, passcode)
    ("「儚无水木」的效果不能在结束阶段发动。", "2019-01-11", False, "database", "current", "22395", ("儚无水木", 60643553)),
    ("「No.66 霸键甲虫」的效果处理时，对象卡片变成里侧表示", "2019-01-07", True, "email", "current", None, ("No.66 霸键甲虫", None)),
    ("「连锁破坏」「死之卡组破坏病毒」等把卡组的卡片破坏的效果，在「次元要塞兵器」", "2019-01-20", True, "reconfirmed", "superseded", None, ("灰流丽", 14558127)),
    ("「流星日珥」调整中。", "2019-03-17", False, "wiki", "pending", None, ("流星日珥", None)),
]


@pytest.mark.parametrize("prefix, date, from_heading, channel, status, faq_id, card", HAND_PICKED,
                         ids=[h[0][:12] for h in HAND_PICKED])
def test_hand_picked_records(con, prefix, date, from_heading, channel, status, faq_id, card):
    row = con.execute("""SELECT r.record_id, r.channel, r.status, d.date::VARCHAR, d.from_heading, d.faq_id
                         FROM records r JOIN record_dates d USING (record_id)
                         WHERE r.text LIKE ? || '%' AND d.valid ORDER BY r.source_id, r.seq LIMIT 1""",
                      [prefix]).fetchone()
    assert row is not None, prefix
    rid = row[0]
    assert row[1:] == (channel, status, date, from_heading, faq_id)
    passcode = con.execute("SELECT passcode FROM card_mentions WHERE record_id = ? AND name = ?", [rid, card[0]]).fetchone()
    assert passcode == (card[1],)


def test_rulings_by_passcode_or_english_name(con):
    by_passcode = con.execute("SELECT count(DISTINCT record_id) FROM card_mentions WHERE passcode = 14558127").fetchone()[0]
    by_name = con.execute("SELECT count(DISTINCT record_id) FROM card_mentions WHERE name_en = 'Ash Blossom & Joyous Spring'").fetchone()[0]
    assert by_passcode == by_name > 3


def test_unlinked_mentions_stay_visible(con):
    total, linked = con.execute("SELECT count(*), count(passcode) FROM card_mentions").fetchone()
    assert 0.4 < linked / total < 0.9
    # A community name that differs from the official one is not forced onto a card.
    assert con.execute("SELECT count(*) FROM card_mentions WHERE name = '旋风' AND passcode IS NOT NULL").fetchone()[0] == 0
