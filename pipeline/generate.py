"""Stage 4, generate: the rules table -> a standalone Python engine module.

The module is the compiled tables written as Python literals, followed by the
runtime of ``engine/runtime.py`` (standard library only). It is
deterministic: every table is sorted before writing and no timestamp is
written, so the same corpus gives the same bytes; its header names the
generator version and a SHA-256 hash over the sorted JSON of the tables.

Scraped text (ruling text, section names, URLs) enters the module only
through ``repr`` of ``str`` objects, which always yields an escaped literal
(quotes, backslashes, newlines, NUL, U+2028 and bidi marks included): it is
data, never code. The module is written to a temporary file and renamed, so
an interrupted build leaves the previous module intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import __version__
from .compile import ProceduralRule, Rule
from .errors import GenerateError
from .paths import PROJECT_ROOT
from .records import Record
from .schema import events, info_kinds, procedural_rules, scenario_format, vocabulary

RUNTIME = PROJECT_ROOT / "engine" / "runtime.py"
MARKER = "# ==== RUNTIME ====\n"


def vocabulary_tables() -> dict:
    """The vocabulary the engine's runtime uses, from ``schema/vocabulary.json``
    and ``schema/procedural_rules.json``: kinds, events, the scenario tables
    (kinds each scenario event gives, take_control modes, this-turn kinds),
    every procedural rule id (stated by the corpus or not), and the scenario
    format of ``schema/scenario.schema.json`` that ``validate()`` checks."""
    scenario = vocabulary()["scenario"]
    fmt = scenario_format()
    return {
        "INFO_KINDS": tuple(sorted(info_kinds())),
        "EVENTS": tuple(sorted(events())),
        "SUMMON_KINDS": {m: tuple(k) for m, k in sorted(scenario["summon_methods"].items())},
        "GAINS": {do: tuple(k) for do, k in sorted(scenario["gains"].items())},
        "CONTROL_KINDS": dict(sorted(scenario["take_control_modes"].items())),
        "THIS_TURN_KINDS": tuple(sorted(scenario["this_turn_kinds"])),
        "RETENTION_EVENTS": dict(sorted(scenario["retention_events"].items())),
        "PROCEDURAL_IDS": tuple(sorted(procedural_rules())),
        # schema/scenario.schema.json, flat: do / question -> field -> (required, allowed values or type)
        "SCENARIO_EVENTS": {do: dict(sorted(fields.items())) for do, fields in fmt["events"].items()},
        "SCENARIO_QUESTIONS": {q: dict(sorted(fields.items())) for q, fields in fmt["questions"].items()},
    }


def engine_tables(rules: list[Rule], procedural: list[ProceduralRule], records: list[Record],
                  sources: dict[str, tuple[str, str]]) -> dict:
    """The data the engine embeds, as plain sorted structures: the
    :func:`vocabulary_tables`, ``RULES`` (one row per kind and event),
    ``CITATIONS`` (record id -> source, dates, section, text), ``SOURCES``
    (source id -> URL, licence) and ``PROCEDURAL`` (rule id -> summary,
    record ids, dates)."""
    cited = {c.record_id for r in rules for c in r.citations if c.role == "supports"}
    cited |= {rid for p in procedural for rid in p.record_ids}
    by_id = {r.id: r for r in records}
    citations = {}
    for rid in sorted(cited):
        rec = by_id[rid]
        citations[rid] = (rec.source_id, rec.valid_dates, " / ".join(rec.section), rec.text)
    rule_rows = tuple(
        (r.info_kind, r.event, r.verdict, r.condition, r.latest_date, r.changed_on, tuple(r.dates),
         tuple(r.record_ids), tuple(json.dumps(c, ensure_ascii=False, sort_keys=True) for c in r.conflicts),
         tuple(tuple(c.dates) for c in r.citations if c.role == "supports"))
        for r in sorted(rules, key=lambda r: (r.info_kind, r.event)))
    used_sources = sorted({c[0] for c in citations.values()})
    return {
        **vocabulary_tables(),
        "RULES": rule_rows,
        "CITATIONS": citations,
        "SOURCES": {sid: sources.get(sid, ("", "")) for sid in used_sources},
        "PROCEDURAL": {p.rule_id: (p.summary, p.record_ids, p.dates) for p in sorted(procedural, key=lambda p: p.rule_id)},
    }


def rules_hash(tables: dict) -> str:
    """SHA-256 (hex) of the sorted JSON of ``tables``: the engine's stamp."""
    payload = json.dumps(tables, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _literal(value) -> str:
    """A Python literal, one top-level entry per line; ``repr`` escapes all text."""
    if isinstance(value, dict):
        body = "".join(f"    {k!r}: {v!r},\n" for k, v in value.items())
        return "{\n" + body + "}"
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return "(\n" + "".join(f"    {v!r},\n" for v in value) + ")"
    return repr(value)


PLAIN_TYPES = (str, int, float, bool, type(None))


def _check_plain(name: str, value) -> None:
    """Raise GenerateError unless ``value`` is built of str, int, float,
    bool, None, tuples and dicts only: the ``repr`` of such a value is a
    literal that parses back to it, whatever text it holds (a date object or
    a list would not be, or not immutably)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif not isinstance(item, PLAIN_TYPES):
            raise GenerateError(f"engine table {name} holds a {type(item).__name__}, not a plain literal",
                                place="pipeline/generate.py")


def render(tables: dict, digest: str | None = None) -> str:
    """The module's source text, stamped with ``digest``, the
    :func:`rules_hash` of ``tables`` (computed when not given: callers that
    already have it save hashing the tables twice). Raises GenerateError for
    a table that is not a plain literal or a module whose code does not parse.

    Only the code (header and runtime, with the tables stubbed) is compiled
    to check it: compiling the data too would cost about 30 times the
    module's size in memory (about 0.5 GB for a 17 MB engine), and the data
    is checked by :func:`_check_plain` instead.
    """
    runtime = RUNTIME.read_text(encoding="utf-8")
    if MARKER not in runtime:
        raise GenerateError(f"{RUNTIME} lacks the runtime marker {MARKER.strip()!r}", place=str(RUNTIME))
    for name, value in tables.items():
        _check_plain(name, value)
    digest = digest or rules_hash(tables)
    header = (
        '"""OCG information-retention and battle rules engine: GENERATED, do not edit.\n\n'
        f"Generator: rulings {__version__} (pipeline/generate.py)\n"
        f"Rules hash: sha256:{digest}\n\n"
        "Built from the rulings corpus; every answer cites the ruling records and\n"
        "dates behind it. Standard library only: copy this one file into another\n"
        "tool and use retains(), answer(), answer_all() and citation().\n"
        '"""\n\n'
        "from __future__ import annotations\n\n"
        f"GENERATOR = {('rulings ' + __version__)!r}\n"
        f"RULES_HASH = {digest!r}\n\n"
    )
    code = runtime.split(MARKER, 1)[1]
    stubs = "".join(f"{name} = None\n\n" for name in tables)
    try:
        compile(header + stubs + code, "<generated engine>", "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: NUL bytes in the source
        raise GenerateError(f"generated module does not parse: {exc}", place=str(RUNTIME)) from exc
    data = "".join(f"{name} = {_literal(value)}\n\n" for name, value in tables.items())
    return header + data + code


def write_engine(path: Path, source: str) -> None:
    """Write atomically: temporary file in the same folder, then rename."""
    commit_engine(stage_engine(path, source), path)


def stage_engine(path: Path, source: str) -> Path:
    """Write ``source`` (from :func:`render`, which checks that it parses) to
    a temporary file beside ``path`` and return it; :func:`commit_engine`
    renames it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(source)
            fh.flush()
            os.fsync(fh.fileno())  # the rename must never expose an empty file after a power cut
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the module is meant to be read by other tools
    except BaseException:
        discard_engine(Path(tmp))
        raise
    return Path(tmp)


def commit_engine(staged: Path, path: Path) -> None:
    """Rename a staged module over ``path`` (atomic on one file system)."""
    try:
        os.replace(staged, path)
    except BaseException:
        discard_engine(staged)
        raise


def discard_engine(staged: Path) -> None:
    """Remove a staged module that will not be committed."""
    if os.path.exists(staged):
        os.unlink(staged)
