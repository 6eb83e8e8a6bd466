"""Checks of the term lists: parsed JSON -> the same data, checked (terms' alternatives written out), or SchemaError.

:func:`check_retention_terms` (``retention_terms.json``: the term lists of
statement extraction, against the vocabulary's kinds, events and verdicts;
:func:`expand_alternatives` writes out a term's ``{a|b|}`` spellings),
:func:`check_retention_terms_en` (the English term lists, lower case),
:func:`check_card_text_terms` and :func:`check_card_ruling_terms` (the
patterns of card texts and of rulings on a card's effects: every pattern
compiles). The files are read, and the results cached, by
:mod:`pipeline.schema`, the one module the stages import.
"""

from __future__ import annotations

import re

from .schemacheck import Checker


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


def check_retention_terms(data: dict, check: Checker, kinds: list[str], evts: list[str], verds: list[str]) -> dict:
    """``retention_terms.json`` checked, its terms' alternatives written out (:func:`pipeline.schema.retention_terms`)."""
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


def _check_reading_terms(check: Checker, data: dict, kinds, evts) -> None:
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


def check_card_text_terms(data: dict, check: Checker, kinds: list[str]) -> dict:
    """``card_text_terms.json`` checked (:func:`pipeline.schema.card_text_terms`)."""

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


def check_card_ruling_terms(data: dict, check: Checker, evts: list[str]) -> dict:
    """``card_ruling_terms.json`` checked (:func:`pipeline.schema.card_ruling_terms`)."""

    def compiles(where: str, pattern) -> re.Pattern:
        if not isinstance(pattern, str) or not pattern:
            check.fail(where, "must be a non-empty regular expression")
        try:
            return re.compile(pattern)
        except re.error as exc:
            check.fail(where, f"is not a regular expression: {exc}")

    for event, words in check.get(data, "events", dict).items():
        check.member(f"events.{event}", event, evts, "an event")
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


def _expanded(check: Checker, where: str, terms: list[str]) -> list[str]:
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


def _lower_case_words(check: Checker, data: dict, key: str, where: str) -> list[str]:
    """``check.words`` of ``data[key]``, each phrase lower case (English phrases
    are matched on lower-cased text)."""
    phrases = check.words(data, key, where)
    for i, phrase in enumerate(phrases):
        if phrase != phrase.lower():
            check.fail(f"{where}.{key}[{i}]", "must be lower case (matched on lower-cased text)")
    return phrases


def check_retention_terms_en(data: dict, check: Checker, kinds: list[str], evts: list[str], verds: list[str]) -> dict:
    """``retention_terms_en.json`` checked (:func:`pipeline.schema.retention_terms_en`)."""
    for section, known, what in (("kinds", kinds, "an info kind"), ("events", evts, "an event"),
                                 ("verdicts", verds, "a verdict a ruling states")):
        for key in check.get(data, section, dict):
            check.member(f"{section}.{key}", key, known, what)
            _lower_case_words(check, data[section], key, section)
    check.words(data, "negators")
    for part in ("words", "suffixes"):  # the negations before a returning phrase
        check.words(check.get(data, "return_negations", dict), part, "return_negations")
    for event, phrases in check.get(data, "returning_events", dict).items():
        check.member(f"returning_events.{event}", event, evts, "an event")
        if not isinstance(phrases, dict):
            check.fail(f"returning_events.{event}", 'must be an object {"leaves": [...], "returns": [...]}')
        for part in ("leaves", "returns"):
            _lower_case_words(check, phrases, part, f"returning_events.{event}")
    return data
