"""The checks every loader of :mod:`pipeline.schema` makes on a parsed file.

:class:`Checker`: for one file (named by ``place``), typed lookups of keys
(:meth:`Checker.get`), non-empty word lists (:meth:`Checker.words`) and
membership (:meth:`Checker.member`); each failure raises
:class:`~pipeline.errors.SchemaError` naming the file and the key.
"""

from __future__ import annotations

from .errors import SchemaError


class Checker:
    """Checks of one file; each failure raises SchemaError naming the key."""

    def __init__(self, place: str):
        self.place = place  # the file, as errors name it

    def fail(self, key: str, message: str):
        raise SchemaError(f"{key} {message}", place=self.place)

    def get(self, data: dict, key: str, kind: type, where: str = ""):
        full = f"{where}.{key}" if where else key
        if key not in data:
            self.fail(full, "is missing")
        value = data[key]
        if not isinstance(value, kind):
            self.fail(full, f"must be a {kind.__name__}, not {type(value).__name__}")
        return value

    def words(self, data: dict, key: str, where: str = "") -> list[str]:
        """A non-empty list of non-empty strings."""
        full = f"{where}.{key}" if where else key
        value = self.get(data, key, list, where)
        if not value or not all(isinstance(w, str) and w for w in value):
            self.fail(full, "must be a non-empty list of non-empty strings")
        return value

    def member(self, key: str, value, known, what: str) -> None:
        if value not in known:
            self.fail(key, f"is not {what} (known: {', '.join(map(str, known))})")
