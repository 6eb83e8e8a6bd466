"""``rulings report``: the static site, read back from its files and opened
in headless Chromium (Debian's chromium and chromium-driver, driven with
Selenium; `.ci/run` installs them and sets RULINGS_REQUIRE_BROWSER=1 so a
missing browser fails there instead of skipping)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb
import pytest
from click.testing import CliRunner

from conftest import make_corpus
from pipeline.cards import card_names
from pipeline.cli import main
from pipeline.paths import PROJECT_ROOT
from pipeline.report import Ruling, external_url, slug, text_segments, write_report
from pipeline.run import build
from pipeline.schema import events, info_kinds

SCREENS = PROJECT_ROOT / "build" / "report-screens"
BOOK_OF_MOON = 14087893
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def site(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    summary = write_report(built[1], out)
    return out, built[1], summary


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        if os.environ.get("RULINGS_REQUIRE_BROWSER"):
            pytest.fail("chromium and chromedriver are required (apt-get install chromium chromium-driver)")
        pytest.skip("chromium/chromedriver not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _open(driver, path: Path, width: int = 1280):
    driver.set_window_size(width, 900)
    driver.get(path.as_uri())
    return driver


def _requested_urls(driver) -> list[str]:
    """URLs the browser asked for since the last call (DevTools performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _db(db_path: Path):
    return duckdb.connect(str(db_path), read_only=True)


# --------------------------------------------------------------------------- in the browser

def test_matrix_shows_every_pair_with_the_rules_table_verdict(site, browser):
    out, db_path, _ = site
    _open(browser, out / "index.html")
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('td.cell')).map("
        "c => [c.dataset.kind, c.dataset.event, c.dataset.verdict, c.querySelector('.badge').innerText])")
    with _db(db_path) as con:
        rules = {(k, e): v for k, e, v in con.execute("SELECT info_kind, event, verdict FROM rules").fetchall()}
    assert len(cells) == len(info_kinds()) * len(events())
    assert {(k, e) for k, e, _, _ in cells} == {(k, e) for k in info_kinds() for e in events()}
    for kind, event, verdict, label in cells:
        assert verdict == rules.get((kind, event), "unknown"), (kind, event)
        assert label.split()[-1] in verdict.replace("_", " ")  # the word is there, not only the colour
    assert sum(v == "not_applicable" for _, _, v, _ in cells) >= 2  # link_summoned is never face-down


@pytest.mark.parametrize("kind, event", [("synchro_summoned", "face_down"), ("counters", "temp_banish")])
def test_clicking_a_cell_opens_its_rule_with_the_cited_records(site, browser, kind, event):
    from selenium.webdriver.common.by import By

    out, db_path, _ = site
    _open(browser, out / "index.html")
    browser.find_element(By.CSS_SELECTOR, f'td.cell[data-kind="{kind}"][data-event="{event}"] a').click()
    assert unquote(urlsplit(browser.current_url).path).endswith(f"/rules/{kind}--{event}.html")
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('li.citation')).map(li => li.dataset.recordId)")
    with _db(db_path) as con:
        cited = [r[0] for r in con.execute("SELECT record_id FROM rule_citations WHERE info_kind = ? AND event = ?",
                                           [kind, event]).fetchall()]
        verdict = con.execute("SELECT verdict FROM rules WHERE info_kind = ? AND event = ?", [kind, event]).fetchone()[0]
    assert cited and sorted(shown) == sorted(cited)
    assert verdict.replace("_", " ") in browser.find_element(By.CSS_SELECTOR, ".verdict-line").text


def test_card_page_lists_the_cards_rulings_newest_first(site, browser):
    out, db_path, _ = site
    _open(browser, out / "cards" / f"{BOOK_OF_MOON}.html")
    shown = browser.execute_script("return Array.from(document.querySelectorAll('li.ruling')).map(li => li.id)")
    with _db(db_path) as con:
        expected = {r[0] for r in con.execute(
            "SELECT DISTINCT m.record_id FROM card_mentions m JOIN records r USING (record_id) "
            "WHERE m.passcode = ? AND m.kind = 'card' AND r.retired_run IS NULL", [BOOK_OF_MOON]).fetchall()}
        latest = dict(con.execute(
            "SELECT record_id, max(date) FROM record_dates WHERE valid AND kind <> 'reference' GROUP BY 1").fetchall())
    assert len(expected) > 20 and sorted(shown) == sorted(expected)
    dates = [str(latest.get(rid) or "") for rid in shown]
    assert dates == sorted(dates, reverse=True)
    text = browser.find_element("tag name", "body").text
    assert "Book of Moon" in text and "月之書" in text and str(BOOK_OF_MOON) in text


def test_search_finds_a_card_by_its_traditional_name(site, browser):
    from selenium.webdriver.common.by import By

    out, _, _ = site
    names = card_names()[BOOK_OF_MOON]
    assert names["zh-TW"] != names["zh-CN"]  # 月之書 / 月之书: the script matters
    _open(browser, out / "search.html")
    browser.find_element(By.ID, "q").send_keys(names["zh-TW"])
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#card-results a')).map(a => a.getAttribute('href'))")
    assert links[0] == f"cards/{BOOK_OF_MOON}.html"
    browser.find_element(By.ID, "q").clear()
    browser.find_element(By.ID, "q").send_keys("Book of Moon")
    assert f"cards/{BOOK_OF_MOON}.html" in browser.execute_script(
        "return Array.from(document.querySelectorAll('#card-results a')).map(a => a.getAttribute('href'))")
    rulings = browser.execute_script("return document.querySelectorAll('#ruling-results li').length")
    assert rulings > 0  # English ruling text is searched too


PAGES = ["index.html", "rules/synchro_summoned--face_down.html", f"cards/{BOOK_OF_MOON}.html",
         "sources/ocg-rule-c03-face-down-temp-banish.html", "timeline.html", "history.html", "cards.html",
         "archetypes.html", "search.html", "runs/1.html", "simulators.html"]


@pytest.mark.parametrize("width", [1280, 390])
def test_no_horizontal_scrollbar_and_nothing_from_the_network(site, browser, width):
    out, _, _ = site
    _requested_urls(browser)  # drop earlier entries
    for page in PAGES:
        _open(browser, out / page, width)
        scroll, client = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client, f"{page} at {width}px: {scroll} > {client}"
    requested = _requested_urls(browser)
    assert requested and all(u.startswith("file://") for u in requested), [
        u for u in requested if not u.startswith("file://")]
    if width == 1280:
        SCREENS.mkdir(parents=True, exist_ok=True)
        _open(browser, out / "index.html", width).save_screenshot(str(SCREENS / "index.png"))
        _open(browser, out / PAGES[1], width).save_screenshot(str(SCREENS / "rule-synchro_summoned-face_down.png"))
        assert (SCREENS / "index.png").stat().st_size > 10_000


HOSTILE = ('<script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2"> '
           'and 「<b onmouseover=alert(1)>」')


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    """A database of one English page with a hostile ruling in it."""
    tmp = tmp_path_factory.mktemp("hostile")
    corpus = make_corpus(tmp / "c", ["seed-000-battle-position"], {"seed-000-battle-position": [
        ("- Exception #1: You cannot change", f"- Exception #1: {HOSTILE} You cannot change")]})
    build(corpus, tmp / "r.duckdb", tmp / "e.py")
    return tmp / "r.duckdb"


def test_hostile_ruling_text_shows_as_text(small_db, tmp_path, browser):
    out = tmp_path / "site"
    write_report(small_db, out)
    page = out / "sources" / "seed-000-battle-position.html"
    html = page.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    _open(browser, page)
    assert browser.execute_script("return window.__pwned === undefined")
    assert "<script>window.__pwned = 1</script>" in browser.find_element("tag name", "body").text
    assert browser.execute_script("return document.querySelectorAll('main img, main script, main b').length") == 0
    index = (out / "assets" / "search-index.js").read_text(encoding="utf-8")
    assert index.startswith("window.RULINGS_SEARCH = {") and "<script>window.__pwned" in index  # data, read as JSON


# --------------------------------------------------------------------------- files, without a browser

def test_report_files_and_summary(site):
    out, db_path, summary = site
    with _db(db_path) as con:
        cards = con.execute("SELECT count(DISTINCT passcode) FROM card_mentions m JOIN records r USING (record_id) "
                            "WHERE passcode IS NOT NULL AND m.kind = 'card' AND r.retired_run IS NULL").fetchone()[0]
        sources = con.execute("SELECT count(DISTINCT source_id) FROM records WHERE retired_run IS NULL").fetchone()[0]
    assert summary.cards == cards == len(list((out / "cards").glob("*.html")))
    assert summary.rules == len(info_kinds()) * len(events()) == len(list((out / "rules").glob("*.html")))
    assert summary.sources == sources == len(list((out / "sources").glob("*.html")))
    assert summary.archetypes > 100
    for html in [out / "index.html", *(out / "rules").glob("*.html")]:
        text = html.read_text(encoding="utf-8")
        assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"https?:", text), html


def test_simulators_page_holds_the_comparison_with_every_disagreements_lines(site):
    from pipeline.simulators import comparison

    out, db_path, _ = site
    with _db(db_path) as con:
        rows = comparison(con)
    html = (out / "simulators.html").read_text(encoding="utf-8")
    wrong = [r for r in rows if any(s["agrees"] is False for s in r["simulators"].values())]
    assert wrong and html.count('<section class="sim-pair"') == len(wrong)
    for r in wrong:
        assert f'id="{r["info_kind"]}--{r["event"]}"' in html
        for s in r["simulators"].values():
            if s["agrees"] is False:
                for ev in s["evidence"]:
                    assert f'{ev["file"]}:{ev["line"]}</span>' in html
    assert html.count('<tr><td><a href="rules/') == len(rows) == len(info_kinds()) * len(events())
    assert '<a href="simulators.html">Simulators</a>' in (out / "index.html").read_text(encoding="utf-8")


def test_text_segments_link_quoted_cards_only():
    ruling = Ruling("r1", "s", 0, "", "principle", "current",
                    "「月之书」和「月之书」以及月之书、「冰剑龙 幻冰龙」的效果", cards=[("月之书", 1), ("冰剑龙 幻冰龙", 2)])
    assert text_segments(ruling) == [("「", None), ("月之书", 1), ("」和「", None), ("月之书", 1),
                                     ("」以及月之书、「", None), ("冰剑龙 幻冰龙", 2), ("」的效果", None)]
    plain = Ruling("r2", "s", 0, "", "principle", "current", "no cards <b>here</b>")
    assert text_segments(plain) == [("no cards <b>here</b>", None)]


@pytest.mark.parametrize("url, kept", [
    ("https://ocg-rule.readthedocs.io/x", True), ("http://example.org/a?b=1", True),
    ("javascript:alert(1)", False), (" JavaScript:alert(1)", False), ("data:text/html,x", False),
    ("//evil.example/x", False), ("", False), (None, False), ("http://[::1", False)])
def test_external_links_are_http_only(url, kept):
    assert bool(external_url(url)) is kept


def test_slug_keeps_file_names_inside_the_folder():
    assert slug("ocg-rule-c03-face-down") == "ocg-rule-c03-face-down"
    for hostile in ("..", ".", "../../etc/passwd", "a/b", "a\\b", ".hidden", ""):
        name = slug(hostile)
        assert name and "/" not in name and "\\" not in name and not name.startswith("."), hostile
    assert slug("a.b") != slug("a_b") != slug("a/b")  # distinct ids stay distinct files


def test_cli_report_json_errors_and_same_bytes(small_db, site, tmp_path):
    _, db_path, _ = site
    first, again = tmp_path / "first", tmp_path / "again"
    write_report(small_db, first)
    run = CliRunner().invoke(main, ["report", str(again), "--db", str(small_db), "--json"])
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert summary["rules"] == 105 and summary["sources"] == 1 and summary["files"] > summary["rules"]
    # same database, same site, byte for byte
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (first / rel).read_bytes() == (again / rel).read_bytes(), rel
    run = CliRunner().invoke(main, ["report", str(tmp_path / "out2"), "--db", str(tmp_path / "missing.duckdb")])
    assert run.exit_code == 2 and "no database" in run.stderr
    (tmp_path / "file").write_text("x")
    run = CliRunner().invoke(main, ["report", str(tmp_path / "file"), "--db", str(db_path)])
    assert run.exit_code == 2 and "is a file" in run.stderr


def test_report_never_deletes_a_users_folders(small_db, tmp_path):
    mine = tmp_path / "project"
    (mine / "assets").mkdir(parents=True)
    (mine / "assets" / "logo.png").write_bytes(b"png")
    run = CliRunner().invoke(main, ["report", str(mine), "--db", str(small_db)])
    assert run.exit_code == 2 and "choose a new or empty folder" in run.stderr
    assert (mine / "assets" / "logo.png").read_bytes() == b"png"
    # a site written before is replaced; files the report did not write are kept, in its folders too
    site = tmp_path / "site"
    write_report(small_db, site)
    (site / "notes.txt").write_text("mine")
    (site / "cards").mkdir(exist_ok=True)
    (site / "cards" / "stale.html").write_text("old")
    write_report(small_db, site)
    assert (site / "notes.txt").read_text() == "mine" and (site / "cards" / "stale.html").read_text() == "old"
    run = CliRunner().invoke(main, ["report", "", "--db", str(small_db)])
    assert run.exit_code == 2 and "DIR is empty" in run.stderr


def test_a_list_item_is_shown_with_its_lead_in(site):
    """flip_summoned on face_down conflicts: the Book of Moon page's list items are shown under their
    lead-ins ("remembers:" / "forgets:"), never as bare fragments."""
    out, _, _ = site
    html = (out / "rules" / "flip_summoned--face_down.html").read_text(encoding="utf-8")
    assert '<span class="lead-in">A monster flipped face-down remembers:</span>' in html
    assert '<span class="lead-in">A monster flipped face-down forgets:</span>' in html
