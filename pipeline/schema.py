"""The files of ``schema/``, each loaded and validated once.

Every stage reads its vocabulary, term lists and markers from here; nothing
else opens a file of ``schema/``. Each loader checks what the pipeline relies
on and raises :class:`SchemaError` naming the file and the key:

* ``vocabulary.json``: event, verdict and information-kind ids (unique), and
  the ``scenario`` tables the generated engine uses (every kind named there
  exists);
* ``retention_terms.json``: term keys against the vocabulary (kinds, events,
  verdicts), topic defaults and allowed kinds against the kinds, every word
  list present;
* ``procedural_rules.json``: the word groups and token patterns of the
  procedural reader (every group a pattern names exists), rule ids unique,
  each rule with a summary and readings over known features;
* ``markers.json``: the words and markup that mark page structure (example
  labels, note headings, the pending marker, clause delimiters, site chrome);
* the TSV files: their columns present;
* ``scenario.schema.json``: the scenario format (JSON Schema), checked
  against the vocabulary (methods, modes, kinds, questions, event gains);
* ``ddl.sql``: the database schema (read here, executed by :mod:`pipeline.load`);
* ``simulators/*.json``: per simulator core, where it keeps each info kind and
  its verdict per event, each citing file and line of the pinned source
  (every kind of the vocabulary, every event, every cited evidence present).

:func:`check_all` loads everything; a build and a refresh call it before any
page, so a broken schema file fails the run at once with one clear line.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from .errors import RulingsError
from .paths import BUNDLE_ROOT, PROJECT_ROOT

SCHEMA_DIR = BUNDLE_ROOT / "schema"
# Verdicts only the compiler gives (a ruling never states them itself).
RULE_ONLY_VERDICTS = ("conditional", "unknown")


class SchemaError(RulingsError):
    """A file of ``schema/`` is missing, unreadable or inconsistent; ``place``
    is the file, the message names the key."""

    stage = "schema"

    def __str__(self) -> str:
        return f"{self.place}: {self.message}" if self.place else self.message


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _read(name: str) -> str:
    path = SCHEMA_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError("file is missing", place=_display(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read: {exc}", place=_display(path)) from None


def _json(name: str) -> dict:
    try:
        data = json.loads(_read(name))
    except json.JSONDecodeError as exc:
        raise SchemaError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                          place=_display(SCHEMA_DIR / name)) from None
    if not isinstance(data, dict):
        raise SchemaError("the top level must be a JSON object", place=_display(SCHEMA_DIR / name))
    return data


class _Checker:
    """Checks of one file; each failure raises SchemaError naming the key."""

    def __init__(self, name: str):
        self.place = _display(SCHEMA_DIR / name)

    def fail(self, key: str, message: str):
        raise SchemaError(f"{key} {message}", place=self.place)

    def get(self, data: dict, key: str, kind: type, where: str = ""):
        full = f"{where}.{key}" if where else key
        if key not in data:
            self.fail(full, "is missing")
        value = data[key]
        if not isinstance(value, kind):
            self.fail(full, f"must be a {kind.__name__}, not {type(value).__name__}")
        return value

    def words(self, data: dict, key: str, where: str = "") -> list[str]:
        """A non-empty list of non-empty strings."""
        full = f"{where}.{key}" if where else key
        value = self.get(data, key, list, where)
        if not value or not all(isinstance(w, str) and w for w in value):
            self.fail(full, "must be a non-empty list of non-empty strings")
        return value

    def member(self, key: str, value, known, what: str) -> None:
        if value not in known:
            self.fail(key, f"is not {what} (known: {', '.join(map(str, known))})")


# --------------------------------------------------------------------------- vocabulary.json

@lru_cache(maxsize=1)
def vocabulary() -> dict:
    """``schema/vocabulary.json``: ``events``, ``verdicts`` and ``info_kinds``
    (lists of ``{"id", "meaning"}``) and ``scenario`` (the tables of the
    engine's history model: which kinds each scenario event gives)."""
    data = _json("vocabulary.json")
    check = _Checker("vocabulary.json")
    ids = {}
    for section in ("events", "verdicts", "info_kinds"):
        entries = check.get(data, section, list)
        seen = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
                check.fail(f"{section}[{i}].id", "is missing or not a string")
            if entry["id"] in seen:
                check.fail(f"{section}[{i}].id", f"{entry['id']!r} is a duplicate")
            said = entry.get("words", {})  # the report's words for it (pipeline/report.py rule_sentence)
            if not isinstance(said, dict) or not all(isinstance(v, str) and v for v in said.values()):
                check.fail(f"{section}[{i}].words", "must be an object of non-empty strings")
            seen.append(entry["id"])
        ids[section] = seen
    for verdict in RULE_ONLY_VERDICTS:
        check.member("verdicts", verdict, ids["verdicts"], "a list holding every compiled verdict")
    _check_scenario(check, check.get(data, "scenario", dict), ids["info_kinds"], ids["events"])
    _check_groups(check, check.get(data, "kind_groups", list), ids["info_kinds"])
    for i, q in enumerate(check.get(data, "questions", list)):
        if not isinstance(q, dict) or not all(isinstance(q.get(k), str) and q[k] for k in ("id", "meaning")):
            check.fail(f"questions[{i}]", "must be an object with string id and meaning")
        check.words(q, "fields", f"questions[{i}]")
    return data


def _check_groups(check: _Checker, groups: list, kinds: list[str]) -> None:
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


def _check_scenario(check: _Checker, scenario: dict, kinds: list[str], events_: list[str]) -> None:
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


# --------------------------------------------------------------------------- scenario.schema.json

SCENARIO_SCHEMA = "scenario.schema.json"


@lru_cache(maxsize=1)
def scenario_schema() -> dict:
    """``schema/scenario.schema.json``: the scenario format as a JSON Schema
    (draft 2020-12), the contract other tools validate against."""
    return _json(SCENARIO_SCHEMA)


def _field_spec(check: _Checker, schema: dict, key: str, spec: dict):
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


def _branches(check: _Checker, schema: dict, name: str, tag: str) -> dict[str, dict[str, tuple[bool, object]]]:
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


@lru_cache(maxsize=1)
def scenario_format() -> dict:
    """The scenario format read from ``schema/scenario.schema.json``, flat,
    for the engine's ``validate()``: ``{"events": {do: {field: (required,
    allowed)}}, "questions": {question: {field: (required, allowed)}}}`` where
    ``allowed`` is a tuple of values, ``"boolean"``, ``"string"`` or ``"turn"``.

    Checked against ``vocabulary.json``: summon methods, control modes, info
    kinds and questions (with their fields) are the same there; every event
    other than the retention events and the ones the runtime models itself
    (summon, set, flip_summon, change_position, take_control) has a ``gains``
    entry. Raises SchemaError naming the key otherwise."""
    schema = scenario_schema()
    check = _Checker(SCENARIO_SCHEMA)
    defs = check.get(schema, "$defs", dict)
    for name in ("event", "ask", "summon_method", "control_mode", "info_kind", "player", "phase", "turn"):
        check.get(defs, name, dict, "$defs")
    fmt = {"events": _branches(check, schema, "event", "do"), "questions": _branches(check, schema, "ask", "question")}
    scenario = vocabulary()["scenario"]
    same = {"$defs.summon_method.enum": (defs["summon_method"].get("enum"), list(scenario["summon_methods"])),
            "$defs.control_mode.enum": (defs["control_mode"].get("enum"), list(scenario["take_control_modes"])),
            "$defs.info_kind.enum": (defs["info_kind"].get("enum"), info_kinds())}
    for key, (ours, theirs) in same.items():
        if ours != theirs:
            check.fail(key, f"must list the vocabulary's ids in its order: {theirs}")
    questions = {q["id"]: sorted(q["fields"]) for q in vocabulary()["questions"]}
    asked = {q: sorted(f for f, (required, _) in fields.items() if required) for q, fields in fmt["questions"].items()}
    if asked != questions:
        check.fail("$defs.ask.oneOf", f"questions and required fields differ from vocabulary.json's questions {questions}")
    # the runtime's option gains: summon's from / by_effect / own_procedure, activate_effect's pledge values
    options = ["summon_from", "summon_by_effect", "summon_own_procedure"]
    pledge = fmt["events"].get("activate_effect", {}).get("pledge", (False, ()))[1]
    options += [f"pledge_{v}" for v in (pledge if isinstance(pledge, tuple) else ())]
    for key in options:
        if key not in scenario["gains"]:
            _Checker("vocabulary.json").fail("scenario.gains", f"has no entry {key!r} (an option of {SCENARIO_SCHEMA})")
    modelled = {"summon", "set", "flip_summon", "change_position", "take_control", *scenario["retention_events"]}
    for do in fmt["events"]:
        if do not in modelled and do not in scenario["gains"]:
            _Checker("vocabulary.json").fail("scenario.gains", f"has no entry for the event {do!r} of {SCENARIO_SCHEMA}")
    return fmt


def info_kinds() -> list[str]:
    """Information-kind ids, in vocabulary order."""
    return [k["id"] for k in vocabulary()["info_kinds"]]


def kind_groups() -> list[dict]:
    """Display groups of the info kinds: ``[{"id", "title", "kinds"}]``, every kind in one."""
    return vocabulary()["kind_groups"]


def events() -> list[str]:
    """Event ids, in vocabulary order."""
    return [e["id"] for e in vocabulary()["events"]]


def verdicts() -> list[str]:
    """Every verdict id (those a ruling states and those only compiled)."""
    return [v["id"] for v in vocabulary()["verdicts"]]


def statement_verdicts() -> list[str]:
    """The verdicts a ruling can state: ``kept``, ``lost``, ``not_applicable``."""
    return [v for v in verdicts() if v not in RULE_ONLY_VERDICTS]


# --------------------------------------------------------------------------- retention_terms.json

# The keyed term lists of retention_terms.json (id -> terms), whose terms may
# write alternatives in braces (:func:`expand_alternatives`).
TERM_SECTIONS = ("kinds", "kinds_anywhere", "events", "verdicts", "outcomes", "abilities", "freedoms")
_ALTERNATIVES = re.compile(r"\{([^{}]*)\}")


def expand_alternatives(term: str) -> list[str]:
    """Every phrase a term writes: ``{a|b|}`` is one of ``a``, ``b`` or
    nothing, so ``自身{记述的|}方法`` is ``自身记述的方法`` and ``自身方法``
    (one spelling pattern instead of a list of all its spellings). Raises
    ValueError for a brace left unmatched."""
    m = _ALTERNATIVES.search(term)
    if m is None:
        if "{" in term or "}" in term:
            raise ValueError("has an unmatched brace")
        return [term]
    head, tail = term[:m.start()], term[m.end():]
    return [phrase for choice in m.group(1).split("|") for phrase in expand_alternatives(head + choice + tail)]


TERM_WORD_LISTS = ("sequel", "same", "all_kinds", "hypothetical", "condition_openers", "out_of_scope", "negators",
                   "cause_negators",
                   "events_in_topics_only", "case_separators", "continuity", "case_nouns", "exception_openers",
                   "neutral", "outcome_objects", "other_actors", "information_nouns", "elliptical_words",
                   "anaphora")


@lru_cache(maxsize=1)
def retention_terms() -> dict:
    """``schema/retention_terms.json``: the term lists of statement extraction
    (kinds, events and verdicts, each term list keyed by a vocabulary id;
    the outcome words: ``outcomes`` kept/lost, ``abilities`` able/unable,
    ``freedoms`` free/bound, with ``restricting_kinds``, ``ability_object``,
    ``subject_over_object`` and the ``continuity`` phrases with their
    ``continuity_events``),
    the word lists of :data:`TERM_WORD_LISTS` (negators among them), the
    kinds an "every kind" sentence leaves out (``all_kinds_except``), the
    re-publication days of the official database (``republication_dates``)
    and the retention ``topics`` (topic heading -> section heading ->
    default and allowed kinds)."""
    data = _json("retention_terms.json")
    check = _Checker("retention_terms.json")
    kinds, evts, verds = info_kinds(), events(), statement_verdicts()
    for section, known, what in (("kinds", kinds, "an info kind"), ("kinds_anywhere", kinds, "an info kind"),
                                 ("events", evts, "an event"), ("verdicts", verds, "a verdict"),
                                 ("outcomes", ("kept", "lost"), "kept or lost"),
                                 ("abilities", ("able", "unable"), "able or unable"),
                                 ("freedoms", ("free", "bound"), "free or bound")):
        for key, terms in check.get(data, section, dict).items():
            check.member(f"{section}.{key}", key, known, what)
            check.words({key: terms}, key, section)
    for section in TERM_SECTIONS:
        for key, terms in data[section].items():
            data[section][key] = _expanded(check, f"{section}.{key}", terms)
    for key in TERM_WORD_LISTS:
        check.words(data, key)
    if not check.get(data, "ability_object", str):
        check.fail("ability_object", "must be a non-empty string")
    if isinstance(data.get("ability_object_window"), bool) or check.get(data, "ability_object_window", int) < 0:
        check.fail("ability_object_window", "must be a whole number of characters, 0 or more")
    for kind, words in check.get(data, "scheduled_kinds", dict).items():
        check.member(f"scheduled_kinds.{kind}", kind, kinds, "an info kind")
        check.words({kind: words}, kind, "scheduled_kinds")
        for word in words:
            if word not in data["verdicts"].get("kept", []):
                check.fail(f"scheduled_kinds.{kind}", f"{word!r} is not a term of verdicts.kept")
    _check_reading_terms(check, data, kinds, evts)
    for i, event in enumerate(check.get(data, "continuity_events", list)):
        check.member(f"continuity_events[{i}]", event, evts, "an event")
    for key in ("all_kinds_except", "restricting_kinds", "generic_kinds", "subject_over_object"):
        for i, kind in enumerate(check.get(data, key, list)):
            check.member(f"{key}[{i}]", kind, kinds, "an info kind")
    for i, day in enumerate(check.get(data, "republication_dates", list)):
        if not isinstance(day, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
            check.fail(f"republication_dates[{i}]", "must be an ISO date (YYYY-MM-DD)")
    for term, event in check.get(data, "not_applicable_events", dict).items():
        check.member(f"not_applicable_events.{term}", event, evts, "an event")
        if term not in data["verdicts"].get("not_applicable", []):
            check.fail(f"not_applicable_events.{term}", "is not a term of verdicts.not_applicable")
    for topic, sections in check.get(data, "topics", dict).items():
        for heading, cfg in sections.items():
            where = f"topics.{topic}.{heading}"
            if not isinstance(cfg, dict):
                check.fail(where, "must be an object with default and allowed")
            default = cfg.get("default")
            if default is not None:
                check.member(f"{where}.default", default, kinds, "an info kind")
            for i, k in enumerate(check.get(cfg, "allowed", list, where)):
                check.member(f"{where}.allowed[{i}]", k, kinds, "an info kind")
    return data


def _check_reading_terms(check: _Checker, data: dict, kinds, evts) -> None:
    """The keys of retention_terms.json read by :mod:`pipeline.reading`:
    ``implied_kinds`` (kind -> verdict or freedom terms) with
    ``implied_kinds_when`` (kind -> ``needs`` and ``unless`` words), ``split_events``
    (event -> ``leaves`` and ``returns`` words), ``turn_suffixes`` with
    ``turn_kind``, ``freedom_kinds``, ``stated_by_words``."""
    said = {w for key in ("verdicts", "freedoms") for ws in data[key].values() for w in ws}
    for kind, words in check.get(data, "implied_kinds", dict).items():
        check.member(f"implied_kinds.{kind}", kind, kinds, "an info kind")
        for word in check.words({kind: words}, kind, "implied_kinds"):
            if word not in said:
                check.fail(f"implied_kinds.{kind}", f"{word!r} is not a term of verdicts or freedoms")
    for kind, when in check.get(data, "implied_kinds_when", dict).items():
        if kind not in data["implied_kinds"]:
            check.fail(f"implied_kinds_when.{kind}", "is not a kind of implied_kinds")
        if not isinstance(when, dict):
            check.fail(f"implied_kinds_when.{kind}", "must be an object with needs and unless")
        for key in ("needs", "unless"):
            check.words(when, key, f"implied_kinds_when.{kind}")
    for event, parts in check.get(data, "split_events", dict).items():
        check.member(f"split_events.{event}", event, evts, "an event")
        if not isinstance(parts, dict):
            check.fail(f"split_events.{event}", "must be an object with leaves and returns")
        for key in ("leaves", "returns"):
            check.words(parts, key, f"split_events.{event}")
    check.words(data, "turn_suffixes")
    check.member("turn_kind", check.get(data, "turn_kind", str), kinds, "an info kind")
    for key in ("freedom_kinds", "stated_by_words"):
        for i, kind in enumerate(check.get(data, key, list)):
            check.member(f"{key}[{i}]", kind, kinds, "an info kind")


@lru_cache(maxsize=1)
def card_text_terms() -> dict:
    """``schema/card_text_terms.json``: what a card's effect depends on
    (``dependencies``: info kind -> ``ja`` / ``zh`` regular expressions),
    the ``unless`` patterns that cancel a kind's match in a sentence, the
    ``subsumed_by`` kinds, the extra ``restricting_kinds``, and how a ruling
    names an effect (``effect_reference``, a pattern with the groups
    ``card`` and ``effect``) and says it can or cannot be used (``can``,
    ``cannot``), the ``history_words`` a restricting kind needs and the
    ``other_reasons`` that stop the reading. Every kind is a vocabulary id;
    every pattern compiles."""
    data = _json("card_text_terms.json")
    check = _Checker("card_text_terms.json")
    kinds = info_kinds()

    def patterns(where: str, by_script) -> None:
        if not isinstance(by_script, dict) or not by_script:
            check.fail(where, "must be an object of ja / zh pattern lists")
        for script, words in by_script.items():
            check.member(f"{where}.{script}", script, ("ja", "zh"), "a reading script")
            for i, pattern in enumerate(check.words(by_script, script, where)):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    check.fail(f"{where}.{script}[{i}]", f"is not a regular expression: {exc}")

    for section in ("dependencies", "unless"):
        for kind, by_script in check.get(data, section, dict).items():
            check.member(f"{section}.{kind}", kind, kinds, "an info kind")
            patterns(f"{section}.{kind}", by_script)
    for kind, specific in check.get(data, "subsumed_by", dict).items():
        check.member(f"subsumed_by.{kind}", kind, kinds, "an info kind")
        for i, k in enumerate(check.words(data["subsumed_by"], kind, "subsumed_by")):
            check.member(f"subsumed_by.{kind}[{i}]", k, kinds, "an info kind")
    for key in ("restricting_kinds", "card_kinds", "lost_first"):
        for i, kind in enumerate(check.get(data, key, list)):
            check.member(f"{key}[{i}]", kind, kinds, "an info kind")
    try:
        reference = re.compile(check.get(data, "effect_reference", str))
    except re.error as exc:
        check.fail("effect_reference", f"is not a regular expression: {exc}")
    if not {"card", "effect"} <= set(reference.groupindex):
        check.fail("effect_reference", "must have the named groups card and effect")
    for key in ("can", "cannot", "history_words", "other_reasons", "later_turn_words"):
        check.words(data, key)
    negators = check.get(data, "negators", dict)
    for script in ("ja", "zh"):
        check.words(negators, script, "negators")
    for section in ("activation_on_it", "material_of", "effect_on_it"):
        words = check.get(data, section, dict)
        for key in ("can", "cannot"):
            check.words(words, key, section)
    try:
        re.compile(check.get(data["material_of"], "summons", str, "material_of"))
    except re.error as exc:
        check.fail("material_of.summons", f"is not a regular expression: {exc}")
    denials = check.get(data, "denials", dict)
    for key in ("can", "cannot"):
        check.words(denials, key, "denials")
    for key in ("context_before", "min_chars"):
        if not isinstance(denials.get(key), int) or denials[key] < 1:
            check.fail(f"denials.{key}", "must be a positive whole number")
    return data



@lru_cache(maxsize=1)
def card_ruling_terms() -> dict:
    """``schema/card_ruling_terms.json``: how a ruling on a named card says
    one of its numbered effects can or cannot be used after a retention
    event (pipeline/effectrulings.py): ``events`` (event -> patterns, every
    event a vocabulary id), ``not_events``, ``quoted``, ``reference`` (with
    the groups ``card`` and ``effect``), ``can``, ``cannot``, ``window``
    (``before`` / ``after``: whole numbers), ``cause``, ``other_subject``
    and ``situational``. Every pattern compiles."""
    data = _json("card_ruling_terms.json")
    check = _Checker("card_ruling_terms.json")

    def compiles(where: str, pattern) -> re.Pattern:
        if not isinstance(pattern, str) or not pattern:
            check.fail(where, "must be a non-empty regular expression")
        try:
            return re.compile(pattern)
        except re.error as exc:
            check.fail(where, f"is not a regular expression: {exc}")

    for event, words in check.get(data, "events", dict).items():
        check.member(f"events.{event}", event, events(), "an event")
        for i, w in enumerate(check.words(data["events"], event, "events")):
            compiles(f"events.{event}[{i}]", w)
    for key in ("not_events", "can", "cannot", "situational"):
        for i, w in enumerate(check.words(data, key)):
            compiles(f"{key}[{i}]", w)
    for key in ("quoted", "cause", "other_subject"):
        compiles(key, check.get(data, key, str))
    if not {"card", "effect"} <= set(compiles("reference", check.get(data, "reference", str)).groupindex):
        check.fail("reference", "must have the named groups card and effect")
    window = check.get(data, "window", dict)
    for key in ("before", "after"):
        if not isinstance(window.get(key), int) or isinstance(window.get(key), bool) or window[key] < 1:
            check.fail(f"window.{key}", "must be a whole number of characters, at least 1")
    return data

def _expanded(check: _Checker, where: str, terms: list[str]) -> list[str]:
    """``terms`` with their alternatives written out (:func:`expand_alternatives`), each phrase once."""
    phrases: dict[str, None] = {}
    for i, term in enumerate(terms):
        try:
            phrases.update(dict.fromkeys(expand_alternatives(term)))
        except ValueError as exc:
            check.fail(f"{where}[{i}]", f"{term!r} {exc}")
    if "" in phrases:
        check.fail(where, "a term's alternatives leave an empty phrase")
    return list(phrases)


def _lower_case_words(check: _Checker, data: dict, key: str, where: str) -> list[str]:
    """``check.words`` of ``data[key]``, each phrase lower case (English phrases
    are matched on lower-cased text)."""
    phrases = check.words(data, key, where)
    for i, phrase in enumerate(phrases):
        if phrase != phrase.lower():
            check.fail(f"{where}.{key}[{i}]", "must be lower case (matched on lower-cased text)")
    return phrases


@lru_cache(maxsize=1)
def retention_terms_en() -> dict:
    """``schema/retention_terms_en.json``: English ``kinds``, ``events``,
    ``verdicts`` (id -> phrases, lower case), ``negators``,
    ``returning_events`` (event -> ``{"leaves": [...], "returns": [...]}``) and
    the ``return_negations`` before a returning phrase (``words``, ``suffixes``);
    keys checked against the vocabulary."""
    data = _json("retention_terms_en.json")
    check = _Checker("retention_terms_en.json")
    for section, known, what in (("kinds", info_kinds(), "an info kind"), ("events", events(), "an event"),
                                 ("verdicts", statement_verdicts(), "a verdict a ruling states")):
        for key in check.get(data, section, dict):
            check.member(f"{section}.{key}", key, known, what)
            _lower_case_words(check, data[section], key, section)
    check.words(data, "negators")
    for part in ("words", "suffixes"):  # the negations before a returning phrase
        check.words(check.get(data, "return_negations", dict), part, "return_negations")
    for event, phrases in check.get(data, "returning_events", dict).items():
        check.member(f"returning_events.{event}", event, events(), "an event")
        if not isinstance(phrases, dict):
            check.fail(f"returning_events.{event}", 'must be an object {"leaves": [...], "returns": [...]}')
        for part in ("leaves", "returns"):
            _lower_case_words(check, phrases, part, f"returning_events.{event}")
    return data


# --------------------------------------------------------------------------- rule_policy.json

@lru_cache(maxsize=1)
def rule_policy() -> dict:
    """``schema/rule_policy.json``, checked: how compile weighs disagreeing
    rulings (``readings``: reading -> meaning; ``override_alone``: the
    readings whose one newer ruling changes a verdict; ``agreeing_rulings``:
    how many distinct newer rulings change it otherwise, an int >= 1) and the
    cases of conditional rules (``negators`` / ``negated_after``: words that
    negate a case's word; ``facts``: fact -> ``{"values", "meaning"}``;
    ``cases``: ``[{"id", "fact", "values", "words", "cards"?, "en", "zh"}]``
    in match order; ``cards``: passcodes a condition may name instead). SchemaError naming the key when the file is malformed."""
    data = _json("rule_policy.json")
    check = _Checker("rule_policy.json")
    readings = check.get(data, "readings", dict)
    for i, reading in enumerate(check.words(data, "override_alone")):
        check.member(f"override_alone[{i}]", reading, list(readings), "a reading")
    agreeing = check.get(data, "agreeing_rulings", int)
    if isinstance(agreeing, bool) or agreeing < 1:
        check.fail("agreeing_rulings", "must be a whole number of at least 1")
    check.words(data, "negators")
    check.words(data, "negated_after")
    facts = check.get(data, "facts", dict)
    for name, fact in facts.items():
        if not isinstance(fact, dict) or not isinstance(fact.get("values"), list) or not fact["values"]:
            check.fail(f"facts.{name}", "must be an object with a non-empty list 'values'")
    seen: set[str] = set()
    for i, case in enumerate(check.get(data, "cases", list)):
        where = f"cases[{i}]"
        if not isinstance(case, dict):
            check.fail(where, "must be an object")
        case_id = check.get(case, "id", str, where)
        if case_id in seen:
            check.fail(f"{where}.id", f"repeats {case_id!r}")
        seen.add(case_id)
        fact = check.get(case, "fact", str, where)
        check.member(f"{where}.fact", fact, list(facts), "a fact of 'facts'")
        for j, value in enumerate(check.get(case, "values", list, where)):
            check.member(f"{where}.values[{j}]", value, facts[fact]["values"], f"a value of fact {fact!r}")
        if "words" in case or "cards" not in case:
            check.words(case, "words", where)
        cards = case.get("cards", [])
        if not isinstance(cards, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in cards):
            check.fail(f"{where}.cards", "must be a list of passcodes (whole numbers)")
        check.get(case, "en", str, where)
        check.get(case, "zh", str, where)
    return data


# --------------------------------------------------------------------------- procedural_rules.json

@lru_cache(maxsize=1)
def rulesets() -> dict:
    """``schema/rulesets.json``: ``{"ocg": {"languages": [...], "url_prefixes": [...]}}``,
    which sources rule on the OCG (:func:`pipeline.compile.other_rulesets`)."""
    data = _json("rulesets.json")
    check = _Checker("rulesets.json")
    ocg = check.get(data, "ocg", dict)
    check.words(ocg, "languages", "ocg")
    for i, prefix in enumerate(check.words(ocg, "url_prefixes", "ocg")):
        if not prefix.startswith(("https://", "http://")):
            check.fail(f"ocg.url_prefixes[{i}]", "must start with https:// or http://")
    return data


@lru_cache(maxsize=1)
def procedural_grammar() -> dict:
    """``schema/procedural_rules.json`` without its rules: ``triggers``
    (words a record needs before it is read), ``categories``, ``overridden``
    (feature -> features whose overlapping match drops its match), ``words``
    (word groups) and ``patterns`` (feature -> token patterns written as
    strings, :mod:`pipeline.procedural`). Every upper-case name a pattern
    uses is a word group, every feature a category lists has patterns."""
    data = _json("procedural_rules.json")
    check = _Checker("procedural_rules.json")
    check.words(data, "triggers")
    groups = check.get(data, "words", dict)
    for name in groups:
        check.words(groups, name, "words")
    patterns = check.get(data, "patterns", dict)
    for feature in patterns:
        for j, pattern in enumerate(check.words(patterns, feature, "patterns")):
            for token in pattern.split():
                for word in token.lstrip("?").split("|"):
                    if word.isupper() and not word.startswith("*") and word not in groups:
                        check.fail(f"patterns.{feature}[{j}]", f"names {word!r}, which is no word group")
    categories = check.get(data, "categories", dict)
    for name in ("polarity", "flags", "actions"):
        for feature in check.words(categories, name, "categories"):
            check.member(f"categories.{name}", feature, patterns, "a feature with patterns")
    for feature, others in check.get(data, "overridden", dict).items():
        check.member("overridden", feature, patterns, "a feature with patterns")
        for other in check.words(data["overridden"], feature, "overridden"):
            check.member(f"overridden.{feature}", other, patterns, "a feature with patterns")
    return {key: data[key] for key in ("triggers", "categories", "overridden", "words", "patterns")}


@lru_cache(maxsize=1)
def procedural_rules() -> dict[str, dict]:
    """``schema/procedural_rules.json`` as ``{rule_id: {"id", "summary",
    "readings"}}`` in file order (seeds 000 and 003). A reading is
    ``{"polarity"?, "all", "any"?, "none"?, "near"?}`` over the features of
    :func:`procedural_grammar`; every feature it names has patterns."""
    data = _json("procedural_rules.json")
    check = _Checker("procedural_rules.json")
    features = procedural_grammar()["patterns"]
    rules: dict[str, dict] = {}
    for i, rule in enumerate(check.get(data, "rules", list)):
        where = f"rules[{i}]"
        if not isinstance(rule, dict):
            check.fail(where, "must be an object")
        rule_id = check.get(rule, "id", str, where)
        if rule_id in rules:
            check.fail(f"{where}.id", f"{rule_id!r} is a duplicate")
        check.get(rule, "summary", str, where)
        readings = check.get(rule, "readings", list, where)
        if not readings:
            check.fail(f"{where}.readings", "is empty")
        for j, reading in enumerate(readings):
            place = f"{where}.readings[{j}]"
            if not isinstance(reading, dict):
                check.fail(place, "must be an object")
            for key in ("all", "any", "none", "near"):
                if key in reading or key == "all":
                    for feature in check.words(reading, key, place):
                        check.member(f"{place}.{key}", feature, features, "a feature with patterns")
            if "polarity" in reading:
                check.member(f"{place}.polarity", reading["polarity"],
                             procedural_grammar()["categories"]["polarity"], "a polarity")
        rules[rule_id] = rule
    return rules


@lru_cache(maxsize=1)
def procedural_blocks() -> list[dict]:
    """``schema/procedural_rules.json``'s ``blocks``: ``[{"rules": id prefix
    ('' for every rule), "when": a reading without polarity}]``; a sentence
    satisfying ``when`` states none of those rules (a negated claim, a
    hypothetical, another game format, a Spell or Trap Card's position).
    Every feature ``when`` names has patterns; a prefix matches a rule id."""
    data = _json("procedural_rules.json")
    check = _Checker("procedural_rules.json")
    features, ids = procedural_grammar()["patterns"], procedural_rules()
    blocks = check.get(data, "blocks", list)
    for i, block in enumerate(blocks):
        where = f"blocks[{i}]"
        if not isinstance(block, dict) or not isinstance(block.get("when"), dict):
            check.fail(where, "must be an object with a 'when' object")
        prefix = check.get(block, "rules", str, where)
        if not any(rule_id.startswith(prefix) for rule_id in ids):
            check.fail(f"{where}.rules", f"{prefix!r} starts no rule id")
        for key in ("all", "any", "none", "near"):
            for feature in block["when"].get(key, ()):
                check.member(f"{where}.when.{key}", feature, features, "a feature with patterns")
        if not any(block["when"].get(key) for key in ("all", "any", "near")):
            check.fail(f"{where}.when", "names no feature it needs")
    return blocks


# --------------------------------------------------------------------------- markers.json

@lru_cache(maxsize=1)
def markers() -> dict:
    """``schema/markers.json``: the words and markup that mark page
    structure: ``example_labels`` (a line that is only the label),
    ``example_prefixes`` (a line that starts with one), ``note_headings``,
    ``pending_markers`` (and ``answered_suffixes``, which make one an
    answer: ``调整中确认``), ``clause_delimiters`` (a string of characters),
    ``content_selectors`` (simple CSS selectors, first found wins),
    ``chrome`` (``tags``, ``classes``, ``roles`` of site chrome, and the
    ``keep_classes`` / ``keep_roles`` that make such an element content:
    footnotes are asides), ``chrome_line_patterns`` (regular expressions of
    chrome lines written in the content: navigation, breadcrumbs, footers)
    the footnotes' classes, roles and label classes, and the words that
    make a date one the text refers to (``date_reference_before``: 详见,
    参照; ``date_reference_after``: 的), and ``archetype_suffixes`` (the kind
    words after a 「name」 that make it an archetype: 怪兽, 卡, S怪兽),
    ``token_suffixes`` (the end of a Token's name: 衍生物; no card) and
    ``term_quote_patterns`` (game terms, not cards, in any quote marks:
    「攻击力·守备力」, 『永续魔法』, “战斗阶段”; matched against the quoted
    name's key, ignoring case), and ``exams`` (the ``option`` and answer
    ``key_line`` patterns of an exam page, the ``right_words`` and
    ``wrong_words`` of its questions: :mod:`pipeline.exams`)."""
    data = _json("markers.json")
    check = _Checker("markers.json")
    for key in ("example_labels", "example_prefixes", "note_headings", "pending_markers", "answered_suffixes",
                "content_selectors"):
        check.words(data, key)
    if not check.get(data, "clause_delimiters", str):
        check.fail("clause_delimiters", "is empty")
    chrome = check.get(data, "chrome", dict)
    for key in ("tags", "classes", "roles", "keep_classes", "keep_roles"):
        check.words(chrome, key, "chrome")
    for key in ("footnote_classes", "footnote_roles", "footnote_label_classes", "date_reference_before",
                "date_reference_after", "archetype_suffixes", "token_suffixes"):
        check.words(data, key)
    for key in ("chrome_line_patterns", "term_quote_patterns"):
        for i, pattern in enumerate(check.words(data, key)):
            try:
                re.compile(pattern)
            except re.error as exc:
                check.fail(f"{key}[{i}]", f"is not a regular expression: {exc}")
    exams = check.get(data, "exams", dict)
    for key in ("option", "key_line"):
        try:
            re.compile(check.get(exams, key, str, "exams"))
        except re.error as exc:
            check.fail(f"exams.{key}", f"is not a regular expression: {exc}")
    for key in ("right_words", "wrong_words"):
        check.words(exams, key, "exams")
    return data


# --------------------------------------------------------------------------- TSV and other files

OPENCC_FIX_COLUMNS = ("configs", "written", "simplified")
REGIONAL_TERM_COLUMNS = ("canonical", "CN", "TW", "HK")


def tsv_rows(name: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of ``schema/<name>``: ``#`` lines are comments, the first other
    line is the header and must hold every column of ``required``; short
    rows are padded with empty strings."""
    lines = [line for line in _read(name).splitlines() if line.strip() and not line.startswith("#")]
    header = lines[0].split("\t") if lines else []
    missing = [c for c in required if c not in header]
    if missing:
        raise SchemaError(f"header lacks the columns {missing} (has {header})", place=_display(SCHEMA_DIR / name))
    return [dict(zip(header, (line.split("\t") + [""] * len(header))[:len(header)])) for line in lines[1:]]


# The OpenCC configs pipeline.chinese converts with: running text (tw2sp, hk2s, t2s), card names (tw2s).
OPENCC_CONFIGS = ("tw2sp", "tw2s", "hk2s", "t2s")


@lru_cache(maxsize=1)
def opencc_fix_rows() -> tuple[dict[str, str], ...]:
    """``schema/opencc_fixes.tsv``, checked: each row's ``configs`` (comma-separated)
    are configs of :data:`OPENCC_CONFIGS`, ``written`` and ``simplified`` are
    not empty, and no two rows give one written form of one config two
    corrections. SchemaError names the row (``row 3``, counted from the header)."""
    rows = tsv_rows("opencc_fixes.tsv", OPENCC_FIX_COLUMNS)
    check = _Checker("opencc_fixes.tsv")
    seen: dict[tuple[str, str], str] = {}
    for i, row in enumerate(rows, start=1):
        configs = [c.strip() for c in row["configs"].split(",")]
        unknown = [c for c in configs if c not in OPENCC_CONFIGS]
        if unknown:
            check.fail(f"row {i}", f"names unknown OpenCC configs {unknown} (known: {', '.join(OPENCC_CONFIGS)})")
        if not row["written"].strip() or not row["simplified"].strip():
            check.fail(f"row {i}", "has an empty written or simplified form")
        for config in configs:
            known = seen.setdefault((config, row["written"]), row["simplified"])
            if known != row["simplified"]:
                check.fail(f"row {i}", f"corrects {row['written']!r} for {config} a second way "
                                       f"({row['simplified']!r}, before: {known!r})")
    return tuple(rows)


@lru_cache(maxsize=1)
def channel_labels() -> dict[str, str]:
    """``schema/channels.tsv``: the yearly logs' block labels (``邮件：``),
    lower-cased, -> channel id."""
    return {row["label"].lower(): row["channel"] for row in tsv_rows("channels.tsv", ("label", "channel"))}


@lru_cache(maxsize=1)
def mediawiki_sites() -> dict[str, str]:
    """``schema/mediawiki_sites.json``: host (``*.`` wildcards allowed) -> API
    URL (``{host}`` is replaced by the page's host)."""
    data = _json("mediawiki_sites.json")
    check = _Checker("mediawiki_sites.json")
    sites = {k: v for k, v in data.items() if not k.startswith("_")}
    for host, api in sites.items():
        if not isinstance(api, str) or not api.startswith(("http://", "https://")):
            check.fail(host, "must map to an http(s) API URL")
    return sites


@lru_cache(maxsize=1)
def ddl() -> str:
    """``schema/ddl.sql``, the database schema."""
    return _read("ddl.sql")


# --------------------------------------------------------------------------- simulators/*.json

SIMULATOR_VERDICTS = ("kept", "lost", "not_applicable", "not_modelled")
SIMULATOR_STORAGE = ("summon_info", "status_bits", "effect_reset", "material_list", "counters", "attack_counts",
                     "card_relations", "not_modelled")


@lru_cache(maxsize=1)
def simulators() -> dict[str, dict]:
    """``schema/simulators/*.json``, by simulator id, in the files' ``order``.

    Each file: ``simulator`` (its id, the file's stem), ``order`` (an
    integer: where the simulator comes in listings), ``name``,
    ``repository``, ``commit`` (40 hex digits), ``licence``; ``evidence``
    (id -> ``{"file", "line", "lines"}``: the pinned source's lines from
    ``line`` on, leading whitespace removed); ``events`` (each event of the
    vocabulary -> ``{"applies", "evidence"}``: the resets it applies);
    ``kinds`` (each info kind of the vocabulary -> ``{"storage", "where",
    "verdicts"}``, ``verdicts`` mapping each event to ``{"verdict",
    "evidence", "note"}``). Verdicts are those of :data:`SIMULATOR_VERDICTS`
    (``not_modelled``: the core keeps no such information), storage one of
    :data:`SIMULATOR_STORAGE`; every evidence id named must exist and every
    verdict cites at least one. SchemaError names the file and key."""
    folder = SCHEMA_DIR / "simulators"
    names = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
    if not names:
        raise SchemaError("no simulator files (simulators/*.json)", place=_display(folder))
    kinds, events_ = info_kinds(), events()
    out = {}
    for name in names:
        data = _json(f"simulators/{name}")
        check = _Checker(f"simulators/{name}")
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
            check.member(f"kinds.{k}.storage", entry.get("storage"), SIMULATOR_STORAGE, "a storage")
            check.get(entry, "where", str, f"kinds.{k}")
            verdicts_ = check.get(entry, "verdicts", dict, f"kinds.{k}")
            for e in events_:
                where = f"kinds.{k}.verdicts.{e}"
                v = check.get(verdicts_, e, dict, f"kinds.{k}.verdicts")
                check.member(f"{where}.verdict", v.get("verdict"), SIMULATOR_VERDICTS, "a simulator verdict")
                check.get(v, "note", str, where)
                cites(v, where)
        out[sim] = data
    return dict(sorted(out.items(), key=lambda item: (item[1]["order"], item[0])))


def check_all() -> None:
    """Load and validate every schema file; raises SchemaError for the first
    problem. Costs a few milliseconds (each file is read once per process)."""
    vocabulary(), retention_terms(), retention_terms_en(), procedural_grammar(), procedural_rules(), markers(), channel_labels()
    rulesets()
    mediawiki_sites(), ddl(), scenario_format()
    opencc_fix_rows(), tsv_rows("regional_terms.tsv", REGIONAL_TERM_COLUMNS)
    simulators()
    card_text_terms()
