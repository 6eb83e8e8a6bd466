"""Checks of the rule files: parsed JSON -> the same data (or the part taken), checked, or SchemaError.

:func:`check_rule_policy` (how compile weighs disagreeing rulings and the
cases of conditional rules), :func:`check_rulesets` (which sources rule on
the OCG), :func:`check_procedural_grammar`, :func:`check_procedural_rules`
and :func:`check_procedural_blocks` (``procedural_rules.json``: word
groups, token patterns, rules and blocks, every name they use defined).
The files are read, and the results cached, by :mod:`pipeline.schema`, the
one module the stages import.
"""

from __future__ import annotations

from .schemacheck import Checker


def check_rule_policy(data: dict, check: Checker) -> dict:
    """``rule_policy.json`` checked (:func:`pipeline.schema.rule_policy`)."""
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


def check_rulesets(data: dict, check: Checker) -> dict:
    """``rulesets.json`` checked (:func:`pipeline.schema.rulesets`)."""
    ocg = check.get(data, "ocg", dict)
    check.words(ocg, "languages", "ocg")
    for i, prefix in enumerate(check.words(ocg, "url_prefixes", "ocg")):
        if not prefix.startswith(("https://", "http://")):
            check.fail(f"ocg.url_prefixes[{i}]", "must start with https:// or http://")
    return data


def check_procedural_grammar(data: dict, check: Checker) -> dict:
    """``procedural_rules.json``'s grammar checked and taken (:func:`pipeline.schema.procedural_grammar`)."""
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


def check_procedural_rules(data: dict, check: Checker, grammar: dict) -> dict:
    """``procedural_rules.json``'s rules checked against its ``grammar`` (:func:`pipeline.schema.procedural_rules`)."""
    features = grammar["patterns"]
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
                             grammar["categories"]["polarity"], "a polarity")
        rules[rule_id] = rule
    return rules


def check_procedural_blocks(data: dict, check: Checker, features: dict, ids: dict) -> dict:
    """``procedural_rules.json``'s blocks checked against the grammar's ``features`` and the rule ``ids``
    (:func:`pipeline.schema.procedural_blocks`)."""
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
