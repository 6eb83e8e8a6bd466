"""One error hierarchy for the whole pipeline.

Every error names the stage, the source id and the place in the page, so a
user can find the offending input; ``retryable`` says whether running again
may help (a network fault) or not (a malformed page).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


class RulingsError(Exception):
    """Base class of every error the project raises on purpose."""

    stage = "rulings"
    retryable = False

    def __init__(self, message: str, *, source_id: str | None = None, place: str | None = None):
        self.message = message
        self.source_id = source_id
        self.place = place
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ", ".join(p for p in (self.source_id, self.place) if p)
        return f"[{self.stage}] {where + ': ' if where else ''}{self.message}"


class SchemaError(RulingsError):
    """A file of ``schema/`` is missing, unreadable or inconsistent; ``place``
    is the file, the message names the key."""

    stage = "schema"

    def __str__(self) -> str:
        return f"{self.place}: {self.message}" if self.place else self.message


class CorpusError(RulingsError):
    """The corpus manifest or a snapshot path is unusable."""

    stage = "corpus"


class NormalizeError(RulingsError):
    """A page cannot be turned into text blocks (empty, binary, too large)."""

    stage = "normalize"


class ExtractError(RulingsError):
    stage = "extract"


class LoadError(RulingsError):
    stage = "load"


class CompileError(RulingsError):
    stage = "compile"


class GenerateError(RulingsError):
    stage = "generate"


class FetchError(RulingsError):
    stage = "fetch"
    retryable = True


class RefreshError(RulingsError):
    """A refresh cannot start: another one holds the lock."""

    stage = "refresh"
    retryable = True


class BusyError(RefreshError):
    """A build or refresh holds the database's lock."""

    stage = "lock"


class ScenarioError(RulingsError):
    """A scenario is malformed; ``place`` names the scenario id and field."""

    stage = "scenario"


class UsageError(RulingsError):
    stage = "usage"


class SQLError(UsageError):
    """SQL that DuckDB refuses (a syntax error, an unknown table, a write on
    a read-only database); ``place`` is ``SQL``."""

    stage = "sql"


@contextmanager
def stage_errors(error: type[RulingsError], source_id: str | None = None, place: str | None = None) -> Iterator[None]:
    """Run one stage's block (on one page, or compile and generate on the
    whole corpus): an exception no check foresaw (a bug, a page unlike any
    seen) becomes ``error`` naming the source or place, so one page never
    stops a run and a compile fault is reported as one. RulingsError passes
    as it is."""
    try:
        yield
    except RulingsError:
        raise
    except Exception as exc:
        raise error(f"unexpected {type(exc).__name__}: {exc}", source_id=source_id, place=place) from exc
