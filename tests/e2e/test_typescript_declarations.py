"""Issue 37 item 4: ocg_rules.d.mts (the declarations TypeScript reads for an .mjs module) beside ocg_rules.mjs, checked by
``tsc --strict``; the ES module exports every name the Python engine does.

TypeScript comes from npm (``.ci/run`` installs it); like the JavaScript
engine's test, these fail instead of skipping when RULINGS_REQUIRE_NODE is
set and Node.js or tsc is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.enginejs import render_dts
from pipeline.generate import check_replaceable, engine_paths
from conftest import ROOT
from pipeline.errors import UsageError

NODE = shutil.which("node")
TSC = shutil.which("tsc") or next((str(p) for p in [ROOT / "node_modules" / ".bin" / "tsc"] if p.is_file()), None)
REQUIRED = bool(os.environ.get("RULINGS_REQUIRE_NODE"))


def _need(tool: str | None, name: str) -> str:
    if tool is None:
        if REQUIRED:
            pytest.fail(f"{name} is required (RULINGS_REQUIRE_NODE is set)")
        pytest.skip(f"{name} is not installed (CI installs it and sets RULINGS_REQUIRE_NODE)")
    return tool


def _js_exports(mjs: Path) -> list[str]:
    code = f"import * as m from {json.dumps(mjs.as_uri())}; console.log(JSON.stringify(Object.keys(m).sort()));"
    out = subprocess.run([_need(NODE, "Node.js"), "--input-type=module", "-e", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _dts_exports(dts: Path) -> list[str]:
    text = dts.read_text(encoding="utf-8")
    names = re.findall(r"^export declare (?:const|function|class) (\w+)", text, re.M)
    names += [alias for _, alias in re.findall(r"^export \{ (\w+) as (\w+) \};", text, re.M)]
    return sorted(set(names))


def test_the_es_module_exports_every_name_of_the_python_engine(built, engine_module):
    js = _js_exports(engine_paths(built[2])["mjs"])
    assert sorted(set(engine_module.__all__) - set(js)) == []
    # the camel-case aliases of answer_all and card_answer
    assert sorted(set(js) - set(engine_module.__all__)) == ["answerAll", "cardAnswer"]


def test_the_declarations_declare_what_the_module_exports(built):
    paths = engine_paths(built[2])
    assert _dts_exports(paths["dts"]) == _js_exports(paths["mjs"])


def test_the_declarations_are_generated_deterministically_and_guarded(built, tmp_path):
    paths = engine_paths(built[2])
    text = paths["dts"].read_text(encoding="utf-8")
    digest = json.loads(paths["json"].read_text(encoding="utf-8"))["rules_hash"]
    assert f"// Rules hash: sha256:{digest}\n" in text
    # the kinds and events as literal types, in the module's order
    kinds = json.loads(paths["json"].read_text(encoding="utf-8"))["info_kinds"]
    assert f"export type InfoKind = {' | '.join(json.dumps(k) for k in kinds)};" in text
    mine = tmp_path / "mine.py"
    (tmp_path / "mine.d.mts").write_text("export declare const x: number;\n", encoding="utf-8")
    with pytest.raises(UsageError, match="mine.d.mts exists and is not a generated engine file"):
        check_replaceable(mine)
    shutil.copyfile(paths["dts"], tmp_path / "mine.d.mts")
    check_replaceable(mine)  # a generated one is replaced


TYPED_USE = """
import { retains, answer, answer_all, citation, validate, INFO_KINDS, EVENTS, RULES, Retention, ScenarioError,
         SUMMON_KINDS, card_answer, type Scenario, type Verdict, type InfoKind, type CardAnswer } from "./ocg_rules.mjs";

const r = retains("synchro_summoned", "face_down");
const verdict: Verdict = r.verdict;
const disputed: string[] = r.disputed_by;
const firstCase: Verdict | undefined = r.cases[0]?.verdict;
const kinds: readonly InfoKind[] = INFO_KINDS;
const scenario: Scenario = {
  id: "q", events: [{ turn: 1, do: "summon", method: "synchro", by: "A", from: "extra_deck" },
                    { turn: 3, do: "turn_face_down" }],
  ask: { turn: 3, question: "has", info_kind: "synchro_summoned" },
};
const a = answer(scenario);
const value: boolean | "unknown" = a.answer;
const items = answer_all([scenario, { id: 1 }]);
const text: string = citation(r.record_ids[0]).text;
validate(scenario);
const fields: readonly (keyof Retention)[] = Retention.fields;
const synchro: readonly InfoKind[] = SUMMON_KINDS.synchro;
const error = new ScenarioError("q", "ask", "why");
const events = EVENTS.length + RULES.length;
const card: CardAnswer = card_answer(19048328, ["face_down", "flip_face_up"], { count_scope: "whole_turn" });
const works: (boolean | null)[] = card.effects.map((e) => e.works);
console.log(JSON.stringify([verdict, disputed.length, firstCase ?? null, kinds.length, value, items.length,
                            text.length > 0, fields.length, synchro.length, error.field, events, works.length]));

// what the types refuse (never run): a kind or event outside the vocabulary, a field of another event
export function refused(): Scenario {
  // @ts-expect-error
  retains("synchro_sumoned", "face_down");
  // @ts-expect-error
  retains("counters", "banished");
  // @ts-expect-error
  card_answer(19048328, "face_down", { count_scope: "forever" });
  // @ts-expect-error
  return { id: "x", events: [{ turn: 1, do: "set", method: "synchro" }], ask: { turn: 1, question: "has", info_kind: "counters" } };
}
"""


def test_tsc_strict_checks_a_program_using_the_declarations(built, tmp_path):
    tsc = _need(TSC, "TypeScript's tsc (npm install -g typescript)")
    paths = engine_paths(built[2])
    for key in ("mjs", "dts"):
        shutil.copyfile(paths[key], tmp_path / paths[key].name)
    (tmp_path / "use.mts").write_text(TYPED_USE, encoding="utf-8")
    out = subprocess.run([tsc, "--strict", "--noEmit", "--target", "es2022", "--module", "nodenext",
                          "--moduleResolution", "nodenext", "--lib", "es2022,dom", "use.mts"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    # and the program runs on the module: the checked file compiled by tsc, run by Node
    compiled = subprocess.run([tsc, "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution",
                               "nodenext", "--lib", "es2022,dom", "--outDir", "out", "use.mts"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=180)
    assert compiled.returncode == 0, compiled.stdout
    shutil.copyfile(paths["mjs"], tmp_path / "out" / paths["mjs"].name)
    ran = subprocess.run([_need(NODE, "Node.js"), "out/use.mjs"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    verdict, _disputed, _case, kinds, value, items, cited, fields, synchro, field, _events, effects = json.loads(
        ran.stdout)
    assert verdict == "kept" and kinds == 35 and value is True and items == 2 and cited and fields == 12
    assert synchro >= 1 and field == "ask" and effects == 3  # 幻龙星-嘲风's three numbered effects


def test_tsc_refuses_declarations_that_do_not_match(built, tmp_path):
    """The check can fail: a program that misuses a declared type does not compile."""
    tsc = _need(TSC, "TypeScript's tsc (npm install -g typescript)")
    paths = engine_paths(built[2])
    for key in ("mjs", "dts"):
        shutil.copyfile(paths[key], tmp_path / paths[key].name)
    (tmp_path / "bad.mts").write_text('import { retains } from "./ocg_rules.mjs";\n'
                                      'const n: number = retains("counters", "face_down").verdict;\n', encoding="utf-8")
    out = subprocess.run([tsc, "--strict", "--noEmit", "--target", "es2022", "--module", "nodenext",
                          "--moduleResolution", "nodenext", "--lib", "es2022,dom", "bad.mts"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode != 0 and "TS2322" in out.stdout
