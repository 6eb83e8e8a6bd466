"""Input files and text a terminal shows (issue 32, items 13-15): files that
are not regular files, scenario ids that repeat or hold control characters,
control characters from character references, every printed line made safe
for a terminal, and pages without a declared charset read in an encoding of
their language."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import jsonschema
import pytest
from click.testing import CliRunner

from conftest import GOLD, ROOT, import_module_from, make_corpus
from corpus_kit import GOOD_HTML, PageSpec, write_corpus
from pipeline.cli import main
from pipeline.encoding import decode_bytes
from pipeline.cleantext import CONTROL_CHARS
from pipeline.run import build
from pipeline.terminal import JSON_UNSAFE, UNSAFE, json_safe, terminal_safe

SCHEMA = json.loads((ROOT / "schema" / "scenario.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
ASK = {"turn": 1, "question": "can_conduct_battle_phase", "player": "A"}


def run(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def cli(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real command in a process of its own (a FIFO that blocked would hang the test process)."""
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """(corpus, db, engine) of three bundled pages."""
    tmp = tmp_path_factory.mktemp("small")
    corpus = make_corpus(tmp / "c", ["seed-000-battle-position", "seed-003-battle-phase",
                                     "seed-004-face-down-temp-banish"])
    db, engine = tmp / "out" / "r.duckdb", tmp / "out" / "e.py"
    assert build(corpus, db, engine).errors == []
    return corpus, db, engine


@pytest.fixture(scope="module")
def engine_module(small):
    """The engine of the small build, imported."""
    return import_module_from(small[2], "engine_input_files")


# --------------------------------------------------------------------------- 13: only regular files are read

def _odd_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, how the error names its kind)."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    return {"fifo": (fifo, "a named pipe (FIFO)"), "device": (Path("/dev/zero"), "a character device"),
            "folder": (folder, "a folder")}


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_file_that_is_not_a_regular_file_is_refused_with_one_error_line(small, tmp_path, kind):
    _, db, engine = small
    path, what = _odd_files(tmp_path)[kind]
    cases = [(["scenario", path, "--engine-out", engine], "FILE"), (["evaluate", "--gold", path, "--db", db], "--gold"),
             (["evaluate", "--statements", path, "--db", db], "--statements")]
    if kind != "folder":  # --engine-out names an output of build too: click refuses a folder there itself
        cases.append((["scenario", GOLD / "scenarios_public.json", "--engine-out", path], "--engine-out"))
    for args, place in cases:
        out = cli(*args)  # a FIFO opened for reading would wait for a writer: the timeout would fail the test
        assert out.returncode == 2, (args, out.stderr)
        assert out.stdout == ""
        assert out.stderr == f"Error: {place}: {path} is {what}, not a regular file\n"


def test_a_missing_file_is_one_error_line(small, tmp_path):
    _, db, engine = small
    missing = tmp_path / "nothing.json"
    for args, place in ((["scenario", missing, "--engine-out", engine], "FILE"),
                        (["evaluate", "--gold", missing, "--db", db], "--gold")):
        out = cli(*args)
        assert (out.returncode, out.stdout, out.stderr) == (2, "", f"Error: {place}: {missing}: no such file\n")


def test_a_symlink_to_a_regular_file_is_read_and_one_to_a_fifo_is_refused(small, tmp_path):
    _, db, engine = small
    link = tmp_path / "link.json"
    link.symlink_to(GOLD / "scenarios_public.json")
    assert cli("scenario", link, "--engine-out", engine).returncode == 0
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    gold_link = tmp_path / "gold.csv"
    gold_link.symlink_to(fifo)
    out = cli("evaluate", "--gold", gold_link, "--db", db)
    assert (out.returncode, out.stderr) == (2, f"Error: --gold: {gold_link} is a named pipe (FIFO), not a regular file\n")


def test_an_export_json_that_is_a_fifo_does_not_block_the_export(small, tmp_path):
    """A FIFO (or a symlink to one) named export.json is no export's manifest:
    the export refuses the folder at once with one line, never blocks on it
    (cli() has a timeout), and leaves it as it was."""
    _, db, _ = small
    for name in ("fifo", "link"):
        target = tmp_path / name
        target.mkdir()
        fifo = tmp_path / f"{name}.pipe"
        os.mkfifo(fifo)
        if name == "fifo":
            fifo.rename(target / "export.json")
        else:
            (target / "export.json").symlink_to(fifo)
        out = cli("export", target, "--db", db, "--format", "jsonl")
        assert out.returncode == 2, out.stderr
        assert out.stderr.count("Error:") == 1 and "export.json that is no export's manifest" in out.stderr
        assert sorted(p.name for p in target.iterdir()) == ["export.json"]


# --------------------------------------------------------------------------- 13: scenario ids

def _scenario(sid) -> dict:
    return {"id": sid, "events": [], "ask": dict(ASK)}


@pytest.mark.parametrize("ids, dup, positions", [
    (["a", "b", "a"], "a", "[0], [2]"),
    (["x", "x", "y", "x"], "x", "[0], [1], [3]"),
])
def test_scenarios_with_the_same_id_are_all_refused_naming_their_positions(small, engine_module, tmp_path, ids, dup,
                                                                           positions):
    _, _, engine = small
    path = tmp_path / "s.json"
    path.write_text(json.dumps([_scenario(i) for i in ids]), encoding="utf-8")
    out = cli("scenario", path, "--engine-out", engine)
    assert out.returncode == 2
    unique = [i for i in ids if i != dup]
    assert [line for line in out.stdout.splitlines() if not line.startswith(" ")] == [f"{i}: false" for i in unique]
    errors = out.stderr.splitlines()
    want = f"Error: scenario {dup!r}: field 'id': scenarios {positions} have the same id; ids must be unique"
    assert errors == [want] * ids.count(dup)
    answers = engine_module.answer_all([_scenario(i) for i in ids])
    assert [a.get("field") for a in answers] == ["id" if i == dup else None for i in ids]
    assert all("answer" in a for a, i in zip(answers, ids) if i != dup)


@pytest.mark.parametrize("sid, index, code", [
    ("line\r\nforged: true", 4, 0x0D),
    ("bell\x07", 4, 0x07),
    ("nul\x00x", 3, 0x00),
    ("\x1b[31mred", 0, 0x1B),
    ("csi\x9b2J", 3, 0x9B),
    ("rtl\u202eevil", 3, 0x202E),
    ("sep\u2028x", 3, 0x2028),
    ("tab\tx", 3, 0x09),
])
def test_an_id_with_control_or_bidi_characters_is_refused_and_never_echoed(small, engine_module, tmp_path, sid, index,
                                                                           code):
    _, _, engine = small
    assert not VALIDATOR.is_valid(_scenario(sid))
    with pytest.raises(engine_module.ScenarioError) as caught:
        engine_module.validate(_scenario(sid))
    assert caught.value.scenario_id == "?" and caught.value.field == "id"
    message = (f"scenario '?': field 'id': character {index} is U+{code:04X}: an id may not hold control, bidi or "
               "line-separator characters")
    assert str(caught.value) == message
    path = tmp_path / "s.json"
    path.write_text(json.dumps([_scenario(sid), _scenario("fine")]), encoding="utf-8")
    out = cli("scenario", path, "--engine-out", engine)
    assert (out.returncode, out.stderr) == (2, f"Error: {message}\n")
    assert out.stdout.startswith("fine: false\n")
    assert not any(UNSAFE.search(line) for line in (out.stdout + out.stderr).splitlines())


@pytest.mark.parametrize("sid", ["月之书-1", "Book of Moon → flip", "emoji 🌙", "a/b:c#d", "\\x1b (written out)"])
def test_ids_of_printable_text_are_accepted_by_the_engine_and_the_schema(engine_module, sid):
    assert VALIDATOR.is_valid(_scenario(sid))
    assert engine_module.answer(_scenario(sid))["id"] == sid


def test_the_schema_pattern_forbids_exactly_the_engines_code_points(engine_module):
    pattern = SCHEMA["$defs"]["scenario"]["properties"]["id"]["pattern"]
    ranges = "".join(f"\\u{lo:04x}" + (f"-\\u{hi:04x}" if hi > lo + 1 else f"\\u{hi:04x}" if hi > lo else "")
                     for lo, hi in engine_module._ID_FORBIDDEN)
    # (?![\s\S]): the end of the text in every regex dialect (a Python $ also matches before a last newline)
    assert pattern == f"^[^{ranges}]+(?![\\s\\S])"
    for code in (0x00, 0x0A, 0x1F, 0x7F, 0x85, 0x9F, 0x61C, 0x200E, 0x202A, 0x2029, 0x2066, 0x2069):
        assert not VALIDATOR.is_valid(_scenario(f"a{chr(code)}")) and not VALIDATOR.is_valid(_scenario(f"{chr(code)}a"))
    for code in (0x20, 0x7E, 0xA0, 0x200D, 0x2030, 0x206A, 0x4E00):
        assert VALIDATOR.is_valid(_scenario(f"a{chr(code)}"))


# --------------------------------------------------------------------------- 14: character references

REFS = "&#27;[31m红&#x1b;]0;title&#x07;&#x9b;2J&#0;&#x7f;&#x81;&#X85;"
# What stays of them: &#x9b; and &#X85; are windows-1252's › and … (HTML), &#0; is U+FFFD; the rest is removed.
REFS_READ = "[31m红]0;title›2J\ufffd…"


@pytest.fixture(scope="module")
def referenced(tmp_path_factory):
    """A build of an HTML page and a text page whose rulings, heading and link hold control character references."""
    tmp = tmp_path_factory.mktemp("refs")
    html = (GOOD_HTML.replace("指示物全部消失", f"指示物{REFS}全部消失")
            .replace("</main>", f'<p><a href="https://x.org/card&#x1b;[31m&#127;&#x8d;?id=1">「月之书」</a>的效果{REFS}'
                                '发动。</p><p>放置指示物的卡变成里侧后，指示物全部消失。&#x1b;[0m</p></main>')
            .replace("<h2>指示物</h2>", "<h2>指示&#x1b;[1m物</h2>")
            .replace("<p>里侧的卡片是非公开情报。", '<p><a href="https://x.org/&#x1b;[31m&#127;">里侧</a>的卡片是非公开情报。'))
    text = f"Battle Position\n\nA monster's battle position {REFS} can be changed once per turn. &amp;#27;x\n"
    corpus = write_corpus(tmp / "c", [PageSpec("ref-page", html),
                                      PageSpec("ref-text", text, format="text", language="en", script="Latn",
                                               region="")])
    result = build(corpus, tmp / "r.duckdb", tmp / "e.py")
    assert result.errors == []
    return result, tmp / "r.duckdb"


def test_control_characters_from_references_are_removed_like_raw_ones(referenced):
    result, db = referenced
    con = duckdb.connect(str(db), read_only=True)
    rows = dict(con.execute("SELECT source_id || ':' || seq, text FROM records").fetchall())
    sections = {s for (s,) in con.execute("SELECT DISTINCT section_path FROM records").fetchall()}
    stored = [v for (v,) in con.execute(
        "SELECT text FROM records UNION ALL SELECT section_path FROM records UNION ALL SELECT coalesce(url, '') "
        "FROM card_mentions UNION ALL SELECT coalesce(faq_url, '') FROM record_dates").fetchall()]
    con.close()
    assert f"放置指示物的卡变成里侧或被一时除外后，指示物{REFS_READ}全部消失。17/3/24" in rows.values()
    assert f"「月之书」的效果{REFS_READ}发动。" in rows.values()
    assert f"A monster's battle position {REFS_READ} can be changed once per turn. x" in rows.values()
    assert "里侧·一时除外 / 指示[1m物" in sections
    assert "https://x.org/card[31m?id=1" in stored  # the card link's target
    assert not any(CONTROL_CHARS.search(v) for v in stored)
    assert "ref-page: 12 control characters written as character references removed, the first U+001B" in result.warnings


def test_the_commands_print_the_referenced_page_without_control_characters(referenced):
    _, db = referenced
    con = duckdb.connect(str(db), read_only=True)
    records = [r for (r,) in con.execute("SELECT record_id FROM records ORDER BY ALL").fetchall()]
    rule = con.execute("SELECT info_kind, event FROM rules WHERE len(record_ids) > 0 ORDER BY ALL LIMIT 1").fetchone()
    con.close()
    commands = [["show", r] for r in records] + [["sql", "SELECT * FROM records"], ["card", "月之书"],
                                                 ["changes", "--since", "0"], ["ask", *rule]]
    for args in commands:
        out = run(*args, "--db", db)
        assert out.exit_code == 0, (args, out.output)
        assert not any(UNSAFE.search(line) for line in out.output.split("\n")), (args, out.output)
    assert REFS_READ in run("card", "月之书", "--db", db).output


def test_a_link_target_loses_control_characters_from_references():
    from pipeline.cleantext import clean_href, clean_text

    assert clean_href("https://x.org/\x1b[31m\x7f\x9b") == "https://x.org/[31m"
    assert clean_text("a&#x1b;b&amp;#27;c\x85d") == "abcd"


@pytest.mark.parametrize("text, shown", [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("one\r\nError: forged", "one\\r\\nError: forged"),
    ("bell\x07nul\x00del\x7f", "bell\\x07nul\\x00del\\x7f"),
    ("csi\x9b2J nel\x85", "csi\\x9b2J nel\\x85"),
    ("rtl\u202etxt.exe isolate\u2066x\u2069 sep\u2028", "rtl\\u202etxt.exe isolate\\u2066x\\u2069 sep\\u2028"),
    ("tab\tkept 月之书 ünïcode", "tab\tkept 月之书 ünïcode"),
    ("lone \udc80 surrogate", "lone \\udc80 surrogate"),
])
def test_terminal_safe_escapes_what_a_terminal_acts_on(text, shown):
    assert terminal_safe(text) == shown
    assert terminal_safe(shown) == shown  # escaping twice changes nothing more
    assert not UNSAFE.search(shown)


@pytest.mark.parametrize("value", [
    {"t": "\x1b[31m\x9b\x7f\u202e\u2028 月"},
    ["a\r\nb", {"k\x85": "\u2066x"}, 1, None],
])
def test_json_output_escapes_what_json_leaves_raw_and_keeps_the_value(value):
    text = json_safe(json.dumps(value, ensure_ascii=False, indent=2))
    assert not JSON_UNSAFE.search(text) and not re.search("[\x00-\x09\x0b-\x1f]", text)
    assert json.loads(text) == value


PAYLOAD = "\x1b[31m\r\nError: forged\x07\x9b2J\u202e"
PAYLOAD_SHOWN = "\\x1b[31m\\r\\nError: forged\\x07\\x9b2J\\u202e"


@pytest.fixture(scope="module")
def planted(small, tmp_path_factory):
    """A copy of the small build whose ruling texts end in control characters (a database from before the
    cleaning, or edited with `sql --write`), with a change of run 1 to list."""
    _, db, _ = small
    copy = tmp_path_factory.mktemp("planted") / "r.duckdb"
    copy.write_bytes(db.read_bytes())
    con = duckdb.connect(str(copy))
    con.execute("UPDATE records SET text = text || ?, section_path = section_path || ?", [PAYLOAD, PAYLOAD])
    con.execute("INSERT INTO record_changes SELECT 1, record_id, source_id, 'added' FROM records LIMIT 3")
    rule = con.execute("SELECT info_kind, event FROM rules WHERE len(record_ids) > 0 ORDER BY ALL LIMIT 1").fetchone()
    record = con.execute("SELECT record_ids[1] FROM rules WHERE info_kind = ? AND event = ?", rule).fetchone()[0]
    passcode = con.execute("SELECT passcode FROM card_mentions WHERE passcode IS NOT NULL LIMIT 1").fetchone()[0]
    con.close()
    return copy, rule, record, passcode


def test_every_text_command_prints_stored_control_characters_escaped(planted):
    db, (kind, event), record, passcode = planted
    commands = [["show", record], ["card", passcode], ["ask", kind, event], ["changes", "--since", "0"],
                ["sql", "SELECT text, section_path FROM records LIMIT 2"],
                ["sql", "SELECT chr(27) || '[2J' AS \"col\x1b\", chr(8238) AS x"]]
    for args in commands:
        out = run(*args, "--db", db)
        assert out.exit_code == 0, (args, out.output)
        assert not any(UNSAFE.search(line) for line in out.output.split("\n")), (args, out.output)
    assert PAYLOAD_SHOWN in run("show", record, "--db", db).output
    assert PAYLOAD_SHOWN in run("ask", kind, event, "--db", db).output
    assert "\\x1b[2J" in run("sql", "SELECT chr(27) || '[2J' AS x", "--db", db).output


def test_json_output_of_the_commands_holds_the_same_text_escaped(planted):
    db, (kind, event), record, passcode = planted
    for args in (["show", record], ["card", passcode], ["ask", kind, event], ["changes", "--since", "0"],
                 ["sql", "SELECT text FROM records LIMIT 2"]):
        out = run(*args, "--db", db, "--json")
        assert out.exit_code == 0 and not JSON_UNSAFE.search(out.output), args
        assert any(PAYLOAD in text for text in _strings(json.loads(out.output))), args


def _strings(value):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_error_lines_escape_what_the_user_typed(small):
    _, db, _ = small
    out = run("show", "r\x1b[31m\r\nError: forged", "--db", db)
    assert out.exit_code == 2 and out.output.count("\n") == 1 and not UNSAFE.search(out.output.rstrip("\n"))
    out = run("sql", "SELECT \x1b[31m", "--db", db)
    assert out.exit_code == 2 and out.output.startswith("Error: SQL: ") and out.output.count("\n") == 1
    assert "\\x1b[31m" in out.output


def test_every_line_the_cli_prints_goes_through_the_one_function():
    """click.echo is called only by _echo (terminal_safe) and for JSON (json_safe): results on stdout,
    a --json command's error on stderr."""
    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "pipeline").glob("cli*.py")))
    calls = [line.strip() for line in source.splitlines() if "click.echo(" in line]
    assert calls == ["click.echo(terminal_safe(line), err=err)",
                     "click.echo(json_safe(json.dumps(data, ensure_ascii=False, default=str)), err=True)",
                     "click.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=2, default=str)))",
                     "click.echo(json_safe(json.dumps([dict(zip(columns, map(_json_value, row))) for row in rows],"]
    assert not re.search(r"^\s*print\(", source, re.M) and "sys.stdout.write" not in source


# --------------------------------------------------------------------------- 15: undeclared encodings

LATIN_TEXTS = [
    "Le café est très bon. Résumé : la règle s'applique à l'été, où l'élève déçu répond naïvement.",
    "Die Größe der Übung ist schön. Müller weiß, dass äußerst schwierige Straßen zum Schloß führen.",
    "A café résumé is short; the rest of this English ruling has no accents at all, just plain words.",
    "Señor Muñoz's «Book of Moon» costs 5 £ — no, 5 ¥ (½ price) at the Ålesund shop, © Konami.".replace("—", "-"),
]


@pytest.mark.parametrize("text", LATIN_TEXTS)
def test_an_undeclared_latin1_english_page_is_read_as_windows_1252(text):
    page = f"<html><head><title>Ruling</title></head><body><p>{text}</p></body></html>"
    decoded = decode_bytes(page.encode("latin-1"), "en-page", language="en", script="Latn")
    assert (decoded.encoding, decoded.text, decoded.warnings) == ("cp1252", page, [])


@pytest.mark.parametrize("text", [
    "\u201cBook of Moon\u201d \u2013 it\u2019s the card\u2019s effect \u2014 that\u2019s all\u2026",
    "The \u201cface-down\u201d monster\u2019s counters are lost \u2022 \u20ac5 \u2122",
])
def test_an_undeclared_windows_1252_page_keeps_its_curly_quotes(text):
    page = f"<p>{text}</p>"
    decoded = decode_bytes(page.encode("cp1252"), "en-page", language="en")
    assert (decoded.encoding, decoded.text, decoded.warnings) == ("cp1252", page, [])


@pytest.mark.parametrize("text, codec, script, region, read_as", [
    ("「月之书」的效果发动后，这张卡变成里侧表示。放置指示物的卡变成里侧后，指示物全部消失。", "gbk", "Hans", "CN", "gb18030"),
    ("「月之書」的效果發動後，這張卡變成裡側表示。放置指示物的卡變成裡側後，指示物全部消失。", "big5", "Hant", "TW", "cp950"),
    ("同步召喚的怪獸變成裡側後，仍然是同步召喚的怪獸。", "big5", "", "HK", "cp950"),
    ("S召唤的怪兽变成里侧后，仍然是S召唤的怪兽。", "gbk", "", "", "gb18030"),
])
def test_undeclared_chinese_pages_are_still_read_right(text, codec, script, region, read_as):
    page = f"<html><body><p>{text}</p></body></html>"
    decoded = decode_bytes(page.encode(codec), "zh-page", language="zh", script=script, region=region)
    assert (decoded.encoding, decoded.text, decoded.warnings) == (read_as, page, [])


@pytest.mark.parametrize("text, codec, language, script, read_as, better", [
    ("「月之书」的效果发动后，这张卡变成里侧表示。", "gbk", "en", "Latn", "cp1252", "gb18030"),
    (LATIN_TEXTS[0], "latin-1", "zh", "Hans", "gb18030", "cp1252"),
    (LATIN_TEXTS[1], "latin-1", "zh", "Hant", "gb18030", "cp1252"),
])
def test_bytes_of_another_script_than_the_page_language_are_reported(text, codec, language, script, read_as, better):
    decoded = decode_bytes(f"<p>{text}</p>".encode(codec), "p", language=language, script=script)
    assert decoded.encoding == read_as
    assert (f"p: read as {read_as}, the encoding of a page in {language}-{script}, but the bytes read better as "
            f"{better}; check the page's language in the manifest or declare its charset") in decoded.warnings


def test_a_latin1_english_page_is_built_with_its_accents(tmp_path):
    pages = [PageSpec(f"en-{i}", f"<html><body><main><h1>Rulings</h1><p>{text}</p></main></body></html>".encode(
        "latin-1"), language="en", script="Latn", region="") for i, text in enumerate(LATIN_TEXTS[:2])]
    corpus = write_corpus(tmp_path / "c", pages)
    result = build(corpus, tmp_path / "r.duckdb", tmp_path / "e.py")
    assert result.errors == [] and not any("en-" in w for w in result.warnings)
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    texts = {t for (t,) in con.execute("SELECT text FROM records").fetchall()}
    con.close()
    assert set(LATIN_TEXTS[:2]) <= texts


def test_every_unsafe_character_is_one_isprintable_refuses():
    """pipeline/terminal.py returns printable text as it is, without its patterns: that is safe only while
    every character UNSAFE (and so JSON_UNSAFE) matches is one str.isprintable() refuses. Checked over every
    code point; and each is escaped by both functions alike, whichever path a text takes."""
    unsafe = [chr(c) for c in range(0x110000) if UNSAFE.search(chr(c))]
    assert len(unsafe) == 31 + 33 + 1 + 2 + 7 + 4 + 2048 and "\t" not in unsafe
    assert not any(ch.isprintable() for ch in unsafe)
    for ch in unsafe:
        assert terminal_safe(f"a{ch}b") != f"a{ch}b" and terminal_safe(f"a{ch}b").isprintable()
        assert JSON_UNSAFE.search(ch) is None or json_safe(f'"{ch}"') == f'"\\u{ord(ch):04x}"'
    assert terminal_safe("月之书\u3000Book of Moon\t!") == "月之书\u3000Book of Moon\t!"  # not printable, still safe
