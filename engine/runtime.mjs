// Runtime of the generated JavaScript engine module (ES module, no dependencies).
//
// pipeline/generate.py writes `const DATA = {...};` (the contents of
// engine/ocg_rules.json: vocabulary, scenario format, rules, citations,
// sources, procedural rules) and then copies everything below the RUNTIME
// marker of this file, so engine/ocg_rules.mjs is one self-contained module.
// It is a port of engine/runtime.py: the same answers for the same scenario
// (a test runs every public scenario and every (kind, event) pair through
// both). Error messages may word "did you mean" differently.
//
// API (the Python module's names):
//   retains(infoKind, event)  -> {info_kind, event, verdict, condition, latest_date,
//                                 changed_on, dates, record_ids, conflicts, record_dates,
//                                 disputed_by, cases}
//   answer(scenario)          -> {id, answer: true | false | "unknown", because: [...]}
//   answer_all(scenarios)     -> answers; a malformed scenario, or one whose id another shares, gives {id, error, field}
//   citation(recordId)        -> {id, source, url, licence, section, dates, text}
//   validate(scenario)        -> throws ScenarioError {scenario_id, field}

const DATA = { info_kinds: [], events: [], scenario: {}, rules: [], citations: {}, sources: {}, procedural: {},
               procedural_ids: [], generator: "", rules_hash: "" };

// ==== RUNTIME ====
// The tables are frozen: a caller cannot change the answers of later calls.
function deepFreeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
deepFreeze(DATA);
export const GENERATOR = DATA.generator;
export const RULES_HASH = DATA.rules_hash;
export const INFO_KINDS = Object.freeze([...DATA.info_kinds]);
export const EVENTS = Object.freeze([...DATA.events]);
export const SCENARIO_EVENTS = DATA.scenario.events;
export const SCENARIO_QUESTIONS = DATA.scenario.questions;
export const PROCEDURAL_IDS = Object.freeze([...DATA.procedural_ids]);
export const RULES = DATA.rules;
export const CITATIONS = DATA.citations;
export const SOURCES = DATA.sources;
export const PROCEDURAL = DATA.procedural;

export const SUMMON_KINDS = DATA.scenario.summon_kinds;
export const GAINS = DATA.scenario.gains;
export const CONTROL_KINDS = DATA.scenario.control_kinds;
export const RETENTION_EVENTS = DATA.scenario.retention_events;
export const THIS_TURN_KINDS = Object.freeze([...DATA.scenario.this_turn_kinds]);
const THIS_TURN = new Set(DATA.scenario.this_turn_kinds);
/** The fields of a retention rule, in order (Python's Retention._fields); TypeScript: the Retention type. */
export const Retention = Object.freeze({ fields: Object.freeze(["info_kind", "event", "verdict", "condition",
  "latest_date", "changed_on", "dates", "record_ids", "conflicts", "record_dates", "disputed_by", "cases"]) });
const KIND_SET = new Set(INFO_KINDS);
const RETENTION = new Map(RULES.map((r) => [`${r.info_kind}\u0000${r.event}`, r]));
const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

export class ScenarioError extends Error {
  constructor(scenarioId, field, message) {
    super(`scenario ${JSON.stringify(scenarioId)}: field ${JSON.stringify(field)}: ${message}`);
    this.name = "ScenarioError";
    this.scenario_id = scenarioId;
    this.field = field;
  }
}

function show(value) {
  if (value === undefined) return "missing";
  try {
    return JSON.stringify(value);
  } catch {
    return String(value); // a BigInt, a cycle: not JSON data
  }
}

function didYouMean(name, choices) {
  // the choice with the fewest edits, if it is close (a hint, not an answer)
  const distance = (a, b) => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let prev = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const here = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
        prev = here;
      }
    }
    return row[b.length];
  };
  const text = String(name);
  let best = null;
  for (const choice of choices) {
    const d = distance(text, String(choice));
    if (d <= Math.max(2, Math.floor(String(choice).length / 3)) && (best === null || d < best[0])) best = [d, choice];
  }
  return best ? ` (did you mean ${JSON.stringify(best[1])}?)` : "";
}

function copyRule(r) {
  return {
    info_kind: r.info_kind, event: r.event, verdict: r.verdict, condition: r.condition,
    latest_date: r.latest_date, changed_on: r.changed_on, dates: [...r.dates], record_ids: [...r.record_ids],
    conflicts: r.conflicts.map((c) => ({ ...c, record_ids: [...c.record_ids] })),
    record_dates: r.record_dates.map((d) => [...d]),
    disputed_by: [...r.disputed_by],
    cases: r.cases.map((c) => ({ ...c, values: [...c.values], record_ids: [...c.record_ids] })),
  };
}

/** Retention for infoKind x event; throws RangeError for a name outside the vocabulary. */
export function retains(infoKind, event) {
  const r = typeof infoKind === "string" && typeof event === "string"
    ? RETENTION.get(`${infoKind}\u0000${event}`) : undefined;
  if (r !== undefined) return copyRule(r);
  if (typeof infoKind !== "string" || !KIND_SET.has(infoKind)) throw new RangeError(`unknown info kind ${show(infoKind)}${didYouMean(infoKind, INFO_KINDS)}`);
  throw new RangeError(`unknown event ${show(event)}${didYouMean(event, EVENTS)}`);
}

/** {id, source, url, licence, section, dates, text} of a cited record; RangeError if not cited. */
export function citation(recordId) {
  if (typeof recordId !== "string" || !has(CITATIONS, recordId)) throw new RangeError(`no cited record ${show(recordId)}`);
  const c = CITATIONS[recordId];
  const s = has(SOURCES, c.source) ? SOURCES[c.source] : { url: "", licence: "" };
  return { id: recordId, source: c.source, url: s.url, licence: s.licence, section: c.section,
           dates: [...c.dates], text: c.text };
}

function records(recordIds, recordDates = []) {
  return recordIds.map((rid, i) => {
    const c = CITATIONS[rid];
    return { id: rid, dates: [...(i < recordDates.length ? recordDates[i] : c.dates)], source: c.source };
  });
}

// A retention rule as a reason; for a conditional rule whose case the scenario
// tells, that case's verdict and records.
function becauseRetention(r, c = null) {
  if (c !== null) {
    return { rule: `retention:${r.info_kind}/${r.event}`, verdict: c.verdict, case: c.case,
             records: records(c.record_ids) };
  }
  const item = { rule: `retention:${r.info_kind}/${r.event}`, verdict: r.verdict,
                 records: records(r.record_ids, r.record_dates) };
  if (r.condition) item.condition = r.condition;
  if (r.cases.length) { // the scenario does not tell which: every case with its verdict
    item.cases = r.cases.map((c) => ({ case: c.case, fact: c.fact, values: [...c.values], verdict: c.verdict }));
  }
  if (r.changed_on) item.changed_on = r.changed_on;
  if (r.disputed_by.length) item.disputed_by = [...r.disputed_by];
  return item;
}

// The case of conditional rule r that the monster's facts select (every
// matching case gives one verdict), or null when they do not tell.
function caseOf(r, facts) {
  const matching = r.cases.filter((c) => facts[c.fact] !== null && c.values.includes(facts[c.fact]));
  return matching.length && new Set(matching.map((c) => c.verdict)).size === 1 ? matching[0] : null;
}

function becauseRule(ruleId) {
  const p = PROCEDURAL[ruleId];
  return { rule: ruleId, summary: p.summary, records: records(p.record_ids) };
}

function becauseMissing(ruleId, why) {
  return { rule: ruleId, missing: true, summary: `the corpus states no such rule: ${why}` };
}

// ---------------------------------------------------------------- scenario checks

function checkChoice(sid, field, value, choices) {
  if (!choices.includes(value)) {
    throw new ScenarioError(sid, field, `${show(value)} is not one of ${JSON.stringify(choices)}${didYouMean(value, choices)}`);
  }
}

function checkTurn(sid, field, value) {
  // (1.0 is 1 in JavaScript; a BigInt is not a JSON number)
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > Number.MAX_SAFE_INTEGER) {
    throw new ScenarioError(sid, field, `turn must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not ${show(value)}`);
  }
}

function checkFields(sid, where, obj, fields, key) {
  const tag = `${key}=${show(obj[key])}`;
  for (const field of Object.keys(obj)) {
    if (!has(fields, field) && field !== key) {
      throw new ScenarioError(sid, `${where}.${field}`, `unknown field for ${tag}${didYouMean(field, Object.keys(fields))}`);
    }
  }
  for (const [field, spec] of Object.entries(fields)) {
    if (!has(obj, field)) {
      if (spec.required) throw new ScenarioError(sid, `${where}.${field}`, `missing (required by ${tag})`);
      continue;
    }
    const value = obj[field];
    if (spec.allowed === "turn") checkTurn(sid, `${where}.${field}`, value);
    else if (spec.allowed === "boolean") {
      if (typeof value !== "boolean") throw new ScenarioError(sid, `${where}.${field}`, `must be true or false, not ${show(value)}`);
    } else if (spec.allowed === "string") {
      if (typeof value !== "string") throw new ScenarioError(sid, `${where}.${field}`, `must be a string, not ${show(value)}`);
    } else checkChoice(sid, `${where}.${field}`, value, spec.allowed);
  }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Throw ScenarioError naming the scenario id and field if the scenario is malformed. */
// Code points a scenario id may not hold (the "id" pattern of schema/scenario.schema.json): C0 and C1
// controls, DEL, bidi marks, embeddings, overrides and isolates, line and paragraph separators. An id is
// printed back with its answer: it must not act on a terminal or forge a line.
const ID_FORBIDDEN = [[0x00, 0x1f], [0x7f, 0x9f], [0x61c, 0x61c], [0x200e, 0x200f], [0x2028, 0x202e], [0x2066, 0x2069]];

// [index, code point] of the first character of sid in ID_FORBIDDEN, or null (a surrogate pair is one character).
function forbiddenInId(sid) {
  let i = 0;
  for (const ch of sid) {
    const code = ch.codePointAt(0);
    if (ID_FORBIDDEN.some(([low, high]) => low <= code && code <= high)) return [i, code];
    i += 1;
  }
  return null;
}

export function validate(scenario) {
  if (!isObject(scenario)) throw new ScenarioError("?", "(scenario)", "a scenario is a JSON object");
  const sid = scenario.id;
  if (typeof sid !== "string" || !sid) throw new ScenarioError("?", "id", "missing or not a string");
  const bad = forbiddenInId(sid);
  if (bad) {
    const hex = bad[1].toString(16).toUpperCase().padStart(4, "0");
    throw new ScenarioError("?", "id", `character ${bad[0]} is U+${hex}: an id may not hold control, bidi or line-separator characters`);
  }
  const events = scenario.events;
  if (!Array.isArray(events)) throw new ScenarioError(sid, "events", "missing or not a list");
  let lastTurn = 0;
  events.forEach((ev, i) => {
    const where = `events[${i}]`;
    if (!isObject(ev)) throw new ScenarioError(sid, where, "an event is a JSON object");
    checkTurn(sid, `${where}.turn`, ev.turn);
    if (ev.turn < lastTurn) {
      throw new ScenarioError(sid, `${where}.turn`, `turn ${ev.turn} comes after turn ${lastTurn}: turns never go backwards`);
    }
    lastTurn = ev.turn;
    checkChoice(sid, `${where}.do`, ev.do, Object.keys(SCENARIO_EVENTS));
    checkFields(sid, where, ev, SCENARIO_EVENTS[ev.do], "do");
  });
  const ask = scenario.ask;
  if (!isObject(ask)) throw new ScenarioError(sid, "ask", "missing or not an object");
  checkChoice(sid, "ask.question", ask.question, Object.keys(SCENARIO_QUESTIONS));
  checkFields(sid, "ask", ask, SCENARIO_QUESTIONS[ask.question], "question");
  if (ask.turn < lastTurn) throw new ScenarioError(sid, "ask.turn", `turn ${ask.turn} is before the last event's turn ${lastTurn}`);
}

// ---------------------------------------------------------------- the history model

class Monster {
  constructor() {
    this.event = "";
    this.restart();
  }

  // Forget everything: the monster (re)enters the field.
  restart() {
    this.info = new Map(); // kind -> [turn gained, "has" | "unknown"]
    this.positionFacts = []; // [turn, what, player, status]
    this.effectChanges = [];
    this.returnedFromBanish = [];
    this.controller = null;
    this.faceDown = false;
    this.because = new Map(); // kind -> retention rules applied, in order
    this.origin = new Map(); // kind -> the event that last gave it
    // What decides the cases of conditional rules (schema/rule_policy.json facts):
    this.summoned = new Map(); // turn -> how it was last Summoned in it: normal, special or flip
    this.canNormalSummon = null; // null: the scenario does not tell
    this.countScope = null;
  }

  // The facts of schema/rule_policy.json the scenario tells, at turn (null: not told).
  facts(turn) {
    return { summon_this_turn: this.summoned.has(turn) ? this.summoned.get(turn) : null,
             can_normal_summon: this.canNormalSummon, count_scope: this.countScope };
  }

  gain(kind, turn) {
    if (!KIND_SET.has(kind)) {
      throw new RangeError(`engine: unknown info kind ${show(kind)} (not in INFO_KINDS: the engine and its vocabulary disagree; rebuild it)`);
    }
    this.info.set(kind, [turn, "has"]);
    this.origin.set(kind, this.event);
  }

  gainAll(kinds, turn) {
    for (const kind of kinds) this.gain(kind, turn);
  }

  addBecause(kind, item) {
    if (!this.because.has(kind)) this.because.set(kind, []);
    this.because.get(kind).push(item);
  }

  applyEvent(event, turn) {
    const facts = this.facts(turn);
    for (const kind of [...this.info.keys()].sort()) {
      const r = RETENTION.get(`${kind}\u0000${event}`);
      let verdict = r ? r.verdict : "unknown";
      const c = verdict === "conditional" ? caseOf(r, facts) : null;
      if (c !== null) verdict = c.verdict;
      if (r !== undefined) this.addBecause(kind, becauseRetention(r, c));
      if (verdict === "kept") continue;
      if (verdict === "lost" || verdict === "not_applicable") this.info.delete(kind);
      else this.info.set(kind, [this.info.get(kind)[0], "unknown"]);
    }
    if (event === "face_down" || event === "temp_banish") {
      const r = RETENTION.get(`position_change_restrictions\u0000${event}`);
      const verdict = r ? r.verdict : "unknown";
      if (this.positionFacts.length) {
        if (r !== undefined) this.addBecause("position_change_restrictions", becauseRetention(r));
        if (verdict === "lost" || verdict === "not_applicable") this.positionFacts = [];
        else if (verdict !== "kept") this.positionFacts = this.positionFacts.map(([t, w, p]) => [t, w, p, "unknown"]);
      }
    }
  }
}

// The summon methods that are Normal Summons (the monster can be Normal Summoned);
// the others are Special Summons. A Flip Summon is its own event (flip_summon).
const NORMAL_SUMMONS = new Set(["normal", "tribute", "gemini"]);
// Whether a monster Summoned by a method can be Normal Summoned, where the method tells: a Normal
// Summon's can; a Fusion, Synchro, Xyz, Link or Ritual Monster cannot (null: the scenario must say).
const CAN_NORMAL_SUMMON = new Map([...["normal", "tribute", "gemini"].map((m) => [m, true]),
  ...["fusion", "synchro", "xyz", "link", "ritual"].map((m) => [m, false])]);

const SUMMON_OPTION_GAINS = { from: "summon_from", by_effect: "summon_by_effect", own_procedure: "summon_own_procedure" };

function replay(scenario) {
  const m = new Monster();
  scenario.events.forEach((ev, i) => {
    const { do: act, turn } = ev;
    m.event = `events[${i}] (turn ${turn}: ${act}${act === "take_control" ? " " + ev.mode : ""})`;
    if (act === "summon" || act === "set") m.restart(); // on the field again: a new monster
    if (act === "summon") {
      m.controller = ev.by;
      m.faceDown = Boolean(ev.face_down);
      const normal = NORMAL_SUMMONS.has(ev.method);
      m.summoned.set(turn, normal ? "normal" : "special");
      m.canNormalSummon = has(ev, "can_normal_summon") ? ev.can_normal_summon
        : (CAN_NORMAL_SUMMON.has(ev.method) ? CAN_NORMAL_SUMMON.get(ev.method) : null);
      m.gainAll([...SUMMON_KINDS[ev.method], ...GAINS.summon], turn);
      for (const field of ["from", "by_effect", "own_procedure"]) {
        if (ev[field]) m.gainAll(GAINS[SUMMON_OPTION_GAINS[field]], turn);
      }
      m.positionFacts.push([turn, "summoned", ev.by, "has"]);
    } else if (act === "set") {
      m.controller = ev.by;
      m.faceDown = true;
      m.canNormalSummon = true; // it was Normal Set
      m.positionFacts.push([turn, "set", ev.by, "has"]);
      m.gainAll(GAINS.set, turn);
    } else if (act === "flip_summon") {
      m.faceDown = false;
      m.summoned.set(turn, "flip");
      m.gainAll(GAINS.flip_summon, turn);
      m.positionFacts.push([turn, "manual_change", ev.by, "has"]);
    } else if (act === "change_position") {
      if (ev.by === "manual") {
        m.positionFacts.push([turn, "manual_change", m.controller, "has"]);
        m.gainAll(GAINS.change_position_manual, turn);
      } else m.effectChanges.push(turn);
    } else if (act === "declare_attack") {
      m.gainAll(GAINS.declare_attack, turn);
      m.positionFacts.push([turn, "attacked", m.controller, "has"]);
    } else if (act === "take_control") {
      m.controller = ev.by;
      m.gain(CONTROL_KINDS[ev.mode], turn);
    } else if (act === "activate_effect") {
      m.gainAll(GAINS[act], turn);
      if (has(ev, "pledge")) m.gainAll(GAINS["pledge_" + ev.pledge], turn);
    } else if (has(RETENTION_EVENTS, act)) {
      m.applyEvent(RETENTION_EVENTS[act], turn);
      if (act === "turn_face_down") {
        m.faceDown = true;
        m.effectChanges.push(turn);
      } else if (act === "flip_face_up") {
        m.faceDown = false;
        m.gainAll(GAINS.flip_face_up, turn);
        m.effectChanges.push(turn);
      } else m.returnedFromBanish.push(turn);
    } else {
      m.gainAll(GAINS[act], turn);
      if (act === "start_count" && has(ev, "count_scope")) m.countScope = ev.count_scope;
    }
  });
  return m;
}

const turnPlayer = (turn) => (turn % 2 === 1 ? "A" : "B");
function control(m) {
  if (m.controller === null) return { rule: "control", summary: "the monster is not on the field (no summon or Set in the scenario)" };
  return { rule: "control", summary: `the monster is controlled by ${m.controller}` };
}

function result(scenario, answer, because) {
  const seen = new Set();
  const unique = [];
  for (const item of because) {
    const key = JSON.stringify([item.rule, has(item, "verdict") ? item.verdict : null]);
    if (!seen.has(key)) {
      seen.add(key);
      unique.push(item);
    }
  }
  return { id: scenario.id, answer, because: unique };
}

function canChangePosition(m, ask) {
  const { turn, phase, player } = ask;
  const because = [];
  if (!has(PROCEDURAL, "position.manual_change_main_phase_only")) {
    return ["unknown", [becauseMissing("position.manual_change_main_phase_only", "when a manual change is allowed")]];
  }
  because.push(becauseRule("position.manual_change_main_phase_only"));
  if (!(phase === "main1" || phase === "main2") || player !== turnPlayer(turn)) return [false, because];
  if (m.controller !== player) {
    return [false, [...because, control(m)]];
  }
  let answer = true;
  for (const [factTurn, what, by, status] of m.positionFacts) {
    if (factTurn !== turn) continue;
    let ruleId;
    let blocked;
    if (what === "summoned" || what === "set") {
      if (by === turnPlayer(turn)) [ruleId, blocked] = ["position.not_if_summoned_or_set_this_turn", true];
      else [ruleId, blocked] = ["position.summoned_by_non_turn_player_allowed", false];
    } else if (what === "attacked") [ruleId, blocked] = ["position.not_after_attack_declared", true];
    else [ruleId, blocked] = ["position.once_per_turn", true];
    if (!has(PROCEDURAL, ruleId)) {
      because.push(becauseMissing(ruleId, `whether '${what}' this turn blocks a manual change`));
      answer = answer === true ? "unknown" : answer;
      continue;
    }
    because.push(becauseRule(ruleId));
    if (blocked) {
      if (status === "unknown") answer = answer === true ? "unknown" : answer;
      else answer = false;
    }
  }
  if (answer === true && m.effectChanges.includes(turn)) {
    const ruleId = "position.effect_changes_do_not_count";
    if (has(PROCEDURAL, ruleId)) because.push(becauseRule(ruleId));
    else {
      because.push(becauseMissing(ruleId, "whether a change by a card effect uses up the manual change"));
      answer = "unknown";
    }
  }
  if (m.returnedFromBanish.includes(turn) && has(PROCEDURAL, "position.return_from_banish_is_not_summon")) {
    because.push(becauseRule("position.return_from_banish_is_not_summon"));
  }
  return [answer, [...because, ...(m.because.get("position_change_restrictions") || [])]];
}

function canDeclareAttack(m, ask) {
  const { turn, phase, player } = ask;
  let because = [];
  if (turn === 1) {
    if (!has(PROCEDURAL, "battle.no_battle_phase_first_turn")) {
      return ["unknown", [becauseMissing("battle.no_battle_phase_first_turn", "a Battle Phase in the first turn")]];
    }
    return [false, [becauseRule("battle.no_battle_phase_first_turn")]];
  }
  if (phase !== "battle" || player !== turnPlayer(turn) || m.controller !== player) {
    const ruleId = "battle.attacks_in_own_battle_phase";
    if (!has(PROCEDURAL, ruleId)) return ["unknown", [becauseMissing(ruleId, "in whose Battle Phase a monster declares attacks")]];
    because = [becauseRule(ruleId)];
    if (m.controller !== player) because.push(control(m));
    return [false, because];
  }
  if (m.faceDown) {
    const ruleId = "battle.attackers_face_up_attack_position";
    if (!has(PROCEDURAL, ruleId)) return ["unknown", [becauseMissing(ruleId, "whether a face-down monster attacks")]];
    return [false, [becauseRule(ruleId)]];
  }
  const info = m.info.get("attack_declared");
  const declared = m.because.get("attack_declared") || [];
  if (info !== undefined && info[0] === turn) {
    const ruleId = "battle.attack_once_per_turn";
    if (!has(PROCEDURAL, ruleId)) return ["unknown", [becauseMissing(ruleId, "how often a monster attacks")]];
    because.push(becauseRule(ruleId));
    return [info[1] === "unknown" ? "unknown" : false, [...because, ...declared]];
  }
  if (has(PROCEDURAL, "battle.attack_once_per_turn")) because.push(becauseRule("battle.attack_once_per_turn"));
  return [true, [...because, ...declared]];
}

function hasInfo(m, ask) {
  const { info_kind: kind, turn } = ask;
  const info = m.info.get(kind);
  const because = [m.origin.has(kind)
    ? { rule: "history", summary: `${m.origin.get(kind)} gives ${kind}` }
    : { rule: "history", summary: `no event of the scenario gives ${kind}` }];
  because.push(...(m.because.get(kind) || []));
  if (info === undefined) return [false, because];
  if (THIS_TURN.has(kind) && info[0] !== turn) {
    return [false, [...because, { rule: "this_turn", summary: `${kind} only counts in the turn it was gained (turn ${info[0]})` }]];
  }
  return [info[1] === "has" ? true : "unknown", because];
}

function canConductBattlePhase(ask) {
  const { turn, player } = ask;
  const ruleId = "battle.no_battle_phase_first_turn";
  if (player !== turnPlayer(turn)) return [false, [{ rule: "turn_player", summary: `turn ${turn} is ${turnPlayer(turn)}'s turn` }]];
  if (!has(PROCEDURAL, ruleId)) return ["unknown", [becauseMissing(ruleId, "whether the first turn has a Battle Phase")]];
  return [turn !== 1, [becauseRule(ruleId)]];
}

/** Answer one scenario: {id, answer, because}; throws ScenarioError if malformed. */
export function answer(scenario) {
  validate(scenario);
  const ask = scenario.ask;
  if (ask.question === "can_conduct_battle_phase") return result(scenario, ...canConductBattlePhase(ask));
  const m = replay(scenario);
  if (ask.question === "can_change_position_manually") return result(scenario, ...canChangePosition(m, ask));
  if (ask.question === "can_declare_attack") return result(scenario, ...canDeclareAttack(m, ask));
  return result(scenario, ...hasInfo(m, ask));
}

/** Answer a list of scenarios; a malformed one gives {id, error, field}. */
export function answer_all(scenarios) {
  if (!Array.isArray(scenarios)) throw new TypeError(`answer_all takes a list of scenarios, not ${typeof scenarios}`);
  // Two or more scenarios with the same id: each is refused, naming their positions.
  const positions = new Map();
  scenarios.forEach((scenario, i) => {
    const sid = isObject(scenario) ? scenario.id : undefined;
    if (typeof sid === "string") positions.set(sid, [...(positions.get(sid) || []), i]);
  });
  return scenarios.map((scenario) => {
    try {
      validate(scenario);
      const same = positions.get(scenario.id);
      if (same.length > 1) {
        throw new ScenarioError(scenario.id, "id", `scenarios ${same.map((i) => `[${i}]`).join(", ")} have the same id; ids must be unique`);
      }
      return answer(scenario);
    } catch (exc) {
      if (!(exc instanceof ScenarioError)) throw exc;
      return { id: exc.scenario_id, error: exc.message, field: exc.field };
    }
  });
}

export { answer_all as answerAll };
