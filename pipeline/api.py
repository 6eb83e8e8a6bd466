"""The Python API over a built database: what ``rulings ask``, ``card``,
``show``, ``changes`` and ``sql`` print, as plain values, for bots and
notebooks (no subprocess, no SQL to write, one connection for many calls)::

    from pipeline.api import Rulings

    with Rulings() as db:                       # the database `rulings build` wrote, or Rulings("path/to.duckdb")
        db.ask("synchro_summoned", "face_down")["verdict"]          # 'kept'
        card = db.card("Ash Blossom & Joyous Spring")              # Card(passcode=14558127, names={...}, ...)
        for ruling in db.rulings(card, limit=5):                     # newest first
            print(ruling["dates"], ruling["text"])

Every method returns what the matching command prints with ``--json``
(dicts and lists of JSON types; dates as ISO strings where the command
prints them so) and reads through the same functions
(:mod:`pipeline.queries`). Errors are the CLI's, as exceptions of
:mod:`pipeline.errors`: :class:`~pipeline.errors.UsageError` for input the
database has no answer for (an unknown kind, card or record; no database at
the path; the message and ``place`` are those of the CLI's error, exit code
2), :class:`~pipeline.errors.SQLError` (a UsageError) for SQL DuckDB
refuses, :class:`~pipeline.errors.LoadError` (``UnusableDatabase``) for a
database DuckDB cannot read or of another schema version (exit code 1).

The connection is read-only: a build or refresh can replace the database
meanwhile, and an open ``Rulings`` keeps reading the file it opened (open a
new one to see the new build). A ``Rulings`` is not to be shared between
threads; open one per thread. DuckDB opens a file once per process with one
configuration: within a process, open one database either sandboxed (the
default) or not, and close the ``Rulings`` before the CLI's functions open
the same file.
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from . import queries
from .paths import DEFAULT_DB

__all__ = ["Card", "Rulings"]


@dataclass(frozen=True)
class Card:
    """A card as :meth:`Rulings.card` finds it: its main passcode (None
    for a card without one: Slifer the Sky Dragon), its names by language
    (``en``, ``ja``, ``zh-CN``, ``zh-TW``, ``ko``, ``zh-community``; a
    language without a name is left out), its Konami id and all its
    passcodes (main first: Dark Magician's 46986414, 36996508)."""

    passcode: int | None
    names: dict[str, str] = field(hash=False)
    konami_id: int | None = None
    passcodes: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """The English name, else the first name it has."""
        return self.names.get("en") or next(iter(self.names.values()), "")


class Rulings:
    """A read-only connection to a rulings database (``db_path``, default
    the one ``rulings build`` writes: ``build/rulings.duckdb`` in a
    checkout, ``DATA/rulings.duckdb`` installed). UsageError when there is
    no database there, LoadError when it cannot be read or is of another
    schema version. Use it as a context manager or call :meth:`close`."""

    def __init__(self, db_path: Path | str = DEFAULT_DB, *, sandboxed: bool = True):
        self.db_path = Path(db_path)
        # sandboxed: SQL given to sql() cannot read or write other files (as `rulings sql`)
        self._con = queries.connect(self.db_path, read_only=True, sandboxed=sandboxed)
        # the SQL cannot turn the limits off (connections to one file in one process share its settings)
        if sandboxed and not self._con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]:
            self._con.execute("SET lock_configuration = true")

    def close(self) -> None:
        self._con.close()

    def _cursor(self):
        """A cursor of its own for each call: a result one call left unread
        never blocks the next (DuckDB refuses work on a connection with an
        unfinished result)."""
        return closing(self._con.cursor())

    def __enter__(self) -> Rulings:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ ask

    def ask(self, info_kind: str, event: str) -> dict:
        """Does ``info_kind`` survive ``event``: ``rulings ask INFO_KIND
        EVENT --json``: ``{"info_kind", "event", "verdict" (kept | lost |
        not_applicable | conditional | unknown), "condition", "cases",
        "changed_on", "disputed_by", "conflicts", "citations": [{"record_id",
        "role", "verdict", "dates", "source", "text", ...}], ...}``.
        UsageError naming the nearest known names for an unknown kind or event."""
        with self._cursor() as con:
            return queries.rule_report(con, info_kind, event)

    # ------------------------------------------------------------------ cards

    def card(self, name: str | int) -> Card:
        """The card ``name`` names: a passcode (or the Konami id of a card
        without one), or a name in any language or Chinese script, exact or
        folded (case, width, script, spaces, hyphens, & = and). UsageError
        with "did you mean" names when no card matches."""
        with self._cursor() as con:
            found = queries.find_card(con, str(name))
        return Card(found.passcode, found.names, found.konami_id, found.passcodes)

    def rulings(self, card: Card | str | int, limit: int | None = None) -> list[dict]:
        """The current rulings that mention ``card`` (a :class:`Card`, or
        what :meth:`card` takes), newest first, at most ``limit``: each
        ``{"record_id", "source_id", "section", "status", "text", "how"
        (linked | key | english_text: the surest way that finds it), "dates"
        (ISO), "faq_ids"}``, the
        ``rulings`` of ``rulings card NAME --json``."""
        if not isinstance(card, Card) or card.konami_id is None:  # a Card made by hand: look its passcode up
            card = self.card(card.passcode if isinstance(card, Card) else card)
        with self._cursor() as con:
            found = queries.card_rulings(con, queries.FoundCard(card.konami_id, card.passcodes, card.names))
        return found[:limit] if limit else found

    # ------------------------------------------------------------------ records and history

    def show(self, record_id: str) -> dict:
        """One record with all its provenance (``rulings show ID --json``):
        every column of ``records``, its source's ``url`` and ``licence``,
        and lists ``dates``, ``cards`` and ``statements``. UsageError for an
        unknown record id."""
        with self._cursor() as con:
            return queries.record_provenance(con, record_id)

    def changes(self, since: int | None = None) -> dict:
        """The rulings the runs after run ``since`` added, changed and
        retired (default: the latest run's; 0: all), ``rulings changes
        --json``: ``{"since", "changes": [{"run_id", "started_at", "change",
        "record_id", "source_id", "section_path", "status", "text"}]}``."""
        with self._cursor() as con:
            since, rows = queries.list_changes(con, since)
        return {"since": since, "changes": rows}

    def rule_changes(self, since: int | None = None) -> dict:
        """The rules whose verdict changed or that became disputed or
        settled after run ``since`` (``rulings changes --rules --json``):
        ``{"since", "rule_changes": [{"run_id", "info_kind", "event",
        "change", "old_verdict", "new_verdict", "record_ids", "rulings"}]}``."""
        with self._cursor() as con:
            since, rows = queries.list_rule_changes(con, since)
        return {"since": since, "rule_changes": rows}

    # ------------------------------------------------------------------ SQL

    def sql(self, query: str, max_rows: int | None = 200) -> list[dict]:
        """Run ``query`` on the database and return the last statement's
        rows as dicts (column -> value, DuckDB's Python values: dates are
        ``datetime.date``), at most ``max_rows`` (None: all). Read-only and,
        unless opened with ``sandboxed=False``, with file access off, as
        ``rulings sql``; ``name_key(NAME)`` is there. SQLError for SQL DuckDB
        refuses, UsageError for no statement; [] for a statement without rows."""
        with self._cursor() as con:
            columns, rows, _ = queries.run_sql(con, query, max_rows, lock=False, db_path=self.db_path)
        if rows is None:
            return []
        return [dict(zip(columns, row)) for row in (rows if max_rows is None else rows[:max_rows])]
