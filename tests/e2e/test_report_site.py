"""``rulings report``: the static site, read back from its files and opened
in headless Chromium (Debian's chromium and chromium-driver, driven with
Selenium; `.ci/run` installs them and sets RULINGS_REQUIRE_BROWSER=1 so a
missing browser fails there instead of skipping). The browser tests check
each page at 1400 and 390 px and save screenshots of the index, the rule
with the most rulings of each verdict and a card page at both widths in
the ``report-screens`` folder of pytest's temporary folder (``--basetemp``
names it)."""

from __future__ import annotations

import json
import os
import re
import shutil
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb
import pytest
from click.testing import CliRunner
from markupsafe import escape

from conftest import make_corpus
from pipeline.cards import card_names
from pipeline.cli import main
from pipeline.paths import PROJECT_ROOT
from pipeline.compile import text_key
from pipeline.report import write_report
from pipeline.reportdata import Ruling, text_segments
from pipeline.reportwords import external_url, rule_file, rule_sentence, slug
from pipeline.run import build
from pipeline.schema import events, info_kinds, procedural_rules, vocabulary

WIDTHS = [1400, 390]
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


def _open(driver, path: Path, width: int = 1400):
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
        said = next(v["words"] for v in vocabulary()["verdicts"] if v["id"] == verdict)
        assert said["en"] in label and said["zh"] in label  # the words are there, not only the colour
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
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('li.ruling')).map(li => li.dataset.recordIds.split(' '))")
    keys = _keys(db_path)
    with _db(db_path) as con:
        expected = {r[0] for r in con.execute(
            "SELECT DISTINCT m.record_id FROM card_mentions m JOIN records r USING (record_id) "
            "WHERE m.passcode = ? AND m.kind = 'card' AND r.retired_run IS NULL", [BOOK_OF_MOON]).fetchall()}
        latest = dict(con.execute(
            "SELECT record_id, max(date) FROM record_dates WHERE valid AND kind <> 'reference' GROUP BY 1").fetchall())
    assert len(expected) > 20 and {r for ids in shown for r in ids} >= expected  # every place, each ruling once
    assert len(shown) == len({keys[r] for r in expected}) and all(len({keys[r] for r in ids}) == 1 for ids in shown)
    dates = [max(str(latest.get(r) or "") for r in ids) for ids in shown]
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
         "archetypes.html", "search.html", "runs/1.html", "simulators.html", "procedural.html", "sources.html",
         "rules/summoned_by_own_procedure--temp_banish.html", "rules/summoned_this_turn--temp_banish.html"]

# Words of Latin letters or digits (a date one word) that the browser laid out on more than one line.
BROKEN_WORDS_JS = """
var root = arguments[0] || document.body, out = [], node;
var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), re = /\\d{4}-\\d{2}-\\d{2}|[A-Za-z0-9]+/g;
while ((node = walker.nextNode())) {
  var el = node.parentElement;
  if (!el || el.closest("code, script, style, .visually-hidden, svg, noscript") || !el.getClientRects().length) continue;
  var m;
  re.lastIndex = 0;
  while ((m = re.exec(node.data))) {
    if (m[0].length < 2) continue;
    var range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    var bottoms = Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => r.bottom);
    if (bottoms.length > 1 && Math.max(...bottoms) - Math.min(...bottoms) > 4) out.push(m[0]);
  }
}
return out;
"""


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    return tmp_path_factory.mktemp("report-screens", numbered=False)


def _shot(driver, folder: Path, name: str) -> Path:
    """A screenshot of the page's top (the window made as tall as the page, at most 2400 px)."""
    width = driver.get_window_size()["width"]
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 140, 2400))
    path = folder / f"{name}-{width}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(width, 900)
    assert path.stat().st_size > 10_000
    return path


def test_the_word_break_check_finds_a_broken_word(site, browser):
    _open(browser, site[0] / "index.html", 390)
    broken = browser.execute_script(
        "var d = document.createElement('div'); d.style.width = '40px'; d.style.overflowWrap = 'anywhere';"
        "d.textContent = 'conditional 2026-05-30'; document.body.appendChild(d);"
        "var found = (function () {" + BROKEN_WORDS_JS + "}).call(null, d); d.remove(); return found;")
    assert broken == ["conditional", "2026-05-30"]


@pytest.mark.slow  # every page at two widths in a browser: make test-slow, CI
@pytest.mark.parametrize("width", WIDTHS)
def test_no_horizontal_scrollbar_no_broken_word_and_nothing_from_the_network(site, browser, width):
    out, _, _ = site
    _requested_urls(browser)  # drop earlier entries
    for page in PAGES:
        _open(browser, out / page, width)
        scroll, client = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client, f"{page} at {width}px: {scroll} > {client}"
        assert browser.execute_script(BROKEN_WORDS_JS) == [], f"{page} at {width}px"
    requested = _requested_urls(browser)
    assert requested and all(u.startswith("file://") for u in requested), [
        u for u in requested if not u.startswith("file://")]


def _rules(db_path: Path) -> dict[tuple[str, str], str]:
    with _db(db_path) as con:
        return {(k, e): v for k, e, v in con.execute("SELECT info_kind, event, verdict FROM rules").fetchall()}


def _richest_rule_of_each_verdict(db_path: Path) -> dict[str, tuple[str, str]]:
    with _db(db_path) as con:
        rows = con.execute("""SELECT r.verdict, r.info_kind, r.event, count(c.record_id) AS n FROM rules r
                              LEFT JOIN rule_citations c USING (info_kind, event)
                              GROUP BY ALL ORDER BY r.verdict, n DESC, r.info_kind, r.event""").fetchall()
    found = {}
    for verdict, kind, event, _ in rows:
        found.setdefault(verdict, (kind, event))
    return found


@pytest.mark.parametrize("width", WIDTHS)
def test_index_says_each_rule_in_words_at_both_widths(site, browser, screens, width):
    out, db_path, _ = site
    _open(browser, out / "index.html", width)
    heads = browser.execute_script(
        "return Array.from(document.querySelectorAll('.matrix thead th[data-event]')).map(th => [th.dataset.event, th.innerText])")
    said = {e["id"]: e["words"] for e in vocabulary()["events"]}
    assert [e for e, _ in heads] == events()
    for event, text in heads:
        assert said[event]["en"] in text and said[event]["zh"] in text and event not in text
    assert {said[e]["zh"] for e in events()} == {"里侧", "一时除外", "反转"}
    rules = _rules(db_path)
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('td.cell')).map(c => [c.dataset.kind, c.dataset.event, "
        "c.querySelector('.sentence').textContent, c.querySelector('a').title])")
    assert len(cells) == len(info_kinds()) * len(events())
    for kind, event, sentence, title in cells:
        words = rule_sentence(kind, event, rules.get((kind, event), "unknown"))
        assert " ".join(sentence.split()) == f"{words['en']} {words['zh']}" == title
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('.matrix tbody tr[data-kind] th')).map(th => th.innerText)")
    assert len(rows) == len(info_kinds()) and not any("_" in r for r in rows)  # words, not ids
    font = browser.execute_script(
        "return parseFloat(getComputedStyle(document.querySelector('.matrix thead th[data-event]')).fontSize)")
    assert font >= 11
    _shot(browser, screens, "index")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_rule_of_each_verdict_in_words_with_its_history_strip(site, browser, screens, width):
    from selenium.webdriver.common.by import By

    out, db_path, _ = site
    chosen = _richest_rule_of_each_verdict(db_path)
    assert {"kept", "lost", "not_applicable", "conditional"} <= set(chosen)  # the bundled corpus has no unknown
    with _db(db_path) as con:
        dated = dict(con.execute("SELECT record_id, max(date) FROM record_dates WHERE valid AND kind <> 'reference' "
                                 "GROUP BY 1").fetchall())
    for verdict, (kind, event) in sorted(chosen.items()):
        _open(browser, out / "rules" / rule_file(kind, event), width)
        words = rule_sentence(kind, event, verdict)
        heading = browser.find_element(By.TAG_NAME, "h1").text
        assert words["en"] in heading and words["zh"] in heading, heading
        assert browser.title.startswith(words["en"])
        entries = browser.execute_script(
            "return Array.from(document.querySelectorAll('li.citation')).map(li => "
            "[li.dataset.recordIds.split(' '), li.querySelector('.role').innerText])")
        for _, label in entries:
            assert re.search(r"says [✓✗–◐?] (kept|lost|not applicable)", label), label
        # the strip: one mark per dated ruling, as wide as the text, with its year labels apart
        marks = browser.execute_script("return document.querySelectorAll('.strip rect.mark').length")
        assert marks == sum(any(dated.get(r) for r in ids) for ids, _ in entries)
        assert marks > 0 or verdict == "not_applicable"
        strip_w, main_w = browser.execute_script(
            "return [document.querySelector('.strip svg').getBoundingClientRect().width, "
            "document.querySelector('main').clientWidth]")
        assert strip_w >= main_w * 0.85
        years = browser.execute_script(
            "return Array.from(document.querySelectorAll('.strip .years span')).filter(s => s.offsetParent)"
            ".map(s => { const r = s.getBoundingClientRect(); return [r.left, r.right, parseFloat(getComputedStyle(s).fontSize)]; })")
        assert len(years) >= 3 and all(a[1] <= b[0] for a, b in zip(years, years[1:])) and min(y[2] for y in years) >= 11
        if verdict == "conditional":
            cases = browser.execute_script(
                "return Array.from(document.querySelectorAll('li.case')).map(li => [li.dataset.case, li.dataset.verdict, li.innerText])")
            with _db(db_path) as con:
                stored = con.execute("SELECT cases FROM rules WHERE info_kind = ? AND event = ?", [kind, event]).fetchone()[0]
            assert [(c, v) for c, v, _ in cases] == [(s["case_id"], s["verdict"]) for s in stored]
            assert {v for _, v, _ in cases} == {"kept", "lost"}
            for case, case_verdict, text in cases:
                said = rule_sentence(kind, event, case_verdict, next(
                    {"en": c["en"], "zh": c["zh"], "verdict": case_verdict} for c in _policy_cases() if c["id"] == case))
                assert said["en"] in " ".join(text.split()) and said["zh"] in text
        _shot(browser, screens, f"rule-{verdict}")


def _policy_cases() -> list[dict]:
    from pipeline.schema import rule_policy
    return rule_policy()["cases"]


@pytest.mark.parametrize("width", WIDTHS)
def test_card_page_links_the_rules_its_rulings_support(site, browser, screens, width):
    out, db_path, _ = site
    _open(browser, out / "cards" / f"{BOOK_OF_MOON}.html", width)
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('.card-rules a')).map(a => a.getAttribute('href'))")
    with _db(db_path) as con:
        expected = con.execute("""SELECT DISTINCT c.info_kind, c.event FROM rule_citations c
            JOIN card_mentions m USING (record_id) JOIN records r USING (record_id)
            WHERE m.passcode = ? AND m.kind = 'card' AND c.role = 'supports' AND r.retired_run IS NULL""",
                               [BOOK_OF_MOON]).fetchall()
    assert expected and sorted(links) == sorted(f"../rules/{rule_file(k, e)}" for k, e in expected)
    _shot(browser, screens, "card")


@pytest.mark.parametrize("width", WIDTHS)
def test_timeline_chart_reads_on_a_phone(site, browser, width):
    out, _, _ = site
    _open(browser, out / "timeline.html", width)
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('.chart-row')).map(f => { const c = f.querySelector('figcaption')"
        ".getBoundingClientRect(), s = f.querySelector('svg').getBoundingClientRect(); return [c.bottom, s.top, s.width, "
        "parseFloat(getComputedStyle(f.querySelector('figcaption')).fontSize), f.querySelectorAll('rect.bar').length]; })")
    main_w = browser.execute_script("return document.querySelector('main').clientWidth")
    assert len(rows) > 20
    for label_bottom, plot_top, plot_w, font, bars in rows:
        assert label_bottom <= plot_top + 1 and plot_w >= main_w * 0.85 and font >= 11 and bars > 0


def test_search_finds_rules_cards_and_rulings_in_either_script_paged(site, browser):
    from selenium.webdriver.common.by import By

    out, _, _ = site
    _open(browser, out / "search.html", 390)
    box = browser.find_element(By.ID, "q")

    def found(query: str) -> tuple[int, int, int]:
        box.clear()
        box.send_keys(query)
        status = browser.find_element(By.ID, "search-status").text
        return tuple(int(n) for n in re.findall(r"(\d+) (?:rules|cards|rulings)", status))

    simplified, traditional = found("月之书"), found("月之書")
    assert simplified == traditional and simplified[2] > 20
    assert found("一时除外") == found("一時除外") and found("一时除外")[2] > 20
    face_down = {f"rules/{rule_file(k, 'face_down')}" for k in info_kinds()}
    for query in ("face_down", "face-down", "里侧"):
        found(query)
        hrefs = browser.execute_script("return Array.from(document.querySelectorAll('#rule-results a'))"
                                       ".map(a => a.getAttribute('href'))")
        shown = set(hrefs)
        while browser.execute_script("var b = document.querySelector('.pager[data-list=\"rule-results\"] "
                                     "button:last-child'); if (!b || b.disabled) return false; b.click(); return true"):
            shown |= set(browser.execute_script("return Array.from(document.querySelectorAll('#rule-results a'))"
                                                ".map(a => a.getAttribute('href'))"))
        assert face_down <= shown, query
    assert found("Special Summoned")[0] >= len(events())
    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('#rule-results a')).map(a => a.getAttribute('href'))")
    assert "rules/special_summoned--face_down.html" in hrefs
    rulings = found("一时除外")[2]
    first = browser.execute_script("return Array.from(document.querySelectorAll('#ruling-results li')).map(li => li.innerText)")
    assert len(first) == 20 < rulings
    browser.find_element(By.CSS_SELECTOR, '.pager[data-list="ruling-results"] button:last-child').click()
    second = browser.execute_script("return Array.from(document.querySelectorAll('#ruling-results li')).map(li => li.innerText)")
    assert second and not set(second) & set(first)
    assert browser.execute_script("return document.getElementById('ruling-results').start") == 21


def test_search_page_without_javascript_says_so(site):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("chromium/chromedriver not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        _open(driver, site[0] / "search.html", 390)
        text = driver.find_element("tag name", "main").text
        assert "needs JavaScript" in text and "rules matrix" in text
    finally:
        driver.quit()


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


# --------------------------------------------------------------------------- one entry per ruling

def _keys(db_path: Path) -> dict[str, str]:
    """Each current record's ruling (compile's key of its normalized text)."""
    with _db(db_path) as con:
        return {rid: text_key(norm or text) for rid, norm, text in con.execute(
            "SELECT record_id, norm_text, text FROM records WHERE retired_run IS NULL").fetchall()}


def test_each_ruling_once_with_all_its_places(site):
    out, db_path, _ = site
    keys = _keys(db_path)
    places: dict[str, set[str]] = {}
    for rid, key in keys.items():
        places.setdefault(key, set()).add(rid)
    with _db(db_path) as con:
        cited = con.execute("SELECT info_kind, event, record_id, role FROM rule_citations").fetchall()
    by_rule: dict[tuple[str, str], list[str]] = {}
    for kind, event, rid, _ in cited:
        by_rule.setdefault((kind, event), []).append(rid)
    repeated = 0
    for (kind, event), rids in by_rule.items():
        html = (out / "rules" / rule_file(kind, event)).read_text(encoding="utf-8")
        shown = re.findall(r'<li id="([^"]+)" class="citation', html)
        assert len(shown) == len({keys.get(r, r) for r in rids}), (kind, event)
        repeated += len(rids) - len(shown)
        for rid in rids:  # every cited place is still an anchor on the page, once
            assert len(re.findall(rf'\sid="{rid}"', html)) == 1, (kind, event, rid)
    assert repeated > 20  # the corpus prints many rulings twice: they are shown once
    # a ruling printed on the topic page and in the frozen extract names both places
    html = (out / "rules" / "summoned_this_turn--temp_banish.html").read_text(encoding="utf-8")
    entry = re.search(r'<li id="rff3c7df5dce9db7".*?</li>', html, re.S).group(0)
    assert all(f"#{rid}" in entry or f'id="{rid}"' in entry for rid in places[keys["rff3c7df5dce9db7"]])
    assert len(places[keys["rff3c7df5dce9db7"]]) == 3 and "Also on 2 other pages" in entry
    # the matrix counts rulings, not places
    index = (out / "index.html").read_text(encoding="utf-8")
    for (kind, event), rids in by_rule.items():
        supports = {keys.get(r, r) for k, e, r, role in cited if (k, e) == (kind, event) and role == "supports"}
        cell = re.search(rf'data-kind="{kind}" data-event="{event}".*?(\d+) rulings?', index, re.S)
        assert int(cell.group(1)) == len(supports), (kind, event)
    # a card page lists each ruling once
    card = (out / "cards" / f"{BOOK_OF_MOON}.html").read_text(encoding="utf-8")
    with _db(db_path) as con:
        mine = {r[0] for r in con.execute("SELECT DISTINCT m.record_id FROM card_mentions m JOIN records r "
                                          "USING (record_id) WHERE m.passcode = ? AND m.kind = 'card' "
                                          "AND r.retired_run IS NULL", [BOOK_OF_MOON]).fetchall()}
    assert len(re.findall(r'<li id="[^"]+" class="ruling', card)) == len({keys[r] for r in mine}) < len(mine)


def test_procedural_rules_and_sources_pages(site):
    out, db_path, _ = site
    html = (out / "procedural.html").read_text(encoding="utf-8")
    sections = re.findall(r'<section class="procedural" id="([^"]+)">(.*?)</section>', html, re.S)
    assert [s for s, _ in sections] == [r.replace(".", "-") for r in procedural_rules()] and len(sections) == 14
    with _db(db_path) as con:
        stated = dict(con.execute("SELECT rule_id, record_ids FROM procedural_rules").fetchall())
        sources = con.execute("SELECT source_id, licence FROM sources ORDER BY source_id").fetchall()
    keys = _keys(db_path)
    for (anchor, body), rule_id in zip(sections, procedural_rules()):
        shown = set(re.findall(r'href="sources/[^"#]+#([^"]+)"', body))
        ids = [r for r in stated.get(rule_id, []) if r in keys]
        assert {keys[r] for r in shown} == {keys[r] for r in ids}, rule_id  # each stating ruling, once
        assert body.count('<li class="ruling">') == len({keys[r] for r in ids})
    assert sum(bool(stated.get(r)) for r in procedural_rules()) >= 10
    listing = (out / "sources.html").read_text(encoding="utf-8")
    for source_id, licence in sources:
        row = re.search(rf'<tr id="s-{re.escape(slug(source_id))}">(.*?)</tr>', listing, re.S).group(1)
        assert f'href="sources/{slug(source_id)}.html"' in row and str(escape(licence)) in row, source_id
    linked = set(re.findall(r'href="(?:\.\./)*sources/([^"#]+\.html)', listing))
    assert linked == {p.name for p in (out / "sources").glob("*.html")}


# --------------------------------------------------------------------------- valid HTML, links, titles

def _pages(out: Path) -> list[Path]:
    return sorted(out.rglob("*.html"))


def test_pages_are_valid_html_with_unique_ids_and_distinct_titles(site):
    import html5lib

    out, _, _ = site
    titles: dict[str, str] = {}
    pages = _pages(out)
    for page in pages:
        html = page.read_text(encoding="utf-8")
        ids = re.findall(r'\sid="([^"]*)"', html)
        assert len(ids) == len(set(ids)), (page, [i for i in set(ids) if ids.count(i) > 1][:5])
        title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
        assert title not in titles, (page, titles.get(title))
        titles[title] = page.name
    # the strict parser on every kind of page (all but the card and source pages, and 200 of those)
    strict = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    cards = sorted((out / "cards").glob("*.html"))
    sample = [p for p in pages if p.parent.name not in ("cards", "sources")] + cards[::max(1, len(cards) // 200)] \
        + sorted((out / "sources").glob("*.html"))[:10]
    for page in sample:
        strict.parse(page.read_bytes(), transport_encoding="utf-8")  # raises ParseError at the first error
    assert len(sample) > 300


def test_strict_parser_and_id_check_catch_errors():
    import html5lib

    strict = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    with pytest.raises(html5lib.html5parser.ParseError):
        strict.parse("<!doctype html><title>x</title><p><div></p>")
    strict.parse("<!doctype html><html lang=en><head><title>x</title></head><body><p>ok</p></body></html>")


def test_every_link_resolves(site):
    """Every href and src of every page names a file of the site (no other
    local path, no other scheme than http(s)), and its fragment an id there."""
    import posixpath

    out, _, _ = site
    ids: dict[str, set[str]] = {}
    links: dict[str, set[str]] = {}
    for page in _pages(out):
        rel = page.relative_to(out).as_posix()
        html = page.read_text(encoding="utf-8")
        ids[rel] = set(re.findall(r'\sid="([^"]*)"', html))
        links[rel] = {unescape(h) for h in re.findall(r'\s(?:href|src)="([^"]*)"', html)}
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    checked = 0
    for rel, its in links.items():
        for link in its:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https"):
                continue
            assert not parts.scheme and not parts.netloc, (rel, link)
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(parts.path))) \
                if parts.path else rel
            assert target in files, (rel, link)
            if parts.fragment:
                assert unquote(parts.fragment) in ids[target], (rel, link)
            checked += 1
    assert checked > 50_000


def test_rule_sentences_and_strip_marks():
    from pipeline.reportcharts import rule_strip

    assert rule_sentence("synchro_summoned", "face_down", "kept") == {
        "en": "A monster turned face-down keeps the fact that it was Synchro Summoned.",
        "zh": "怪兽变成里侧表示时，同调召唤过的情报保留。"}
    assert rule_sentence("counters", "temp_banish", "lost")["zh"] == "怪兽被一时除外再回到场上时，指示物丢失。"
    case = {"en": "Flip Summoned this turn", "zh": "在反转召唤的回合", "verdict": "lost"}
    said = rule_sentence("summoned_this_turn", "face_down", "conditional", case)
    assert said["en"].startswith("If Flip Summoned this turn: a monster turned face-down loses")
    assert said["zh"].startswith("在反转召唤的回合时：") and said["zh"].endswith("丢失。")
    for kind in info_kinds():
        for event in events():
            for verdict in ("kept", "lost", "not_applicable", "conditional", "unknown"):
                both = rule_sentence(kind, event, verdict)
                assert "_" not in both["en"] + both["zh"] and both["en"].endswith(".") and both["zh"].endswith("。")
    cited = [{"record_id": "a", "record_ids": ["a"], "verdict": "kept", "role": "supports", "date": "2010-01-05"},
             {"record_id": "b", "record_ids": ["b", "b2"], "verdict": "lost", "role": "conflicts", "date": "2010-01-20"},
             {"record_id": "c", "record_ids": ["c"], "verdict": "lost", "role": "supports", "date": "2020-06-01"},
             {"record_id": "d", "record_ids": ["d"], "verdict": "kept", "role": "supports", "date": ""}]
    strip = rule_strip({"changed_on": "2015-01-01", "disputed_by": ["b2"]}, cited, "2010-01", "2020-12")
    marks = {m["record_id"]: m for m in strip["marks"]}
    assert set(marks) == {"a", "b", "c"} and strip["undated"] == 1 and strip["says"] == {"kept": 2, "lost": 2}
    assert marks["a"]["x"] == marks["b"]["x"] == 0 < marks["c"]["x"] < 1000  # one month: one column, stacked
    assert marks["b"]["disputed"] and not marks["a"]["disputed"] and marks["b"]["y"] < marks["a"]["y"]
    assert marks["a"]["h"] + marks["b"]["h"] > 28 and marks["c"]["h"] == 28.0
    assert strip["change_x"] == round(60 * 1000 / 132, 2) and (strip["first"], strip["last"]) == ("2010-01-05", "2020-06-01")
    assert [y["label"] for y in strip["years"] if y["major"]] == ["2010", "2015", "2020"]
