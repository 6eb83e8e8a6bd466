"""The report's reads: a database connection (read-only) -> the rulings, rules, runs and archetypes the site shows.

* :func:`read_rulings`: every current record as a :class:`Ruling` (dates,
  FAQ links, linked cards, a list item's lead-in); :func:`entries` groups
  the places of one ruling (the same text on several pages) into an
  :class:`Entry`; :func:`text_segments` cuts its text at linked card names.
* :func:`read_rules` (with citations and cases), :func:`cited_entries` (a
  rule's citations, one per ruling), :func:`read_history`,
  :func:`read_archetypes`, :func:`read_sources`, :func:`read_build_info`,
  :func:`read_stated`.

Raises duckdb.Error for a database without the tables of ``schema/ddl.sql``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

import duckdb

from . import queries
from .compile import text_key
from .reportwords import external_url


@dataclass
class Ruling:
    """One current record as the site shows it."""

    record_id: str
    source_id: str
    seq: int
    section: str
    role: str
    status: str
    text: str
    norm: str = ""  # records.norm_text: Simplified, canonical terms
    dates: list[str] = field(default_factory=list)  # ISO, own and heading dates (not references)
    faqs: list[tuple[str, str]] = field(default_factory=list)  # (FAQ id, URL)
    cards: list[tuple[str, int]] = field(default_factory=list)  # (name as quoted, passcode)
    lead_in: str = ""  # the text of the line a list item hangs under ("A monster flipped face-down remembers:")

    @property
    def latest(self) -> str:
        return max(self.dates) if self.dates else ""

    @cached_property
    def key(self) -> str:
        """The ruling regardless of page, date stamps and spacing
        (:func:`pipeline.compile.text_key`): one entry of the site."""
        return text_key(self.norm or self.text)


@dataclass
class Entry:
    """One ruling as the site lists it: ``ruling`` (the place shown in
    full) and ``places`` (every current record of the same ruling,
    ``ruling`` first: the topic page, a yearly log, a frozen extract)."""

    ruling: Ruling
    places: list[Ruling]

    @property
    def record_id(self) -> str:
        return self.ruling.record_id

    @property
    def latest(self) -> str:
        return max(p.latest for p in self.places)

    @property
    def dates(self) -> list[str]:
        return sorted({d for p in self.places for d in p.dates})


def _place_rank(ruling: Ruling) -> tuple:
    """Which place of a ruling is shown in full: a current one, with the most dates, then page order."""
    return (ruling.status != "current", -len(ruling.dates), ruling.source_id, ruling.seq)


def entries(rulings: list[Ruling], every: dict[str, list[Ruling]] | None = None) -> list[Entry]:
    """``rulings`` as entries, one per ruling (:attr:`Ruling.key`), in the
    order of each ruling's first place. ``every``: all places by key (the
    whole site's), so an entry lists places beyond ``rulings`` too."""
    grouped: dict[str, list[Ruling]] = {}
    for ruling in rulings:
        grouped.setdefault(ruling.key, []).append(ruling)
    out = []
    for key, its in grouped.items():
        places = sorted({r.record_id: r for r in [*its, *(every or {}).get(key, [])]}.values(), key=_place_rank)
        out.append(Entry(places[0], places))
    return out


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[tuple]:
    """The rows of ``sql`` (with ``params``) as tuples."""
    return con.execute(sql, params or []).fetchall()


def read_rulings(con: duckdb.DuckDBPyConnection) -> dict[str, Ruling]:
    """Every current record (not retired) with its dates, FAQ links, linked
    cards and the lead-in of a list item (its parent record's text)."""
    rulings = {r[0]: Ruling(*r[:8], lead_in=r[8] or "") for r in rows(con, """
        SELECT r.record_id, r.source_id, r.seq, coalesce(r.section_path, ''), coalesce(r.role, ''),
               coalesce(r.status, ''), r.text, coalesce(r.norm_text, ''), p.text
        FROM records r LEFT JOIN records p ON p.record_id = r.parent_id
        WHERE r.retired_run IS NULL ORDER BY r.source_id, r.seq""")}
    for record_id, day, faq_id, faq_url in rows(con, """
            SELECT record_id, date, faq_id, faq_url FROM record_dates
            WHERE valid AND coalesce(kind, 'own') <> 'reference' ORDER BY record_id, ord"""):
        ruling = rulings.get(record_id)
        if ruling is None:
            continue
        if day is not None and day.isoformat() not in ruling.dates:
            ruling.dates.append(day.isoformat())
        if faq_id and (faq_id, faq_url) not in ruling.faqs:
            ruling.faqs.append((faq_id, faq_url or ""))
    for record_id, name, passcode in rows(con, """
            SELECT record_id, name, passcode FROM card_mentions
            WHERE passcode IS NOT NULL AND coalesce(kind, 'card') = 'card' ORDER BY record_id, ord"""):
        ruling = rulings.get(record_id)
        if ruling is not None and (name, passcode) not in ruling.cards:
            ruling.cards.append((name, passcode))
    return rulings



def read_sources(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """Sources by id: ``{"source_id", "url" (http(s) only: :func:`pipeline.reportwords.external_url`),
    "language", "licence"}``, in id order."""
    return {r[0]: {"source_id": r[0], "url": external_url(r[1]), "language": r[2], "licence": r[3]}
            for r in rows(con, "SELECT source_id, url, language, licence FROM sources ORDER BY source_id")}


def read_build_info(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Table ``build_info`` as a dict (key -> value)."""
    return dict(rows(con, "SELECT key, value FROM build_info"))


def read_stated(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """The record ids stating each procedural rule (table ``procedural_rules``), by rule id."""
    return {r[0]: list(r[1] or []) for r in rows(con, "SELECT rule_id, record_ids FROM procedural_rules")}

def text_segments(ruling: Ruling) -> list[tuple[str, int | None]]:
    """The ruling's text cut at its linked card names: ``[(text, passcode
    or None)]``, the quote marks outside the linked part. The template
    escapes each piece; no markup is ever built from the text."""
    names = {name: passcode for name, passcode in ruling.cards if name}
    text = ruling.text
    found: list[tuple[int, int, int]] = []  # (start, end, passcode) of each quoted linked name
    for name in sorted(names, key=len, reverse=True):  # longest first: a name inside a longer one loses
        at = text.find("「" + name + "」")
        while at != -1:
            a, b = at + 1, at + 1 + len(name)
            if not any(a < e and s < b for s, e, _ in found):
                found.append((a, b, names[name]))
            at = text.find("「" + name + "」", b)
    pieces: list[tuple[str, int | None]] = []
    at = 0
    for a, b, passcode in sorted(found):
        pieces.append((text[at:a], None))
        pieces.append((text[a:b], passcode))
        at = b
    pieces.append((text[at:], None))
    return [p for p in pieces if p[0]]


def read_rules(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict]:
    """Rules by (info kind, event) with their citations (``role``,
    ``verdict``, ``record_id``, ``date``), overridden verdicts, the newer
    rulings that dispute them and, for a conditional rule, its cases in
    words (:func:`pipeline.queries.case_list`)."""
    rules = {}
    for kind, event, verdict, condition, latest, changed_on, conflicts, disputed_by, cases in rows(con, """
            SELECT info_kind, event, verdict, condition, latest_date, changed_on, conflicts, disputed_by, cases
            FROM rules"""):
        rules[(kind, event)] = {"verdict": verdict, "condition": condition or "",
                                "latest_date": latest.isoformat() if latest else "",
                                "changed_on": changed_on.isoformat() if changed_on else "",
                                "conflicts": queries.conflict_list(conflicts), "citations": [],
                                "disputed_by": list(disputed_by or []), "cases": queries.case_list(cases)}
    for kind, event, record_id, role, verdict, day in rows(con, """
            SELECT info_kind, event, record_id, role, verdict, date FROM rule_citations
            ORDER BY info_kind, event, date DESC NULLS LAST, record_id"""):
        rule = rules.get((kind, event))
        if rule is not None:
            rule["citations"].append({"record_id": record_id, "role": role, "verdict": verdict,
                                      "date": day.isoformat() if day else "",
                                      "cases": [c["en"] for c in rule["cases"] if record_id in c["record_ids"]]})
    return rules


def read_history(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Runs, newest first, each with its record changes (``added``,
    ``changed``, ``retired``: lists of record ids)."""
    runs = [{"run_id": r[0], "kind": r[1], "started_at": str(r[2] or ""), "ended_at": str(r[3] or ""),
             "tried": r[4], "unchanged": r[5], "changed_pages": r[6], "failed": r[7],
             "changes": {"added": [], "changed": [], "retired": []}}
            for r in rows(con, "SELECT run_id, kind, started_at, ended_at, tried, unchanged, changed, failed "
                                "FROM runs ORDER BY run_id DESC")]
    by_id = {run["run_id"]: run for run in runs}
    for run_id, record_id, change in rows(con, "SELECT run_id, record_id, change FROM record_changes "
                                                "ORDER BY run_id, source_id, record_id"):
        run = by_id.get(run_id)
        if run is not None and change in run["changes"]:
            run["changes"][change].append(record_id)
    return runs


def read_archetypes(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Archetype names (Simplified) with the record ids that name them, most named first."""
    found: dict[str, list[str]] = defaultdict(list)
    for name, record_id in rows(con, """
            SELECT m.norm_name, m.record_id FROM card_mentions m JOIN records r USING (record_id)
            WHERE m.kind = 'archetype' AND r.retired_run IS NULL ORDER BY m.norm_name, r.source_id, r.seq"""):
        if record_id not in found[name]:
            found[name].append(record_id)
    return [{"name": n, "records": ids} for n, ids in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


# --------------------------------------------------------------------------- shaping


def cited_entries(rule: dict, rulings: dict[str, Ruling], every: dict[str, list[Ruling]]) -> list[dict]:
    """A rule's citations, one per ruling: ``[{"record_id" (the place
    shown), "record_ids" (every cited place), "says": [{"verdict",
    "cases"}], "verdict", "role", "date", "entry"}]`` in citation order
    (newest first); ``entry`` is None for a record no longer current."""
    grouped: dict[str, list[dict]] = {}
    for c in rule["citations"]:
        ruling = rulings.get(c["record_id"])
        grouped.setdefault(ruling.key if ruling else c["record_id"], []).append(c)
    out = []
    for key, cs in grouped.items():
        places = [rulings[c["record_id"]] for c in cs if c["record_id"] in rulings]
        entry = entries(places, every)[0] if places else None
        says = list({(c["verdict"], tuple(c["cases"])): {"verdict": c["verdict"], "cases": c["cases"]}
                     for c in cs}.values())
        roles = [c["role"] for c in cs]
        role = "supports" if "supports" in roles else roles[0]
        out.append({"record_id": entry.record_id if entry else cs[0]["record_id"],
                    "record_ids": [c["record_id"] for c in cs], "says": says, "verdict": cs[0]["verdict"],
                    "role": role, "date": max(c["date"] for c in cs), "entry": entry})
    return out
