"""Reading a generated engine file's stamp without the generator (a read
command such as ``rulings ask --card`` loads the engine and must not import
pipeline/generate.py, a build stage)."""

from __future__ import annotations

import re
from pathlib import Path

ENGINE_HASH_LINE = re.compile(r"^(?:RULES_HASH = '|// Rules hash: sha256:| \"rules_hash\": \")([0-9a-f]{64})['\"]?,?$", re.M)


def engine_rules_hash(path: Path) -> str | None:
    """The rules hash stamped in a generated engine module, or None (missing, not an engine)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(8192)
    except OSError:
        return None
    m = ENGINE_HASH_LINE.search(head)
    return m.group(1) if m else None
