"""Default locations of the build outputs.

Kept free of heavy imports (spaCy, OpenCC) so that commands which do not
extract anything, such as a ``rulings refresh`` that finds nothing changed,
start fast.
"""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = PROJECT_ROOT / "build" / "rulings.duckdb"
DEFAULT_ENGINE = PROJECT_ROOT / "engine" / "ocg_rules.py"
