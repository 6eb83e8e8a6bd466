// Runtime of the generated JavaScript engine module, part 2: answers for a named card.
//
// pipeline/generate.py writes `const CARD_TABLE = "...";` (the card table of
// pipeline/cardengine.py as one JSON text) and copies everything below the
// RUNTIME marker of this file after the runtime of engine/runtime.mjs. It is a
// port of engine/runtime_cards.py (see its docstring for the answer's form):
// tests/test_js_engine.py requires identical answers for every card.
//
//   card_answer(cardId, events, facts = null) -> {card, events, facts, effects, rulings}
//     throws RangeError for a card not in the table, an event or fact outside
//     the vocabulary; TypeError for arguments of the wrong type.

const CARD_TABLE = "";
const EVENTS = [];
const RETENTION = new Map();
function caseOf() { return null; }
function becauseRetention() { return {}; }
function didYouMean() { return ""; }
function show(value) { return JSON.stringify(value); }

// ==== RUNTIME ====
let cardData = null;
const MAIN_EVENTS = ["face_down", "temp_banish"];
const CARD_FACTS = { summon_this_turn: ["normal", "special", "flip"], can_normal_summon: [true, false],
                     count_scope: ["whole_turn", "from_activation"] };
const NO_DEPENDENCY = "the effect depends on no information that a card's events change (pipeline/cardtext.py reads "
  + "none in its text): it works after them as before";

// The card table, parsed on first use (the import stays fast).
function cardTable() {
  if (cardData === null) {
    cardData = CARD_TABLE ? JSON.parse(CARD_TABLE) : { cards: {}, citations: {}, restricting_kinds: [] };
  }
  return cardData;
}

function eventList(events) {
  let items;
  if (typeof events === "string") items = events.split(",").map((e) => e.trim());
  else if (Array.isArray(events)) items = [...events];
  else throw new TypeError(`events must be an event name, a comma-separated sequence or a list, not ${show(events)}`);
  if (!items.length) throw new RangeError("no event given");
  for (const e of items) {
    if (typeof e !== "string" || !EVENTS.includes(e)) throw new RangeError(`unknown event ${show(e)}${didYouMean(e, EVENTS)}`);
  }
  return items;
}

function cardFacts(card, facts) {
  if (facts === null || facts === undefined) facts = {};
  if (typeof facts !== "object" || Array.isArray(facts)) throw new TypeError(`facts must be an object, not ${show(facts)}`);
  const out = { summon_this_turn: null, can_normal_summon: card.can_normal_summon, count_scope: null };
  for (const [fact, value] of Object.entries(facts)) {
    if (!Object.prototype.hasOwnProperty.call(CARD_FACTS, fact)) {
      throw new RangeError(`unknown fact ${show(fact)}${didYouMean(fact, Object.keys(CARD_FACTS))}`);
    }
    if (value !== null && !CARD_FACTS[fact].includes(value)) {
      throw new RangeError(`fact ${show(fact)}: ${show(value)} is not one of ${show(CARD_FACTS[fact])}`);
    }
    out[fact] = value;
  }
  return out;
}

// A kind's verdict after the events in turn, with the retention rules applied.
function after(kind, events, facts) {
  let verdict = "kept";
  const rules = [];
  for (const event of events) {
    const r = RETENTION.get(`${kind}\u0000${event}`);
    let v = r !== undefined ? r.verdict : "unknown";
    const c = v === "conditional" ? caseOf(r, facts) : null;
    if (c !== null) v = c.verdict;
    if (r !== undefined) rules.push(becauseRetention(r, c));
    else rules.push({ rule: `retention:${kind}/${event}`, verdict: "unknown", records: [] });
    if (v === "lost" || v === "not_applicable") return [v, rules];
    if (v !== "kept" && verdict === "kept") verdict = v;
  }
  return [verdict, rules];
}

function general(verdicts, restricting) {
  const needs = Object.entries(verdicts).filter(([k]) => !restricting.has(k)).map(([, v]) => v);
  const limits = Object.entries(verdicts).filter(([k]) => restricting.has(k)).map(([, v]) => v);
  const works = needs.includes("lost") ? false : (needs.every((v) => v === "kept") ? true : null);
  let again;
  if (!limits.length || limits.includes("kept")) again = limits.length ? false : null;
  else again = limits.every((v) => v === "lost" || v === "not_applicable") ? true : null;
  return [works, again];
}

function rulingMatches(r, events) {
  const main = events.filter((e) => MAIN_EVENTS.includes(e));
  if (main.length) return main.every((e) => r.events.includes(e));
  return !r.events.length && r.flip && events.includes("flip_face_up");
}

function decisive(rulings, events) {
  const matching = rulings.filter((r) => rulingMatches(r, events));
  const dated = matching.filter((r) => r.date);
  if (dated.length) {
    const newest = dated.map((r) => r.date).reduce((a, b) => (b > a ? b : a));
    return dated.filter((r) => r.date === newest);
  }
  return matching;
}

function pushOnce(list, value) {
  if (!list.includes(value)) list.push(value);
}

function effectAnswer(card, effect, events, facts, restricting) {
  const verdicts = {};
  let rules = [];
  let because = [];
  for (const kind of effect.depends_on) {
    const [verdict, applied] = after(kind, events, facts);
    verdicts[kind] = verdict;
    rules = rules.concat(applied);
  }
  for (const item of rules) for (const rec of item.records || []) pushOnce(because, rec.id);
  let [works, again] = general(verdicts, restricting); // eslint-disable-line prefer-const
  let decidedBy = effect.depends_on.length ? "general_rule" : "no_dependency";
  if (!effect.depends_on.length) rules = [{ rule: "no_dependency", summary: NO_DEPENDENCY }];
  const own = card.rulings.filter((r) => r.part === effect.part && r.effect === effect.effect);
  const deciding = decisive(own, events);
  if (deciding.length) {
    const cans = [];
    for (const r of deciding) pushOnce(cans, r.can);
    works = cans.length === 1 ? cans[0] : null;
    decidedBy = "card_ruling";
    because = [];
    for (const r of deciding) pushOnce(because, r.id);
  }
  const cardRulings = [];
  for (const r of own) pushOnce(cardRulings, r.id);
  return { effect: effect.effect, part: effect.part, text: effect.text, depends_on: [...effect.depends_on],
           verdicts, works, again, decided_by: decidedBy, because, rules, card_rulings: cardRulings };
}

/** Which of the card's effects still work after events (see engine/runtime_cards.py). */
export function card_answer(cardId, events, facts = null) {
  if (!(typeof cardId === "number" && Number.isInteger(cardId)) && typeof cardId !== "string") {
    throw new TypeError(`card_id must be a passcode (a whole number), not ${show(cardId)}`);
  }
  const data = cardTable();
  let key = String(cardId).trim();
  if (/^[0-9]+$/.test(key)) key = String(Number.parseInt(key, 10));
  if (!Object.prototype.hasOwnProperty.call(data.cards, key)) {
    throw new RangeError(`card ${show(cardId)} is not in the card table (none of its effects depends on an `
      + "information kind and no ruling names one)");
  }
  const card = data.cards[key];
  const items = eventList(events);
  const told = cardFacts(card, facts);
  const restricting = new Set(data.restricting_kinds);
  const effects = card.effects.map((e) => effectAnswer(card, e, items, told, restricting));
  const rulings = {};
  for (const r of card.rulings) {
    if (!Object.prototype.hasOwnProperty.call(rulings, r.id)) {
      const c = data.citations[r.id];
      rulings[r.id] = { date: r.date, dates: [...c.dates], source: c.source, section: c.section, text: c.text,
                        says: [] };
    }
    rulings[r.id].says.push({ part: r.part, effect: r.effect, events: [...r.events], flip: r.flip, can: r.can });
  }
  return { card: { passcode: Number(key), konami_id: card.konami_id, name: { ...card.name } }, events: items,
           facts: told, effects, rulings };
}
export { card_answer as cardAnswer };
