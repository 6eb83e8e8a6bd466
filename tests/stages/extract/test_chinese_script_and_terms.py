"""Chinese script and vocabulary (pipeline/chinese.py): OpenCC by region, its
known traps, regional game terms, script detection, and search keys."""

import pytest

from pipeline.chinese import (
    LangTag, canonical_text, detect_script, match_key, name_key, opencc_config, parse_lang_tag, regional_term_table,
    regional_terms, resolve_script_region, script_counts, to_simplified,
)

TRADITIONAL = [("Hant", "TW"), ("Hant", "HK"), ("Hant", "")]


def canon(text, script="Hant", region="TW"):
    return canonical_text(text, "zh", script, region)


def test_config_by_region_and_none_for_simplified():
    assert [opencc_config("Hant", r) for r in ("TW", "HK", "MO", "", "CN")] == ["tw2sp", "hk2s", "hk2s", "t2s", "t2s"]
    assert opencc_config("Hans", "CN") is None and opencc_config("Hans", "TW") is None


# --------------------------------------------------------------------------- OpenCC traps, both directions:
# Traditional text comes out in canonical Simplified; Simplified text is left exactly as it is.

@pytest.mark.parametrize("script, region", TRADITIONAL)
@pytest.mark.parametrize("traditional, simplified", [
    ("把1隻怪獸特殊召喚，那隻怪獸", "把1只怪兽特殊召唤，那只怪兽"),  # a numeral + 只 (not 隻 kept, not 1只 -> 1隻)
    ("發動效果", "发动效果"),  # 发动, never 髮動
    ("裡側守備表示", "里侧守备表示"),  # Taiwan community spelling
    ("裏側守備表示", "里侧守备表示"),  # Konami Asia's official spelling
    ("干擾", "干扰"),
    ("「珠寶皇后」之後", "「珠宝皇后」之后"),  # the 后 of a card name is not 後
    ("記述著『特殊召喚』的效果，接著", "记述着『特殊召唤』的效果，接着"),  # 著 after a verb is 着
    ("「神之宣告」，攻擊宣告", "「神之宣告」，攻击宣告"),  # tw2sp's phrase table would make 声明
    ("「亞空間物質傳送裝置」", "「亚空间物质传送装置」"),  # ... and 发送设备
    ("「」『』“”", "「」『』“”"),  # quote marks OpenCC leaves alone
])
def test_traditional_traps_come_out_right(script, region, traditional, simplified):
    assert canon(traditional, script, region) == simplified


@pytest.mark.parametrize("simplified", [
    "把1只怪兽特殊召唤，那只怪兽", "发动效果", "里侧守备表示", "干扰", "「珠宝皇后」之后", "记述着『特殊召唤』的效果",
    "「」『』“”", "「沈默的剑士」", "著名的「乾坤一掷」",
])
@pytest.mark.parametrize("region", ["CN", ""])
def test_simplified_text_is_never_converted(simplified, region):
    assert canon(simplified, "Hans", region) == simplified
    assert to_simplified(simplified, "Hans", region) == simplified
    assert name_key(simplified) == match_key(simplified)  # 沈 and 乾 would become 沉 and 干 under t2s


def test_zhu_is_kept_where_it_is_a_word_of_its_own():
    assert canon("顯著、著名、記述著") == "显著、著名、记述着"


def test_card_names_are_converted_by_characters_not_phrases():
    # tw2s inside 「」: no phrase table rewrites a card name.
    assert canon("「哥布林突擊部隊」的效果") == "「哥布林突击部队」的效果"
    assert to_simplified("星塵龍", "Hant", "TW") == "星尘龙"


# --------------------------------------------------------------------------- regional terms

def test_term_table_has_no_identity_rows():
    for canonical, variants in regional_term_table():
        assert canonical not in variants["CN"], canonical
        assert any(variants.values()), canonical


@pytest.mark.parametrize("script, region", TRADITIONAL)
def test_every_traditional_variant_maps_to_its_canonical_term(script, region):
    regions = ("TW", "HK") if not region else (region,)
    for canonical, variants in regional_term_table():
        for r in regions:
            for variant in variants[r]:
                assert canon(variant, script, region) == canonical, (variant, region)


@pytest.mark.parametrize("traditional, canonical", [
    ("同步召喚的怪獸", "S召唤的怪兽"), ("融合·同步·超量·連結召喚", "融合·S·X·连接召唤"),
    ("超量召喚", "X召唤"), ("連結召喚", "连接召唤"), ("靈擺召喚", "P召唤"), ("靈擺區域", "P区域"),
    ("從額外牌組特殊召喚", "从额外卡组特殊召唤"), ("從手牌覆蓋", "从手卡盖放"), ("祭品召喚", "上级召唤"),
])
def test_taiwan_terms(traditional, canonical):
    assert canon(traditional) == canonical


def test_mainland_terms_and_card_names_are_not_terms():
    assert canon("同调召唤、灵摆召唤、超量素材、手牌", "Hans", "CN") == "S召唤、P召唤、X素材、手卡"
    assert canon("「同调解除」把同调怪兽", "Hans", "CN") == "「同调解除」把S怪兽"
    assert canon("「同步解除」把同步怪獸") == "「同步解除」把S怪兽"
    # Taiwan-only variants are plain words on a mainland page: 覆盖 means "to cover" there.
    assert canon("覆盖", "Hans", "CN") == "覆盖"
    assert ("覆盖", "盖放") in regional_terms("Hant", "TW") and ("覆盖", "盖放") not in regional_terms("Hans", "CN")


def test_variants_are_converted_like_the_text():
    # tw2sp turns 連結 into 链接, t2s into 连结: each page gets the form its own text has.
    assert ("链接", "连接") in regional_terms("Hant", "TW")
    assert ("连结", "连接") in regional_terms("Hant", "")


# --------------------------------------------------------------------------- script and region

def test_script_counts_use_characters_only_one_script_has():
    assert script_counts("發動裡側") == (4, 0)  # in Big5, not in GB2312
    assert script_counts("发动里侧") == (0, 3)  # 里 is in both (a village, a mile); 发 动 侧 only in GB2312
    assert script_counts("皇后只台著") == (0, 0)  # shared by both scripts
    assert detect_script("同步召喚的怪獸") == "Hant" and detect_script("S召唤的怪兽") == "Hans"
    assert detect_script("皇后") == ""


@pytest.mark.parametrize("tag, expected", [
    ("zh-TW", LangTag("zh", "Hant", "TW")), ("zh-Hant-TW", LangTag("zh", "Hant", "TW")),
    ("zh-Hant-HK", LangTag("zh", "Hant", "HK")), ("zh_MO", LangTag("zh", "Hant", "HK")),
    ("zh-Hant", LangTag("zh", "Hant", "")), ("zh-CN", LangTag("zh", "Hans", "CN")),
    ("zh-hans", LangTag("zh", "Hans", "")), ("en-US", LangTag("en", "", "")),
])
def test_parse_lang_tag(tag, expected):
    assert parse_lang_tag(tag) == expected


# 36 Traditional-only and 32 Simplified-only characters: enough to overrule a declaration.
TW_TEXT = "同步召喚的怪獸變成裡側或被一時除外後，仍然是同步召喚的怪獸。從額外牌組特殊召喚的怪獸變成裡側表示後，發動效果。" * 2
CN_TEXT = "S召唤的怪兽变成里侧或被一时除外后，仍然是S召唤的怪兽。从额外卡组特殊召唤的怪兽变成里侧表示后，发动效果。" * 2


def test_declared_script_and_region_are_used():
    assert resolve_script_region(TW_TEXT, "Hant", "TW") == ("Hant", "TW", [])
    assert resolve_script_region(TW_TEXT, "", "", parse_lang_tag("zh-Hant-HK")) == ("Hant", "HK", [])
    assert resolve_script_region(CN_TEXT, "Hans", "CN") == ("Hans", "CN", [])


def test_undeclared_script_is_detected():
    assert script_counts(TW_TEXT) == (36, 0) and script_counts(CN_TEXT) == (0, 32)
    assert resolve_script_region(TW_TEXT) == ("Hant", "", [])
    assert resolve_script_region(CN_TEXT) == ("Hans", "", [])
    assert resolve_script_region("皇后") == ("Hans", "", [])  # no evidence: Simplified, never converted


def test_a_declaration_the_text_contradicts_is_overruled():
    script, region, warnings = resolve_script_region(CN_TEXT, "Hant", "TW", source_id="p")
    assert (script, region) == ("Hans", "")
    assert warnings[0].startswith("p: declared script Hant but the text is Hans (0 Traditional-only, ")
    script, region, warnings = resolve_script_region(TW_TEXT, "Hans", "CN", parse_lang_tag("zh-TW"), "p")
    assert (script, region) == ("Hant", "TW") and "treated as Hant" in warnings[0]


def test_a_few_characters_do_not_overrule_a_declaration():
    # One Traditional-looking card name in a Simplified sentence is not evidence enough.
    assert resolve_script_region("「星塵龍」的效果发动", "Hans", "CN") == ("Hans", "CN", [])


# --------------------------------------------------------------------------- keys

@pytest.mark.parametrize("a, b", [
    ("幻龍星－嘲風", "幻龙星-嘲风"), ("Ｎｏ．３９　希望皇霍普", "No.39 希望皇霍普"), ("（）", "()"),
    ("★", "☆"), ("神影依・米德拉什", "神影依·米德拉什"), ("星塵龍", "星尘龙"), ("死之牌組破壞病毒", "死之卡组破坏病毒"),
    ("光神機–櫻火", "光神机-樱火"),
])
def test_name_keys_fold_script_width_and_terms(a, b):
    assert name_key(a) == name_key(b)


def test_keys_are_never_the_stored_text():
    assert match_key("幻龙星－嘲风") == "幻龙星-嘲风"
    assert name_key("「月之書」") != name_key("月之书")  # quotes are part of a name's text, not stripped
