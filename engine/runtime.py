"""Runtime of the generated engine module (standard library only).

``pipeline/generate.py`` writes the tables (the vocabulary of
``schema/vocabulary.json`` and ``schema/procedural_rules.json``: ``INFO_KINDS``,
``EVENTS``, ``SUMMON_KINDS``, ``GAINS``, ``CONTROL_KINDS``, ``THIS_TURN_KINDS``,
``RETENTION_EVENTS``, ``PROCEDURAL_IDS``; the scenario format of
``schema/scenario.schema.json``: ``SCENARIO_EVENTS``, ``SCENARIO_QUESTIONS``,
do / question -> field -> (required, allowed values or "boolean" / "turn");
the compiled rules: ``RULES``,
``CITATIONS``, ``SOURCES``, ``PROCEDURAL``) and then copies everything below
the ``RUNTIME`` marker of this file, so the generated module is one
self-contained file another tool can import or copy. ``engine/runtime.mjs``
is the same runtime in JavaScript (engine/ocg_rules.mjs): change both
together; tests/test_js_engine.py requires identical answers. The runtime names no
information kind of its own but ``position_change_restrictions`` and
``attack_declared`` (the questions that read them), and the procedural rule
ids of seeds 000 and 003; a test checks each against ``schema/``.

Public API of the generated module:

* ``retains(info_kind, event) -> Retention``: does ``info_kind`` survive
  ``event`` (``face_down``, ``temp_banish``, ``flip_face_up``)? The verdict is
  ``kept``, ``lost``, ``not_applicable``, ``conditional`` or ``unknown``, with
  the ruling records and dates behind it. Raises ``ValueError`` for a name
  outside the vocabulary (with a "did you mean").
* ``answer(scenario) -> dict``: the scenario format of schema/scenario.schema.json; returns
  ``{"id", "answer", "because"}`` where ``answer`` is True, False or
  ``"unknown"``. Raises ``ScenarioError`` (a ``ValueError``) naming the
  scenario id and the field when the scenario is malformed.
* ``answer_all(scenarios) -> list``: each scenario answered; a malformed one,
  and each of two or more sharing an id, yields ``{"id", "error", "field"}``
  and the others are still answered.
* ``citation(record_id) -> dict``: a record's source, URL, section, dates, text.
"""

from __future__ import annotations

# Placeholders so this file imports on its own (tests, linters); the generated
# module defines the real tables above the runtime.
GENERATOR = ""
RULES_HASH = ""
INFO_KINDS: tuple = ()
EVENTS: tuple = ()
SUMMON_KINDS: dict = {}
GAINS: dict = {}
CONTROL_KINDS: dict = {}
THIS_TURN_KINDS: tuple = ()
RETENTION_EVENTS: dict = {}
PROCEDURAL_IDS: tuple = ()
RULES: tuple = ()
CITATIONS: dict = {}
SOURCES: dict = {}
PROCEDURAL: dict = {}
SCENARIO_EVENTS: dict = {}
SCENARIO_QUESTIONS: dict = {}

# ==== RUNTIME ====
# Only the standard library, and only what the import needs: typing and difflib
# cost more than the rest of the bundled engine's import (about 7 ms against 1-2 ms
# without them); difflib is imported for a misspelled name only.
from collections import namedtuple as _namedtuple

# The public names: functions, types and the tables (``import engine`` exposes the same).
__all__ = ["retains", "answer", "answer_all", "citation", "validate", "Retention", "ScenarioError",
           "GENERATOR", "RULES_HASH", "INFO_KINDS", "EVENTS", "SUMMON_KINDS", "GAINS", "CONTROL_KINDS",
           "THIS_TURN_KINDS", "RETENTION_EVENTS", "PROCEDURAL_IDS", "SCENARIO_EVENTS", "SCENARIO_QUESTIONS", "RULES",
           "CITATIONS", "SOURCES", "PROCEDURAL"]


Retention = _namedtuple("Retention", ("info_kind", "event", "verdict", "condition", "latest_date", "changed_on",
                                      "dates", "record_ids", "conflicts", "record_dates", "disputed_by", "cases"),
                        defaults=((), (), ()))
Retention.__doc__ = """The rules table's answer for one (information kind, event) pair.

    ``info_kind``, ``event``, ``verdict`` and ``condition`` are strings;
    ``latest_date`` and ``changed_on`` ISO dates or None; ``dates`` are ISO
    dates of the supporting rulings, ``record_ids`` the supporting records
    (see ``citation``) and ``record_dates`` the dates each of them gives
    this rule (those of its sentences that state it); ``changed_on`` is set
    when a later ruling overrode an earlier verdict; ``conflicts`` lists
    overridden verdicts as ``{"verdict", "record_ids", "latest_date"}`` dicts;
    ``disputed_by`` the newer records that disagree with the verdict without
    changing it (the rule is disputed, for review); ``cases``, for a
    conditional rule, its verdict per case as ``{"case", "fact", "values",
    "verdict", "record_ids"}`` dicts: where the monster's ``fact``
    (``summon_this_turn``, ``can_normal_summon``, ``count_scope``) has one of
    ``values``, the verdict is the case's (``answer`` applies it when the
    scenario tells the fact).
    """
# The field types, for typing.get_type_hints, help() and type checkers (what typing.NamedTuple gave).
Retention.__annotations__ = {"info_kind": str, "event": str, "verdict": str, "condition": str, "latest_date": object,
                             "changed_on": object, "dates": tuple, "record_ids": tuple, "conflicts": tuple,
                             "record_dates": tuple, "disputed_by": tuple, "cases": tuple}
Retention.__new__.__annotations__ = dict(Retention.__annotations__)


class ScenarioError(ValueError):
    """A malformed scenario: ``scenario_id`` and ``field`` say where."""

    def __init__(self, scenario_id, field, message):
        self.scenario_id = scenario_id
        self.field = field
        super().__init__(f"scenario {scenario_id!r}: field {field!r}: {message}")


_RETENTION = {(r[0], r[1]): Retention(*r) for r in RULES}
_KIND_SET = frozenset(INFO_KINDS)


def _did_you_mean(name, choices):
    import difflib  # only for a name that is not one: not at import

    close = difflib.get_close_matches(str(name), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def retains(info_kind, event):
    """Retention for ``info_kind`` x ``event``; ValueError for unknown names
    (anything but a name of INFO_KINDS and EVENTS)."""
    if isinstance(info_kind, str) and isinstance(event, str) and (info_kind, event) in _RETENTION:
        return _RETENTION[(info_kind, event)]
    if not isinstance(info_kind, str) or info_kind not in _KIND_SET:
        raise ValueError(f"unknown info kind {info_kind!r}{_did_you_mean(info_kind, INFO_KINDS)}")
    raise ValueError(f"unknown event {event!r}{_did_you_mean(event, EVENTS)}")


def citation(record_id):
    """``{"id", "source", "url", "licence", "section", "dates", "text"}`` of a
    cited record (``text``: the ruling, cut to an excerpt when long); KeyError
    for an id the engine does not cite."""
    if not isinstance(record_id, str) or record_id not in CITATIONS:
        raise KeyError(f"no cited record {record_id!r}")
    source_id, dates, section, text = CITATIONS[record_id]
    url, licence = SOURCES.get(source_id, ("", ""))
    return {"id": record_id, "source": source_id, "url": url, "licence": licence,
            "section": section, "dates": list(dates), "text": text}


def _records(record_ids, record_dates=()):
    """``{"id", "dates", "source"}`` per record: the dates it gives the rule
    (``record_dates``) where known, else all the record's dates."""
    out = []
    for i, rid in enumerate(record_ids):
        source_id, dates, _section, _text = CITATIONS[rid]
        own = record_dates[i] if i < len(record_dates) else dates
        out.append({"id": rid, "dates": list(own), "source": source_id})
    return out


def _because_retention(r, case=None):
    """A retention rule as a reason; for a conditional rule whose ``case``
    the scenario tells, that case's verdict and records."""
    if case is not None:
        return {"rule": f"retention:{r.info_kind}/{r.event}", "verdict": case["verdict"], "case": case["case"],
                "records": _records(case["record_ids"])}
    item = {"rule": f"retention:{r.info_kind}/{r.event}", "verdict": r.verdict,
            "records": _records(r.record_ids, r.record_dates)}
    if r.condition:
        item["condition"] = r.condition
    if r.cases:  # the scenario does not tell which: every case with its verdict
        item["cases"] = [{"case": c["case"], "fact": c["fact"], "values": list(c["values"]), "verdict": c["verdict"]}
                         for c in r.cases]
    if r.changed_on:
        item["changed_on"] = r.changed_on
    if r.disputed_by:
        item["disputed_by"] = list(r.disputed_by)
    return item


def _case(r, facts):
    """The case of conditional rule ``r`` that the monster's ``facts`` select
    (every matching case gives one verdict), or None when they do not tell."""
    matching = [c for c in r.cases if facts.get(c["fact"]) is not None and facts[c["fact"]] in c["values"]]
    return matching[0] if matching and len({c["verdict"] for c in matching}) == 1 else None


def _because_rule(rule_id):
    summary, record_ids, _dates = PROCEDURAL[rule_id]
    return {"rule": rule_id, "summary": summary, "records": _records(record_ids)}


def _because_missing(rule_id, why):
    return {"rule": rule_id, "missing": True, "summary": f"the corpus states no such rule: {why}"}


# ---------------------------------------------------------------- scenario checks

_PLAYERS = ("A", "B")


def _check_choice(sid, field, value, choices):
    if value not in choices:
        raise ScenarioError(sid, field, f"{value!r} is not one of {list(choices)}{_did_you_mean(value, choices)}")


_MAX_TURN = 2 ** 53 - 1  # the largest whole number JavaScript holds exactly (the .mjs engine agrees)


def _check_turn(sid, field, value):
    # 1.0 is a whole number too (JSON Schema and JavaScript agree)
    whole = (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if not whole or not 1 <= value <= _MAX_TURN:
        raise ScenarioError(sid, field, f"turn must be a whole number from 1 to {_MAX_TURN}, not {value!r}")


def _check_fields(sid, where, obj, fields, key):
    """Check ``obj`` against one branch of the scenario format: no field the
    branch does not name (a misspelt option would be ignored), every required
    field present, every given field of an allowed value."""
    tag = f"{key}={obj[key]!r}"
    for field in obj:
        if field not in fields and field != key:
            raise ScenarioError(sid, f"{where}.{field}", f"unknown field for {tag}{_did_you_mean(field, fields)}")
    for field, (required, allowed) in fields.items():
        if field not in obj:
            if required:
                raise ScenarioError(sid, f"{where}.{field}", f"missing (required by {tag})")
            continue
        value = obj[field]
        if allowed == "turn":
            _check_turn(sid, f"{where}.{field}", value)
        elif allowed == "boolean":
            if not isinstance(value, bool):
                raise ScenarioError(sid, f"{where}.{field}", f"must be true or false, not {value!r}")
        elif allowed == "string":
            if not isinstance(value, str):
                raise ScenarioError(sid, f"{where}.{field}", f"must be a string, not {value!r}")
        else:
            _check_choice(sid, f"{where}.{field}", value, allowed)


# Code points a scenario id may not hold (the "id" pattern of schema/scenario.schema.json): C0 and C1
# controls, DEL, bidi marks, embeddings, overrides and isolates, line and paragraph separators. An id is
# printed back with its answer: it must not act on a terminal or forge a line.
_ID_FORBIDDEN = ((0x00, 0x1F), (0x7F, 0x9F), (0x61C, 0x61C), (0x200E, 0x200F), (0x2028, 0x202E), (0x2066, 0x2069))


def _forbidden_in_id(sid):
    """(index, code point) of the first character of ``sid`` in _ID_FORBIDDEN, or None."""
    if sid.isascii() and sid.isprintable():
        return None
    for i, ch in enumerate(sid):
        code = ord(ch)
        for low, high in _ID_FORBIDDEN:
            if low <= code <= high:
                return i, code
    return None


def validate(scenario):
    """Raise ScenarioError naming the scenario id and field if ``scenario``
    does not follow the scenario format (``SCENARIO_EVENTS`` and
    ``SCENARIO_QUESTIONS``, from schema/scenario.schema.json), if its id
    holds a character of ``_ID_FORBIDDEN`` (then the error's id is ``?``:
    the id is not echoed), or if its turns go backwards."""
    if not isinstance(scenario, dict):
        raise ScenarioError("?", "(scenario)", "a scenario is a JSON object")
    sid = scenario.get("id")
    if not isinstance(sid, str) or not sid:
        raise ScenarioError("?", "id", "missing or not a string")
    bad = _forbidden_in_id(sid)
    if bad:
        raise ScenarioError("?", "id", f"character {bad[0]} is U+{bad[1]:04X}: an id may not hold control, "
                                       "bidi or line-separator characters")
    events = scenario.get("events")
    if not isinstance(events, list):
        raise ScenarioError(sid, "events", "missing or not a list")
    last_turn = 0
    for i, ev in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(ev, dict):
            raise ScenarioError(sid, where, "an event is a JSON object")
        _check_turn(sid, f"{where}.turn", ev.get("turn"))
        if ev["turn"] < last_turn:
            raise ScenarioError(sid, f"{where}.turn", f"turn {ev['turn']} comes after turn {last_turn}: turns never go backwards")
        last_turn = ev["turn"]
        do = ev.get("do")
        _check_choice(sid, f"{where}.do", do, tuple(SCENARIO_EVENTS))
        _check_fields(sid, where, ev, SCENARIO_EVENTS[do], "do")
    ask = scenario.get("ask")
    if not isinstance(ask, dict):
        raise ScenarioError(sid, "ask", "missing or not an object")
    question = ask.get("question")
    _check_choice(sid, "ask.question", question, tuple(SCENARIO_QUESTIONS))
    _check_fields(sid, "ask", ask, SCENARIO_QUESTIONS[question], "question")
    if ask["turn"] < last_turn:
        raise ScenarioError(sid, "ask.turn", f"turn {ask['turn']} is before the last event's turn {last_turn}")


# ---------------------------------------------------------------- the history model

# Information that only means something in the turn it was gained.
_THIS_TURN = frozenset(THIS_TURN_KINDS)


class _Monster:
    """One monster's state after a history of events.

    ``info`` maps a kind to ``(turn gained, status)`` with status ``has`` or
    ``unknown``; ``position_facts`` are this-turn position-change restrictions
    ``(turn, what, player)``; ``because`` collects the retention rules applied.
    """

    def __init__(self):
        self.event = ""  # the event being replayed
        self.restart()

    def restart(self):
        """Forget everything: the monster (re)enters the field."""
        self.info = {}
        self.position_facts = []
        self.effect_changes = []  # turns in which a card effect changed its position
        self.returned_from_banish = []  # turns in which a temporary banish returned it
        self.controller = None
        self.face_down = False
        self.because = {}  # info kind -> retention rules applied to it, in order
        self.origin = {}  # info kind -> the event that last gave it ("turn 3: summon")
        # What decides the cases of conditional rules (schema/rule_policy.json facts):
        self.summoned = {}  # turn -> how it was last Summoned in it: normal, special or flip
        self.can_normal_summon = None  # None: the scenario does not tell
        self.count_scope = None

    def facts(self, turn):
        """The facts of ``schema/rule_policy.json`` the scenario tells, at ``turn`` (None: not told)."""
        return {"summon_this_turn": self.summoned.get(turn), "can_normal_summon": self.can_normal_summon,
                "count_scope": self.count_scope}

    def gain(self, kind, turn):
        """Give the monster ``kind``; ValueError for a kind outside INFO_KINDS
        (an engine whose tables disagree with its vocabulary)."""
        if kind not in _KIND_SET:
            raise ValueError(f"engine: unknown info kind {kind!r} (not in INFO_KINDS: the engine and its "
                             "vocabulary disagree; rebuild it)")
        self.info[kind] = (turn, "has")
        self.origin[kind] = self.event

    def gain_all(self, kinds, turn):
        for kind in kinds:
            self.gain(kind, turn)

    def apply_event(self, event, turn):
        """Apply the retention table to everything the monster carries."""
        facts = self.facts(turn)
        for kind in sorted(self.info):
            r = _RETENTION.get((kind, event))
            verdict = r.verdict if r else "unknown"
            case = _case(r, facts) if verdict == "conditional" else None
            if case is not None:
                verdict = case["verdict"]
            if r is not None:
                self.because.setdefault(kind, []).append(_because_retention(r, case))
            if verdict == "kept":
                continue
            if verdict == "lost" or verdict == "not_applicable":
                del self.info[kind]
            else:
                self.info[kind] = (self.info[kind][0], "unknown")
        if event in ("face_down", "temp_banish"):
            # The position facts are the information kind position_change_restrictions.
            r = _RETENTION.get(("position_change_restrictions", event))
            verdict = r.verdict if r else "unknown"
            if self.position_facts:
                if r is not None:
                    self.because.setdefault("position_change_restrictions", []).append(_because_retention(r))
                if verdict in ("lost", "not_applicable"):
                    self.position_facts = []
                elif verdict != "kept":
                    self.position_facts = [(t, w, p, "unknown") for t, w, p, _s in self.position_facts]


# The summon methods that are Normal Summons (the monster can be Normal Summoned);
# the others are Special Summons. A Flip Summon is its own event (flip_summon).
_NORMAL_SUMMONS = ("normal", "tribute", "gemini")
# Whether a monster Summoned by a method can be Normal Summoned, where the method tells: a Normal
# Summon's can; a Fusion, Synchro, Xyz, Link or Ritual Monster cannot (None: the scenario must say).
_CAN_NORMAL_SUMMON = {**dict.fromkeys(_NORMAL_SUMMONS, True),
                      **dict.fromkeys(("fusion", "synchro", "xyz", "link", "ritual"), False)}

# A summon's optional fields and the GAINS entry each one applies.
_SUMMON_OPTION_GAINS = {"from": "summon_from", "by_effect": "summon_by_effect", "own_procedure": "summon_own_procedure"}


def _replay(scenario):
    m = _Monster()
    for i, ev in enumerate(scenario["events"]):
        do, turn = ev["do"], int(ev["turn"])  # (a turn written 1.0 is turn 1)
        m.event = f"events[{i}] (turn {turn}: {do}{' ' + ev['mode'] if do == 'take_control' else ''})"
        if do in ("summon", "set"):
            m.restart()  # on the field again: a new monster, nothing of before
        if do == "summon":
            m.controller = ev["by"]
            m.face_down = bool(ev.get("face_down", False))
            normal = ev["method"] in _NORMAL_SUMMONS
            m.summoned[turn] = "normal" if normal else "special"
            m.can_normal_summon = ev.get("can_normal_summon", _CAN_NORMAL_SUMMON.get(ev["method"]))
            m.gain_all(SUMMON_KINDS[ev["method"]] + GAINS["summon"], turn)
            for field in ("from", "by_effect", "own_procedure"):
                if ev.get(field):
                    m.gain_all(GAINS[_SUMMON_OPTION_GAINS[field]], turn)
            m.position_facts.append((turn, "summoned", ev["by"], "has"))
        elif do == "set":
            m.controller = ev["by"]
            m.face_down = True
            m.can_normal_summon = True  # it was Normal Set
            m.position_facts.append((turn, "set", ev["by"], "has"))
            m.gain_all(GAINS["set"], turn)
        elif do == "flip_summon":
            m.face_down = False
            m.summoned[turn] = "flip"
            m.gain_all(GAINS["flip_summon"], turn)
            m.position_facts.append((turn, "manual_change", ev["by"], "has"))
        elif do == "change_position":
            if ev["by"] == "manual":
                m.position_facts.append((turn, "manual_change", m.controller, "has"))
                m.gain_all(GAINS["change_position_manual"], turn)
            else:
                m.effect_changes.append(turn)
        elif do == "declare_attack":
            m.gain_all(GAINS["declare_attack"], turn)
            m.position_facts.append((turn, "attacked", m.controller, "has"))
        elif do == "take_control":
            m.controller = ev["by"]
            m.gain(CONTROL_KINDS[ev["mode"]], turn)
        elif do == "activate_effect":
            m.gain_all(GAINS[do], turn)
            if "pledge" in ev:
                m.gain_all(GAINS["pledge_" + ev["pledge"]], turn)
        elif do in RETENTION_EVENTS:
            m.apply_event(RETENTION_EVENTS[do], turn)
            if do == "turn_face_down":
                m.face_down = True
                m.effect_changes.append(turn)
            elif do == "flip_face_up":
                m.face_down = False
                m.gain_all(GAINS["flip_face_up"], turn)
                m.effect_changes.append(turn)
            else:
                m.returned_from_banish.append(turn)
        else:  # battle, destroy_by_battle, place_counter, modify_stats, change_level, gain_protection, ...
            m.gain_all(GAINS[do], turn)
            if do == "start_count" and "count_scope" in ev:
                m.count_scope = ev["count_scope"]
    return m


def _control(m):
    if m.controller is None:
        return {"rule": "control", "summary": "the monster is not on the field (no summon or Set in the scenario)"}
    return {"rule": "control", "summary": f"the monster is controlled by {m.controller}"}


def _turn_player(turn):
    return "A" if turn % 2 == 1 else "B"


def _result(scenario, answer, because):
    # De-duplicate the reasons while keeping their order.
    seen, unique = set(), []
    for item in because:
        key = (item["rule"], item.get("verdict"))
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return {"id": scenario["id"], "answer": answer, "because": unique}


def _can_change_position(m, ask):
    turn, phase, player = ask["turn"], ask["phase"], ask["player"]
    because = []
    if "position.manual_change_main_phase_only" not in PROCEDURAL:
        return "unknown", [_because_missing("position.manual_change_main_phase_only", "when a manual change is allowed")]
    because.append(_because_rule("position.manual_change_main_phase_only"))
    if phase not in ("main1", "main2") or player != _turn_player(turn):
        return False, because
    if m.controller != player:
        return False, because + [_control(m)]
    answer = True
    for fact_turn, what, by, status in m.position_facts:
        if fact_turn != turn:
            continue
        if what in ("summoned", "set"):
            if by == _turn_player(turn):
                rule_id = "position.not_if_summoned_or_set_this_turn"
                blocked = True
            else:
                rule_id = "position.summoned_by_non_turn_player_allowed"
                blocked = False
        elif what == "attacked":
            rule_id, blocked = "position.not_after_attack_declared", True
        else:
            rule_id, blocked = "position.once_per_turn", True
        if rule_id not in PROCEDURAL:
            because.append(_because_missing(rule_id, f"whether '{what}' this turn blocks a manual change"))
            answer = "unknown" if answer is True else answer
            continue
        because.append(_because_rule(rule_id))
        if blocked:
            if status == "unknown":
                answer = "unknown" if answer is True else answer
            else:
                answer = False
    if answer is True and turn in m.effect_changes:
        rule_id = "position.effect_changes_do_not_count"
        if rule_id in PROCEDURAL:
            because.append(_because_rule(rule_id))
        else:
            because.append(_because_missing(rule_id, "whether a change by a card effect uses up the manual change"))
            answer = "unknown"
    if turn in m.returned_from_banish and "position.return_from_banish_is_not_summon" in PROCEDURAL:
        because.append(_because_rule("position.return_from_banish_is_not_summon"))
    return answer, because + m.because.get("position_change_restrictions", [])


def _can_declare_attack(m, ask):
    turn, phase, player = ask["turn"], ask["phase"], ask["player"]
    because = []
    if turn == 1:
        if "battle.no_battle_phase_first_turn" not in PROCEDURAL:
            return "unknown", [_because_missing("battle.no_battle_phase_first_turn", "a Battle Phase in the first turn")]
        return False, [_because_rule("battle.no_battle_phase_first_turn")]
    if phase != "battle" or player != _turn_player(turn) or m.controller != player:
        rule_id = "battle.attacks_in_own_battle_phase"
        if rule_id not in PROCEDURAL:
            return "unknown", [_because_missing(rule_id, "in whose Battle Phase a monster declares attacks")]
        because = [_because_rule(rule_id)]
        if m.controller != player:
            because.append(_control(m))
        return False, because
    rule_id = "battle.attackers_face_up_attack_position"
    if m.face_down:
        if rule_id not in PROCEDURAL:
            return "unknown", [_because_missing(rule_id, "whether a face-down monster attacks")]
        return False, [_because_rule(rule_id)]
    info = m.info.get("attack_declared")
    if info is not None and info[0] == turn:
        rule_id = "battle.attack_once_per_turn"
        if rule_id not in PROCEDURAL:
            return "unknown", [_because_missing(rule_id, "how often a monster attacks")]
        because.append(_because_rule(rule_id))
        return ("unknown" if info[1] == "unknown" else False), because + m.because.get("attack_declared", [])
    if "battle.attack_once_per_turn" in PROCEDURAL:
        because.append(_because_rule("battle.attack_once_per_turn"))
    return True, because + m.because.get("attack_declared", [])


def _has(m, ask):
    kind, turn = ask["info_kind"], ask["turn"]
    info = m.info.get(kind)
    if kind in m.origin:
        because = [{"rule": "history", "summary": f"{m.origin[kind]} gives {kind}"}]
    else:
        because = [{"rule": "history", "summary": f"no event of the scenario gives {kind}"}]
    because += m.because.get(kind, [])
    if info is None:
        return False, because
    if kind in _THIS_TURN and info[0] != turn:
        return False, because + [{"rule": "this_turn", "summary": f"{kind} only counts in the turn it was gained "
                                                                  f"(turn {info[0]})"}]
    return (True if info[1] == "has" else "unknown"), because


def _can_conduct_battle_phase(ask):
    turn, player = ask["turn"], ask["player"]
    rule_id = "battle.no_battle_phase_first_turn"
    if player != _turn_player(turn):
        return False, [{"rule": "turn_player", "summary": f"turn {turn} is {_turn_player(turn)}'s turn"}]
    if rule_id not in PROCEDURAL:
        return "unknown", [_because_missing(rule_id, "whether the first turn has a Battle Phase")]
    return (turn != 1), [_because_rule(rule_id)]


def answer(scenario):
    """Answer one scenario (see the module docstring); ScenarioError if malformed."""
    validate(scenario)
    ask = dict(scenario["ask"], turn=int(scenario["ask"]["turn"]))
    question = ask["question"]
    if question == "can_conduct_battle_phase":
        result, because = _can_conduct_battle_phase(ask)
        return _result(scenario, result, because)
    m = _replay(scenario)
    if question == "can_change_position_manually":
        result, because = _can_change_position(m, ask)
    elif question == "can_declare_attack":
        result, because = _can_declare_attack(m, ask)
    else:
        result, because = _has(m, ask)
    return _result(scenario, result, because)


def answer_all(scenarios):
    """Answer a list of scenarios; a malformed one gives ``{"id", "error",
    "field"}``, and so does each of two or more scenarios with the same id
    (the error names their positions: neither answer could be told from the
    other by its id). TypeError when ``scenarios`` is not a list."""
    if not isinstance(scenarios, (list, tuple)):
        raise TypeError(f"answer_all takes a list of scenarios, not {type(scenarios).__name__}")
    positions = {}
    for i, scenario in enumerate(scenarios):
        sid = scenario.get("id") if isinstance(scenario, dict) else None
        if isinstance(sid, str):
            positions.setdefault(sid, []).append(i)
    out = []
    for scenario in scenarios:
        try:
            validate(scenario)
            same = positions[scenario["id"]]
            if len(same) > 1:
                raise ScenarioError(scenario["id"], "id", f"scenarios {', '.join(f'[{i}]' for i in same)} have "
                                                          "the same id; ids must be unique")
            out.append(answer(scenario))
        except ScenarioError as exc:
            out.append({"id": exc.scenario_id, "error": str(exc), "field": exc.field})
    return out
