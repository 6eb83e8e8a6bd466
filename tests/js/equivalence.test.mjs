// The generated JavaScript engine answers as the Python engine does.
// Run by tests/test_js_engine.py: ENGINE_MJS is the module under test,
// CASES a JSON file of inputs with the Python engine's outputs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const engine = await import(pathToFileURL(process.env.ENGINE_MJS).href);
const cases = JSON.parse(readFileSync(process.env.CASES, "utf8"));

test("the tables are the Python module's", () => {
  assert.equal(engine.RULES_HASH, cases.rules_hash);
  assert.deepEqual([...engine.INFO_KINDS], cases.info_kinds);
  assert.deepEqual([...engine.EVENTS], cases.events);
});

test("retains() gives the same rule for every (kind, event) pair", () => {
  for (const expected of cases.retains) {
    assert.deepEqual(engine.retains(expected.info_kind, expected.event), expected);
  }
  assert.throws(() => engine.retains("synchro_sumoned", "face_down"), /unknown info kind/);
  assert.throws(() => engine.retains("synchro_summoned", "facedown"), /unknown event/);
});

test("answer() gives the same answer and reasons for every scenario", () => {
  assert.ok(cases.scenarios.length > 100);
  cases.scenarios.forEach((scenario, i) => {
    assert.deepEqual(engine.answer(scenario), cases.answers[i], scenario.id);
  });
});

test("answer_all() reports the same malformed field for each bad scenario", () => {
  const got = engine.answer_all(cases.malformed);
  assert.equal(got.length, cases.malformed_answers.length);
  got.forEach((item, i) => {
    const want = cases.malformed_answers[i];
    assert.equal(item.id, want.id);
    assert.equal(item.field, want.field, JSON.stringify(cases.malformed[i]));
    assert.ok(item.error.includes(want.field));
  });
});

test("the tables are frozen and odd arguments are refused", () => {
  const rule = engine.RULES[0];
  const before = engine.retains(rule.info_kind, rule.event).verdict;
  assert.throws(() => { rule.verdict = "changed"; }, TypeError);
  assert.throws(() => { engine.CITATIONS[Object.keys(engine.CITATIONS)[0]].text = "changed"; }, TypeError);
  assert.equal(engine.retains(rule.info_kind, rule.event).verdict, before);
  assert.throws(() => engine.retains([rule.info_kind], [rule.event]), RangeError);
  assert.throws(() => engine.citation([Object.keys(engine.CITATIONS)[0]]), RangeError);
  assert.throws(() => engine.answer_all({ id: "x" }), TypeError);
  const big = engine.answer_all([{ id: "b", events: [], ask: { turn: 1n, question: "can_conduct_battle_phase", player: "A" } }]);
  assert.equal(big[0].field, "ask.turn");
});

test("citation() gives the same record for every cited id", () => {
  for (const expected of cases.citations) assert.deepEqual(engine.citation(expected.id), expected);
});
