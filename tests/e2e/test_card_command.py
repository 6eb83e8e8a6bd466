"""``rulings card NAME|PASSCODE``: a card's rulings, by any of its names."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pipeline.cli import main

BOOK_OF_MOON = 14087893


def card(db, *args):
    return CliRunner().invoke(main, ["card", *map(str, args), "--db", str(db)])


@pytest.mark.parametrize("name", ["月之书", "月之書", "月の書", "Book of Moon", "book of moon", "ＢＯＯＫ ＯＦ ＭＯＯＮ",
                                  str(BOOK_OF_MOON)])
def test_any_name_or_the_passcode_finds_the_card(built, name):
    run = card(built[1], name, "--json")
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    assert data["passcode"] == BOOK_OF_MOON and data["names"]["en"] == "Book of Moon"
    assert data["count"] == len(data["rulings"]) > 100


def test_rulings_newest_first_with_dates_faq_ids_and_english_pages(built):
    import duckdb

    data = json.loads(card(built[1], BOOK_OF_MOON, "--json").stdout)
    latest = [r["dates"][-1] if r["dates"] else "" for r in data["rulings"]]
    assert latest == sorted(latest, reverse=True)
    with duckdb.connect(str(built[1]), read_only=True) as con:
        english_pages = {r[0] for r in con.execute("SELECT source_id FROM sources WHERE language = 'en'").fetchall()}
        linked = {r[0] for r in con.execute("SELECT DISTINCT m.record_id FROM card_mentions m JOIN records r "
                                            "USING (record_id) WHERE passcode = ? AND r.retired_run IS NULL",
                                            [BOOK_OF_MOON]).fetchall()}
    ids = {r["record_id"] for r in data["rulings"]}
    assert linked <= ids
    english = [r for r in data["rulings"] if r["how"] == "english_text"]
    assert {r["source_id"] for r in english} >= {"edisonrul-book-of-moon", "seed-000-battle-position"}
    assert {r["source_id"] for r in english} <= english_pages
    assert any(r["faq_ids"] for r in data["rulings"])
    assert {r["status"] for r in data["rulings"]} <= {"current", "superseded", "pending"}


def test_text_output_and_limit(built):
    run = card(built[1], "月之書", "--limit", "2")
    lines = run.output.splitlines()
    assert lines[0].startswith("月之书 / 月之書 / 月の書 / Book of Moon (14087893): ")
    assert len([l for l in lines if l.startswith("      ")]) == 2 and "more (--limit)" in lines[-1]


@pytest.mark.parametrize("name, hint", [("ash blossom", "Ash Blossom & Joyous Spring"), ("月之书x", "月之书")])
def test_unknown_name_says_did_you_mean(built, name, hint):
    run = card(built[1], name)
    assert run.exit_code == 2
    assert "did you mean" in run.stderr and hint in run.stderr


def test_unknown_passcode(built):
    run = card(built[1], "99999999999")
    assert run.exit_code == 2 and "no card with passcode" in run.stderr


# --------------------------------------------------------------------------- issue 37: cards as cards

# Every card the issue names, by its English, Japanese and Chinese names (official Simplified and
# Traditional, and the names the Chinese ruling pages write): one card, one Konami id each.
ISSUE_CARDS = {
    4999: ["Slifer the Sky Dragon", "オシリスの天空竜", "欧西里斯之天空龙", "奧西里斯天空龍", "奥西里斯之天空龙"],
    4998: ["Obelisk the Tormentor", "オベリスクの巨神兵", "欧贝利斯克之巨神兵", "歐貝利斯克巨神兵"],
    5000: ["The Winged Dragon of Ra", "ラーの翼神竜", "拉之翼神龙", "太陽神的翼神龍", "太阳神之翼神龙"],
    10112: ["Holactie the Creator of Light", "光の創造神 ホルアクティ", "holactie the creator of light"],
    4041: ["Dark Magician", "ブラック・マジシャン", "黑魔导", "黒魔道士", "黑魔术师", "dark magician"],
    4837: ["Polymerization", "融合"],
}


@pytest.mark.parametrize("konami_id, name", [(k, n) for k, names in ISSUE_CARDS.items() for n in names])
def test_every_card_the_issue_names_is_found_by_each_of_its_names(built, konami_id, name):
    run = card(built[1], name, "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["konami_id"] == konami_id


@pytest.mark.parametrize("konami_id, mention, least", [(4999, "奥西里斯之天空龙", 30), (5000, "太阳神之翼神龙", 25),
                                                       (4998, "欧贝利斯克之巨神兵", 10)])
def test_the_gods_mentions_are_linked_to_their_konami_id(built, konami_id, mention, least):
    import duckdb

    with duckdb.connect(str(built[1]), read_only=True) as con:
        linked = con.execute("SELECT count(*), count(DISTINCT konami_id), any_value(passcode) FROM card_mentions "
                             "WHERE name = ? AND konami_id = ?", [mention, konami_id]).fetchone()
    assert linked[0] >= least and linked[1:] == (1, None)  # no passcode: the Konami id is the card
    data = json.loads(card(built[1], mention, "--json").stdout)
    assert data["passcode"] is None and data["passcodes"] == [] and data["count"] > 0


def test_a_card_without_a_passcode_says_so_and_one_with_two_lists_both(built):
    slifer = card(built[1], "Slifer the Sky Dragon").stdout.splitlines()[0]
    assert "Slifer the Sky Dragon (Konami id 4999, no passcode)" in slifer
    magician = card(built[1], "Dark Magician").stdout.splitlines()[0]
    assert magician.startswith("黑魔导 / 黑魔導 / ブラック・マジシャン / Dark Magician (46986414; also passcode 36996508): ")
    data = json.loads(card(built[1], 36996508, "--json").stdout)  # the alternate artwork's passcode: the same card
    assert data["passcodes"] == [46986414, 36996508] and data["konami_id"] == 4041 and data["count"] >= 29


@pytest.mark.parametrize("name, english", [
    ("blue eyes white dragon", "Blue-Eyes White Dragon"), ("BLUE-EYES  WHITE DRAGON", "Blue-Eyes White Dragon"),
    ("ash blossom and joyous spring", "Ash Blossom & Joyous Spring"), ("Ｂｏｏｋ　ｏｆ　Ｍｏｏｎ", "Book of Moon"),
    ("maxx c", 'Maxx "C"')])
def test_names_match_after_case_spacing_hyphens_and_width_are_folded(built, name, english):
    run = card(built[1], name, "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["names"]["en"] == english


@pytest.mark.parametrize("name, first", [("Ash", "Ash Blossom & Joyous Spring"), ("ash blosom", "Ash Blossom & Joyous Spring"),
                                         ("Holactie", "Holactie the Creator of Light")])
def test_did_you_mean_lists_the_likeliest_card_first(built, name, first):
    run = card(built[1], name)
    assert run.exit_code != 0
    assert f"(did you mean {first!r}" in run.output, run.output


@pytest.mark.parametrize("name, english", [("水龙", "Water Dragon"), ("天罚", "Divine Wrath"), ("奇妙超量", "Wonder Xyz"),
                                           ("白银之迷宫城", "Labrynth Labyrinth")])
def test_mentions_link_by_community_and_loose_names(name, english):
    """An official name that is another card's community name is the community card's (the pages
    write community names); a loose key links where no exact name does."""
    from pipeline.cards import card_index

    assert card_index().link(name).name_en == english


@pytest.mark.parametrize("name", ["超未来融合", "急袭猛禽-起翼叛逆猎鹰", "希望皇 霍普", "DDD 死伟王 地狱终末神"])
def test_a_near_name_that_adds_words_or_is_near_two_cards_is_no_fuzzy_match(name):
    """The fuzzy match (a suggestion for review, never a mention's link) leaves these alone: they add
    words to a card's name or are near two cards' names."""
    from pipeline.cards import card_index, loose_key
    from pipeline.chinese import name_key

    assert card_index().fuzzy(loose_key(name_key(name))) is None


@pytest.mark.parametrize("name", ["亲历纯爱妖精·黑暗妖精", "冰水之阳起石灵", "希望皇 霍普"])
def test_a_name_no_data_set_or_checked_row_has_stays_unlinked(name):
    """Near names that could be two cards (an Epurrely or an Expurrely; Icejade Acti or another) are
    not linked by a guess: they stay unlinked and visible until a checked row names their card."""
    from pipeline.cards import card_index

    assert card_index().link(name).konami_id is None


# Names the ruling pages write (their card-database links) that no name data set has, each checked by
# hand (corpus/data/card-ruling-names.tsv), with the card's English name: the issue's examples and others.
RULING_NAMES = [("拉比林斯迷宫连环阵", "Labrynth Barrage"), ("拉比林斯迷宫欢迎", "Welcome Labrynth"),
                ("随风旅鸟×知更鸟", "Floowandereeze & Robina"), ("新空间侠·海洋海豚", "Neo-Spacian Marine Dolphin"),
                ("太阳神之翼神龙-球体形", "The Winged Dragon of Ra - Sphere Mode"),
                ("光之创造神 哈拉克提", "Holactie the Creator of Light"), ("合体魔龙 蒂迈欧", "Timaeus the United Magical Dragon"),
                ("水晶幻透翼同调龙", "Crystal Clear Wing Synchro Dragon"), ("火山烈焰加农炮", "Volcanic Blaze Accelerator"),
                ("娱乐法师 秋千大魔术家", "Performage Trapeze High Magician"), ("卫星闪灵·淘气精灵", "Spright Elf")]


@pytest.mark.parametrize("name, english", RULING_NAMES)
def test_names_the_ruling_pages_write_link_through_the_checked_table(name, english):
    from pipeline.cards import card_index

    link = card_index().link(name)
    assert (link.name_en, link.linked_by, link.name_source) == (english, "key", "ruling")


def test_the_checked_table_names_known_cards_once_each():
    from pipeline.cards import RULING_NAMES as PATH, card_entries, read_names, ruling_names

    rows = ruling_names()
    entries = card_entries()
    assert len(rows) == len({name for _, name in rows}) > 200
    english = {r["name"]: r["en"] for r in read_names(PATH)}
    assert all(entries[kid].names.get("en") == english[name] for kid, name in rows)  # the en column is the card's


def test_a_ruling_page_name_finds_its_card_and_its_mentions_in_the_build(built):
    import duckdb

    run = card(built[1], "拉比林斯迷宫连环阵", "--json")
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    assert data["konami_id"] == 17371 and data["names"]["en"] == "Labrynth Barrage" and data["count"] >= 30
    with duckdb.connect(str(built[1]), read_only=True) as con:
        kinds = dict(con.execute("SELECT name, any_value(kind) FROM card_mentions WHERE name IN "
                                 "('兽带斗神', '拉比林斯迷宫', '征服斗魂') GROUP BY 1").fetchall())
    # series names the pages write: each starts two or more cards' ruling-page names
    assert kinds == {"兽带斗神": "archetype", "拉比林斯迷宫": "archetype", "征服斗魂": "archetype"}


def test_a_name_left_in_rest_link_markup_links_without_it():
    from pipeline.cards import card_index

    assert card_index().link("`召唤兽 光体`_").name_en == "Invoked Augoeides"


def test_tokens_and_unlinked_series_names_are_no_cards(built):
    import duckdb

    with duckdb.connect(str(built[1]), read_only=True) as con:
        kinds = dict(con.execute("SELECT name, any_value(kind) FROM card_mentions WHERE name IN ('勇者衍生物', '被封印') "
                                 "GROUP BY 1").fetchall())
    assert kinds == {"勇者衍生物": "token", "被封印": "archetype"}


@pytest.mark.parametrize("name, english", [("Ash Blosom & Joyous Spring", "Ash Blossom & Joyous Spring"),
                                           ("blue eyes white dragn", "Blue-Eyes White Dragon"),
                                           ("Slifer the Sky Dragn", "Slifer the Sky Dragon")])
def test_a_misspelt_name_that_leaves_no_doubt_finds_its_card(built, name, english):
    run = card(built[1], name, "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["names"]["en"] == english


@pytest.mark.parametrize("name, english", [("奥西里斯之天空龙", "Slifer the Sky Dragon"),
                                           ("太阳神之翼神龙", "The Winged Dragon of Ra"),
                                           ("新空间侠·黑暗豹", "Neo-Spacian Dark Panther")])
def test_names_other_cards_texts_quote_link(name, english):
    """A community text quotes 「新空间侠·黑暗豹」 among a Fusion's materials, aligned with its Japanese
    text's quote of Neo-Spacian Dark Panther's Japanese name: corpus/data/card-quoted-names.tsv.gz."""
    from pipeline.cards import card_index

    link = card_index().link(name)
    assert (link.name_en, link.name_source) == (english, "quoted")


def test_the_character_filter_keeps_every_key_a_fuzzy_match_can_reach():
    """The fuzzy match compares a name only with the keys that share enough
    characters with it (cards._CharFilter); over card names, misspellings of
    them (a character dropped, one added) and names of no card, rapidfuzz
    over the filtered keys returns exactly what it returns over every key."""
    import random

    from rapidfuzz import fuzz, process

    from pipeline.cards import FUZZY_MARGIN, FUZZY_MIN, card_index

    index = card_index()
    cutoff = FUZZY_MIN - FUZZY_MARGIN
    rng = random.Random(7)
    names = rng.sample(index.fuzzy_keys, 60)
    queries = names + [n[:i] + n[i + 1:] for n in names if len(n) > 5 for i in [rng.randrange(len(n))]]
    queries += [n[:3] + "龙之" + n[3:] for n in names] + ["拉比林斯迷宫连环阵", "电子暗黑嵌合体", "随风旅鸟知更鸟"]
    reached = 0
    for query in queries:
        every = process.extract(query, index.fuzzy_keys, scorer=fuzz.ratio, limit=8, score_cutoff=cutoff)
        kept = index._fuzzy_filter.candidates(query, cutoff)
        filtered = process.extract(query, [index.fuzzy_keys[j] for j in kept], scorer=fuzz.ratio, limit=8,
                                   score_cutoff=cutoff)
        assert [(k, s, i) for k, s, i in every] == [(k, s, kept[i]) for k, s, i in filtered], query
        assert len(kept) < len(index.fuzzy_keys) / 10, query
        reached += bool(every)
    assert reached >= 100  # most queries do reach some key: the comparison is not between empty lists


def test_the_candidate_list_suggests_cards_for_the_unlinked_names(built):
    """corpus/data/card_ruling_candidates.py: the unlinked names most mentioned first, each with
    near cards to check by hand (a suggestion; the checked table is what links)."""
    import importlib.util

    from pipeline.corpus import BUNDLED_CORPUS

    spec = importlib.util.spec_from_file_location("card_ruling_candidates",
                                                  BUNDLED_CORPUS / "data" / "card_ruling_candidates.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.candidates(built[1], 20)
    assert len(rows) == 20 and [int(r[0]) for r in rows] == sorted((int(r[0]) for r in rows), reverse=True)
    assert all(len(r) == 7 and r[1] in r[3] for r in rows)  # three candidates; the sample quotes the name
    tenki = next(r for r in rows if r[1] == "天玑")  # quoted inside 「炎舞-「天玑」」: Fire Formation - Tenki is near
    assert tenki[4].startswith("10418 ") and "Fire Formation - Tenki" in tenki[4]


def test_a_ruling_found_several_ways_says_the_surest(built):
    """Heavy Storm's rulings in the English rulebook are linked to it and also
    write its English name: each says "linked" (a link is surer than a name
    in the text; they said "english_text" before 2026-12-02)."""
    import duckdb

    data = json.loads(card(built[1], "Heavy Storm", "--json").stdout)
    with duckdb.connect(str(built[1]), read_only=True) as con:
        linked = {r[0] for r in con.execute("SELECT record_id FROM card_mentions WHERE konami_id = ?",
                                            [data["konami_id"]]).fetchall()}
    how = {r["record_id"]: r["how"] for r in data["rulings"]}
    in_rulebook = {r["record_id"] for r in data["rulings"] if r["source_id"] == "konami-tcg-rulebook-v10"}
    assert linked & in_rulebook  # the case this test is about: linked and written in English
    assert all(how[rid] == "linked" for rid in linked if rid in how)
