"""Hostile text in pages and the manifest reaches the generated engine only as
data: the module imports cleanly in a fresh interpreter, runs none of it, and
returns it unchanged."""

from __future__ import annotations

import ast
import datetime
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from corpus_kit import PageSpec, write_corpus
from pipeline.errors import GenerateError
from pipeline.generate import engine_tables, render, write_engine
from pipeline.run import build

# Each payload creates a marker file if it is ever run as code.
CODE = '"""; import os; os.system("touch pwned-card") #'
CODE_2 = "'''; import os; os.system('touch pwned-condition') #"
HEADING = f"注释'''{CODE.replace('card', 'heading')}\u2028\u200f"
CARD = f"{CODE}\\n\\\\x00\"'"
MARKS = "\u2028\u2029\u200f\u202e"
URL = 'https://example.org/"""+__import__("os").system("touch pwned-url")+"""'
LICENCE = "'''\\"

PAGE = (
    "# 里侧·一时除外\n\n## 前言\n\n"
    "里侧的卡片是非公开情报。基本上不能判断卡片的具体种类·等级·攻击力等情报。表侧的卡片变成里侧时，有些情报也会丢失。\n\n"
    f"## 指示物\n\n### {HEADING}\n\n"
    f"放置指示物的「{CARD}」{MARKS}变成里侧或被一时除外后，指示物全部消失。17/3/24\n"
    f"如果是「{CODE_2}」的场合，变成里侧后指示物仍然持有。18/1/12\n"
    f"如果是「{CODE_2}」的场合，变成里侧再反转后指示物也仍然持有。18/2/1\n"  # two rulings found the case
)
RULING = f"放置指示物的「{CARD}」{MARKS}变成里侧或被一时除外后，指示物全部消失。17/3/24"
# Invisible format characters (the bidi marks U+200F, U+202E) are removed from ruling text; the rest stays.
STORED_RULING = RULING.replace("\u200f", "").replace("\u202e", "")
CONDITION = f"如果是「{CODE_2}」的场合"

DUMP = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("hostile_engine", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
r = m.retains("counters", "face_down") if m.RULES else None
print(json.dumps({"citations": {rid: m.citation(rid) for rid in sorted(m.CITATIONS)},
                  "rule": r and [r.verdict, r.condition, list(r.record_ids)]}))
"""


def fresh_import(module: Path, cwd: Path) -> dict:
    """Import ``module`` in a new isolated interpreter (warnings are errors) and dump what it returns."""
    out = subprocess.run([sys.executable, "-I", "-W", "error", "-c", DUMP, str(module)], cwd=cwd,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_hostile_page_text_is_data_in_the_engine(tmp_path):
    corpus = write_corpus(tmp_path / "c", [PageSpec("hostile-page", PAGE, format="markdown", url=URL,
                                                   licence=LICENCE)])
    db, engine = tmp_path / "r.duckdb", tmp_path / "ocg_rules.py"
    result = build(corpus, db, engine)
    assert (result.errors, result.warnings) == ([], [])
    run_dir = tmp_path / "run"
    run_dir.mkdir()

    dumped = fresh_import(engine, run_dir)

    assert sorted(p.name for p in tmp_path.rglob("pwned*")) == []  # nothing ran, at import or at call
    verdict, condition, record_ids = dumped["rule"]
    assert (verdict, condition) == ("conditional", CONDITION)
    citations = [dumped["citations"][rid] for rid in record_ids]
    assert [c["text"] for c in citations] == [STORED_RULING, f"{CONDITION}，变成里侧后指示物仍然持有。18/1/12",
                                              f"{CONDITION}，变成里侧再反转后指示物也仍然持有。18/2/1"]
    assert {c["section"] for c in citations} == {f"里侧·一时除外 / 指示物 / {HEADING}"}
    assert {(c["url"], c["licence"]) for c in citations} == {(URL, LICENCE)}
    assert [c["dates"] for c in citations] == [["2017-03-24"], ["2018-01-12"], ["2018-02-01"]]

    # The same text, character for character, in the database.
    con = duckdb.connect(str(db), read_only=True)
    stored = dict(con.execute("SELECT record_id, text FROM records").fetchall())
    assert all(stored[rid] == dumped["citations"][rid]["text"] for rid in record_ids)
    assert con.execute("SELECT name FROM card_mentions ORDER BY record_id, ord").fetchall().count((CARD,)) == 1
    assert con.execute("SELECT url, licence FROM sources").fetchall() == [(URL, LICENCE)]


# Characters no page can carry into a record (normalize splits lines and drops
# NUL), written straight into the tables to check the writer itself.
RAW = ['"', "'", '"""', "'''", "\\", "\\'", "\n", "\r", "\x00", "\x1b[2J", "\u2028", "\u2029", "\u200f", "\u202e",
       "\ufeff", "{}", "%s", "\\N{BULLET}", '");__import__("os").system("touch pwned-raw")#',
       "'''\n__import__('os').system('touch pwned-raw')\n'''"]


def test_every_character_survives_the_generated_module(tmp_path):
    text = "".join(RAW)
    tables = engine_tables([], [], [], {})
    tables["CITATIONS"] = {"r0": ("hostile-src", ("2017-03-24",), text, text)}
    tables["SOURCES"] = {"hostile-src": (text, text)}
    module = tmp_path / "ocg_rules.py"
    write_engine(module, render(tables))
    dumped = fresh_import(module, tmp_path)
    assert list(tmp_path.glob("pwned*")) == []
    assert dumped["citations"]["r0"] == {"id": "r0", "source": "hostile-src", "url": text, "licence": text,
                                         "section": text, "dates": ["2017-03-24"], "text": text}
    # Each literal is one line: no scraped newline or separator splits the module's lines.
    source = module.read_text(encoding="utf-8")
    assert "\u2028" not in source and "\x00" not in source and "\r" not in source
    [line] = [l for l in source.split("\n") if l.startswith("    'r0':")]
    assert ast.literal_eval(line.strip().rstrip(",").split(": ", 1)[1]) == ("hostile-src", ("2017-03-24",), text, text)


def test_a_table_that_is_not_a_plain_literal_is_refused(tmp_path):
    """The repr of a date object is a call, not a literal: render refuses it
    (naming the table) rather than write a module that fails on import."""
    tables = engine_tables([], [], [], {})
    tables["CITATIONS"] = {"r0": ("src", (datetime.date(2017, 3, 24),), "section", "text")}
    with pytest.raises(GenerateError, match="engine table CITATIONS holds a date"):
        render(tables)
    module = tmp_path / "ocg_rules.py"
    write_engine(module, render(engine_tables([], [], [], {})))  # the plain tables still make a module
    assert "RULES_HASH = " in module.read_text(encoding="utf-8")
