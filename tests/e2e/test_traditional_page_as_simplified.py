"""A Traditional Chinese page gives the same rulings as its Simplified twin.

``cases/traditional/c03-face-down-temp-banish.zh-TW.html`` is the bundled
face-down page (the page statements come from) as a Taiwanese site would
phrase it: Taiwan game terms, the official Traditional card names, Taiwan
spellings and words. It is test data, not part of the bundled corpus.
"""

import json
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.corpus import BUNDLED_CORPUS, load_manifest
from pipeline.normalize import normalize
from pipeline.run import build, process_page
from conftest import CASES

TW_PAGE = CASES / "traditional" / "c03-face-down-temp-banish.zh-TW.html"
# The same page laid out as another site might: the title and every section an <h2>, example
# labels as <h2>例：</h2> followed by <p> examples, notes as <h2>備註</h2> headings, a navigation
# line and a footer inside the content (cases/traditional/make_relayout.py made it from TW_PAGE).
RELAYOUT_PAGE = TW_PAGE.with_name("c03-face-down-temp-banish.zh-TW.relayout.html")
CN_ID = "ocg-rule-c03-face-down-temp-banish"


def corpus_of(dest: Path, rows: list[tuple[str, str, str, str, bytes]]) -> Path:
    """A corpus of pages given as (source id, script, region, file name, bytes)."""
    header = (BUNDLED_CORPUS / "manifest.tsv").read_text(encoding="utf-8").splitlines()[0]
    lines = [header]
    for sid, script, region, name, data in rows:
        (dest / "pages").mkdir(parents=True, exist_ok=True)
        (dest / "pages" / name).write_bytes(data)
        lines.append("\t".join([sid, "https://example.org/" + name, "zh", script, region, "html",
                                "CC BY-SA 4.0", "pages/" + name, "no", "test page"]))
    (dest / "manifest.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Databases of the Simplified page alone and of the Traditional page alone."""
    out = tmp_path_factory.mktemp("twins")
    cn_page = (BUNDLED_CORPUS / "pages/ocg-rule/c03-face-down-temp-banish.html").read_bytes()
    dbs = {}
    for name, script, region, data in (("cn", "Hans", "CN", cn_page), ("tw", "Hant", "TW", TW_PAGE.read_bytes()),
                                       ("relayout", "Hant", "TW", RELAYOUT_PAGE.read_bytes())):
        corpus = corpus_of(out / name, [(f"face-down-{name}", script, region, f"{name}.html", data)])
        result = build(corpus, out / f"{name}.duckdb", out / f"{name}.py")
        assert result.errors == [] and result.warnings == []
        dbs[name] = out / f"{name}.duckdb"
    return dbs


def _unnamed(condition: str) -> str:
    """A condition quotes its ruling, card names as that page writes them
    (「神影依・米德拉许」 in Taiwan, 「神影依·米德拉什」 in the mainland): compared
    without the names."""
    return re.sub(r"「[^」]*」", "「」", condition)


def statements_by_position(db: Path) -> list[tuple]:
    """Every statement with its record's position, and its principle's position for examples."""
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("""
        SELECT r.seq, r.role, s.info_kind, s.event, s.verdict, s.condition, s.basis, p.seq
        FROM statements s JOIN records r USING (record_id) LEFT JOIN records p ON p.record_id = s.principle_id
        ORDER BY ALL""").fetchall()
    return sorted(row[:5] + (_unnamed(row[5]),) + row[6:] for row in rows)


def rules_by_position(db: Path) -> list[tuple]:
    """The rules table with each record id replaced by the record's position in the page."""
    con = duckdb.connect(str(db), read_only=True)
    seq = dict(con.execute("SELECT record_id, seq FROM records").fetchall())
    def positions(conflicts: list) -> list:
        # Records of a conflict are listed in id order: compare the sets of positions.
        return [dict(c, record_ids=sorted(seq[r] for r in c["record_ids"])) for c in conflicts]

    try:
        rows = con.execute("""SELECT info_kind, event, verdict, condition, latest_date, changed_on, dates, record_ids,
                                     conflicts FROM rules ORDER BY info_kind, event""").fetchall()
    finally:
        con.close()
    # Records of equal dates are listed in id order: compare the set of positions.
    return [row[:3] + (_unnamed(row[3]),) + row[4:7] + (sorted(seq[r] for r in row[7]), positions(row[8]))
            for row in rows]


def test_traditional_page_states_what_the_simplified_page_states(twins):
    cn, tw = statements_by_position(twins["cn"]), statements_by_position(twins["tw"])
    assert len(cn) > 150  # the page states a lot: equality below is not two empty lists
    assert tw == cn


def test_traditional_page_gives_the_same_rules_table(twins):
    cn, tw = rules_by_position(twins["cn"]), rules_by_position(twins["tw"])
    assert sum(1 for r in cn if r[2] != "unknown") > 60
    assert tw == cn


def test_a_page_laid_out_otherwise_gives_the_same_rules_table(twins):
    """Title and sections at one heading level, example labels and notes as
    headings, chrome lines inside the content: the same rulings, so the same
    verdicts with the same dates (the seed extract is not in either corpus)."""
    verdicts = lambda db: [row[:7] for row in rules_by_position(db)]  # noqa: E731 (positions differ: layout)
    cn, relayout = verdicts(twins["cn"]), verdicts(twins["relayout"])
    assert sum(1 for r in cn if r[2] != "unknown") > 60
    assert relayout == cn


def test_the_relayout_pages_structure_is_read_by_meaning(twins):
    con = duckdb.connect(str(twins["relayout"]), read_only=True)
    sections = {row[0] for row in con.execute("SELECT DISTINCT section_path FROM records").fetchall()}
    assert all(s.startswith("裡側·一時除外 / ") for s in sections)  # the title <h2> is the topic of every section
    assert "裡側·一時除外 / 攻守計算 / 備註" in sections  # a note heading nests under the section it follows
    assert not any("例：" in s for s in sections)  # an example label is no section
    texts = [row[0] for row in con.execute("SELECT text FROM records").fetchall()]
    assert not any(t.startswith(("首頁 |", "本站內容僅供參考")) for t in texts)  # chrome lines dropped
    examples = con.execute("SELECT count(*) FROM records WHERE role = 'example'").fetchone()[0]
    cn_examples = duckdb.connect(str(twins["cn"]), read_only=True).execute(
        "SELECT count(*) FROM records WHERE role = 'example'").fetchone()[0]
    assert examples == cn_examples > 50


def test_traditional_records_keep_their_text_and_carry_the_canonical_one(twins):
    con = duckdb.connect(str(twins["tw"]), read_only=True)
    text, norm, section = con.execute(
        "SELECT text, norm_text, section_path FROM records WHERE text LIKE '同步召喚的怪獸%'").fetchone()
    assert text == "同步召喚的怪獸變成裡側或被一時除外後，仍然是同步召喚的怪獸。16/1/8"
    assert norm == "S召唤的怪兽变成里侧或被一时除外后，仍然是S召唤的怪兽。16/1/8"
    assert section == "裡側·一時除外 / 出場方式"  # the headings as written; topics match their canonical form
    name, norm_name = con.execute("SELECT name, norm_name FROM card_mentions WHERE name = '幻龍星－嘲風'").fetchone()
    assert norm_name == "幻龙星－嘲风"  # Simplified script; widths are folded in the key only


def test_script_and_region_come_from_the_page_when_the_manifest_is_silent(tmp_path):
    data = TW_PAGE.read_bytes()
    corpus = corpus_of(tmp_path, [("tw-declared", "Hant", "TW", "a.html", data), ("tw-silent", "", "", "b.html", data)])
    declared, silent = load_manifest(corpus)
    page = normalize(data, silent)
    assert (page.script, page.region, page.warnings) == ("Hant", "TW", [])  # from <html lang="zh-Hant-TW">
    records = [process_page(s, {"normalize": 0.0, "extract": 0.0}).records for s in (declared, silent)]
    stated = [[(r.norm, [(s.info_kind, s.event, s.verdict, s.condition, s.basis) for s in r.statements]) for r in rs]
              for rs in records]
    assert stated[0] == stated[1]


def test_a_simplified_page_declared_traditional_is_not_converted(tmp_path):
    data = (BUNDLED_CORPUS / "pages/ocg-rule/c03-face-down-temp-banish.html").read_bytes()
    [source] = load_manifest(corpus_of(tmp_path, [("cn-as-tw", "Hant", "TW", "cn.html", data)]))
    page = normalize(data, source)
    assert (page.script, page.region) == ("Hans", "CN")  # region from <html lang="zh-CN">
    assert page.warnings[0].startswith("cn-as-tw: declared script Hant but the text is Hans")


SHORT_TW = "<html><body><main><h1>裡側</h1><p>同步召喚的怪獸變成裡側表示後，仍然是同步召喚的怪獸。17/3/24</p></main></body></html>"


@pytest.mark.parametrize("body, script, statements", [
    (SHORT_TW, "Hant", [("synchro_summoned", "face_down", "kept")]),  # 7 Traditional-only characters, no other
    # 4 script-specific characters: too few to overrule the manifest, read as declared
    ("<html><body><main><h1>规则</h1><p>「死者蘇生」與「強欲之壺」。</p></main></body></html>", "Hans", []),
    # both scripts: a Simplified ruling quoting Traditional names stays Simplified
    ("<html><body><main><h1>规则</h1><p>同调召唤的「龍騎士」变成里侧后，仍然是同调召唤的怪兽。</p></main></body></html>",
     "Hans", [("synchro_summoned", "face_down", "kept")]),
])
def test_a_short_traditional_page_declared_simplified_is_converted(tmp_path, body, script, statements):
    [source] = load_manifest(corpus_of(tmp_path, [("short", "Hans", "CN", "s.html", body.encode("utf-8"))]))
    result = process_page(source, {"normalize": 0.0, "extract": 0.0})
    page = normalize(body.encode("utf-8"), source)
    assert page.script == script
    assert [(s.info_kind, s.event, s.verdict) for r in result.records for s in r.statements] == statements
    assert any("declared script Hans but the text is Hant" in w for w in page.warnings) == (script == "Hant")


def test_same_page_in_big5_gb18030_and_utf8_bom_yields_identical_records(tmp_path):
    text = TW_PAGE.read_text(encoding="utf-8")
    saved = {
        "utf-8": text.encode("utf-8"),
        "big5": text.replace('charset="utf-8"', 'charset="big5"').encode("big5", errors="xmlcharrefreplace"),
        "gb18030": text.replace('<meta charset="utf-8">', "").encode("gb18030"),
        "utf-8-bom": text.encode("utf-8-sig"),
    }
    corpus = corpus_of(tmp_path, [("tw", "Hant", "TW", "tw.html", saved["utf-8"])])
    [source] = load_manifest(corpus)
    results = {name: process_page(source, {"normalize": 0.0, "extract": 0.0}, data=data) for name, data in saved.items()}
    reference = results.pop("utf-8")
    assert len(reference.records) == 250 and reference.warnings == []
    for name, result in results.items():
        assert result.warnings == [], name
        assert result.records == reference.records, name


def sql(db: Path, query: str) -> list[dict]:
    result = CliRunner().invoke(main, ["sql", query, "--db", str(db), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


SEARCH = ("SELECT DISTINCT c.name, r.record_id FROM records r JOIN card_mentions c USING (record_id) "
          "WHERE c.match_key = name_key('{}') ORDER BY ALL")


@pytest.mark.parametrize("traditional, simplified", [
    ("星塵龍", "星尘龙"), ("月之書", "月之书"), ("幻龍星－嘲風", "幻龙星-嘲风"), ("影之牌組破壞病毒", "影之卡组破坏病毒"),
])
def test_sql_finds_a_ruling_by_a_card_name_in_either_script(twins, traditional, simplified):
    for db in twins.values():
        by_traditional, by_simplified = sql(db, SEARCH.format(traditional)), sql(db, SEARCH.format(simplified))
        assert by_traditional and by_traditional == by_simplified
        assert {row["name"] for row in by_traditional} <= {traditional, simplified}
