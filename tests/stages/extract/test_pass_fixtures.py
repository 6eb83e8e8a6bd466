"""Each extract pass on small fixture files: ``tests/fixtures/<pass>/<case>.in.json`` -> ``<case>.out.json``.

An input is a page fragment (language, script, region and blocks of lines,
a line a string or ``{"text", "struck", "links", "cells"}``); the loader
runs the passes before the one its folder names (pipeline order:
:data:`pipeline.extract.PASSES`), runs that one and compares what it
returns, as JSON, with the expected file. To write the expected files after
a deliberate change, ``python tests/stages/extract/test_pass_fixtures.py`` (then read the
diff by eye).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted(FIXTURES.glob("*/*.in.json"))


def read_page(path: Path):
    """The page fragment of an input file as a normalized Page."""
    from pipeline.page import Block, Line, Link, Page

    data = json.loads(path.read_text(encoding="utf-8"))

    def line(value) -> Line:
        if isinstance(value, str):
            return Line(value)
        return Line(value["text"], tuple(map(tuple, value.get("struck", ()))),
                    tuple(Link(*link) for link in value.get("links", ())), tuple(value.get("cells", ())))

    blocks = [Block(i, tuple(b.get("section", ())), [line(x) for x in b["lines"]], parent=b.get("parent"),
                    note=b.get("note", False), examples=b.get("examples", False), group=b.get("group", -1))
              for i, b in enumerate(data["blocks"])]
    return Page(data.get("source_id", path.stem.removesuffix(".in")), data["language"], data.get("script", "Hans"),
                data.get("region", ""), "", blocks)


def run_pass(name: str, page) -> list:
    """What pass ``name`` returns for ``page`` (the passes before it run first), as JSON values."""
    from pipeline.annotate import annotate
    from pipeline.match import match_page
    from pipeline.schema import info_kinds
    from pipeline.segment import segment
    from pipeline.statements import read_statements

    rulings = segment(page)
    if name == "segment":
        return [_ruling(r) for r in rulings]
    annotated = annotate(rulings, page.language, page.script, page.region)
    if name == "annotate":
        return [_annotation(a) for a in annotated]
    matched = match_page(annotated, page.language)
    if name == "match":
        return [_matched(m) for m in matched]
    if name == "statements":
        return [[_statement(s) for s in stated.statements]
                for stated in read_statements(matched, info_kinds(), page.language)]
    raise ValueError(f"no pass named {name!r}")


def _date(d) -> dict:
    return {"raw": d.raw, "iso": d.iso, "valid": d.valid, "kind": d.kind}


def _ruling(r) -> dict:
    return {"id": r.id, "block": r.block, "section": list(r.section), "norm_section": list(r.norm_section),
            "role": r.role, "channel": r.channel,
            "status": r.status, "text": r.text, "norm": r.norm,
            "sentences": [[s.start, s.end, s.struck, s.norm] for s in r.sentences],
            "dates": [_date(d) for d in r.dates],
            "links": [list(link) for link in r.links], "struck": [list(s) for s in r.struck],
            "withdrawn": r.withdrawn, "parent_id": r.parent_id, "cells": list(r.cells)}


def _annotation(n) -> dict:
    return {"faq": [list(f) for f in n.faq],
            "cards": [{"name": c.name, "start": c.start, "end": c.end, "url": c.url, "norm_name": c.norm_name,
                       "kind": c.kind, "quote": c.quote,
                       "konami_id": c.link.konami_id if c.link else None} for c in n.cards],
            "heading_date": _date(n.heading_date) if n.heading_date else None}


def _sentences(sentences) -> list | None:
    if sentences is None:
        return None
    return [{"start": s.start, "end": s.end, "struck": s.struck, "norm": s.norm,
             "spans": [[span.label_, span.start_char, span.end_char] for span in s.doc.spans.get("retention", [])]}
            for s in sentences]


def _matched(m) -> dict:
    return {"sentences": _sentences(m.sentences), "card_sentences": _sentences(m.card_sentences),
            "procedural": list(m.procedural)}


def _statement(s) -> dict:
    return {k: v for k, v in {"info_kind": s.info_kind, "event": s.event, "verdict": s.verdict,
                              "condition": s.condition, "basis": s.basis, "principle": s.principle_id,
                              "dates": list(s.dates), "reading": s.reading, "effect": s.effect,
                              "passcode": s.passcode}.items() if v not in ("", None, [])}


def _expected(case: Path) -> Path:
    return case.with_name(case.name.removesuffix(".in.json") + ".out.json")


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name.removesuffix('.in.json')}" for c in CASES])
def test_a_pass_gives_its_fixture(case):
    expected = json.loads(_expected(case).read_text(encoding="utf-8"))
    assert run_pass(case.parent.name, read_page(case)) == expected


def test_every_pass_has_fixtures():
    from pipeline.extract import PASSES

    assert sorted({c.parent.name for c in CASES}) == sorted(PASSES)


def test_each_pass_module_says_what_it_takes_and_returns():
    """pipeline/<pass>.py opens with "Extract pass N, <pass>: <takes> -> <returns>"."""
    import importlib

    from pipeline.extract import PASSES

    for number, name in enumerate(PASSES, start=1):
        first = importlib.import_module(f"pipeline.{name}").__doc__.splitlines()[0]
        assert first.startswith(f"Extract pass {number}, {name}: ") and " -> " in first, first


def test_each_pass_is_called_once_from_extract_alone():
    """The passes run in pipeline order, each from one place: extract() calls
    each once, in the order of PASSES; no other module of pipeline/ calls one."""
    import ast

    from pipeline.extract import PASSES

    functions = {"segment": "segment", "annotate": "annotate", "match_page": "match", "read_statements": "statements"}
    calls: dict[str, list[str]] = {}
    for path in sorted((Path(__file__).resolve().parents[3] / "pipeline").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in functions:
                    calls.setdefault(path.name, []).append((node.lineno, functions[name]))
    assert list(calls) == ["extract.py"]
    assert [name for _, name in sorted(calls["extract.py"])] == list(PASSES)


if __name__ == "__main__":  # write the expected files
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    for case in CASES:
        out = json.dumps(run_pass(case.parent.name, read_page(case)), ensure_ascii=False, indent=1)
        _expected(case).write_text(out + "\n", encoding="utf-8")
        print(_expected(case).relative_to(FIXTURES))
