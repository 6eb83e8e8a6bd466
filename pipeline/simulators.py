"""The rulings against the simulators: per (info kind, event), the rules
table's verdict beside the verdict each simulator core's code gives.

The simulators' side is data, ``schema/simulators/*.json``
(:func:`pipeline.schema.simulators`): for every info kind, where the core
keeps it and its verdict per event (``kept``, ``lost``, ``not_applicable``,
or ``not_modelled`` when the core keeps no such information and card scripts
do), each citing file and line of the pinned source with the lines it relies
on. This module only compares.

Agreement (``agrees``):

* ``True`` / ``False``: the simulator's verdict equals / differs from the
  rule's verdict;
* a **conditional** rule (``rules.cases``) agrees only when the simulator's
  verdict is the verdict of *every* case: a core gives one verdict for every
  monster (the code takes no such fact into account), so when the cases
  differ it is right for some monsters and wrong for the others, and that is
  a disagreement a maintainer can act on. ``cases_agreeing`` /
  ``cases_disagreeing`` name them;
* ``None`` (neither): the simulator does not model the kind
  (``not_modelled``), or the rulings have no verdict (``unknown``, or a
  conditional rule without cases).

Rows come disagreements first, then the pairs without a comparison, then the
agreements; within each, in the vocabulary's order of kinds and events.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from . import schema


def _agreement(rule_verdict: str, cases: list[dict], sim_verdict: str) -> tuple[bool | None, list[str], list[str]]:
    """``(agrees, cases_agreeing, cases_disagreeing)`` for one simulator
    verdict against one rule (see the module's docstring)."""
    if sim_verdict == "not_modelled" or rule_verdict == "unknown":
        return None, [], []
    if rule_verdict == "conditional":
        if not cases:
            return None, [], []
        agreeing = [c["case_id"] for c in cases if c["verdict"] == sim_verdict]
        disagreeing = [c["case_id"] for c in cases if c["verdict"] != sim_verdict]
        return not disagreeing, agreeing, disagreeing
    return sim_verdict == rule_verdict, [], []


def _evidence(sim: dict, ids: list[str]) -> list[dict]:
    """The cited lines, each ``{"file", "line", "lines"}`` (1-based line of the pinned source)."""
    return [{"file": sim["evidence"][i]["file"], "line": sim["evidence"][i]["line"],
             "lines": list(sim["evidence"][i]["lines"])} for i in ids]


def compare(rules: Iterable[dict], sims: dict[str, dict] | None = None) -> list[dict]:
    """One row per (info kind, event) of the vocabulary, ordered as the
    module says. ``rules``: rows with ``info_kind``, ``event``, ``verdict``,
    ``latest_date`` (ISO string or None), ``record_ids`` and ``cases``
    (``[{"case_id", "verdict", ...}]``), plus whatever else the caller
    wants carried under ``"rulings"`` (e.g. ``latest_record``,
    ``faq_ids``); a pair without a rule is ``unknown``. ``sims``: the
    simulator files (default :func:`pipeline.schema.simulators`). A row:
    ``{"info_kind", "event", "rulings": {"verdict", "latest_date",
    "record_ids", "cases", ...}, "simulators": {id: {"verdict", "agrees",
    "cases_agreeing", "cases_disagreeing", "storage", "where", "note",
    "evidence": [{"file", "line", "lines"}], "commit"}}}``."""
    sims = schema.simulators() if sims is None else sims
    by_pair = {(r["info_kind"], r["event"]): r for r in rules}
    kinds, events = schema.info_kinds(), schema.events()
    rows = []
    for k in kinds:
        for e in events:
            rule = by_pair.get((k, e))
            cases = [{"case_id": c["case_id"], "verdict": c["verdict"]} for c in (rule or {}).get("cases") or []]
            rulings = {"verdict": rule["verdict"] if rule else "unknown",
                       "latest_date": rule.get("latest_date") if rule else None,
                       "record_ids": list(rule["record_ids"] or []) if rule else [],
                       "cases": cases,
                       **{key: value for key, value in (rule or {}).items()
                          if key not in ("info_kind", "event", "verdict", "latest_date", "record_ids", "cases")}}
            row = {"info_kind": k, "event": e, "rulings": rulings, "simulators": {}}
            for sim_id, sim in sims.items():
                entry = sim["kinds"][k]
                given = entry["verdicts"][e]
                agrees, agreeing, disagreeing = _agreement(rulings["verdict"], cases, given["verdict"])
                row["simulators"][sim_id] = {
                    "verdict": given["verdict"], "agrees": agrees, "cases_agreeing": agreeing,
                    "cases_disagreeing": disagreeing, "storage": entry["storage"], "where": entry["where"],
                    "note": given["note"], "evidence": _evidence(sim, given["evidence"]), "commit": sim["commit"]}
            rows.append(row)
    rank = {k: i for i, k in enumerate(kinds)}, {e: i for i, e in enumerate(events)}

    def order(row: dict) -> tuple:
        agreements = [s["agrees"] for s in row["simulators"].values()]
        group = 0 if False in agreements else 1 if None in agreements else 2
        return group, rank[0][row["info_kind"]], rank[1][row["event"]]

    return sorted(rows, key=order)


def rules_with_citations(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """The ``rules`` table as :func:`compare` reads it, each rule with its
    latest dated ruling (``latest_record``: the cited record dated
    ``latest_date``, the first by id when several are) and that ruling's
    official FAQ ids (``faq_ids``, from ``record_dates.faq_id``)."""
    rows = con.execute(
        "SELECT info_kind, event, verdict, CAST(latest_date AS VARCHAR), record_ids, "
        "[{'case_id': c.case_id, 'verdict': c.verdict} for c in cases] FROM rules").fetchall()
    dated = con.execute(
        "WITH cited AS (SELECT DISTINCT r.info_kind, r.event, r.latest_date, u.record_id "
        "               FROM rules r, unnest(r.record_ids) AS u(record_id)) "
        "SELECT c.info_kind, c.event, c.record_id, "
        "       list(DISTINCT d.faq_id ORDER BY d.faq_id) FILTER (WHERE d.faq_id IS NOT NULL) "
        "FROM cited c JOIN record_dates d ON d.record_id = c.record_id AND d.kind <> 'reference' AND d.valid "
        "GROUP BY c.info_kind, c.event, c.record_id, c.latest_date HAVING bool_or(d.date = c.latest_date) "
        "ORDER BY c.info_kind, c.event, c.record_id").fetchall()
    latest: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for kind, event, record_id, faq_ids in dated:
        latest.setdefault((kind, event), (record_id, list(faq_ids or [])))
    out = []
    for kind, event, verdict, latest_date, record_ids, cases in rows:
        record, faq_ids = latest.get((kind, event), (None, []))
        out.append({"info_kind": kind, "event": event, "verdict": verdict, "latest_date": latest_date,
                    "record_ids": list(record_ids or []), "cases": list(cases or []),
                    "latest_record": record, "faq_ids": faq_ids})
    return out


def comparison(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """:func:`compare` over the rules table of an open database."""
    return compare(rules_with_citations(con))


def table_rows(rules: Iterable, sims: dict[str, dict] | None = None) -> list[dict]:
    """Rows of the ``simulator_verdicts`` table (schema/ddl.sql) for the
    compiled ``rules`` (:class:`pipeline.compile.Rule`-like objects with
    ``info_kind``, ``event``, ``verdict``, ``latest_date``, ``record_ids``,
    ``cases``): one per (kind, event, simulator)."""
    plain = [{"info_kind": r.info_kind, "event": r.event, "verdict": r.verdict,
              "latest_date": str(r.latest_date) if r.latest_date else None, "record_ids": list(r.record_ids),
              "cases": [{"case_id": c.case_id, "verdict": c.verdict} for c in r.cases]} for r in rules]
    out = []
    for row in compare(plain, sims):
        for sim_id, s in row["simulators"].items():
            out.append({"info_kind": row["info_kind"], "event": row["event"], "simulator": sim_id,
                        "rulings_verdict": row["rulings"]["verdict"], "latest_date": row["rulings"]["latest_date"],
                        "record_ids": row["rulings"]["record_ids"], "verdict": s["verdict"], "agrees": s["agrees"],
                        "cases_disagreeing": s["cases_disagreeing"], "storage": s["storage"],
                        "evidence": s["evidence"], "note": s["note"], "source_commit": s["commit"]})
    return out
