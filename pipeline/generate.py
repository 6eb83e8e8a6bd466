"""Stage 4, generate: the rules table -> a standalone Python engine module.

The module is the compiled tables written as Python literals, followed by the
runtime of ``engine/runtime.py`` (standard library only). It is
deterministic: every table is sorted before writing and no timestamp is
written, so the same corpus gives the same bytes; its header names the
generator version and a SHA-256 hash over the sorted JSON of the tables.

Scraped text (ruling text, section names, URLs) enters the module only
through ``repr`` of ``str`` objects, which always yields an escaped literal
(quotes, backslashes, newlines, NUL, U+2028 and bidi marks included): it is
data, never code. The module is written to a temporary file and renamed, so
an interrupted build leaves the previous module intact.

The same tables in JSON, as an ES module and as TypeScript declarations are
rendered by :mod:`pipeline.enginejs`; :func:`engine_parts` gives every file's
text in parts, and :func:`stage_engines` / :func:`commit_engines` write them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from . import __version__
from .compile import ProceduralRule, Rule
from .enginejs import render_dts, render_js_parts, render_json, runtime_code
from .enginefile import ENGINE_HASH_LINE, engine_rules_hash  # noqa: F401 (re-exported: the stamp's reader)
from .errors import GenerateError, UsageError
from .paths import PROJECT_ROOT
from .records import Record, excerpt
from .schema import events, info_kinds, procedural_rules, scenario_format, vocabulary
from .stopping import deferred, remove, temp_path, untrack

RUNTIME = PROJECT_ROOT / "engine" / "runtime.py"
RUNTIME_CARDS = PROJECT_ROOT / "engine" / "runtime_cards.py"  # card_answer, copied after the runtime
MARKER = "# ==== RUNTIME ====\n"


def vocabulary_tables() -> dict:
    """The vocabulary the engine's runtime uses, from ``schema/vocabulary.json``
    and ``schema/procedural_rules.json``: kinds, events, the scenario tables
    (kinds each scenario event gives, take_control modes, this-turn kinds),
    every procedural rule id (stated by the corpus or not), and the scenario
    format of ``schema/scenario.schema.json`` that ``validate()`` checks."""
    scenario = vocabulary()["scenario"]
    fmt = scenario_format()
    return {
        "INFO_KINDS": tuple(sorted(info_kinds())),
        "EVENTS": tuple(sorted(events())),
        "SUMMON_KINDS": {m: tuple(k) for m, k in sorted(scenario["summon_methods"].items())},
        "GAINS": {do: tuple(k) for do, k in sorted(scenario["gains"].items())},
        "CONTROL_KINDS": dict(sorted(scenario["take_control_modes"].items())),
        "THIS_TURN_KINDS": tuple(sorted(scenario["this_turn_kinds"])),
        "RETENTION_EVENTS": dict(sorted(scenario["retention_events"].items())),
        "PROCEDURAL_IDS": tuple(sorted(procedural_rules())),
        # schema/scenario.schema.json, flat: do / question -> field -> (required, allowed values or type)
        "SCENARIO_EVENTS": {do: dict(sorted(fields.items())) for do, fields in fmt["events"].items()},
        "SCENARIO_QUESTIONS": {q: dict(sorted(fields.items())) for q, fields in fmt["questions"].items()},
    }


MAX_CITED = 25  # supporting records an engine rule cites at most (the newest); the database keeps all


def _newest(record_ids, record_dates, limit: int = MAX_CITED) -> list[int]:
    """Positions of the ``limit`` records with the latest dates (undated
    last, then by id), in their original order."""
    if len(record_ids) <= limit:
        return list(range(len(record_ids)))
    ranked = sorted(range(len(record_ids)), key=lambda i: (max(record_dates[i], default=""), record_ids[i]),
                    reverse=True)
    return sorted(ranked[:limit])


def engine_tables(rules: list[Rule], procedural: list[ProceduralRule], records: list[Record],
                  sources: dict[str, tuple[str, str]], texts: Callable[[list[str]], dict[str, str]] | None = None
                  ) -> dict:
    """The data the engine embeds, as plain sorted structures: the
    :func:`vocabulary_tables`, ``RULES`` (one row per kind and event),
    ``CITATIONS`` (record id -> source, dates, section, text excerpt),
    ``SOURCES`` (source id -> URL, licence) and ``PROCEDURAL`` (rule id ->
    summary, record ids, dates).

    Its size does not grow with the corpus beyond the rules: a rule cites at
    most :data:`MAX_CITED` supporting records (the newest), an overridden
    verdict and a procedural rule list at most that many record ids (the
    first by id; they carry no per-record dates); the database's
    ``rules.record_ids`` and ``rule_citations`` keep them all. A citation's text is cut to
    :data:`~pipeline.records.EXCERPT_CHARS` characters (``rulings show ID``
    prints the whole ruling). ``texts``: where the cited records' texts
    come from (record ids -> texts) when ``records`` are slim copies without
    them (a build reads them back from the database it writes); by default
    the records' own."""
    rule_rows, cited = [], set()
    for r in sorted(rules, key=lambda r: (r.info_kind, r.event)):
        record_dates = [tuple(c.dates) for c in r.citations if c.role == "supports"]
        keep = _newest(r.record_ids, record_dates)
        ids = tuple(r.record_ids[i] for i in keep)
        conflicts = tuple({"latest_date": c["latest_date"], "record_ids": tuple(c["record_ids"][:MAX_CITED]),
                           "verdict": c["verdict"]} for c in r.conflicts)
        disputed_by = tuple(r.disputed_by[:MAX_CITED])
        cases = tuple({"case": c.case_id, "fact": c.fact, "values": tuple(c.values), "verdict": c.verdict,
                       "record_ids": tuple(c.record_ids[:MAX_CITED])} for c in r.cases)
        cited.update(ids, disputed_by, *(c["record_ids"] for c in cases))
        rule_rows.append((r.info_kind, r.event, r.verdict, r.condition, r.latest_date, r.changed_on, tuple(r.dates),
                          ids, conflicts, tuple(record_dates[i] for i in keep), disputed_by, cases))
    procedural_rows = {}
    for p in sorted(procedural, key=lambda p: p.rule_id):
        ids = tuple(p.record_ids[:MAX_CITED])
        cited.update(ids)
        procedural_rows[p.rule_id] = (p.summary, ids, p.dates)
    by_id = {r.id: r for r in records}
    text_of = texts(sorted(cited)) if texts is not None else {rid: by_id[rid].text for rid in cited}
    citations = {}
    for rid in sorted(cited):
        rec = by_id[rid]
        citations[rid] = (rec.source_id, rec.valid_dates, " / ".join(rec.section), excerpt(text_of[rid]))
    used_sources = sorted({c[0] for c in citations.values()})
    return {
        **vocabulary_tables(),
        "RULES": tuple(rule_rows),
        "CITATIONS": citations,
        "SOURCES": {sid: sources.get(sid, ("", "")) for sid in used_sources},
        "PROCEDURAL": procedural_rows,
    }


def rules_hash(tables: dict) -> str:
    """SHA-256 (hex) of the sorted JSON of ``tables``: the engine's stamp."""
    payload = json.dumps(tables, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _literal(value) -> str:
    """A Python literal, one top-level entry per line; ``repr`` escapes all text."""
    if isinstance(value, dict):
        body = "".join(f"    {k!r}: {v!r},\n" for k, v in value.items())
        return "{\n" + body + "}"
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return "(\n" + "".join(f"    {v!r},\n" for v in value) + ")"
    return repr(value)


PLAIN_TYPES = (str, int, float, bool, type(None))


def _check_plain(name: str, value) -> None:
    """Raise GenerateError unless ``value`` is built of str, int, float,
    bool, None, tuples and dicts only: the ``repr`` of such a value is a
    literal that parses back to it, whatever text it holds (a date object or
    a list would not be, or not immutably)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif not isinstance(item, PLAIN_TYPES):
            raise GenerateError(f"engine table {name} holds a {type(item).__name__}, not a plain literal",
                                place="pipeline/generate.py")


def render(tables: dict, digest: str | None = None, cards: str = "") -> str:
    """The module's source text (:func:`render_parts`, joined)."""
    return "".join(render_parts(tables, digest, cards))


def render_parts(tables: dict, digest: str | None = None, cards: str = "") -> Iterator[str]:
    """The module's source text in parts, to be written one after the other
    (:func:`stage_engine`): the card table's literal, the largest part
    (about 10 MB at 8,000 pages), is made in pieces as it is written, never
    held whole beside the rest. Stamped with ``digest``, the
    :func:`rules_hash` of ``tables`` (computed when not given: callers that
    already have it save hashing the tables twice). Raises GenerateError,
    here and not while the parts are read, for a table that is not a plain
    literal or a module whose code does not parse.

    Only the code (header and runtime, with the tables stubbed) is compiled
    to check it: compiling the data too would cost about 30 times the
    module's size in memory (about 0.5 GB for a 17 MB engine), and the data
    is checked by :func:`_check_plain` instead.
    """
    code = runtime_code((RUNTIME, RUNTIME_CARDS), MARKER)
    for name, value in tables.items():
        _check_plain(name, value)
    digest = digest or rules_hash(tables)
    header = (
        '"""OCG information-retention and battle rules engine: GENERATED, do not edit.\n\n'
        f"Generator: rulings {__version__} (pipeline/generate.py)\n"
        f"Rules hash: sha256:{digest}\n\n"
        "Built from the rulings corpus; every answer cites the ruling records and\n"
        "dates behind it. Standard library only: copy this one file into another\n"
        "tool and use retains(), answer(), answer_all(), citation() and card_answer().\n"
        '"""\n\n'
        "from __future__ import annotations\n\n"
        f"GENERATOR = {('rulings ' + __version__)!r}\n"
        f"RULES_HASH = {digest!r}\n\n"
    )
    stubs = "".join(f"{name} = None\n\n" for name in (*tables, "CARD_TABLE"))
    try:
        compile(header + stubs + code, "<generated engine>", "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: NUL bytes in the source
        raise GenerateError(f"generated module does not parse: {exc}", place=str(RUNTIME)) from exc
    return _module_parts(header, tables, cards, code)


def _module_parts(header: str, tables: dict, cards: str, code: str) -> Iterator[str]:
    yield header
    yield "".join(f"{name} = {_literal(value)}\n\n" for name, value in tables.items())
    # The card table (pipeline/cardengine.py) as one string literal (repr escapes all text), parsed by
    # card_answer on first use; it is not part of the rules hash.
    yield "CARD_TABLE = "
    yield from str_literal_parts(cards)
    yield "\n\n"
    yield code


PART_CHARS = 1 << 20  # characters of a long text escaped at a time (str_literal_parts, enginejs.json_string_parts)


def str_literal_parts(text: str, size: int = PART_CHARS) -> Iterator[str]:
    """``repr(text)`` in parts of about ``size`` characters of ``text`` each
    (joined: the same characters). ``repr`` escapes each character on its
    own, given the quote, which it takes from the whole text: ``'`` unless
    the text holds ``'`` and no ``"``. A piece's own ``repr`` is made to
    take that quote by adding both quotes to it (``'"``), whose escapes are
    cut off again."""
    if len(text) <= size or ("'" in text and '"' not in text):
        yield repr(text)  # short, or quoted with ": one piece
        return
    yield "'"
    for start in range(0, len(text), size):
        yield repr(text[start:start + size] + "\"'")[1:-4]  # cut off: the two quotes' escapes, the closing quote
    yield "'"


def engine_paths(path: Path) -> dict[str, Path]:
    """The generated files of an engine written to ``path``: ``py`` (path
    itself), ``json``, ``mjs`` and ``dts`` beside it (``ocg_rules.py`` ->
    ``ocg_rules.json``, ``ocg_rules.mjs``, ``ocg_rules.d.mts``: the name TypeScript looks for beside
    an ``.mjs`` module; a ``.d.ts`` would be ignored there)."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix == ".py" else path
    return {"py": path, "json": stem.with_name(stem.name + ".json"), "mjs": stem.with_name(stem.name + ".mjs"),
            "dts": stem.with_name(stem.name + ".d.mts")}


# How each generated file starts (what :func:`render`, :func:`render_json` and :func:`render_js`
# write, by every version of the generator): a file is replaced only when it starts so. The rules
# hash after these lines is not checked: a stale or damaged engine is still the generator's file.
GENERATED_HEAD = {
    "py": re.compile(r'\A"""OCG information-retention and battle rules engine: GENERATED, do not edit\.\n\n'
                     r"Generator: rulings [^\n]*\nRules hash: "),
    "json": re.compile(r'\A\{\n(?: "\$schema": "[^"\n]*",\n)? "format": "ocg-rules",\n "format_version": \d+,\n'
                       r' "generator": "rulings [^"\n]*",\n "rules_hash": '),
    "mjs": re.compile(r"\A// OCG information-retention and battle rules engine: GENERATED, do not edit\.\n"
                      r"// Generator: rulings [^\n]*\n// Rules hash: "),
}
GENERATED_HEAD["dts"] = GENERATED_HEAD["mjs"]  # the same comment lines
HEAD_BYTES = 512  # the longest header above is under 300 bytes


def is_generated(path: Path, key: str) -> bool:
    """Whether the file at ``path`` (followed if a symlink) starts with the
    header the generator writes for ``key`` (``py``, ``json`` or ``mjs``).
    OSError when it cannot be read."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    return bool(GENERATED_HEAD[key].match(head.decode("utf-8", errors="replace")))


def check_replaceable(path: Path) -> None:
    """Before a build or refresh reads any page: UsageError (``--engine-out``)
    naming the first of the engine files of ``path`` (:func:`engine_paths`)
    that exists and is not one this generator wrote (its header), is not a
    regular file, or cannot be read; the build would replace it. Missing and
    empty files may be written. A symlink is judged by its target (the
    rename replaces the link, never writes the target)."""
    for key, file in engine_paths(path).items():
        if not os.path.lexists(file):
            continue
        what = {"py": "engine module", "json": "engine's JSON tables", "mjs": "engine's ES module",
                "dts": "engine's TypeScript declarations"}[key]
        try:
            if not os.path.isfile(file):
                raise UsageError(f"{file} exists and is not a regular file; the build writes the {what} there "
                                 "(give another --engine-out)", place="--engine-out")
            if os.path.getsize(file) == 0 or is_generated(file, key):
                continue
        except OSError as exc:
            raise UsageError(f"{file} cannot be read to check that `rulings build` generated it "
                             f"({exc.strerror or exc}); the build would replace it", place="--engine-out") from None
        raise UsageError(f"{file} exists and is not a generated engine file (no `rulings build` header); the build "
                         f"would replace it with the {what} (give another --engine-out or remove the file)",
                         place="--engine-out")


def engine_parts(tables: dict, digest: str, cards: str = "") -> dict[str, Callable[[], Iterable[str]]]:
    """The engine files, keyed as :func:`engine_paths`, each a function
    giving the file's text in parts (:func:`render_parts`), made only when
    called: :func:`stage_engines` writes one file after the other, so no
    two files' texts (20 to 40 MB each at 8,000 pages) are held at once.
    ``cards``: the card table's JSON text
    (:func:`pipeline.cardengine.card_table_text`), embedded in the Python
    and JavaScript modules."""
    return {"py": lambda: render_parts(tables, digest, cards), "json": lambda: (render_json(tables, digest),),
            "mjs": lambda: render_js_parts(tables, digest, cards), "dts": lambda: (render_dts(tables, digest),)}


# What an engine write that fails says of the outputs, before the database is replaced (a build's case).
KEPT = "the previous database and engine stay"


def stage_engines(path: Path, parts: Mapping[str, Callable[[], Iterable[str]]],
                  kept: str = KEPT) -> list[tuple[Path, Path]]:
    """Stage every engine file (:func:`stage_engine`) from the function
    giving its parts (:func:`engine_parts`, called as the file is written);
    returns (staged, final) pairs, the Python module last, for
    :func:`commit_engines`. GenerateError naming the file when one cannot
    be written (``kept`` says what stays) or rendered, the files staged so
    far removed."""
    staged: list[tuple[Path, Path]] = []
    try:
        for key, final in sorted(engine_paths(path).items(), key=lambda kv: kv[0] == "py"):
            staged.append((stage_engine(final, parts[key](), kept), final))
    except BaseException:
        discard_engines(staged)
        raise
    return staged


def commit_engines(staged: list[tuple[Path, Path]], kept: str = KEPT) -> None:
    """Rename the staged files into place, the Python module (whose stamp a
    refresh checks) last. GenerateError naming the file when a rename
    fails (``kept``: what stays); the files not renamed are removed."""
    for i, (tmp, final) in enumerate(staged):
        try:
            commit_engine(tmp, final, kept)
        except BaseException:
            discard_engines(staged[i + 1:])
            raise


def discard_engines(staged: list[tuple[Path, Path]]) -> None:
    for tmp, _final in staged:
        discard_engine(tmp)


def write_engine(path: Path, source: str) -> None:
    """Write atomically: temporary file in the same folder, then rename."""
    commit_engine(stage_engine(path, source), path)


def stage_engine(path: Path, source: str | Iterable[str], kept: str = KEPT) -> Path:
    """Write ``source`` (from :func:`render`, which checks that it parses;
    or its parts, each written as it comes) to
    a temporary file beside ``path`` and return it; :func:`commit_engine`
    renames it over ``path``. The temporary file is named and tracked
    (:mod:`pipeline.stopping`) before it exists, so a stop at any line
    removes it. GenerateError naming ``path`` when the file cannot be
    written (a full disk), ``kept`` saying what stays."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with deferred():  # a stop signal waits until the file is known to the cleanup below
            tmp = temp_path(path.parent, f".{path.name}.", ".tmp")
            fh = os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644),
                           "w", encoding="utf-8", newline="\n")
        with fh:
            for part in (source,) if isinstance(source, str) else source:
                fh.write(part)
            fh.flush()
            os.fsync(fh.fileno())  # the rename must never expose an empty file after a power cut
        os.chmod(tmp, 0o644)  # the module is meant to be read by other tools, whatever the umask
    except BaseException as exc:
        if tmp is not None:
            discard_engine(tmp)
        if isinstance(exc, OSError):
            raise _engine_error("cannot write the engine file", exc, path, kept) from exc
        raise
    return tmp


def commit_engine(staged: Path, path: Path, kept: str = KEPT) -> None:
    """Rename a staged module over ``path`` (atomic on one file system)."""
    try:
        with deferred():
            os.replace(staged, path)
            untrack(staged)
    except BaseException as exc:
        discard_engine(staged)
        if isinstance(exc, OSError):
            raise _engine_error("cannot put the new engine file in place", exc, path, kept) from exc
        raise


def discard_engine(staged: Path) -> None:
    """Remove a staged module that will not be committed; never raises."""
    remove(staged)


def _engine_error(what: str, exc: OSError, path: Path, kept: str) -> GenerateError:
    """One line: what failed, the engine file it was for, the system's words, what stays."""
    return GenerateError(f"{what}: {exc.strerror or exc}; {kept}", place=str(path))
