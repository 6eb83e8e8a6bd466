"""Checks of the vocabulary's files: parsed JSON -> the same data, checked, or SchemaError naming the key.

:func:`check_vocabulary` (``vocabulary.json``: ids unique, display groups,
the engine's ``scenario`` tables, questions), :func:`check_scenario_format`
(``scenario.schema.json`` read flat and checked against the vocabulary),
:func:`check_simulator` (one ``simulators/*.json`` file against the
vocabulary's kinds and events). The files are read, and the results cached,
by :mod:`pipeline.schema`, the one module the stages import.
"""

from __future__ import annotations

import re

from .schemacheck import Checker


def check_vocabulary(data: dict, check: Checker, rule_only: tuple[str, ...]) -> dict:
    """``vocabulary.json`` checked (:func:`pipeline.schema.vocabulary`); ``rule_only``: the verdicts only compile gives."""
    ids = {}
    for section in ("events", "verdicts", "info_kinds"):
        entries = check.get(data, section, list)
        seen = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
                check.fail(f"{section}[{i}].id", "is missing or not a string")
            if entry["id"] in seen:
                check.fail(f"{section}[{i}].id", f"{entry['id']!r} is a duplicate")
            said = entry.get("words", {})  # the report's words for it (pipeline/reportwords.py rule_sentence)
            if not isinstance(said, dict) or not all(isinstance(v, str) and v for v in said.values()):
                check.fail(f"{section}[{i}].words", "must be an object of non-empty strings")
            seen.append(entry["id"])
        ids[section] = seen
    for verdict in rule_only:
        check.member("verdicts", verdict, ids["verdicts"], "a list holding every compiled verdict")
    _check_scenario(check, check.get(data, "scenario", dict), ids["info_kinds"], ids["events"])
    _check_groups(check, check.get(data, "kind_groups", list), ids["info_kinds"])
    for i, q in enumerate(check.get(data, "questions", list)):
        if not isinstance(q, dict) or not all(isinstance(q.get(k), str) and q[k] for k in ("id", "meaning")):
            check.fail(f"questions[{i}]", "must be an object with string id and meaning")
        check.words(q, "fields", f"questions[{i}]")
    return data


def _check_groups(check: Checker, groups: list, kinds: list[str]) -> None:
    """Every info kind in exactly one display group (the report's matrix rows)."""
    placed: dict[str, str] = {}
    for i, group in enumerate(groups):
        if not isinstance(group, dict) or not isinstance(group.get("id"), str) or not isinstance(group.get("title"), str):
            check.fail(f"kind_groups[{i}]", "must be an object with string id and title")
        for j, k in enumerate(check.words(group, "kinds", f"kind_groups[{i}]")):
            check.member(f"kind_groups[{i}].kinds[{j}]", k, kinds, "an info kind")
            if k in placed:
                check.fail(f"kind_groups[{i}].kinds[{j}]", f"{k!r} is already in group {placed[k]!r}")
            placed[k] = group["id"]
    missing = [k for k in kinds if k not in placed]
    if missing:
        check.fail("kind_groups", f"no group for {', '.join(missing)}")


def _check_scenario(check: Checker, scenario: dict, kinds: list[str], events_: list[str]) -> None:
    def kind(key: str, value) -> None:
        check.member(key, value, kinds, "an info kind")

    for method, gained in check.get(scenario, "summon_methods", dict, "scenario").items():
        for i, k in enumerate(gained):
            kind(f"scenario.summon_methods.{method}[{i}]", k)
    for do, gained in check.get(scenario, "gains", dict, "scenario").items():
        for i, k in enumerate(gained):
            kind(f"scenario.gains.{do}[{i}]", k)
    for mode, k in check.get(scenario, "take_control_modes", dict, "scenario").items():
        kind(f"scenario.take_control_modes.{mode}", k)
    for i, k in enumerate(check.words(scenario, "this_turn_kinds", "scenario")):
        kind(f"scenario.this_turn_kinds[{i}]", k)
    for do, event in check.get(scenario, "retention_events", dict, "scenario").items():
        check.member(f"scenario.retention_events.{do}", event, events_, "an event")


def _field_spec(check: Checker, schema: dict, key: str, spec: dict):
    """A field's allowed values: a tuple of strings, ``"boolean"``, ``"turn"``
    or ``"string"`` (``$ref`` into ``$defs`` resolved)."""
    ref = spec.get("$ref")
    if ref is not None:
        if ref == "#/$defs/turn":
            return "turn"
        name = ref.removeprefix("#/$defs/")
        if name not in schema.get("$defs", {}):
            check.fail(key, f"refers to {ref}, which is not in $defs")
        spec = schema["$defs"][name]
    if "enum" in spec:
        return tuple(spec["enum"])
    if spec.get("type") in ("boolean", "string"):
        return spec["type"]
    check.fail(key, "must be an enum, a boolean or a $ref")


def _branches(check: Checker, schema: dict, name: str, tag: str) -> dict[str, dict[str, tuple[bool, object]]]:
    """``$defs.<name>.oneOf`` as {tag value: {field: (required, allowed)}}."""
    out = {}
    for i, branch in enumerate(check.get(schema["$defs"][name], "oneOf", list, f"$defs.{name}")):
        where = f"$defs.{name}.oneOf[{i}]"
        props = check.get(branch, "properties", dict, where)
        value = props.get(tag, {}).get("const")
        if not isinstance(value, str):
            check.fail(f"{where}.properties.{tag}", "must be {\"const\": <string>}")
        required = check.get(branch, "required", list, where)
        out[value] = {field: (field in required, _field_spec(check, schema, f"{where}.properties.{field}", spec))
                      for field, spec in props.items() if field != tag}
    return out


def check_scenario_format(schema: dict, check: Checker, vocabulary: dict, kinds: list[str], vocabulary_check: Checker,
                          file_name: str) -> dict:
    """The scenario format of ``schema`` (``file_name``) for :func:`pipeline.schema.scenario_format`,
    checked against ``vocabulary`` (its failures named by ``vocabulary_check``)."""
    defs = check.get(schema, "$defs", dict)
    for name in ("event", "ask", "summon_method", "control_mode", "info_kind", "player", "phase", "turn"):
        check.get(defs, name, dict, "$defs")
    fmt = {"events": _branches(check, schema, "event", "do"), "questions": _branches(check, schema, "ask", "question")}
    scenario = vocabulary["scenario"]
    same = {"$defs.summon_method.enum": (defs["summon_method"].get("enum"), list(scenario["summon_methods"])),
            "$defs.control_mode.enum": (defs["control_mode"].get("enum"), list(scenario["take_control_modes"])),
            "$defs.info_kind.enum": (defs["info_kind"].get("enum"), kinds)}
    for key, (ours, theirs) in same.items():
        if ours != theirs:
            check.fail(key, f"must list the vocabulary's ids in its order: {theirs}")
    questions = {q["id"]: sorted(q["fields"]) for q in vocabulary["questions"]}
    asked = {q: sorted(f for f, (required, _) in fields.items() if required) for q, fields in fmt["questions"].items()}
    if asked != questions:
        check.fail("$defs.ask.oneOf", f"questions and required fields differ from vocabulary.json's questions {questions}")
    # the runtime's option gains: summon's from / by_effect / own_procedure, activate_effect's pledge values
    options = ["summon_from", "summon_by_effect", "summon_own_procedure"]
    pledge = fmt["events"].get("activate_effect", {}).get("pledge", (False, ()))[1]
    options += [f"pledge_{v}" for v in (pledge if isinstance(pledge, tuple) else ())]
    for key in options:
        if key not in scenario["gains"]:
            vocabulary_check.fail("scenario.gains", f"has no entry {key!r} (an option of {file_name})")
    modelled = {"summon", "set", "flip_summon", "change_position", "take_control", *scenario["retention_events"]}
    for do in fmt["events"]:
        if do not in modelled and do not in scenario["gains"]:
            vocabulary_check.fail("scenario.gains", f"has no entry for the event {do!r} of {file_name}")
    return fmt


def check_simulator(data: dict, check: Checker, name: str, kinds: list[str], events_: list[str],
                    known_verdicts: tuple[str, ...], known_storage: tuple[str, ...]) -> str:
    """One file ``simulators/<name>`` checked (:func:`pipeline.schema.simulators`) against the
    vocabulary's ``kinds`` and ``events_``; returns the simulator's id."""
    sim = check.get(data, "simulator", str)
    if sim != name[:-len(".json")]:
        check.fail("simulator", f"is {sim!r}: it must be the file's name without .json")
    for key in ("name", "repository", "licence"):
        if not check.get(data, key, str):
            check.fail(key, "is empty")
    if isinstance(check.get(data, "order", int), bool):
        check.fail("order", "must be an integer")
    if not re.fullmatch(r"[0-9a-f]{40}", check.get(data, "commit", str)):
        check.fail("commit", "must be 40 lower-case hex digits")
    evidence = check.get(data, "evidence", dict)
    for eid, ev in evidence.items():
        where = f"evidence.{eid}"
        if not isinstance(ev, dict):
            check.fail(where, "must be an object")
        if not check.get(ev, "file", str) or "/" in ev["file"] or ev["file"].startswith("."):
            check.fail(f"{where}.file", "must be a file name of the pinned source (no folder)")
        line = check.get(ev, "line", int, where)
        if isinstance(line, bool) or line < 1:
            check.fail(f"{where}.line", "must be a line number (1 or more)")
        lines = check.get(ev, "lines", list, where)
        if not lines or not all(isinstance(x, str) for x in lines):
            check.fail(f"{where}.lines", "must be a non-empty list of strings")

    def cites(obj: dict, where: str) -> list[str]:
        ids = check.words(obj, "evidence", where)
        for i, eid in enumerate(ids):
            check.member(f"{where}.evidence[{i}]", eid, list(evidence), "an evidence id of this file")
        return ids

    evs = check.get(data, "events", dict)
    for e in events_:
        entry = check.get(evs, e, dict, "events")
        check.get(entry, "applies", str, f"events.{e}")
        cites(entry, f"events.{e}")
    for extra in evs:
        check.member(f"events.{extra}", extra, events_, "an event of the vocabulary")
    ks = check.get(data, "kinds", dict)
    for extra in ks:
        check.member(f"kinds.{extra}", extra, kinds, "an info kind of the vocabulary")
    for k in kinds:
        entry = check.get(ks, k, dict, "kinds")
        check.member(f"kinds.{k}.storage", entry.get("storage"), known_storage, "a storage")
        check.get(entry, "where", str, f"kinds.{k}")
        verdicts_ = check.get(entry, "verdicts", dict, f"kinds.{k}")
        for e in events_:
            where = f"kinds.{k}.verdicts.{e}"
            v = check.get(verdicts_, e, dict, f"kinds.{k}.verdicts")
            check.member(f"{where}.verdict", v.get("verdict"), known_verdicts, "a simulator verdict")
            check.get(v, "note", str, where)
            cites(v, where)
    return sim
