"""What the report says in words: vocabulary ids -> words, sentences, badges and file names.

:func:`words` (the words of ``schema/vocabulary.json`` by id),
:func:`rule_sentence` (a rule, or a case of one, as a sentence in English
and in Chinese), :func:`verdict_badge` (a verdict's symbol and words:
:data:`VERDICT_LABELS`, never colour alone), :func:`matrix` (the rows of
the index's rules matrix), :func:`slug` and :func:`rule_file` (file names
for ids), :func:`external_url` (http(s) links only). Pure functions of
their arguments and the schema; raise nothing of their own.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

from markupsafe import Markup

from .schema import events as vocabulary_events
from .schema import kind_groups, vocabulary


VERDICT_LABELS = {  # symbol and word: the matrix never relies on colour alone
    "kept": ("✓", "kept"),
    "lost": ("✗", "lost"),
    "not_applicable": ("–", "not applicable"),
    "conditional": ("◐", "conditional"),
    "unknown": ("?", "unknown"),
    "not_modelled": ("∅", "not modelled"),  # a simulator's verdict (pipeline/simulators.py)
}


@lru_cache(maxsize=None)
def slug(text: str) -> str:
    """A file name for an id: ASCII letters, digits, ``_`` and ``-`` kept,
    every other character (``.`` and ``/`` too) as ``~XX`` per UTF-8 byte,
    so distinct ids give distinct names and none is ``..`` or hidden."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else
                   "".join(f"~{b:02X}" for b in ch.encode("utf-8")) for ch in text) or "~"


def external_url(url: str | None) -> str:
    """``url`` when it is an http(s) address, else '' (no ``javascript:`` or
    ``data:`` links from scraped pages)."""
    if not url:
        return ""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return ""
    return url.strip() if scheme in ("http", "https") else ""


@lru_cache(maxsize=None)
def words() -> dict[str, dict[str, dict[str, str]]]:
    """The words of ``schema/vocabulary.json`` by section and id:
    ``{"events": {id: {"en", "zh", "en_monster", "en_done", "zh_when"}},
    "verdicts": {id: {"en", "zh"}}, "kinds": {id: {"en", "zh", "meaning"}}}``;
    an id without words is said by its id."""
    data = vocabulary()
    out: dict[str, dict[str, dict[str, str]]] = {"events": {}, "verdicts": {}, "kinds": {}}
    for section, name in (("events", "events"), ("verdicts", "verdicts"), ("info_kinds", "kinds")):
        for item in data[section]:
            said = {"en": item["id"].replace("_", " "), "zh": "", "en_monster": "A monster " + item["id"],
                    "en_done": item["id"].replace("_", " "), "zh_when": ""}
            said.update(item.get("words") or {})
            said["meaning"] = item.get("meaning", "")
            out[name][item["id"]] = said
    return out


@lru_cache(maxsize=None)
def verdict_badge(verdict: str) -> Markup:
    """A verdict as the site shows it: its symbol and its words in English
    and Chinese on its colour (a ``<span class="badge v-VERDICT">``)."""
    symbol, word = VERDICT_LABELS.get(verdict, ("?", verdict))
    zh = words()["verdicts"].get(verdict, {}).get("zh", "")
    return Markup('<span class="badge v-{}"><span aria-hidden="true">{}</span> {}{}</span>').format(
        verdict, symbol, word, Markup(' <span lang="zh">{}</span>').format(zh) if zh else "")


def rule_sentence(kind: str, event: str, verdict: str, case: dict | None = None) -> dict[str, str]:
    """What a rule (or one case of a conditional rule: a
    :func:`pipeline.queries.case_list` item) says, as one sentence in
    English and one in Simplified Chinese: ``{"en", "zh"}``."""
    if case is not None:
        said = _sentence(kind, event, case["verdict"])
        return {"en": f"If {case['en']}: {said['en'][0].lower()}{said['en'][1:]}",
                "zh": f"{case['zh'] or case['en']}时：{said['zh']}"}
    return dict(_sentence(kind, event, verdict))


@lru_cache(maxsize=None)
def _sentence(kind: str, event: str, verdict: str) -> dict[str, str]:
    w = words()
    k, e = w["kinds"][kind], w["events"][event]
    if verdict == "kept":
        return {"en": f"{e['en_monster']} keeps {k['en']}.", "zh": f"{e['zh_when']}，{k['zh']}保留。"}
    if verdict == "lost":
        return {"en": f"{e['en_monster']} loses {k['en']}.", "zh": f"{e['zh_when']}，{k['zh']}丢失。"}
    if verdict == "not_applicable":
        return {"en": f"Not applicable: a monster with {k['en']} cannot be {e['en_done']}.",
                "zh": f"不适用：有{k['zh']}的怪兽不会{e['zh']}。"}
    if verdict == "conditional":
        return {"en": f"{e['en_monster']} keeps or loses {k['en']}, by case.",
                "zh": f"{e['zh_when']}，{k['zh']}是否保留视情况而定。"}
    return {"en": f"No ruling says whether {e['en_monster'][0].lower()}{e['en_monster'][1:]} keeps {k['en']}.",
            "zh": f"没有裁定说明{e['zh_when']}{k['zh']}是否保留。"}


def matrix(rules: dict[tuple[str, str], dict], supports: dict[tuple[str, str], int] | None = None) -> list[dict]:
    """Rows of the index matrix: ``[{"group", "title", "rows": [{"kind",
    "meaning", "words", "cells": [{"event", "verdict", "supports",
    "latest_date", "href", "sentence"}]}]}]``; a pair without a rule is
    ``unknown``. ``supports``: the number of distinct rulings supporting
    each rule (else its supporting citations are counted)."""
    meanings = {k["id"]: k.get("meaning", "") for k in vocabulary()["info_kinds"]}
    groups = []
    for group in kind_groups():
        rows = []
        for kind in group["kinds"]:
            cells = []
            for event in vocabulary_events():
                rule = rules.get((kind, event))
                if supports is not None:
                    n = supports.get((kind, event), 0)
                else:
                    n = sum(c["role"] == "supports" for c in rule["citations"]) if rule else 0
                verdict = rule["verdict"] if rule else "unknown"
                cells.append({"event": event, "verdict": verdict,
                              "supports": n, "latest_date": rule["latest_date"] if rule else "",
                              "href": f"rules/{rule_file(kind, event)}",
                              "sentence": rule_sentence(kind, event, verdict)})
            rows.append({"kind": kind, "meaning": meanings.get(kind, ""), "words": words()["kinds"][kind],
                         "cells": cells})
        groups.append({"group": group["id"], "title": group["title"], "rows": rows})
    return groups


def rule_file(kind: str, event: str) -> str:
    return f"{slug(kind)}--{slug(event)}.html"
