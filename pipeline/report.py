"""``rulings report``: the database as a static site for people to browse.

Reads a database ``rulings build`` wrote (read-only) and writes plain files
that open from disk or any static server, with nothing fetched at view time:

A ruling printed on several pages (the same text, dates and spacing aside:
:func:`pipeline.compile.text_key`) is one :class:`~pipeline.reportdata.Entry`, shown once with all
its places; counts count entries.

* ``index.html``: the rules matrix, info kinds (rows, in the display groups
  of ``schema/vocabulary.json``) x events (columns), headers in words in
  English and Chinese, each cell its verdict (colour and a symbol with
  words, so colour is never the only cue), the number of supporting
  rulings, the latest date and the rule as a sentence (:func:`~pipeline.reportwords.rule_sentence`);
* ``rules/KIND--EVENT.html``: a rule as a sentence in both languages, a
  conditional one by case, a strip of its rulings by date (:func:`~pipeline.reportcharts.rule_strip`,
  SVG), every cited ruling once, labelled with what it says;
* ``cards/PASSCODE.html``: a card's names in each language, the rules its
  rulings support and its rulings, newest first; ``cards.html`` lists the
  cards, ``archetypes.html`` the archetypes (quoted families such as
  「女武神」怪兽);
* ``sources/SOURCE.html``: every current ruling of a page by section (the
  place search results and the change history link to); ``sources.html``:
  every source with its licence; ``procedural.html``: the procedural rules
  with the rulings that state them;
* ``timeline.html``: dated rulings per month, one strip per source
  (:func:`~pipeline.reportcharts.month_chart`); ``history.html``: the runs and what each added,
  changed or retired, linking to ``runs/RUN.html``;
* ``search.html`` with ``assets/search-index.js``: client-side search over
  rules, card names (every language) and ruling text, either Chinese script
  (OpenCC's character table, :func:`pipeline.chinese.character_map`).
* ``simulators.html``: the rulings against the simulator cores
  (:mod:`pipeline.simulators`), disagreements first with the cited lines of
  each core's source, then every (kind, event) pair.

Pages are rendered with Jinja2 templates (``pipeline/templates/report/``)
with autoescaping on: ruling text is a stranger's text and is only ever
rendered as text. Links to other sites are kept only when they are http(s).

The site is written into a new folder beside DIR and swapped in
(:func:`write_report`, by :mod:`pipeline.reportfolder`); ``DIR/.rulings-report``
lists the files it wrote, the only files a later report replaces.

The modules of the report: :mod:`pipeline.reportdata` reads the database,
:mod:`pipeline.reportwords` says ids in words, :mod:`pipeline.reportcharts`
draws the charts, :mod:`pipeline.reportfolder` keeps the folder safe; this
module renders the pages (:func:`write_report`: a database path and a
folder -> :class:`ReportSummary`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import defaultdict
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from . import queries, simulators
from .cards import card_names
from .chinese import character_map
from .errors import UsageError
from .reportcharts import STRIP_H, STRIP_W, month_chart, rule_strip
from .reportdata import (Entry, Ruling, cited_entries, entries, read_archetypes, read_build_info, read_history,
                         read_rules, read_rulings, read_sources, read_stated, text_segments)
from .reportfolder import (SITE_FILE, carry_over, check_target, clean_leftovers, make_staging, swap_in, target_folder,
                           write_manifest)
from .reportwords import external_url, matrix, rule_file, rule_sentence, slug, verdict_badge, words
from .schema import events as vocabulary_events
from .schema import procedural_rules, vocabulary
from .schema import simulators as schema_simulators

TEMPLATES = Path(__file__).resolve().parent / "templates" / "report"
SEARCH_TEXT_CHARS = 240  # ruling text kept per entry of the search index


@dataclass
class ReportSummary:
    """What :func:`write_report` wrote: page counts and seconds taken."""

    out_dir: Path
    rules: int
    cards: int
    archetypes: int
    sources: int
    runs: int
    files: int
    seconds: float

    def as_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "rules": self.rules, "cards": self.cards,
                "archetypes": self.archetypes, "sources": self.sources, "runs": self.runs,
                "files": self.files, "seconds": round(self.seconds, 2)}


def search_index(rulings: list[Entry], cards: dict[int, dict[str, str]], rules: dict) -> dict:
    """The client-side search index: ``{"fold": [traditional, simplified],
    "cards": [[passcode, [names]]], "rulings": [[record_id, href, text,
    places]], "rules": [[href, verdict, sentence_en, sentence_zh, words]]}``.
    ``fold``: two strings of equal length, OpenCC's Traditional to
    Simplified characters (:func:`pipeline.chinese.character_map`), which
    the page applies to the query and the texts alike, so either script
    finds both. Each ruling once (its text cut to SEARCH_TEXT_CHARS),
    linking to the place shown in full."""
    fold = character_map("t2s")
    w = words()
    rule_rows = []
    for (kind, event), rule in sorted(rules.items()):
        said = rule_sentence(kind, event, rule["verdict"])
        extra = [kind, event, kind.replace("_", " "), event.replace("_", " "), w["kinds"][kind]["meaning"],
                 w["kinds"][kind]["zh"], w["events"][event]["en"], w["events"][event]["zh"],
                 w["verdicts"][rule["verdict"]]["en"], w["verdicts"][rule["verdict"]]["zh"],
                 *(f"{c['en']} {c['zh']}" for c in rule["cases"])]
        rule_rows.append([f"rules/{rule_file(kind, event)}", rule["verdict"], said["en"], said["zh"], " ".join(extra)])
    return {
        "fold": ["".join(fold), "".join(fold.values())],
        "cards": [[passcode, sorted(set(names.values()))] for passcode, names in sorted(cards.items())],
        "rulings": [[e.record_id, f"sources/{slug(e.ruling.source_id)}.html#{e.record_id}",
                     e.ruling.text[:SEARCH_TEXT_CHARS], len(e.places)] for e in rulings],
        "rules": rule_rows,
    }


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      auto_reload=False)  # one run: no mtime check per render
    env.globals.update(verdict_badge=verdict_badge, segments=text_segments, slug=slug,
                       rule_file=rule_file, rule_sentence=rule_sentence, words=words(),
                       strip_w=STRIP_W, strip_h=STRIP_H)
    env.filters["external_url"] = external_url
    return env


class _Writer:
    def __init__(self, out_dir: Path, sources: dict):
        self.out_dir = out_dir
        self.env = _environment()
        self.sources = sources
        self.files = 0
        self.written: set[str] = set()  # paths relative to out_dir, as SITE_FILE allows
        self.card_pages = self.source_pages = 0
        self._fragments: dict[tuple[str, str], Markup] = {}

    def page(self, rel: str, template: str, **context) -> None:
        root = "../" * rel.count("/")
        html = self.env.get_template(template).render(
            root=root, sources=self.sources, ruling_html=lambda ruling: self.fragment(ruling, root),
            entry_html=lambda entry: self.entry_fragment(entry, root), **context)
        self.write(rel, html)

    def fragment(self, ruling: Ruling, root: str) -> Markup:
        """A ruling's text and facts, rendered once per link depth (a ruling
        shows on its source page and on the page of every card it names)."""
        key = (ruling.record_id, root)
        html = self._fragments.get(key)
        if html is None:
            html = self._fragments[key] = Markup(self.env.get_template("_ruling.html.j2").render(
                root=root, sources=self.sources, ruling=ruling))
        return html

    def entry_fragment(self, entry: Entry, root: str) -> Markup:
        """A ruling shown once: its place in full, then its other places
        (page, section and dates, each linking to the ruling there)."""
        html = self.fragment(entry.ruling, root)
        if len(entry.places) < 2:
            return html
        key = ("places:" + entry.record_id, root)
        if key not in self._fragments:
            self._fragments[key] = Markup(self.env.get_template("_places.html.j2").render(
                root=root, places=entry.places[1:]))
        return html + self._fragments[key]

    def write(self, rel: str, text: str) -> None:
        """Write ``rel`` (a name :data:`SITE_FILE` allows) under the staging folder, as a new file."""
        if not SITE_FILE.fullmatch(rel) or rel in self.written:
            raise ValueError(f"the report would write {rel!r}, which is not one of its file names")
        path = self.out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as fh:  # the folder is new: nothing there to follow or replace
            fh.write(text)
        self.written.add(rel)
        self.files += 1


EFFECT_EVENTS = ("face_down", "temp_banish", "flip_face_up")


def write_report(db_path: Path, out_dir: Path | str, engine=None) -> ReportSummary:
    """Write the static site for the database at ``db_path`` at ``out_dir``:
    a new or empty folder, or one an earlier report wrote (:data:`pipeline.reportfolder.MARKER`).
    The site is written into a new folder beside it and swapped in (one
    atomic exchange on Linux), so an interrupted report leaves the previous
    site whole; the previous site's files are removed, every other entry of
    the folder is kept (:func:`pipeline.reportfolder.carry_over`). LoadError when there is no
    database; UsageError, with nothing touched, for an empty DIR, a file, a
    folder that is no report's site, or one of the folder's own files where
    the new site writes one. ``engine``: the generated engine module, whose
    ``card_answer`` gives each card page the table of its effects after the
    three events (none without it)."""
    started = time.perf_counter()
    out_dir = target_folder(str(out_dir))
    clean_leftovers(out_dir)
    ours = check_target(out_dir)
    with closing(queries.connect(db_path)) as con:
        rulings = read_rulings(con)
        rules = read_rules(con)
        history = read_history(con)
        archetypes = read_archetypes(con)
        sources = read_sources(con)
        built = read_build_info(con)
        compared = simulators.comparison(con)
        stated = read_stated(con)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging, lock = make_staging(out_dir)
    except OSError as exc:
        raise UsageError(f"cannot write beside {out_dir} (the site is written into a new folder in "
                         f"{out_dir.parent} and swapped in): {exc.strerror or exc}", place="DIR") from None
    try:
        w = _Writer(staging, sources)
        _write_site(w, rulings, rules, history, archetypes, sources, built, stated, engine)
        _write_simulators(w, compared, built)
        write_manifest(staging, w.written)
        if ours is not None:
            carry_over(out_dir, staging, ours)
        previous = swap_in(staging, out_dir)
        shutil.rmtree(previous, ignore_errors=True)
    finally:
        if os.path.lexists(staging):
            shutil.rmtree(staging, ignore_errors=True)
        if lock is not None:
            os.close(lock)
    return ReportSummary(out_dir, len(rules), w.card_pages, len(archetypes), w.source_pages, len(history),
                         w.files, time.perf_counter() - started)


def _card_effects(engine, passcodes) -> dict[int, list[dict]]:
    """Each card's effects after the three events (pipeline/cardask.py), from the engine's card table."""
    if engine is None or not hasattr(engine, "card_answer"):
        return {}
    from .cardask import table_summaries

    return table_summaries(engine, sorted(passcodes))


def _write_site(w: _Writer, rulings: dict[str, Ruling], rules: dict, history: list[dict], archetypes: list[dict],
                sources: dict, built: dict, stated: dict[str, list[str]], engine=None) -> None:
    """Every page and asset of the site, through ``w``; sets
    ``w.card_pages`` and ``w.source_pages``. ``stated``: the record ids
    stating each procedural rule (table ``procedural_rules``)."""
    names = card_names()
    every: dict[str, list[Ruling]] = defaultdict(list)  # each ruling's places
    for ruling in rulings.values():
        every[ruling.key].append(ruling)
    all_entries = entries(list(rulings.values()), every)
    by_card: dict[int, list[Ruling]] = defaultdict(list)
    for ruling in rulings.values():
        for passcode in dict.fromkeys(p for _, p in ruling.cards):
            by_card[passcode].append(ruling)
    cards = {p: names.get(p, {}) for p in by_card}
    common = {"built": built}

    cited = {pair: cited_entries(rule, rulings, every) for pair, rule in rules.items()}
    supports = {pair: sum(c["role"] == "supports" for c in cs) for pair, cs in cited.items()}
    supported_by: dict[str, list[tuple[str, str]]] = defaultdict(list)  # record id -> rules it supports
    for pair, rule in sorted(rules.items()):
        for c in rule["citations"]:
            if c["role"] == "supports" and pair not in supported_by[c["record_id"]]:
                supported_by[c["record_id"]].append(pair)
    all_dates = [c["date"][:7] for cs in cited.values() for c in cs if c["date"]]
    first, last = (min(all_dates), max(all_dates)) if all_dates else ("2000-01", "2000-01")

    w.page("index.html", "index.html.j2", groups=matrix(rules, supports), events=vocabulary_events(),
           verdicts=[v["id"] for v in vocabulary()["verdicts"]],
           counts=_counts(all_entries, rules, cards), **common)
    for (kind, event), rule in sorted(rules.items()):
        its = cited[(kind, event)]
        w.page(f"rules/{rule_file(kind, event)}", "rule.html.j2", kind=kind, event=event, rule=rule,
               citations=its, strip=rule_strip(rule, its, first, last),
               sentence=rule_sentence(kind, event, rule["verdict"]),
               case_sentences=[rule_sentence(kind, event, c["verdict"], c) for c in rule["cases"]], **common)
    card_counts = {}
    effects = _card_effects(engine, by_card)
    for passcode, its in by_card.items():
        shown = sorted(entries(its, every), key=lambda e: (e.latest, e.record_id), reverse=True)
        card_counts[passcode] = len(shown)
        its_rules = list(dict.fromkeys(pair for r in its for pair in supported_by.get(r.record_id, [])))
        its_rules = [{"kind": k, "event": e, "verdict": rules[(k, e)]["verdict"],
                      "sentence": rule_sentence(k, e, rules[(k, e)]["verdict"])} for k, e in sorted(its_rules)]
        w.page(f"cards/{passcode}.html", "card.html.j2", passcode=passcode, names=cards[passcode],
               rulings=shown, rules=its_rules, effects=effects.get(passcode, []), effect_events=EFFECT_EVENTS,
               **common)
    card_list = sorted(({"passcode": p, "name": _display_name(cards[p], p), "count": card_counts[p]}
                        for p in by_card), key=lambda c: (-c["count"], c["name"]))
    w.page("cards.html", "cards.html.j2", cards=card_list, **common)
    w.page("archetypes.html", "archetypes.html.j2", archetypes=archetypes, rulings=rulings, **common)
    by_source: dict[str, list[Ruling]] = defaultdict(list)
    for ruling in rulings.values():
        by_source[ruling.source_id].append(ruling)
    for source_id, its in by_source.items():
        w.page(f"sources/{slug(source_id)}.html", "source.html.j2", source=sources.get(source_id, {
            "source_id": source_id, "url": "", "language": "", "licence": ""}), rulings=its, **common)
    w.page("sources.html", "sources.html.j2", source_list=[
        dict(s, rulings=len(by_source.get(sid, [])), shown=sid in by_source) for sid, s in sorted(sources.items())],
        **common)
    procedural = [dict(rule, entries=entries([rulings[r] for r in stated.get(rule_id, []) if r in rulings], every))
                  for rule_id, rule in procedural_rules().items()]
    w.page("procedural.html", "procedural.html.j2", rules=procedural, **common)
    w.page("timeline.html", "timeline.html.j2", chart=month_chart(all_entries), **common)
    w.page("history.html", "history.html.j2", runs=history, **common)
    for run in history:
        w.page(f"runs/{run['run_id']}.html", "run.html.j2", run=run, rulings=rulings, **common)
    w.page("search.html", "search.html.j2", **common)
    w.write("assets/search-index.js", "window.RULINGS_SEARCH = "
            + json.dumps(search_index(all_entries, cards, rules), ensure_ascii=False, separators=(",", ":")) + ";\n")
    for asset in ("style.css", "search.js"):
        w.write(f"assets/{asset}", (TEMPLATES / asset).read_text(encoding="utf-8"))
    w.card_pages, w.source_pages = len(by_card), len(by_source)


def _write_simulators(w: _Writer, rows: list[dict], built: dict) -> None:
    """``simulators.html``: the rulings against the simulator cores
    (:func:`pipeline.simulators.compare` rows), disagreements first with the
    cited lines of each core's source, then every pair."""
    tallies: dict[str, dict[str, int]] = {}
    for row in rows:
        for sid, s in row["simulators"].items():
            tally = tallies.setdefault(sid, {"agree": 0, "disagree": 0, "none": 0})
            tally["none" if s["agrees"] is None else "agree" if s["agrees"] else "disagree"] += 1
    disagreements = [r for r in rows if any(s["agrees"] is False for s in r["simulators"].values())]
    w.page("simulators.html", "simulators.html.j2", rows=rows, disagreements=disagreements, tallies=tallies,
           sims=schema_simulators(), built=built)


def _display_name(names: dict[str, str], passcode: int) -> str:
    return names.get("zh-CN") or names.get("zh-community") or names.get("en") or str(passcode)


def _counts(rulings: list[Entry], rules: dict, cards: dict) -> dict:
    return {"rulings": len(rulings), "dated": sum(bool(e.latest) for e in rulings),
            "rules": len(rules), "known": sum(r["verdict"] != "unknown" for r in rules.values()),
            "cards": len(cards)}
