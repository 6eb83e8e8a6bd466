"""Where the project's data and outputs live, in a checkout and when installed.

* **Bundled data** (read-only, shipped with the code): ``schema/`` and the
  bundled ``corpus/``. In a checkout (or an editable install) they are the
  project's own folders; a normal install (``pip install .``, a wheel) carries
  them as package data in ``pipeline/bundled/``.
* **Outputs** (the database, the generated engine files) and a corpus that a
  refresh may write into: in a checkout, ``build/rulings.duckdb``,
  ``engine/ocg_rules.py`` and ``corpus/`` of the project, as before. When
  installed, or when the environment variable ``RULINGS_DATA`` names a folder,
  ``DATA/rulings.duckdb``, ``DATA/engine/ocg_rules.py`` and ``DATA/corpus/``
  (a copy of the bundled corpus made on first use, see
  :func:`pipeline.corpus.prepare_corpus`); an installed copy without
  ``RULINGS_DATA`` uses the user data folder (``~/.local/share/rulings`` on
  Linux, from platformdirs). ``--db``, ``--engine-out`` and ``--corpus``
  override each default.

Kept free of heavy imports (spaCy, OpenCC) so that commands which do not
extract anything, such as a ``rulings refresh`` that finds nothing changed,
start fast.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "RULINGS_DATA"

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent  # the checkout, or site-packages when installed
IN_CHECKOUT = (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "corpus" / "manifest.tsv").is_file()
BUNDLE_ROOT = PROJECT_ROOT if IN_CHECKOUT else PACKAGE_DIR / "bundled"
BUNDLED_CORPUS = BUNDLE_ROOT / "corpus"


def data_dir() -> Path | None:
    """The folder for outputs and the working corpus: ``$RULINGS_DATA`` when
    set, the user data folder when installed, None in a checkout (outputs go
    to the project's own folders)."""
    env = os.environ.get(DATA_ENV, "").strip()
    if env:
        return Path(env).expanduser().resolve()
    if IN_CHECKOUT:
        return None
    from platformdirs import user_data_dir

    return Path(user_data_dir("rulings", appauthor=False))


def _defaults() -> tuple[Path, Path, Path]:
    data = data_dir()
    if data is None:
        return BUNDLED_CORPUS, PROJECT_ROOT / "build" / "rulings.duckdb", PROJECT_ROOT / "engine" / "ocg_rules.py"
    return data / "corpus", data / "rulings.duckdb", data / "engine" / "ocg_rules.py"


DEFAULT_CORPUS, DEFAULT_DB, DEFAULT_ENGINE = _defaults()
