"""The files of ``schema/``, each loaded and validated once.

Every stage reads its vocabulary, term lists and markers from here; nothing
else opens a file of ``schema/``. Each loader checks what the pipeline relies
on and raises :class:`SchemaError` naming the file and the key:

* ``vocabulary.json``: event, verdict and information-kind ids (unique), and
  the ``scenario`` tables the generated engine uses (every kind named there
  exists);
* ``retention_terms.json``: term keys against the vocabulary (kinds, events,
  verdicts), topic defaults and allowed kinds against the kinds, every word
  list present;
* ``procedural_rules.json``: the word groups and token patterns of the
  procedural reader (every group a pattern names exists), rule ids unique,
  each rule with a summary and readings over known features;
* ``markers.json``: the words and markup that mark page structure (example
  labels, note headings, the pending marker, clause delimiters, site chrome);
* the TSV files: their columns present;
* ``scenario.schema.json``: the scenario format (JSON Schema), checked
  against the vocabulary (methods, modes, kinds, questions, event gains);
* ``ddl.sql``: the database schema (read here, executed by :mod:`pipeline.load`);
* ``simulators/*.json``: per simulator core, where it keeps each info kind and
  its verdict per event, each citing file and line of the pinned source
  (every kind of the vocabulary, every event, every cited evidence present).

:func:`check_all` loads everything; a build and a refresh call it before any
page, so a broken schema file fails the run at once with one clear line.

This module reads the files and caches what each loader returns; the checks
of the larger files live by family in :mod:`pipeline.schemavocab` (the
vocabulary, the scenario format, the simulators), :mod:`pipeline.schematerms`
(the term lists) and :mod:`pipeline.schemarules` (rule policy, rulesets,
procedural rules), each a function of the parsed file and a
:class:`~pipeline.schemacheck.Checker`. Stages import only this module.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from . import schemarules, schematerms, schemavocab
from .errors import SchemaError
from .paths import BUNDLE_ROOT, PROJECT_ROOT
from .schemacheck import Checker

SCHEMA_DIR = BUNDLE_ROOT / "schema"
# Verdicts only the compiler gives (a ruling never states them itself).
RULE_ONLY_VERDICTS = ("conditional", "unknown")


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _read(name: str) -> str:
    path = SCHEMA_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError("file is missing", place=_display(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read: {exc}", place=_display(path)) from None


def _json(name: str) -> dict:
    try:
        data = json.loads(_read(name))
    except json.JSONDecodeError as exc:
        raise SchemaError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                          place=_display(SCHEMA_DIR / name)) from None
    if not isinstance(data, dict):
        raise SchemaError("the top level must be a JSON object", place=_display(SCHEMA_DIR / name))
    return data


def _checker(name: str) -> Checker:
    """The checks of ``schema/<name>``, naming it as errors do."""
    return Checker(_display(SCHEMA_DIR / name))


# --------------------------------------------------------------------------- vocabulary.json


@lru_cache(maxsize=1)
def vocabulary() -> dict:
    """``schema/vocabulary.json``: ``events``, ``verdicts`` and ``info_kinds``
    (lists of ``{"id", "meaning"}``) and ``scenario`` (the tables of the
    engine's history model: which kinds each scenario event gives)."""
    return schemavocab.check_vocabulary(_json("vocabulary.json"), _checker("vocabulary.json"), RULE_ONLY_VERDICTS)


# --------------------------------------------------------------------------- scenario.schema.json

SCENARIO_SCHEMA = "scenario.schema.json"


@lru_cache(maxsize=1)
def scenario_schema() -> dict:
    """``schema/scenario.schema.json``: the scenario format as a JSON Schema
    (draft 2020-12), the contract other tools validate against."""
    return _json(SCENARIO_SCHEMA)


@lru_cache(maxsize=1)
def scenario_format() -> dict:
    """The scenario format read from ``schema/scenario.schema.json``, flat,
    for the engine's ``validate()``: ``{"events": {do: {field: (required,
    allowed)}}, "questions": {question: {field: (required, allowed)}}}`` where
    ``allowed`` is a tuple of values, ``"boolean"``, ``"string"`` or ``"turn"``.

    Checked against ``vocabulary.json``: summon methods, control modes, info
    kinds and questions (with their fields) are the same there; every event
    other than the retention events and the ones the runtime models itself
    (summon, set, flip_summon, change_position, take_control) has a ``gains``
    entry. Raises SchemaError naming the key otherwise."""
    return schemavocab.check_scenario_format(scenario_schema(), _checker(SCENARIO_SCHEMA), vocabulary(), info_kinds(),
                                             _checker("vocabulary.json"), SCENARIO_SCHEMA)


def info_kinds() -> list[str]:
    """Information-kind ids, in vocabulary order."""
    return [k["id"] for k in vocabulary()["info_kinds"]]


def kind_groups() -> list[dict]:
    """Display groups of the info kinds: ``[{"id", "title", "kinds"}]``, every kind in one."""
    return vocabulary()["kind_groups"]


def events() -> list[str]:
    """Event ids, in vocabulary order."""
    return [e["id"] for e in vocabulary()["events"]]


def verdicts() -> list[str]:
    """Every verdict id (those a ruling states and those only compiled)."""
    return [v["id"] for v in vocabulary()["verdicts"]]


def statement_verdicts() -> list[str]:
    """The verdicts a ruling can state: ``kept``, ``lost``, ``not_applicable``."""
    return [v for v in verdicts() if v not in RULE_ONLY_VERDICTS]


# --------------------------------------------------------------------------- retention_terms.json


@lru_cache(maxsize=1)
def retention_terms() -> dict:
    """``schema/retention_terms.json``: the term lists of statement extraction
    (kinds, events and verdicts, each term list keyed by a vocabulary id;
    the outcome words: ``outcomes`` kept/lost, ``abilities`` able/unable,
    ``freedoms`` free/bound, with ``restricting_kinds``, ``ability_object``,
    ``subject_over_object`` and the ``continuity`` phrases with their
    ``continuity_events``),
    the word lists of :data:`TERM_WORD_LISTS` (negators among them), the
    kinds an "every kind" sentence leaves out (``all_kinds_except``), the
    re-publication days of the official database (``republication_dates``)
    and the retention ``topics`` (topic heading -> section heading ->
    default and allowed kinds)."""
    return schematerms.check_retention_terms(_json("retention_terms.json"), _checker("retention_terms.json"),
                                             info_kinds(), events(), statement_verdicts())


@lru_cache(maxsize=1)
def card_text_terms() -> dict:
    """``schema/card_text_terms.json``: what a card's effect depends on
    (``dependencies``: info kind -> ``ja`` / ``zh`` regular expressions),
    the ``unless`` patterns that cancel a kind's match in a sentence, the
    ``subsumed_by`` kinds, the extra ``restricting_kinds``, and how a ruling
    names an effect (``effect_reference``, a pattern with the groups
    ``card`` and ``effect``) and says it can or cannot be used (``can``,
    ``cannot``), the ``history_words`` a restricting kind needs and the
    ``other_reasons`` that stop the reading. Every kind is a vocabulary id;
    every pattern compiles."""
    return schematerms.check_card_text_terms(_json("card_text_terms.json"), _checker("card_text_terms.json"),
                                             info_kinds())


@lru_cache(maxsize=1)
def card_ruling_terms() -> dict:
    """``schema/card_ruling_terms.json``: how a ruling on a named card says
    one of its numbered effects can or cannot be used after a retention
    event (pipeline/effectrulings.py): ``events`` (event -> patterns, every
    event a vocabulary id), ``not_events``, ``quoted``, ``reference`` (with
    the groups ``card`` and ``effect``), ``can``, ``cannot``, ``window``
    (``before`` / ``after``: whole numbers), ``cause``, ``other_subject``
    and ``situational``. Every pattern compiles."""
    return schematerms.check_card_ruling_terms(_json("card_ruling_terms.json"), _checker("card_ruling_terms.json"),
                                               events())


@lru_cache(maxsize=1)
def retention_terms_en() -> dict:
    """``schema/retention_terms_en.json``: English ``kinds``, ``events``,
    ``verdicts`` (id -> phrases, lower case), ``negators``,
    ``returning_events`` (event -> ``{"leaves": [...], "returns": [...]}``) and
    the ``return_negations`` before a returning phrase (``words``, ``suffixes``);
    keys checked against the vocabulary."""
    return schematerms.check_retention_terms_en(_json("retention_terms_en.json"), _checker("retention_terms_en.json"),
                                                info_kinds(), events(), statement_verdicts())


# --------------------------------------------------------------------------- rule_policy.json


@lru_cache(maxsize=1)
def rule_policy() -> dict:
    """``schema/rule_policy.json``, checked: how compile weighs disagreeing
    rulings (``readings``: reading -> meaning; ``override_alone``: the
    readings whose one newer ruling changes a verdict; ``agreeing_rulings``:
    how many distinct newer rulings change it otherwise, an int >= 1) and the
    cases of conditional rules (``negators`` / ``negated_after``: words that
    negate a case's word; ``facts``: fact -> ``{"values", "meaning"}``;
    ``cases``: ``[{"id", "fact", "values", "words", "cards"?, "en", "zh"}]``
    in match order; ``cards``: passcodes a condition may name instead). SchemaError naming the key when the file is malformed."""
    return schemarules.check_rule_policy(_json("rule_policy.json"), _checker("rule_policy.json"))


# --------------------------------------------------------------------------- procedural_rules.json


@lru_cache(maxsize=1)
def rulesets() -> dict:
    """``schema/rulesets.json``: ``{"ocg": {"languages": [...], "url_prefixes": [...]}}``,
    which sources rule on the OCG (:func:`pipeline.compile.other_rulesets`)."""
    return schemarules.check_rulesets(_json("rulesets.json"), _checker("rulesets.json"))


@lru_cache(maxsize=1)
def procedural_grammar() -> dict:
    """``schema/procedural_rules.json`` without its rules: ``triggers``
    (words a record needs before it is read), ``categories``, ``overridden``
    (feature -> features whose overlapping match drops its match), ``words``
    (word groups) and ``patterns`` (feature -> token patterns written as
    strings, :mod:`pipeline.procedural`). Every upper-case name a pattern
    uses is a word group, every feature a category lists has patterns."""
    return schemarules.check_procedural_grammar(_json("procedural_rules.json"), _checker("procedural_rules.json"))


@lru_cache(maxsize=1)
def procedural_rules() -> dict[str, dict]:
    """``schema/procedural_rules.json`` as ``{rule_id: {"id", "summary",
    "readings"}}`` in file order (seeds 000 and 003). A reading is
    ``{"polarity"?, "all", "any"?, "none"?, "near"?}`` over the features of
    :func:`procedural_grammar`; every feature it names has patterns."""
    return schemarules.check_procedural_rules(_json("procedural_rules.json"), _checker("procedural_rules.json"),
                                              procedural_grammar())


@lru_cache(maxsize=1)
def procedural_blocks() -> list[dict]:
    """``schema/procedural_rules.json``'s ``blocks``: ``[{"rules": id prefix
    ('' for every rule), "when": a reading without polarity}]``; a sentence
    satisfying ``when`` states none of those rules (a negated claim, a
    hypothetical, another game format, a Spell or Trap Card's position).
    Every feature ``when`` names has patterns; a prefix matches a rule id."""
    return schemarules.check_procedural_blocks(_json("procedural_rules.json"), _checker("procedural_rules.json"),
                                               procedural_grammar()["patterns"], procedural_rules())


# --------------------------------------------------------------------------- markers.json

@lru_cache(maxsize=1)
def markers() -> dict:
    """``schema/markers.json``: the words and markup that mark page
    structure: ``example_labels`` (a line that is only the label),
    ``example_prefixes`` (a line that starts with one), ``note_headings``,
    ``pending_markers`` (and ``answered_suffixes``, which make one an
    answer: ``调整中确认``), ``clause_delimiters`` (a string of characters),
    ``content_selectors`` (simple CSS selectors, first found wins),
    ``chrome`` (``tags``, ``classes``, ``roles`` of site chrome, and the
    ``keep_classes`` / ``keep_roles`` that make such an element content:
    footnotes are asides), ``chrome_line_patterns`` (regular expressions of
    chrome lines written in the content: navigation, breadcrumbs, footers)
    the footnotes' classes, roles and label classes, and the words that
    make a date one the text refers to (``date_reference_before``: 详见,
    参照; ``date_reference_after``: 的), and ``archetype_suffixes`` (the kind
    words after a 「name」 that make it an archetype: 怪兽, 卡, S怪兽),
    ``token_suffixes`` (the end of a Token's name: 衍生物; no card) and
    ``term_quote_patterns`` (game terms, not cards, in any quote marks:
    「攻击力·守备力」, 『永续魔法』, “战斗阶段”; matched against the quoted
    name's key, ignoring case), and ``exams`` (the ``option`` and answer
    ``key_line`` patterns of an exam page, the ``right_words`` and
    ``wrong_words`` of its questions: :mod:`pipeline.exams`)."""
    data = _json("markers.json")
    check = _checker("markers.json")
    for key in ("example_labels", "example_prefixes", "note_headings", "pending_markers", "answered_suffixes",
                "content_selectors"):
        check.words(data, key)
    if not check.get(data, "clause_delimiters", str):
        check.fail("clause_delimiters", "is empty")
    chrome = check.get(data, "chrome", dict)
    for key in ("tags", "classes", "roles", "keep_classes", "keep_roles"):
        check.words(chrome, key, "chrome")
    for key in ("footnote_classes", "footnote_roles", "footnote_label_classes", "date_reference_before",
                "date_reference_after", "archetype_suffixes", "token_suffixes"):
        check.words(data, key)
    for key in ("chrome_line_patterns", "term_quote_patterns"):
        for i, pattern in enumerate(check.words(data, key)):
            try:
                re.compile(pattern)
            except re.error as exc:
                check.fail(f"{key}[{i}]", f"is not a regular expression: {exc}")
    exams = check.get(data, "exams", dict)
    for key in ("option", "key_line"):
        try:
            re.compile(check.get(exams, key, str, "exams"))
        except re.error as exc:
            check.fail(f"exams.{key}", f"is not a regular expression: {exc}")
    for key in ("right_words", "wrong_words"):
        check.words(exams, key, "exams")
    return data


# --------------------------------------------------------------------------- TSV and other files

OPENCC_FIX_COLUMNS = ("configs", "written", "simplified")
REGIONAL_TERM_COLUMNS = ("canonical", "CN", "TW", "HK")


def tsv_rows(name: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of ``schema/<name>``: ``#`` lines are comments, the first other
    line is the header and must hold every column of ``required``; short
    rows are padded with empty strings."""
    lines = [line for line in _read(name).splitlines() if line.strip() and not line.startswith("#")]
    header = lines[0].split("\t") if lines else []
    missing = [c for c in required if c not in header]
    if missing:
        raise SchemaError(f"header lacks the columns {missing} (has {header})", place=_display(SCHEMA_DIR / name))
    return [dict(zip(header, (line.split("\t") + [""] * len(header))[:len(header)])) for line in lines[1:]]


# The OpenCC configs pipeline.chinese converts with: running text (tw2sp, hk2s, t2s), card names (tw2s).
OPENCC_CONFIGS = ("tw2sp", "tw2s", "hk2s", "t2s")


@lru_cache(maxsize=1)
def opencc_fix_rows() -> tuple[dict[str, str], ...]:
    """``schema/opencc_fixes.tsv``, checked: each row's ``configs`` (comma-separated)
    are configs of :data:`OPENCC_CONFIGS`, ``written`` and ``simplified`` are
    not empty, and no two rows give one written form of one config two
    corrections. SchemaError names the row (``row 3``, counted from the header)."""
    rows = tsv_rows("opencc_fixes.tsv", OPENCC_FIX_COLUMNS)
    check = _checker("opencc_fixes.tsv")
    seen: dict[tuple[str, str], str] = {}
    for i, row in enumerate(rows, start=1):
        configs = [c.strip() for c in row["configs"].split(",")]
        unknown = [c for c in configs if c not in OPENCC_CONFIGS]
        if unknown:
            check.fail(f"row {i}", f"names unknown OpenCC configs {unknown} (known: {', '.join(OPENCC_CONFIGS)})")
        if not row["written"].strip() or not row["simplified"].strip():
            check.fail(f"row {i}", "has an empty written or simplified form")
        for config in configs:
            known = seen.setdefault((config, row["written"]), row["simplified"])
            if known != row["simplified"]:
                check.fail(f"row {i}", f"corrects {row['written']!r} for {config} a second way "
                                       f"({row['simplified']!r}, before: {known!r})")
    return tuple(rows)


@lru_cache(maxsize=1)
def channel_labels() -> dict[str, str]:
    """``schema/channels.tsv``: the yearly logs' block labels (``邮件：``),
    lower-cased, -> channel id."""
    return {row["label"].lower(): row["channel"] for row in tsv_rows("channels.tsv", ("label", "channel"))}


@lru_cache(maxsize=1)
def mediawiki_sites() -> dict[str, str]:
    """``schema/mediawiki_sites.json``: host (``*.`` wildcards allowed) -> API
    URL (``{host}`` is replaced by the page's host)."""
    data = _json("mediawiki_sites.json")
    check = _checker("mediawiki_sites.json")
    sites = {k: v for k, v in data.items() if not k.startswith("_")}
    for host, api in sites.items():
        if not isinstance(api, str) or not api.startswith(("http://", "https://")):
            check.fail(host, "must map to an http(s) API URL")
    return sites


@lru_cache(maxsize=1)
def ddl() -> str:
    """``schema/ddl.sql``, the database schema."""
    return _read("ddl.sql")


# --------------------------------------------------------------------------- simulators/*.json

SIMULATOR_VERDICTS = ("kept", "lost", "not_applicable", "not_modelled")
SIMULATOR_STORAGE = ("summon_info", "status_bits", "effect_reset", "material_list", "counters", "attack_counts",
                     "card_relations", "not_modelled")


@lru_cache(maxsize=1)
def simulators() -> dict[str, dict]:
    """``schema/simulators/*.json``, by simulator id, in the files' ``order``.

    Each file: ``simulator`` (its id, the file's stem), ``order`` (an
    integer: where the simulator comes in listings), ``name``,
    ``repository``, ``commit`` (40 hex digits), ``licence``; ``evidence``
    (id -> ``{"file", "line", "lines"}``: the pinned source's lines from
    ``line`` on, leading whitespace removed); ``events`` (each event of the
    vocabulary -> ``{"applies", "evidence"}``: the resets it applies);
    ``kinds`` (each info kind of the vocabulary -> ``{"storage", "where",
    "verdicts"}``, ``verdicts`` mapping each event to ``{"verdict",
    "evidence", "note"}``). Verdicts are those of :data:`SIMULATOR_VERDICTS`
    (``not_modelled``: the core keeps no such information), storage one of
    :data:`SIMULATOR_STORAGE`; every evidence id named must exist and every
    verdict cites at least one. SchemaError names the file and key."""
    folder = SCHEMA_DIR / "simulators"
    names = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
    if not names:
        raise SchemaError("no simulator files (simulators/*.json)", place=_display(folder))
    kinds, events_ = info_kinds(), events()
    out = {}
    for name in names:
        data = _json(f"simulators/{name}")
        sim = schemavocab.check_simulator(data, _checker(f"simulators/{name}"), name, kinds, events_,
                                          SIMULATOR_VERDICTS, SIMULATOR_STORAGE)
        out[sim] = data
    return dict(sorted(out.items(), key=lambda item: (item[1]["order"], item[0])))


def check_all() -> None:
    """Load and validate every schema file; raises SchemaError for the first
    problem. Costs a few milliseconds (each file is read once per process)."""
    vocabulary(), retention_terms(), retention_terms_en(), procedural_grammar(), procedural_rules(), markers(), channel_labels()
    rulesets()
    mediawiki_sites(), ddl(), scenario_format()
    opencc_fix_rows(), tsv_rows("regional_terms.tsv", REGIONAL_TERM_COLUMNS)
    simulators()
    card_text_terms()
