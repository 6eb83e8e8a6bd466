"""Runtime of the generated engine module, part 2: answers for a named card.

``pipeline/generate.py`` copies everything below the ``RUNTIME`` marker of
this file after the runtime of ``engine/runtime.py``, with ``CARD_TABLE``
(the card table of pipeline/cardengine.py as one JSON text) written among
the tables. ``engine/runtime_cards.mjs`` is the same code in JavaScript;
tests/test_js_engine.py requires identical answers for every card.

``card_answer(card_id, events, facts=None) -> dict``: which of the card's
numbered effects still work after ``events`` (one event, a list, or a
comma-separated sequence such as ``"face_down,flip_face_up"``)::

    {"card": {"passcode", "konami_id", "name": {"zh", "ja", "en"}},
     "events": [...], "facts": {fact: value},
     "effects": [{"effect": "②", "part", "text", "depends_on": [kinds],
                  "verdicts": {kind: verdict}, "works": True | False | None,
                  "again": True | False | None, "decided_by", "because": [record ids],
                  "rules": [reasons], "card_rulings": [record ids]}],
     "rulings": {record id: {"date", "dates", "source", "section", "text",
                             "says": [{"part", "effect", "events", "flip", "can"}]}}}

* ``verdicts``: each kind's verdict after the events in turn (the rules
  table; a conditional rule by the case the ``facts`` select, else
  ``conditional``): ``lost`` or ``not_applicable`` at any event stays;
* ``works`` from the general rule: False when an information the effect
  needs is lost, True when every one is kept (or it needs none the events
  touch), None otherwise; ``again``, for an effect limited by a restricting
  kind (a count of uses, a pledge): whether the limit is gone (True: it can
  be used again this turn), None when unknown or the effect has no limit;
* a ruling on the card about this effect after these events decides over
  the general rule (``decided_by`` ``card_ruling``): the newest dated one
  (all undated: every one), ``works`` None when those disagree;
  ``decided_by`` is otherwise ``general_rule``, or ``no_dependency`` for
  an effect that depends on no kind;
* ``because``: the records that decide; ``rules``: the retention rules
  applied (as ``answer`` gives them) or the no-dependency rule;
  ``card_rulings``: every ruling on the card about this effect, whatever
  its event.

Raises KeyError for a card not in the table (a card none of whose effects
depends on any kind and no ruling names), ValueError for an event or fact
outside the vocabulary, TypeError for arguments of the wrong type.
"""

from __future__ import annotations

# Placeholders so this file imports on its own; the generated module defines them.
CARD_TABLE = ""
EVENTS: tuple = ()
_RETENTION: dict = {}
__all__: list = []


def _case(r, facts):  # the runtime's (engine/runtime.py)
    return None


def _because_retention(r, case=None):  # the runtime's
    return {}


def _did_you_mean(name, choices):  # the runtime's
    return ""


# ==== RUNTIME ====
__all__ += ["card_answer"]

_CARD_DATA = None
_MAIN_EVENTS = ("face_down", "temp_banish")
_FACTS = {"summon_this_turn": ("normal", "special", "flip"), "can_normal_summon": (True, False),
          "count_scope": ("whole_turn", "from_activation")}
_NO_DEPENDENCY = ("the effect depends on no information that a card's events change (pipeline/cardtext.py reads "
                  "none in its text): it works after them as before")


def _card_data():
    """The card table, parsed on first use (the import stays fast)."""
    global _CARD_DATA
    if _CARD_DATA is None:
        import json

        _CARD_DATA = json.loads(CARD_TABLE) if CARD_TABLE else {"cards": {}, "citations": {},
                                                                "restricting_kinds": []}
    return _CARD_DATA


def _event_list(events):
    if isinstance(events, str):
        items = [e.strip() for e in events.split(",")]
    elif isinstance(events, (list, tuple)):
        items = list(events)
    else:
        raise TypeError(f"events must be an event name, a comma-separated sequence or a list, not "
                        f"{type(events).__name__}")
    if not items:
        raise ValueError("no event given")
    for e in items:
        if not isinstance(e, str) or e not in EVENTS:
            raise ValueError(f"unknown event {e!r}{_did_you_mean(e, EVENTS)}")
    return items


def _card_facts(card, facts):
    if facts is None:
        facts = {}
    if not isinstance(facts, dict):
        raise TypeError(f"facts must be a dict, not {type(facts).__name__}")
    out = {"summon_this_turn": None, "can_normal_summon": card["can_normal_summon"], "count_scope": None}
    for fact, value in facts.items():
        if fact not in _FACTS:
            raise ValueError(f"unknown fact {fact!r}{_did_you_mean(fact, _FACTS)}")
        if value is not None and (value not in _FACTS[fact] or isinstance(value, bool) != isinstance(
                _FACTS[fact][0], bool)):
            raise ValueError(f"fact {fact!r}: {value!r} is not one of {list(_FACTS[fact])}")
        out[fact] = value
    return out


def _after(kind, events, facts):
    """A kind's verdict after the events in turn, with the retention rules applied."""
    verdict, rules = "kept", []
    for event in events:
        r = _RETENTION.get((kind, event))
        v = r.verdict if r is not None else "unknown"
        case = _case(r, facts) if v == "conditional" else None
        if case is not None:
            v = case["verdict"]
        if r is not None:
            rules.append(_because_retention(r, case))
        else:
            rules.append({"rule": f"retention:{kind}/{event}", "verdict": "unknown", "records": []})
        if v in ("lost", "not_applicable"):
            return v, rules
        if v != "kept" and verdict == "kept":
            verdict = v
    return verdict, rules


def _general(verdicts, restricting):
    """(works, again) from the kinds' verdicts (see the module docstring)."""
    needs = [v for k, v in verdicts.items() if k not in restricting]
    limits = [v for k, v in verdicts.items() if k in restricting]
    works = False if "lost" in needs else (True if all(v == "kept" for v in needs) else None)
    if not limits or "kept" in limits:
        again = False if limits else None
    else:
        again = True if all(v in ("lost", "not_applicable") for v in limits) else None
    return works, again


def _ruling_matches(r, events):
    main = [e for e in events if e in _MAIN_EVENTS]
    if main:
        return all(e in r["events"] for e in main)
    return not r["events"] and r["flip"] and "flip_face_up" in events


def _decisive(rulings, events):
    """The rulings that decide (the newest dated among those on these events, else every undated one)."""
    matching = [r for r in rulings if _ruling_matches(r, events)]
    dated = [r for r in matching if r["date"]]
    if dated:
        newest = max(r["date"] for r in dated)
        return [r for r in dated if r["date"] == newest]
    return matching


def _effect_answer(card, effect, events, facts, restricting):
    verdicts, rules, because = {}, [], []
    for kind in effect["depends_on"]:
        verdicts[kind], applied = _after(kind, events, facts)
        rules += applied
    for item in rules:
        for rec in item.get("records", []):
            if rec["id"] not in because:
                because.append(rec["id"])
    works, again = _general(verdicts, restricting)
    decided_by = "general_rule" if effect["depends_on"] else "no_dependency"
    if not effect["depends_on"]:
        rules = [{"rule": "no_dependency", "summary": _NO_DEPENDENCY}]
    own = [r for r in card["rulings"] if r["part"] == effect["part"] and r["effect"] == effect["effect"]]
    decisive = _decisive(own, events)
    if decisive:
        cans = []
        for r in decisive:
            if r["can"] not in cans:
                cans.append(r["can"])
        works = cans[0] if len(cans) == 1 else None
        decided_by, because = "card_ruling", []
        for r in decisive:
            if r["id"] not in because:
                because.append(r["id"])
    card_rulings = []
    for r in own:
        if r["id"] not in card_rulings:
            card_rulings.append(r["id"])
    return {"effect": effect["effect"], "part": effect["part"], "text": effect["text"],
            "depends_on": list(effect["depends_on"]), "verdicts": verdicts, "works": works, "again": again,
            "decided_by": decided_by, "because": because, "rules": rules, "card_rulings": card_rulings}


def card_answer(card_id, events, facts=None):
    """Which of the card's effects still work after ``events`` (see this part's docstring)."""
    if isinstance(card_id, bool) or not isinstance(card_id, (int, str)):
        raise TypeError(f"card_id must be a passcode (a whole number), not {type(card_id).__name__}")
    data = _card_data()
    key = str(card_id).strip()
    key = str(int(key)) if key.isdigit() and key.isascii() else key
    if key not in data["cards"]:
        raise KeyError(f"card {card_id!r} is not in the card table (none of its effects depends on an information "
                       "kind and no ruling names one)")
    card = data["cards"][key]
    items = _event_list(events)
    told = _card_facts(card, facts)
    restricting = set(data["restricting_kinds"])
    effects = [_effect_answer(card, e, items, told, restricting) for e in card["effects"]]
    rulings = {}
    for r in card["rulings"]:
        if r["id"] not in rulings:
            c = data["citations"][r["id"]]
            rulings[r["id"]] = {"date": r["date"], "dates": list(c["dates"]), "source": c["source"],
                                "section": c["section"], "text": c["text"], "says": []}
        rulings[r["id"]]["says"].append({"part": r["part"], "effect": r["effect"], "events": list(r["events"]),
                                         "flip": r["flip"], "can": r["can"]})
    return {"card": {"passcode": int(key), "konami_id": card["konami_id"], "name": dict(card["name"])},
            "events": items, "facts": told, "effects": effects, "rulings": rulings}
