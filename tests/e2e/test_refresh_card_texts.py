"""`rulings refresh` keeps the card texts current from the data set's
published file (YAML Yugi's cards.json), served here by a local server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from conftest import make_corpus
from pipeline.cardrefresh import iter_cards
from pipeline.cardtext import load_card_texts
from pipeline.errors import FetchError
from pipeline.fetch import FetchConfig
from pipeline.refresh import refresh

DATA = "yaml-yugi-card-texts"
PAGE = "ocg-rule-c03-face-down-temp-banish"
CHAOFENG = 19048328
NEW_TWO = "②：このカードが召喚・特殊召喚に成功したターンのエンドフェイズに発動できる。デッキからチューナー１体を手札に加える。"


class Handler(BaseHTTPRequestHandler):
    body = b"[]"

    def do_GET(self):  # noqa: N802 - the standard library's name
        if self.path != "/cards.json":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def corpus_on(dest: Path, url: str) -> Path:
    corpus = make_corpus(dest, [PAGE, DATA])
    manifest = corpus / "manifest.tsv"
    rows = []
    for line in manifest.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if cols[0] == DATA:
            cols[1] = f"{url}/cards.json"
        elif cols[0] == PAGE:
            cols[8] = "no"  # only the card data is fetched
        rows.append("\t".join(cols))
    manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return corpus


def published(ja_two: str) -> bytes:
    """cards.json as YAML Yugi publishes it: ruby in Japanese names, no community Chinese, every card."""
    old = load_card_texts()[CHAOFENG]
    ja = old.text["ja"].split("②：")[0] + ja_two + "③：" + old.text["ja"].split("③：")[1]
    cards = [{"konami_id": old.konami_id, "password": CHAOFENG, "card_type": "Monster",
              "name": {"en": old.name["en"], "ja": "<ruby>幻竜星<rt>げんりゅうせい</rt></ruby>－チョウホウ",
                       "ko": "환룡성-조우호"},
              "text": {"en": old.text["en"], "ja": ja, "zh-CN": old.text["zh-CN"]}},
             {"konami_id": 1, "password": 12345, "name": {"en": "Not In The Corpus"}, "text": {"ja": "なし。"}}]
    return json.dumps(cards, ensure_ascii=False).encode("utf-8")


def config() -> FetchConfig:
    return FetchConfig(rate_limit=0, timeout=5.0, retries=1, backoff=0.01, sleep=lambda s: None)


def outcome(result, sid):
    return next(o for o in result.outcomes if o.source_id == sid)


def test_a_refresh_rewrites_the_card_texts_and_their_tables(server, tmp_path):
    corpus = corpus_on(tmp_path / "corpus", server)
    db, engine = tmp_path / "rulings.duckdb", tmp_path / "ocg_rules.py"
    Handler.body = published(NEW_TWO)
    result = refresh(corpus, db, engine, config=config())
    assert outcome(result, DATA).outcome == "changed"
    texts = load_card_texts(corpus / "data" / "card-texts.jsonl.gz")
    assert list(texts) == [CHAOFENG]  # the cards the corpus names, as published now
    card = texts[CHAOFENG]
    assert card.name["ja"] == "幻竜星－チョウホウ" and "ko" not in card.name
    assert card.name["zh-community"] == "幻龙星-嘲风"  # kept from the texts in force
    with duckdb.connect(str(db), read_only=True) as con:
        kinds = con.execute("SELECT DISTINCT info_kind FROM effect_dependencies WHERE passcode = ? AND effect = '②' "
                            "AND language = 'ja'", [CHAOFENG]).fetchall()
        assert kinds == [("summoned_this_turn",)]
        assert con.execute("SELECT count(DISTINCT passcode) FROM card_texts").fetchone()[0] == 1
    again = refresh(corpus, db, engine, config=config())
    assert outcome(again, DATA).outcome == "unchanged"


def test_a_malformed_card_file_fails_and_the_texts_in_force_stay(server, tmp_path):
    corpus = corpus_on(tmp_path / "corpus", server)
    before = (corpus / "data" / "card-texts.jsonl.gz").read_bytes()
    Handler.body = b'[{"password": 1}, 5'
    result = refresh(corpus, tmp_path / "rulings.duckdb", tmp_path / "ocg_rules.py", config=config())
    failed = outcome(result, DATA)
    assert failed.outcome == "failed" and "the card texts in force stay" in failed.reason
    assert (corpus / "data" / "card-texts.jsonl.gz").read_bytes() == before


@pytest.mark.parametrize("body, message", [
    (b'{"a": 1}', "not a JSON array"),
    (b'[1, 2]', "holds a int where a card object belongs"),
    (b'[{"a": 1} {"b": 2}]', "ends before its array is closed"),
    (b'\xff', "not UTF-8"),
])
def test_a_card_file_that_is_no_array_of_cards_is_refused(body, message):
    with pytest.raises(FetchError, match=message):
        list(iter_cards(body, "http://x/cards.json"))


def test_the_cards_are_read_one_at_a_time():
    assert list(iter_cards(b' [ {"a": 1} , {"b": [2]} ] ', "x")) == [{"a": 1}, {"b": [2]}]
    assert list(iter_cards(b"[]", "x")) == []
