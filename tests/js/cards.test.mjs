// The generated JavaScript engine's card_answer answers as the Python engine's.
// Run by tests/test_js_engine.py: ENGINE_MJS is the module under test, CASES a
// JSON file of questions (card, events, facts) with the Python answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const engine = await import(pathToFileURL(process.env.ENGINE_MJS).href);
const cases = JSON.parse(readFileSync(process.env.CASES, "utf8"));

test("card_answer() gives the same answer for every card of the table and every event", () => {
  assert.ok(cases.questions.length > 1000);
  cases.questions.forEach((q, i) => {
    assert.deepEqual(engine.card_answer(q.card, q.events, q.facts), cases.answers[i], JSON.stringify(q));
  });
});

test("card_answer() refuses what the Python engine refuses", () => {
  for (const bad of cases.refused) {
    assert.throws(() => engine.card_answer(bad.card, bad.events, bad.facts), bad.error === "TypeError" ? TypeError : RangeError,
                  JSON.stringify(bad));
  }
  assert.deepEqual(engine.card_answer(String(cases.questions[0].card), "face_down,flip_face_up"),
                   engine.card_answer(cases.questions[0].card, ["face_down", "flip_face_up"]));
});
