"""The engine's language-neutral forms: the engine tables -> the text of
``ocg_rules.json``, ``ocg_rules.mjs`` and ``ocg_rules.d.mts``.

:func:`neutral_tables` gives the tables as plain JSON data with named fields
(described by ``schema/ocg_rules.schema.json``); :func:`render_json` writes
them as JSON, :func:`render_js` as an ES module (one ASCII-escaped JSON
literal, then the runtime of ``engine/runtime.mjs``), :func:`render_dts` as
TypeScript declarations. :func:`runtime_code` reads the code below a runtime
file's marker (the Python module of :mod:`pipeline.generate` uses it too).
Deterministic: the same tables give the same text. Raises
:class:`~pipeline.errors.GenerateError` for a runtime file without its marker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from . import __version__
from .errors import GenerateError
from .paths import PROJECT_ROOT
from .schema import vocabulary


def runtime_code(paths: tuple[Path, ...], marker: str) -> str:
    """The code below ``marker`` of each runtime file, joined; GenerateError for a file without it."""
    code = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if marker not in text:
            raise GenerateError(f"{path} lacks the runtime marker {marker.strip()!r}", place=str(path))
        code.append(text.split(marker, 1)[1])
    return "\n\n".join(code)


JSON_FORMAT = "ocg-rules"
JSON_FORMAT_VERSION = 1
RUNTIME_JS = PROJECT_ROOT / "engine" / "runtime.mjs"
RUNTIME_CARDS_JS = PROJECT_ROOT / "engine" / "runtime_cards.mjs"
MARKER_JS = "// ==== RUNTIME ====\n"


def _fields(fields: dict) -> dict:
    return {f: {"required": req, "allowed": list(allowed) if isinstance(allowed, tuple) else allowed}
            for f, (req, allowed) in sorted(fields.items())}


def neutral_tables(tables: dict, digest: str) -> dict:
    """The engine's tables as plain JSON data with named fields (the form of
    ``engine/ocg_rules.json``, described by ``schema/ocg_rules.schema.json``):
    ``rules`` as objects, ``citations`` and ``procedural`` keyed by id. Key
    order is fixed, so the same tables give the same text."""
    rule_fields = ("info_kind", "event", "verdict", "condition", "latest_date", "changed_on", "dates", "record_ids",
                   "conflicts", "record_dates", "disputed_by", "cases")
    return {
        "format": JSON_FORMAT,  # described by schema/ocg_rules.schema.json
        "format_version": JSON_FORMAT_VERSION,
        "generator": f"rulings {__version__}",
        "rules_hash": digest,
        "info_kinds": list(tables["INFO_KINDS"]),
        "events": list(tables["EVENTS"]),
        "scenario": {
            "summon_kinds": {m: list(k) for m, k in tables["SUMMON_KINDS"].items()},
            "gains": {do: list(k) for do, k in sorted(tables["GAINS"].items())},
            "control_kinds": dict(tables["CONTROL_KINDS"]),
            "this_turn_kinds": list(tables["THIS_TURN_KINDS"]),
            "retention_events": dict(tables["RETENTION_EVENTS"]),
            "events": {do: _fields(f) for do, f in sorted(tables["SCENARIO_EVENTS"].items())},
            "questions": {q: _fields(f) for q, f in sorted(tables["SCENARIO_QUESTIONS"].items())},
        },
        "procedural_ids": list(tables["PROCEDURAL_IDS"]),
        "rules": [dict(zip(rule_fields, (*row[:6], list(row[6]), list(row[7]),
                                         [{"latest_date": c["latest_date"], "record_ids": list(c["record_ids"]),
                                           "verdict": c["verdict"]} for c in row[8]],
                                         [list(d) for d in row[9]], list(row[10]),
                                         [{**c, "values": list(c["values"]), "record_ids": list(c["record_ids"])}
                                          for c in row[11]]))) for row in tables["RULES"]],
        "citations": {rid: {"source": c[0], "dates": list(c[1]), "section": c[2], "text": c[3]}
                      for rid, c in tables["CITATIONS"].items()},
        "sources": {sid: {"url": u, "licence": lic} for sid, (u, lic) in tables["SOURCES"].items()},
        "procedural": {rid: {"summary": p[0], "record_ids": list(p[1]), "dates": list(p[2])}
                       for rid, p in tables["PROCEDURAL"].items()},
    }


def render_json(tables: dict, digest: str) -> str:
    """``engine/ocg_rules.json``: :func:`neutral_tables` as UTF-8 JSON."""
    return json.dumps(neutral_tables(tables, digest), ensure_ascii=False, indent=1) + "\n"


def render_js(tables: dict, digest: str, cards: str = "") -> str:
    """``engine/ocg_rules.mjs``: an ES module holding :func:`neutral_tables`
    as one JSON literal (ASCII-escaped, so no text can end the literal or
    hide a line break) followed by the runtime of ``engine/runtime.mjs``
    (:func:`render_js_parts`, joined). Raises GenerateError when the
    runtime lacks its marker."""
    return "".join(render_js_parts(tables, digest, cards))


def render_js_parts(tables: dict, digest: str, cards: str = "") -> Iterator[str]:
    """:func:`render_js` in parts, to be written one after the other: the card
    table's JSON string, the largest (about 6 characters for each of its
    Chinese characters), is escaped in pieces as it is written
    (:func:`json_string_parts`). Raises GenerateError here when the runtime
    lacks its marker."""
    code = runtime_code((RUNTIME_JS, RUNTIME_CARDS_JS), MARKER_JS)
    header = (
        "// OCG information-retention and battle rules engine: GENERATED, do not edit.\n"
        f"// Generator: rulings {__version__} (pipeline/generate.py)\n"
        f"// Rules hash: sha256:{digest}\n"
        "// ES module, no dependencies: import { retains, answer, answer_all, citation } from './ocg_rules.mjs';\n\n"
    )
    return _js_parts(header, tables, digest, cards, code)


def _js_parts(header: str, tables: dict, digest: str, cards: str, code: str) -> Iterator[str]:
    yield header
    yield f"const DATA = {json.dumps(neutral_tables(tables, digest), ensure_ascii=True, separators=(',', ':'))};\n\n"
    yield "const CARD_TABLE = "
    yield from json_string_parts(cards)
    yield ";\n\n"
    yield code


def json_string_parts(text: str, size: int = 1 << 20) -> Iterator[str]:
    """``json.dumps(text, ensure_ascii=True)`` in parts of ``size``
    characters of ``text`` each (joined: the same characters: JSON escapes
    each character on its own, a character above U+FFFF as its two
    surrogates)."""
    if len(text) <= size:
        yield json.dumps(text, ensure_ascii=True)
        return
    yield '"'
    for start in range(0, len(text), size):
        yield json.dumps(text[start:start + size], ensure_ascii=True)[1:-1]
    yield '"'


def _ts_union(values) -> str:
    """A TypeScript union of string literals (JSON-escaped: the values come
    from the schema, never as code), ``never`` for none."""
    return " | ".join(json.dumps(v, ensure_ascii=True) for v in values) or "never"


def _ts_field(name: str, spec: dict) -> str:
    """One field of a scenario event or question, from its format entry."""
    allowed = spec["allowed"]
    kind = {"boolean": "boolean", "turn": "number"}.get(allowed, "unknown") if isinstance(allowed, str) else (
        "InfoKind" if name == "info_kind" else _ts_union(allowed))
    return f"{json.dumps(name)}{'' if spec['required'] else '?'}: {kind};"


def render_dts(tables: dict, digest: str) -> str:
    """``engine/ocg_rules.d.mts``: TypeScript declarations of the ES module
    (checked with ``tsc --strict`` by tests/e2e/test_typescript_declarations.py): the info
    kinds, events, verdicts and the scenario format as literal types (from
    the same tables as the module, so they change together), the shapes of
    ``retains``, ``citation``, ``answer`` and ``answer_all``, and every name
    the module exports. Deterministic: the same tables give the same text."""
    data = neutral_tables(tables, digest)
    fmt = data["scenario"]
    verdicts = [v["id"] for v in vocabulary()["verdicts"]]
    summon = fmt["events"]["summon"]["method"]["allowed"]
    lines = [
        "// OCG information-retention and battle rules engine: GENERATED, do not edit.",
        f"// Generator: rulings {__version__} (pipeline/generate.py)",
        f"// Rules hash: sha256:{digest}",
        "// TypeScript declarations of ocg_rules.mjs (import from \"./ocg_rules.mjs\"; checked with tsc --strict).",
        "",
        f"export type InfoKind = {_ts_union(data['info_kinds'])};",
        f"export type RetentionEvent = {_ts_union(data['events'])};",
        f"export type Verdict = {_ts_union(verdicts)};",
        f"export type ScenarioEventKind = {_ts_union(sorted(fmt['events']))};",
        f"export type Question = {_ts_union(sorted(fmt['questions']))};",
        f"export type SummonMethod = {_ts_union(summon)};",
        "export type Player = \"A\" | \"B\";",
        "",
        "/** A case of a conditional rule: a fact about the monster, the values that select it, its verdict. */",
        "export interface RuleCase { case: string; fact: string; values: (string | boolean)[]; verdict: Verdict; "
        "record_ids: string[]; }",
        "/** A verdict the rule did not follow, with its rulings. */",
        "export interface Conflict { verdict: Verdict; record_ids: string[]; latest_date: string | null; }",
        "/** What retains() gives: the rules table's row for one (info kind, event) pair (a copy). */",
        "export interface Retention {",
        "  info_kind: InfoKind; event: RetentionEvent; verdict: Verdict; condition: string; latest_date: string | null;",
        "  changed_on: string | null; dates: string[]; record_ids: string[]; conflicts: Conflict[];",
        "  record_dates: string[][]; disputed_by: string[]; cases: RuleCase[];",
        "}",
        "export interface Citation { id: string; source: string; url: string; licence: string; section: string; "
        "dates: string[]; text: string; }",
        "export interface RecordRef { id: string; dates: string[]; source: string; }",
        "/** One reason of an answer: a retention rule (verdict, its case or cases) or a procedural rule (summary). */",
        "export interface Because {",
        "  rule: string; verdict?: Verdict; case?: string; summary?: string; missing?: true; condition?: string;",
        "  cases?: { case: string; fact: string; values: (string | boolean)[]; verdict: Verdict }[];",
        "  changed_on?: string; disputed_by?: string[]; records?: RecordRef[];",
        "}",
        "export interface Answer { id: string; answer: boolean | \"unknown\"; because: Because[]; }",
        "/** answer_all's item for a malformed scenario. */",
        "export interface Refused { id: unknown; error: string; field: string; }",
        "",
        "/** One event of a scenario's history, by its \"do\" (schema/scenario.schema.json). */",
        "export type ScenarioEvent =",
    ]
    for do, fields in sorted(fmt["events"].items()):
        body = " ".join(_ts_field(f, spec) for f, spec in fields.items())
        lines.append(f"  | {{ do: {json.dumps(do)}; {body} }}")
    lines[-1] += ";"
    lines.append("/** The question of a scenario, by its \"question\". */")
    lines.append("export type Ask =")
    for question, fields in sorted(fmt["questions"].items()):
        body = " ".join(_ts_field(f, spec) for f, spec in fields.items())
        lines.append(f"  | {{ question: {json.dumps(question)}; {body} }}")
    lines[-1] += ";"
    lines += [
        "export interface Scenario { id: string; events: ScenarioEvent[]; ask: Ask; }",
        "export interface FieldFormat { required: boolean; allowed: readonly string[] | string; }",
        "",
        "export declare const GENERATOR: string;",
        "export declare const RULES_HASH: string;",
        "export declare const INFO_KINDS: readonly InfoKind[];",
        "export declare const EVENTS: readonly RetentionEvent[];",
        "export declare const SUMMON_KINDS: Readonly<Record<SummonMethod, readonly InfoKind[]>>;",
        "export declare const GAINS: Readonly<Record<string, readonly InfoKind[]>>;",
        "export declare const CONTROL_KINDS: Readonly<Record<string, InfoKind>>;",
        "export declare const THIS_TURN_KINDS: readonly InfoKind[];",
        "export declare const RETENTION_EVENTS: Readonly<Record<string, RetentionEvent>>;",
        "export declare const SCENARIO_EVENTS: Readonly<Record<ScenarioEventKind, Readonly<Record<string, FieldFormat>>>>;",
        "export declare const SCENARIO_QUESTIONS: Readonly<Record<Question, Readonly<Record<string, FieldFormat>>>>;",
        "export declare const PROCEDURAL_IDS: readonly string[];",
        "export declare const RULES: readonly Readonly<Retention>[];",
        "export declare const CITATIONS: Readonly<Record<string, { source: string; dates: string[]; section: string; "
        "text: string }>>;",
        "export declare const SOURCES: Readonly<Record<string, { url: string; licence: string }>>;",
        "export declare const PROCEDURAL: Readonly<Record<string, { summary: string; record_ids: string[]; "
        "dates: string[] }>>;",
        "/** The fields of Retention in order (Python's Retention._fields). */",
        "export declare const Retention: { readonly fields: readonly (keyof Retention)[] };",
        "export declare class ScenarioError extends Error {",
        "  constructor(scenarioId: unknown, field: string, message: string);",
        "  readonly scenario_id: unknown;",
        "  readonly field: string;",
        "}",
        "/** The rule for infoKind x event; throws RangeError for a name outside the vocabulary. */",
        "export declare function retains(infoKind: InfoKind, event: RetentionEvent): Retention;",
        "/** A cited record; throws RangeError if it is not cited. */",
        "export declare function citation(recordId: string): Citation;",
        "/** Throws ScenarioError naming the scenario id and field when it does not follow the format. */",
        "export declare function validate(scenario: unknown): void;",
        "/** Answer one scenario; throws ScenarioError if it is malformed. */",
        "export declare function answer(scenario: Scenario): Answer;",
        "/** Answer a list of scenarios; a malformed one gives {id, error, field}. */",
        "export declare function answer_all(scenarios: readonly unknown[]): (Answer | Refused)[];",
        "export { answer_all as answerAll };",
        "",
        "/** What a card's answer takes as told about the monster (schema/rule_policy.json facts). */",
        "export interface CardFacts { summon_this_turn?: \"normal\" | \"special\" | \"flip\" | null; "
        "can_normal_summon?: boolean | null; count_scope?: \"whole_turn\" | \"from_activation\" | null; }",
        "/** One numbered effect of a card after the events: does it still work, and why. */",
        "export interface EffectAnswer {",
        "  effect: string; part: \"monster\" | \"pendulum\"; text: string; depends_on: InfoKind[];",
        "  verdicts: Partial<Record<InfoKind, Verdict>>; works: boolean | null; again: boolean | null;",
        "  decided_by: \"card_ruling\" | \"general_rule\" | \"no_dependency\"; because: string[]; rules: Because[];",
        "  card_rulings: string[];",
        "}",
        "/** A ruling on the card, with its date and what it says of each effect. */",
        "export interface CardRuling {",
        "  date: string | null; dates: string[]; source: string; section: string; text: string;",
        "  says: { part: string; effect: string; events: RetentionEvent[]; flip: boolean; can: boolean }[];",
        "}",
        "export interface CardAnswer {",
        "  card: { passcode: number; konami_id: number | null; name: { zh: string; ja: string; en: string } };",
        "  events: RetentionEvent[]; facts: Required<CardFacts>; effects: EffectAnswer[];",
        "  rulings: Record<string, CardRuling>;",
        "}",
        "/** Which effects of the card (a passcode) still work after the events (one, a list, or \"a,b\");",
        " * throws RangeError for a card not in the card table or an unknown event or fact. */",
        "export declare function card_answer(cardId: number | string, events: RetentionEvent | string | "
        "readonly RetentionEvent[], facts?: CardFacts | null): CardAnswer;",
        "export { card_answer as cardAnswer };",
        "",
    ]
    return "\n".join(lines)
