"""The commands that check the rules: ``rulings evaluate`` (against gold
files), ``scenario`` (the engine on scenario files) and ``simulators`` (the
rules against ygopro-core and the EDOPro core).

``evaluate`` and ``simulators`` read the database (``--db``), ``scenario``
the generated engine (``--engine-out``); output through :mod:`pipeline.cli_common`.
"""

from __future__ import annotations

import json
import sys
from contextlib import closing
from pathlib import Path

import click

from . import queries
from .cli_common import (DB_OPTION, ENGINE_OPTION, JSON_OPTION, _echo, _echo_json, _exit_codes, _fail,
                         _json_error, load_engine)
from .errors import UsageError

# --------------------------------------------------------------------------- evaluate

@click.command()
@click.option("--gold", "gold_path", type=click.Path(path_type=Path),
              help="CSV with columns info_kind,event,verdict,dates: the rules table's verdicts.")
@click.option("--statements", "statements_paths", type=click.Path(path_type=Path), multiple=True,
              help="Ruling-level gold (JSON Lines, the format of tests/gold/statements_public.jsonl): the "
                   "statements of each ruling. Give it several times to score several files: each file's "
                   "figures, then the total.")
@click.option("--min", "minimum", type=click.IntRange(min=0), default=None,
              help="Verdicts that must be correct for exit code 0 (default: all), so CI can gate on it.")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def evaluate(gold_path: Path | None, statements_paths: tuple[Path, ...], minimum: int | None, db_path: Path,
             as_json: bool) -> None:
    """Compare the rules table with a gold CSV (--gold; last line: N/M
    verdicts correct; exit code 1 when fewer than --min, default all, are
    correct), or the statements of each ruling with ruling-level gold
    (--statements, once or more; the units with a miss, with several
    files a line ``file NAME P=… R=… F1=… (tp/fp/fn)`` for each, then a
    last line ``statements P=… R=… F1=… (tp/fp/fn)`` over all of them;
    see tests/gold/README-gold.md for the matching rule)."""
    if (gold_path is None) == (not statements_paths):
        raise UsageError("give exactly one of --gold FILE and --statements FILE", place="evaluate")
    if statements_paths:
        return _evaluate_statements(list(statements_paths), db_path, as_json)
    from . import evaluation

    gold = evaluation.read_gold(gold_path)
    if minimum is not None and minimum > len(gold):
        raise UsageError(f"--min {minimum} is more than the {len(gold)} rows of {gold_path}", place="evaluate")
    with closing(queries.connect(db_path)) as con:
        report = evaluation.compare_verdicts(con, gold)
    rows, correct = report["rows"], report["correct"]
    if as_json:
        _echo_json(report)
    else:
        for r in rows:
            mark = "ok  " if r["correct"] else "MISS"
            cited = f"dates {len(r['dates_cited'])}/{len(r['dates_expected'])}" if r["dates_expected"] else ""
            _echo(f"{mark} {r['info_kind']:<30} {r['event']:<13} expected {r['expected']:<15} "
                       f"got {r['got']:<15} {cited}")
    if not as_json:
        _echo(f"{correct}/{len(rows)} verdicts correct")
    needed = len(rows) if minimum is None else minimum
    if correct < needed:
        message = f"fewer verdicts correct than required: {correct} < {needed}"
        if as_json:  # the report on stdout, the failure on stderr
            _json_error(message, 1, "EvaluationError", "--min" if minimum is not None else None)
        else:
            _echo(f"{message}{'' if minimum is None else ' (--min)'}", err=True)
        sys.exit(1)


def _evaluate_statements(paths: list[Path], db_path: Path, as_json: bool) -> None:
    from . import evaluation

    files = [(str(path), evaluation.read_statement_gold(path)) for path in paths]
    with closing(queries.connect(db_path)) as con:
        report = evaluation.score_statement_files(con, files)
    if as_json:
        _echo_json(report)
        return
    several = len(files) > 1
    for miss in report["units"]:
        what = [f"missing {'; '.join('/'.join(t) for t in miss['missing'])}" if miss["missing"] else "",
                f"extra {'; '.join('/'.join(t) for t in miss['extra'])}" if miss["extra"] else "",
                f"dates missing {', '.join(miss['dates_missing'])}" if miss["dates_missing"] else ""]
        where = f"{Path(miss['file']).name} " if several else ""
        _echo(f"MISS {where}n={miss['n']} [{miss['section']}] {' | '.join(w for w in what if w)}")
        _echo(f"     {miss['text'][:100]}")
    for one in report["files"] if several else ():
        _echo(f"file {one['file']} P={one['precision']:.2f} R={one['recall']:.2f} F1={one['f1']:.2f} "
              f"({one['tp']}/{one['fp']}/{one['fn']}) dates {one['dates_ok']}/{one['dated_units']}")
    _echo(f"dates {report['dates_ok']}/{report['dated_units']} units' own dates on their records")
    _echo(f"statements P={report['precision']:.2f} R={report['recall']:.2f} F1={report['f1']:.2f} "
               f"({report['tp']}/{report['fp']}/{report['fn']})")


# --------------------------------------------------------------------------- scenario


@click.command()
@click.argument("file", type=click.Path(path_type=Path))
@ENGINE_OPTION
@JSON_OPTION
@_exit_codes
def scenario(file: Path, engine_path: Path, as_json: bool) -> None:
    """Answer the scenarios in FILE (one JSON object or a list) with the engine.

    Each answer is true, false or "unknown", with the rules and ruling records
    (ids, dates, sources) behind it. Malformed scenarios are reported with
    their id and field and make the exit code 2; the others are answered.
    Scenarios that share an id are all refused, naming their positions.
    FILE must be a regular file (a FIFO or a device is refused, exit 2).
    """
    from .userfiles import read_user_file

    try:
        data = json.loads(read_user_file(file, "FILE").decode("utf-8-sig"))
    except RecursionError:
        _fail("not JSON this engine reads: nested too deeply", 2, "UsageError", str(file))
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, and a number over Python's digit limit
        _fail(f"not JSON: {queries.json_problem(exc)}", 2, "UsageError", str(file))
    engine = load_engine(engine_path)
    scenarios = data if isinstance(data, list) else [data]
    results = engine.answer_all(scenarios)
    if as_json:
        _echo_json(results if isinstance(data, list) else results[0])
    else:
        for res in results:
            if "error" in res:  # said once, on stderr, below
                continue
            _echo(f"{res['id']}: {json.dumps(res['answer'])}")
            for b in res["because"]:
                _echo(f"    {b['rule']}: {b.get('verdict') or b.get('summary', '')}{_records_brief(b)}")
    bad = [r for r in results if "error" in r]
    if bad and as_json:
        _json_error(f"{len(bad)} malformed scenario(s): {bad[0]['error']}", 2, "ScenarioError", str(file),
                    errors=[r["error"] for r in bad])
    for r in bad if not as_json else ():
        _echo(f"Error: {r['error']}", err=True)
    if bad:
        sys.exit(2)


def _records_brief(item: dict, shown: int = 3) -> str:
    """' [N records; latest: id date (source), ...]' for text output."""
    records = item.get("records", [])
    if not records:
        return ""
    latest = sorted(records, key=lambda r: (r["dates"][-1:] or [""], r["id"]))[-shown:][::-1]
    listed = ", ".join(f"{r['id']} {r['dates'][-1] if r['dates'] else 'undated'} ({r['source']})" for r in latest)
    return f" [{len(records)} record{'s' if len(records) != 1 else ''}; {listed}]"


# --------------------------------------------------------------------------- simulators

def _agreement_word(sim: dict) -> str:
    if sim["agrees"] is None:
        return "not modelled" if sim["verdict"] == "not_modelled" else "no comparison"
    if sim["agrees"]:
        return "agrees"
    if sim["cases_disagreeing"]:
        return f"DISAGREES in case {', '.join(sim['cases_disagreeing'])}"
    return "DISAGREES"


@click.command("simulators")
@DB_OPTION
@JSON_OPTION
@_exit_codes
def simulators_cmd(db_path: Path, as_json: bool) -> None:
    """The rulings against the simulators: per info kind and event, the rules
    table's verdict beside the verdict of ygopro-core and of the EDOPro core.

    \b
    Disagreements first, each with the simulator's code (file:line of the
    pinned source and the lines it relies on); then the pairs a core does not
    model (card scripts keep that information); then the agreements. A
    conditional rule agrees only when the core's verdict is that of every
    case. The simulators' side is schema/simulators/*.json.
    """
    from . import simulators as sim_compare

    with closing(queries.connect(db_path)) as con:
        rows = sim_compare.comparison(con)
    if as_json:
        _echo_json([{"info_kind": r["info_kind"], "event": r["event"],
                     "rulings": {k: r["rulings"][k] for k in ("verdict", "latest_date", "record_ids", "latest_record",
                                                              "faq_ids", "cases")},
                     "simulators": {sid: {k: s[k] for k in ("verdict", "agrees", "cases_agreeing", "cases_disagreeing",
                                                          "storage", "where", "note", "evidence", "commit")}
                                    for sid, s in r["simulators"].items()}} for r in rows])
        return
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        ru = r["rulings"]
        latest = ", ".join(x for x in (ru["latest_date"], ru["latest_record"],
                                       f"FAQ {', '.join(ru['faq_ids'])}" if ru["faq_ids"] else None) if x)
        cases = "; ".join(f"{c['case_id']}: {c['verdict']}" for c in ru["cases"])
        _echo(f"{r['info_kind']} on {r['event']}: rulings {ru['verdict']}"
              f"{f' ({cases})' if cases else ''} [{latest or 'undated'}; {len(ru['record_ids'])} record(s)]")
        for sid, s in r["simulators"].items():
            word = _agreement_word(s)
            tally = counts.setdefault(sid, {"agree": 0, "disagree": 0, "none": 0})
            tally["none" if s["agrees"] is None else "agree" if s["agrees"] else "disagree"] += 1
            _echo(f"  {sid:<12} {s['verdict']:<15} {word}")
            if s["agrees"] is False:
                _echo(f"      {s['where']}: {s['note']}")
                for ev in s["evidence"]:
                    _echo(f"      {ev['file']}:{ev['line']}  {ev['lines'][0]}")
    for sid, tally in counts.items():
        _echo(f"{sid}: {tally['disagree']} disagreement(s), {tally['agree']} agreement(s), "
              f"{tally['none']} without a comparison (not modelled or no verdict)")
