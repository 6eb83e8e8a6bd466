"""The read side of the database: the questions the CLI (and other tools)
ask, each one function returning plain dicts and lists (what an earlier run
stored, read back for the next build or refresh: :mod:`pipeline.stored`;
a database measured against gold files: :mod:`pipeline.evaluation`).

Every function takes an open DuckDB connection (:func:`connect`), binds
its values as parameters, gives plain values, and raises
:class:`~pipeline.errors.UsageError` for a name the database does not know
(with a "did you mean").
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from .database import columns, duckdb_path, is_damage, open_database, unreadable
from .errors import SQLError, UsageError


def connect(db_path: Path, read_only: bool = True, sandboxed: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the database ``rulings build`` wrote, checked
    (:func:`pipeline.database.open_database`: a DuckDB file of this
    version's schema, extensions never loaded); UsageError when there is
    none at ``db_path`` (exit 2, as a missing engine module), for a path
    DuckDB would misread or a file that is no rulings database; LoadError
    when DuckDB cannot open or read it or its schema is another.
    ``sandboxed``: DuckDB may not touch the file system beyond the database
    (no COPY TO, ATTACH, other files, extensions), for SQL a user types."""
    require_file(db_path)
    return open_database(db_path, read_only=read_only, config={"enable_external_access": False} if sandboxed else None)


def require_file(db_path: Path) -> None:
    """UsageError when ``db_path`` is a path DuckDB would misread
    (:func:`pipeline.database.duckdb_path`) or names no file."""
    duckdb_path(db_path)
    if not Path(db_path).is_file():
        raise UsageError(f"no database at {db_path}; run `rulings build` first (or pass --db)")


def json_problem(exc: ValueError) -> str:
    """What is wrong with a JSON text, for a user: the decoder's message, or
    for a number over Python's digit limit that limit (not Python's advice
    to raise it)."""
    if not isinstance(exc, json.JSONDecodeError) and "integer string conversion" in str(exc):
        return f"a number of more than {sys.get_int_max_str_digits()} digits"
    return str(exc)


def unknown_name(what: str, name: str, known: list[str]) -> str:
    """'unknown event 'x' (did you mean 'y'?)', or the list of known names
    when none is close."""
    import difflib  # only for a name the database does not know: not at every command's start

    hint = difflib.get_close_matches(name, known, n=1)
    if hint:
        return f"unknown {what} {name!r} (did you mean {hint[0]!r}?)"
    return f"unknown {what} {name!r}; known: {', '.join(known)}"


def build_value(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    """The ``build_info`` value of ``key`` (``rules_hash``, ``schema_version``, ...); None when unset."""
    row = con.execute("SELECT value FROM build_info WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def row_count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """The rows of ``table``, one of ``schema/ddl.sql``'s (a name, not a value: never one a user typed)."""
    if table not in columns():
        raise UsageError(f"no table {table!r} in schema/ddl.sql", place="table")
    return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# --------------------------------------------------------------------------- rules

def conflict_list(value) -> list[dict]:
    """``rules.conflicts`` (a list of structs) as ``[{"verdict",
    "record_ids", "latest_date"}]`` with ISO date strings (None when undated)."""
    return [{"verdict": c["verdict"], "record_ids": list(c["record_ids"] or []),
             "latest_date": c["latest_date"].isoformat() if c["latest_date"] else None} for c in value or []]


def rule_report(con: duckdb.DuckDBPyConnection, info_kind: str, event: str) -> dict:
    """The rule for one (info kind, event) pair with its citations:
    ``{"info_kind", "event", "verdict", "condition", "latest_date",
    "changed_on", "conflicts": [...], "disputed_by": [record ids],
    "cases": [{"case", "fact", "values", "verdict", "record_ids",
    "condition", "en", "zh"}], "citations": [{"role", "verdict", "cases",
    "record_id", "source", "section", "status", "text", "dates", "lead_in"}]}``
    (``lead_in``: the text of the line a list item hangs under, or None)
    (dates as ISO strings: those of the sentences that make the statement;
    ``cases``: the cases of a conditional rule a citation states).
    UsageError for an unknown kind or event."""
    row = con.execute("SELECT verdict, condition, latest_date, changed_on, conflicts, disputed_by, cases FROM rules "
                      "WHERE info_kind = ? AND event = ?", [info_kind, event]).fetchone()
    if row is None:
        kinds = [r[0] for r in con.execute("SELECT DISTINCT info_kind FROM rules ORDER BY 1").fetchall()]
        evts = [r[0] for r in con.execute("SELECT DISTINCT event FROM rules ORDER BY 1").fetchall()]
        if info_kind in evts and event in kinds:
            raise UsageError(f"{info_kind!r} is an event and {event!r} an info kind: the info kind comes first "
                             f"(rulings ask {event} {info_kind})")
        if info_kind in evts:
            raise UsageError(f"{info_kind!r} is an event, not an info kind: the info kind comes first "
                             f"(rulings ask INFO_KIND {info_kind}; `rulings vocabulary` lists them)")
        if info_kind not in kinds:
            raise UsageError(unknown_name("info kind", info_kind, kinds))
        raise UsageError(unknown_name("event", event, evts))
    verdict, condition, latest, changed_on, conflicts, disputed_by, cases = row
    cases = case_list(cases)
    case_of: dict[str, list[str]] = {}
    for c in cases:
        for rid in c["record_ids"]:
            case_of.setdefault(rid, []).append(c["case"])
    cites = con.execute(
        """SELECT c.role, c.verdict, r.record_id, r.source_id, r.section_path, r.status, r.text, c.dates, p.text
           FROM rule_citations c JOIN records r USING (record_id) LEFT JOIN records p ON p.record_id = r.parent_id
           WHERE c.info_kind = ? AND c.event = ?
           ORDER BY c.role DESC, r.source_id, r.seq""", [info_kind, event]).fetchall()
    return {
        "info_kind": info_kind, "event": event, "verdict": verdict, "condition": condition or None,
        "latest_date": latest, "changed_on": changed_on, "conflicts": conflict_list(conflicts),
        "disputed_by": list(disputed_by or []), "cases": cases,
        "citations": [{"role": c[0], "verdict": c[1], "cases": case_of.get(c[2], []), "record_id": c[2], "source": c[3],
                       "section": c[4], "status": c[5], "text": c[6], "dates": [str(d) for d in (c[7] or [])],
                       "lead_in": c[8]}
                      for c in cites],
    }


def case_list(value) -> list[dict]:
    """``rules.cases`` (a list of structs) as ``[{"case", "fact", "values",
    "verdict", "record_ids", "condition", "en", "zh"}]``: each case with its
    words in English and Chinese (``schema/rule_policy.json``) and its fact
    values as JSON values (``true`` / ``false`` for a yes-no fact)."""
    from .schema import rule_policy  # the schema files' reader: only for a rule's cases, not at every command's start

    words = {c["id"]: c for c in rule_policy()["cases"]}
    out = []
    for c in value or []:
        case = words.get(c["case_id"], {})
        values = [json.loads(v) if v in ("true", "false") else v for v in c["values"] or []]
        out.append({"case": c["case_id"], "fact": c["fact"], "values": values, "verdict": c["verdict"],
                    "record_ids": list(c["record_ids"] or []), "condition": c["condition"],
                    "disputed_by": list(c["disputed_by"] or []),
                    "en": case.get("en", c["case_id"]), "zh": case.get("zh", "")})
    return out


# --------------------------------------------------------------------------- records

def _record_hint(con: duckdb.DuckDBPyConnection, record_id: str) -> str:
    """`` (did you mean 'r…'?)`` for an id cut short (the records it starts,
    up to five) or mistyped (one at most two edits away), else ``""``."""
    if not record_id:
        return ""
    close = [r[0] for r in con.execute("SELECT record_id FROM records WHERE starts_with(record_id, ?) "
                                       "ORDER BY record_id LIMIT 6", [record_id]).fetchall()]
    if not close:
        close = [r[0] for r in con.execute("SELECT record_id FROM records WHERE levenshtein(record_id, ?) <= 2 "
                                           "ORDER BY levenshtein(record_id, ?), record_id LIMIT 1",
                                           [record_id, record_id]).fetchall()]
    if not close:
        return ""
    shown = " or ".join(repr(r) for r in close[:5]) + (" or more" if len(close) > 5 else "")
    return f" (did you mean {shown}?)"


def record_provenance(con: duckdb.DuckDBPyConnection, record_id: str) -> dict:
    """One record with every column of ``records``, its source's URL and
    licence, and lists ``dates`` (raw, date, valid, reason, from_heading,
    faq_id, faq_url), ``cards`` and ``statements``. UsageError when there is
    no such record."""
    record_id = record_id.strip()
    if re.fullmatch(r"r[0-9a-f]+", record_id, re.I):
        record_id = record_id.lower()  # ids are lower-case hex: a pasted "R6F3…" is the same id
    row = con.execute("""SELECT r.*, s.url, s.licence FROM records r JOIN sources s USING (source_id)
                         WHERE record_id = ?""", [record_id]).fetchone()
    if row is None:
        raise UsageError(f"no record {record_id!r}{_record_hint(con, record_id)}")
    rec = dict(zip([d[0] for d in con.description], row))
    rec["dates"] = _dicts(con, "SELECT raw, date, valid, reason, kind, from_heading, faq_id, faq_url FROM record_dates "
                               "WHERE record_id = ? ORDER BY ord", [record_id])
    rec["cards"] = _dicts(con, "SELECT name, norm_name, kind, passcode, name_en, linked_by, name_source, url FROM card_mentions "
                               "WHERE record_id = ? ORDER BY ord", [record_id])
    rec["statements"] = _dicts(con, "SELECT info_kind, event, verdict, condition, basis, principle_id, effect, passcode "
                                    "FROM statements WHERE record_id = ?", [record_id])
    return rec


def _dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


# --------------------------------------------------------------------------- the change log

def _since(con: duckdb.DuckDBPyConnection, since: int | None) -> int:
    """The run after which changes are listed: ``since``, or by default the
    one before the latest run. UsageError for a run that does not exist."""
    last = con.execute("SELECT coalesce(max(run_id), 0) FROM runs").fetchone()[0]
    if since is None:
        return max(0, last - 1)
    if not 0 <= since <= last:
        raise UsageError(f"no run {since}: the runs are 1 to {last} (0 lists every change)", place="--since")
    return since


def list_changes(con: duckdb.DuckDBPyConnection, since: int | None = None) -> tuple[int, list[dict]]:
    """Record changes made by the runs after run ``since`` (default: the
    latest run's changes), oldest run first; returns (since, rows of
    run_id, started_at, change, record_id, source_id, section_path,
    status, text). UsageError for a run that does not exist."""
    since = _since(con, since)
    if not _has_table(con, "record_changes"):
        return since, []
    return since, _dicts(con, """
        SELECT c.run_id, u.started_at, c.change, c.record_id, c.source_id, r.section_path, r.status, r.text
        FROM record_changes c LEFT JOIN records r USING (record_id) LEFT JOIN runs u USING (run_id)
        WHERE c.run_id > ?
        ORDER BY c.run_id, c.source_id, list_position(['added', 'changed', 'retired'], c.change), r.seq,
                 c.record_id""", [since])


def list_rule_changes(con: duckdb.DuckDBPyConnection, since: int | None = None) -> tuple[int, list[dict]]:
    """The rules whose verdict changed or that became disputed or settled in
    the runs after run ``since`` (default: the latest run's; a build is run
    1 and reviews against the database it replaced), oldest run first:
    (since, rows of ``run_id``, ``started_at``, ``info_kind``, ``event``,
    ``case_id`` (``""``: the rule itself), ``change`` (verdict | disputed | settled), ``old_verdict``,
    ``new_verdict``, ``record_ids``, ``rulings``: ``[{"record_id",
    "source_id", "dates", "text"}]``). UsageError for a run that does not exist."""
    since = _since(con, since)
    if not _has_table(con, "rule_changes"):
        return since, []
    rows = _dicts(con, """
        SELECT c.run_id, u.started_at, c.info_kind, c.event, c.case_id, c.change, c.old_verdict, c.new_verdict,
               c.record_ids
        FROM rule_changes c LEFT JOIN runs u USING (run_id) WHERE c.run_id > ?
        ORDER BY c.run_id, c.info_kind, c.event, c.case_id""", [since])
    for row in rows:
        row["record_ids"] = list(row["record_ids"] or [])
        row["rulings"] = _dicts(con, """
            SELECT r.record_id, r.source_id, coalesce(list(d.date ORDER BY d.ord) FILTER (WHERE d.valid), []) AS dates,
                   r.text
            FROM records r LEFT JOIN record_dates d USING (record_id)
            WHERE r.record_id IN (SELECT unnest(?)) GROUP BY r.record_id, r.source_id, r.text
            ORDER BY r.record_id""", [row["record_ids"]])
        for ruling in row["rulings"]:
            ruling["dates"] = [d.isoformat() for d in ruling["dates"]]
    return since, rows


# --------------------------------------------------------------------------- cards

def _has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND schema_name = 'main' AND table_name = ?", [table]).fetchone()[0] > 0


@dataclass(frozen=True)
class FoundCard:
    """A card :func:`find_card` found: its Konami id, its passcodes (the
    main one first; none for Slifer the Sky Dragon and the other cards
    without one) and its names by language (``en``, ``ja``, ``zh-CN``,
    ``zh-TW``, ``ko``, ``zh-community``; a language without a name left out).
    ``name_keys``: the ``card_names.name_key`` of all its names, which
    :func:`card_rulings` matches unlinked quotes with (None: read there)."""
    konami_id: int
    passcodes: tuple[int, ...]
    names: dict[str, str] = field(hash=False)
    name_keys: tuple[str, ...] | None = field(default=None, hash=False)

    @property
    def passcode(self) -> int | None:
        return self.passcodes[0] if self.passcodes else None


# the order of a card's names, as cards.card_names gives them
_NAME_ORDER = ("en", "ja", "zh-CN", "zh-TW", "ko", "zh-community")
# a card's mentions (how often it is ruled on): ranks cards a name or a fuzzy match finds
_RULED = "(SELECT konami_id, count(*) AS ruled FROM card_mentions WHERE konami_id IS NOT NULL GROUP BY 1)"


def _found(con: duckdb.DuckDBPyConnection, konami_id: int, rows: list[tuple] | None = None) -> FoundCard:
    """Card ``konami_id`` with its passcodes (main first: the one the
    mentions link to) and names, from its ``card_names`` rows ``rows``
    ((passcode, language, name, name_key), :func:`_matching_cards`; read
    here when None). Only a card with several passcodes (an alternate
    artwork) asks ``card_mentions`` which one is the main."""
    if rows is None:
        rows = _matching_cards(con, "konami_id = ?", konami_id).get(konami_id, [])
    passcodes = sorted({r[0] for r in rows if r[0] is not None})
    if len(passcodes) > 1:
        main = con.execute("SELECT any_value(passcode) FROM card_mentions WHERE konami_id = ?",
                           [konami_id]).fetchone()[0]
        passcodes.sort(key=lambda p: (p != main, p))
    first = passcodes[0] if passcodes else None
    names: dict[str, str] = {}
    for passcode, language, name, _ in rows:
        if passcode == first and language not in names:
            names[language] = name
    keys = tuple(sorted({r[3] for r in rows if r[3]}))
    return FoundCard(konami_id, tuple(passcodes), {k: names[k] for k in _NAME_ORDER if k in names}, keys)


def find_card(con: duckdb.DuckDBPyConnection, query: str) -> FoundCard:
    """The card ``query`` names: a passcode (or, failing that, a Konami
    id), or a name in any language of ``corpus/data/card-names.tsv.gz``
    (Simplified or Traditional Chinese, the community names, Japanese,
    English, Korean): exact, then case-folded, then by key (script, width,
    case and regional terms folded), then by loose key (spaces, hyphens,
    quotes and particles dropped, ``&`` = ``and``: "blue eyes white
    dragon"), then by a fuzzy match that leaves no doubt (:func:`_confident`:
    "Ash Blosom & Joyous Spring"). A name several cards share finds the one
    most mentions link to. UsageError with the likeliest names
    (:func:`_ranked`, :func:`_did_you_mean`) when nothing matches. Read from the database's ``card_names`` (milliseconds)."""
    text = query.strip()
    if text.isdigit():
        for column in ("passcode", "konami_id"):
            found = _most_ruled_card(con, f"{column} = ?", int(text))
            if found is not None:
                return found
        raise UsageError(f"no card with passcode {text}", place="NAME")
    for where in ("name = ?", "lower(name) = lower(?)"):
        found = _most_ruled_card(con, where, text)
        if found is not None:
            return found
    from .cards import card_loose_key  # only for a name not found as written
    from .chinese import match_key, name_key  # OpenCC

    keys = sorted({name_key(text), match_key(text)} - {""})
    found = _most_ruled_card(con, "list_contains(?, name_key)", keys)
    if found is None:
        loose = sorted({card_loose_key("zh", text), card_loose_key("en", text)} - {""})
        found = _most_ruled_card(con, "list_contains(?, loose_key)", loose)
    if found is not None:
        return found
    ranked = _ranked(con, text)
    konami_id = _confident(ranked)
    if konami_id is not None:
        return _found(con, konami_id)
    raise UsageError(f"no card named {text!r}{_did_you_mean(ranked)}", place="NAME")


def _matching_cards(con: duckdb.DuckDBPyConnection, where: str, value) -> dict[int, list[tuple]]:
    """Each card one of whose ``card_names`` rows matches ``where`` (one
    ``?`` for ``value``) -> all its rows, (passcode, language, name,
    name_key) ordered by passcode (none last), language and name: one
    query for the card and its names."""
    cards: dict[int, list[tuple]] = {}
    for konami_id, *row in con.execute(
            "SELECT konami_id, passcode, language, name, name_key FROM card_names "
            f"WHERE konami_id IN (SELECT konami_id FROM card_names WHERE {where}) "
            "ORDER BY passcode NULLS LAST, language, name", [value]).fetchall():
        cards.setdefault(konami_id, []).append(tuple(row))
    return cards


def _most_ruled_card(con: duckdb.DuckDBPyConnection, where: str, value) -> FoundCard | None:
    """Of the cards :func:`_matching_cards` gives, the one most card
    mentions link to, then the lowest Konami id; None when none matches."""
    cards = _matching_cards(con, where, value)
    if len(cards) < 2:  # most names and every passcode: one card, nothing to rank
        return _found(con, *next(iter(cards.items()))) if cards else None
    best = con.execute(f"""SELECT k FROM unnest(?) AS t(k) LEFT JOIN {_RULED} m ON m.konami_id = k
        ORDER BY coalesce(m.ruled, 0) DESC, k LIMIT 1""", [sorted(cards)]).fetchone()[0]
    return _found(con, best, cards[best])


# did-you-mean: at most this many names, each scoring at least DID_YOU_MEAN_MIN (0-100)
DID_YOU_MEAN = 3
DID_YOU_MEAN_MIN = 60.0
# a misspelt name finds its card when its similarity is at least this and this much above any other card's
FUZZY_FIND_MIN = 90.0
FUZZY_FIND_MARGIN = 5.0


def _ranked(con: duckdb.DuckDBPyConnection, text: str) -> list[tuple[int, float, float, int, str]]:
    """The cards whose names come near ``text``, likeliest first, one entry
    a card: (konami_id, score, similarity, mentions, name). The similarity
    (rapidfuzz ratio, 0-100) is of the loose keys (:func:`pipeline.cards.loose_key`);
    the score the better of it and 0.9 times the best match of the query
    inside the name (a partial name: "Ash" in "Ash Blossom & Joyous Spring");
    equal scores go to the card the most mentions link to (how often it is
    ruled on). ``name``: the card's name nearest the query."""
    from rapidfuzz import fuzz, process

    from .cards import card_loose_key
    from .chinese import script_counts

    query = card_loose_key("zh" if sum(script_counts(text)) else "en", text)
    if not query:
        return []
    rows = con.execute(f"""SELECT n.loose_key, n.name, n.konami_id, coalesce(m.ruled, 0)
        FROM card_names n LEFT JOIN {_RULED} m USING (konami_id) WHERE n.loose_key <> ''""").fetchall()

    def score(q: str, key: str, **_) -> float:
        return max(fuzz.ratio(q, key), 0.9 * fuzz.partial_ratio(q, key))

    best: dict[int, tuple[int, float, float, int, str]] = {}
    for key, points, i in process.extract(query, [r[0] for r in rows], scorer=score, limit=200,
                                          score_cutoff=DID_YOU_MEAN_MIN):
        _, name, kid, ruled = rows[i]
        entry = (kid, round(points), fuzz.ratio(query, key), ruled, name)
        if kid not in best or entry[1:3] > best[kid][1:3]:
            best[kid] = entry
    return sorted(best.values(), key=lambda r: (-r[1], -r[3], r[4]))


def _confident(ranked: list[tuple[int, float, float, int, str]]) -> int | None:
    """The Konami id of the card a misspelt name surely means: its
    similarity at least :data:`FUZZY_FIND_MIN` and :data:`FUZZY_FIND_MARGIN`
    above every other card's; None otherwise."""
    if not ranked:
        return None
    top = max(ranked, key=lambda r: r[2])
    rest = max((r[2] for r in ranked if r[0] != top[0]), default=0.0)
    return top[0] if top[2] >= FUZZY_FIND_MIN and top[2] - rest >= FUZZY_FIND_MARGIN else None


def _did_you_mean(ranked: list[tuple[int, float, float, int, str]]) -> str:
    """`` (did you mean 'A', 'B'?)``: the names of the :data:`DID_YOU_MEAN`
    likeliest cards of :func:`_ranked`, best first; "" when none comes near."""
    hint = [r[4] for r in ranked[:DID_YOU_MEAN]]
    return f" (did you mean {', '.join(repr(h) for h in hint)}?)" if hint else ""


def card_rulings(con: duckdb.DuckDBPyConnection, card: FoundCard) -> list[dict]:
    """The current rulings that mention ``card``, newest first: those linked
    to it, unlinked quotes whose key is one of its names', and the
    rulings of English pages that write its English name. Each: record_id,
    source_id, section, status, text, dates (ISO, own), faq_ids, how
    (linked | key | english_text: the surest of those that find it, in
    that order, :data:`_HOW_RANK`).

    One query: the hits (:data:`_CARD_HITS`) with their records and dates,
    a row per hit and date, grouped here (a GROUP BY or an ordered list
    aggregate costs DuckDB more than the whole lookup on a cold database)."""
    keys = card.name_keys
    if keys is None:  # a card of the Python API's (pipeline.api.Rulings.rulings)
        keys = [k for (k,) in con.execute("SELECT DISTINCT name_key FROM card_names WHERE konami_id = ? "
                                          "AND name_key <> ''", [card.konami_id]).fetchall()]
    rulings: dict[str, dict] = {}
    for record_id, found_by, source_id, section, status, text, date, own, faq_id in con.execute(
            f"""WITH hits AS ({_CARD_HITS})
            SELECT h.*, r.source_id, r.section_path, r.status, r.text, d.date, d.valid AND d.kind <> 'reference',
                   d.faq_id
            FROM hits h JOIN records r USING (record_id) LEFT JOIN record_dates d USING (record_id)
            WHERE r.retired_run IS NULL""",
            {"kid": card.konami_id, "en": card.names.get("en", ""), "keys": list(keys)}).fetchall():
        ruling = rulings.get(record_id)
        if ruling is None:
            ruling = rulings[record_id] = {"record_id": record_id, "source_id": source_id, "section": section,
                                           "status": status, "text": text, "how": found_by,
                                           "dates": set(), "faq_ids": set()}
        elif _HOW_RANK[found_by] < _HOW_RANK[ruling["how"]]:
            ruling["how"] = found_by
        if own and date is not None:
            ruling["dates"].add(date)
        if faq_id is not None:
            ruling["faq_ids"].add(faq_id)
    for ruling in rulings.values():
        ruling["dates"] = [d.isoformat() for d in sorted(ruling["dates"])]
        ruling["faq_ids"] = sorted(ruling["faq_ids"])
    return sorted(rulings.values(), key=lambda x: (x["dates"][-1:] or [""], x["record_id"]), reverse=True)


# How a ruling was found to name a card, surest first: a linked mention (a link or a quote matched to the
# card), a quote whose key is one of the card's names', the English name written in an English ruling.
_HOW_RANK = {"linked": 0, "key": 1, "english_text": 2}

# The records that name a card (``$kid``: its Konami id, ``$keys``: its names' keys, ``$en``: its English
# name): linked mentions, unlinked quotes of one of its names, English rulings that write its English name.
# The CASE lowers only the English records' texts: DuckDB would lower every record's text before the
# semi-join on the source (a third of a cold query's time on the bundled database).
_CARD_HITS = """
    SELECT record_id, 'linked' AS how FROM card_mentions WHERE konami_id = $kid
    UNION ALL
    SELECT record_id, 'key' FROM card_mentions
    WHERE konami_id IS NULL AND coalesce(kind, 'card') = 'card' AND list_contains($keys, match_key)
    UNION ALL
    SELECT record_id, 'english_text' FROM records
    WHERE $en <> '' AND source_id IN (SELECT source_id FROM sources WHERE language = 'en')
      AND CASE WHEN source_id IN (SELECT source_id FROM sources WHERE language = 'en')
               THEN contains(lower(text), lower($en)) END"""


# --------------------------------------------------------------------------- SQL functions

def _sql_name_key(name: str) -> str:
    from .chinese import name_key  # OpenCC loads only when a query calls name_key

    return name_key(name)


def register_sql_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Add the SQL functions of ad-hoc queries (``rulings sql``) to ``con``:
    ``name_key(name)`` is the card-name key of :func:`pipeline.chinese.name_key`
    (Simplified or Traditional script, full- or half-width, regional terms
    folded), to compare with ``card_mentions.match_key``."""
    try:
        con.create_function("name_key", _sql_name_key)
    except duckdb.CatalogException:
        pass  # connections to one file in one process share the database and its functions


def run_sql(con: duckdb.DuckDBPyConnection, query: str, max_rows: int | None, lock: bool = True,
            db_path: Path | str | None = None) -> tuple[list[str], list[tuple] | None, int]:
    """Run ``query`` (one or several statements) on ``con``: (the last
    statement's columns, its first ``max_rows + 1`` rows (all with None;
    None for a statement without a result), the number of statements).
    ``lock``: set DuckDB's ``lock_configuration`` first, so the SQL cannot
    turn the connection's limits off (a read-only, sandboxed connection).
    UsageError (place QUERY) when there is no statement, SQLError (place
    SQL) for SQL DuckDB refuses; UnusableDatabase when DuckDB finds the
    file damaged while reading (naming ``db_path``)."""
    if "name_key" in query.lower():  # DuckDB's Python functions cost ~0.2 s to set up (NumPy)
        register_sql_functions(con)
    try:
        if lock:
            con.execute("SET lock_configuration = true")
        statements = con.extract_statements(query)
        if not statements:
            raise UsageError("no SQL statement given", place="QUERY")
        rel = con.sql(query)
        if rel is None:
            return [], None, len(statements)
        return rel.columns, (rel.fetchall() if max_rows is None else rel.limit(max_rows + 1).fetchall()), len(statements)
    except duckdb.Error as exc:
        if is_damage(exc):
            raise unreadable(exc, db_path) from None
        raise SQLError(str(exc), place="SQL") from None
