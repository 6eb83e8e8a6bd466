"""Issue 37 item 2: the Python API (pipeline.api) answers what the CLI
prints with --json, raises the CLI's errors, and the README's bot example
runs as written."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.api import Card, Rulings
from pipeline.errors import LoadError, SQLError, UsageError
from conftest import ROOT



def cli_json(db: Path, *args: str):
    """(exit code, the JSON the command printed: its result, or its error)
    of ``rulings ARGS --db DB --json`` in a process of its own (DuckDB opens
    a file once per process with one configuration)."""
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", *args, "--db", str(db), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    if out.returncode:
        return out.returncode, json.loads(out.stderr)
    return 0, json.loads(out.stdout)


def same(value):
    """``value`` as the CLI's JSON gives it (dates and other values as text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


@pytest.fixture(scope="module")
def api(built):
    with Rulings(built[1]) as db:
        yield db


@pytest.mark.parametrize("kind, event", [("synchro_summoned", "face_down"), ("counters", "temp_banish"),
                                         ("summoned_by_own_procedure", "temp_banish")])
def test_ask_answers_what_rulings_ask_prints(api, built, kind, event):
    answer = api.ask(kind, event)
    assert same(answer) == cli_json(built[1], "ask", kind, event)[1]
    assert answer["verdict"] in {"kept", "lost", "not_applicable", "conditional", "unknown"}


@pytest.mark.parametrize("name", ["Book of Moon", "月之書", "月之书", "14087893", 14087893, "Ash Blossom & Joyous Spring"])
def test_card_and_rulings_answer_what_rulings_card_prints(api, built, name):
    card = api.card(name)
    code, printed = cli_json(built[1], "card", str(name))
    assert code == 0 and isinstance(card, Card)
    assert (card.passcode, card.names) == (printed["passcode"], printed["names"])
    rulings = api.rulings(card)
    assert same(rulings) == printed["rulings"] and len(rulings) == printed["count"] > 0
    assert api.rulings(name, limit=2) == rulings[:2]
    dates = [r["dates"][-1] for r in rulings if r["dates"]]
    assert dates == sorted(dates, reverse=True)  # newest first


def test_book_of_moon_is_one_card_by_every_name(api):
    cards = {api.card(n) for n in ("Book of Moon", "月の書", "月之書", "月之书", 14087893)}
    assert {c.passcode for c in cards} == {14087893}
    assert api.card("Book of Moon").name == "Book of Moon"


def test_show_and_changes_answer_what_the_commands_print(api, built):
    record_id = api.rulings("Book of Moon", limit=1)[0]["record_id"]
    shown = api.show(record_id)
    assert shown["record_id"] == record_id and shown["url"].startswith("http")
    assert same(shown) == cli_json(built[1], "show", record_id)[1]
    assert same(api.changes(0)) == cli_json(built[1], "changes", "--since", "0")[1]
    assert same(api.rule_changes(0)) == cli_json(built[1], "changes", "--rules", "--since", "0")[1]


def test_sql_returns_rows_as_dicts_with_duckdbs_values(api, built):
    rows = api.sql("SELECT verdict, count(*) AS n FROM rules GROUP BY 1 ORDER BY 1")
    assert rows == [dict(r) for r in cli_json(built[1], "sql", "SELECT verdict, count(*) AS n FROM rules "
                                                               "GROUP BY 1 ORDER BY 1")[1]]
    assert sum(r["n"] for r in rows) == api.sql("SELECT count(*) AS n FROM rules")[0]["n"] > 100
    dated = api.sql("SELECT date FROM record_dates WHERE valid ORDER BY date LIMIT 1")
    assert isinstance(dated[0]["date"], dt.date)
    assert api.sql("SELECT name_key('月之書') AS k") == [{"k": "月之书"}]
    assert len(api.sql("SELECT * FROM records", max_rows=3)) == 3
    assert len(api.sql("SELECT * FROM range(500)", max_rows=None)) == 500


@pytest.mark.parametrize("call, args", [("ask", ("no_such_kind", "face_down")), ("card", ("ash blossom",)),
                                        ("card", ("999999999",)), ("show", ("r0000000000000000",)),
                                        ("changes", (99,)), ("sql", ("SELEC 1",))])
def test_errors_are_the_clis(api, built, call, args):
    """The same class (its name is the CLI's JSON error type), message and place."""
    with pytest.raises(UsageError) as caught:
        getattr(api, call)(*args)
    argv = {"ask": ["ask", *args], "card": ["card", *args], "show": ["show", *args],
            "changes": ["changes", "--since", str(args[0])], "sql": ["sql", *args]}[call]
    code, error = cli_json(built[1], *argv)
    assert code == 2 and error["type"] == type(caught.value).__name__
    assert (error["error"], error["place"]) == (caught.value.message, caught.value.place)


def test_sql_is_sandboxed_and_read_only(api, tmp_path):
    with pytest.raises(SQLError, match="disabled by configuration"):
        api.sql(f"COPY records TO '{tmp_path / 'x.csv'}'")
    with pytest.raises(SQLError, match="lock_configuration|locked"):
        api.sql("SET enable_external_access = true")
    with pytest.raises(SQLError, match="read-only"):
        api.sql("DELETE FROM rules")
    assert not (tmp_path / "x.csv").exists()


def test_a_missing_or_foreign_database_is_the_clis_error(tmp_path):
    with pytest.raises(UsageError, match="no database at"):
        Rulings(tmp_path / "none.duckdb")
    (tmp_path / "empty.duckdb").write_bytes(b"")
    with pytest.raises(LoadError):
        Rulings(tmp_path / "empty.duckdb")


def test_the_readmes_bot_example_runs_as_written(built, tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Use the database from Python (bots, notebooks)\n", 1)[1].split("\n### ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)
    data = tmp_path / "data"
    data.mkdir()
    (data / "rulings.duckdb").write_bytes(built[1].read_bytes())
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "RULINGS_DATA": str(data), "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Ash Blossom & Joyous Spring (14558127)" and len(lines) >= 7
    assert any(line.startswith("no card named 'ash blossom' (did you mean 'Ash Blossom & Joyous Spring', ")
               for line in lines)
    count = Rulings(built[1]).sql("SELECT count(*) AS n FROM records")[0]["n"]
    assert lines[-2:] == ["kept", f"[{{'n': {count}}}]"]


@pytest.mark.parametrize("name", ["Dark Magician", "dark magician", "黑魔导", "Polymerization"])
def test_a_name_two_passcodes_share_finds_the_one_its_rulings_are_linked_to(api, name):
    """Dark Magician is 36996508 (an alternate artwork) and 46986414, whose rulings the mentions link
    to; the lookup picks the passcode most mentions link to, never one with no ruling."""
    english = {"dark magician": "Dark Magician", "黑魔导": "Dark Magician"}.get(name, name)
    shared = api.sql("SELECT n.passcode, count(m.passcode) AS linked FROM card_names n "
                     f"LEFT JOIN card_mentions m USING (passcode) WHERE n.name = '{english}' GROUP BY 1 ORDER BY 2 DESC")
    assert len(shared) == 2 and shared[0]["linked"] > shared[1]["linked"]
    card = api.card(name)
    assert card.passcode == shared[0]["passcode"] and card.names["en"] == english
    assert len(api.rulings(card)) >= shared[0]["linked"] // 2 > 0
