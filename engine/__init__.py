"""The generated rules engine and its runtime.

``rulings build`` writes ``engine/ocg_rules.py`` (standard library only);
this package re-exports its API so ``import engine`` works in the project:

    >>> import engine
    >>> engine.retains("synchro_summoned", "face_down").verdict
    'kept'
    >>> engine.answer({"id": "x", "events": [], "ask": {"turn": 1, "question": "can_conduct_battle_phase", "player": "A"}})["answer"]
    False

Other tools may instead copy ``engine/ocg_rules.py`` alone and import it;
``import engine`` exposes the same names (its ``__all__``: ``retains``,
``answer``, ``answer_all``, ``citation``, ``validate``, ``Retention``,
``ScenarioError``, ``RULES_HASH``, ``INFO_KINDS``, ``EVENTS`` and the other
tables).

An installed copy (``pip install .``) has no ``engine/ocg_rules.py`` in the
package: ``import engine`` loads the one ``rulings build`` wrote to the data
folder (``$RULINGS_DATA/engine/ocg_rules.py``, see pipeline/paths.py).
Before the first build there is none: ``import engine`` and ``import
engine.runtime`` still work (the runtime needs no rules), and asking for any
engine name raises ``EngineNotBuilt`` (an AttributeError) saying to run the build.
"""

from __future__ import annotations

import importlib
from pathlib import Path



def _engine_path():
    """Where ``rulings build`` writes the engine (pipeline/paths.py: the
    project's ``engine/ocg_rules.py`` in a checkout, the data folder's when
    installed or with ``RULINGS_DATA``), or None when this package is not the
    one beside that pipeline (a copy elsewhere uses its own module)."""
    from pathlib import Path

    try:
        from pipeline.paths import DEFAULT_ENGINE, PROJECT_ROOT
    except ImportError:  # the engine package copied without the pipeline
        return None
    if (PROJECT_ROOT / "engine").resolve() != Path(__file__).resolve().parent:
        return None
    return DEFAULT_ENGINE


def _load():
    """The generated module: the one at :func:`_engine_path` when that is
    outside this package (so an installed copy, or a checkout with
    ``RULINGS_DATA``, never answers from an engine the build did not just
    write), else ``engine.ocg_rules`` here; None when there is none yet."""
    import importlib.util
    import sys
    from pathlib import Path

    path = _engine_path()
    own = Path(__file__).resolve().with_name("ocg_rules.py")
    if path is not None and path.resolve() != own:
        if not path.is_file():
            return None
        spec = importlib.util.spec_from_file_location(f"{__name__}.ocg_rules", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(f"{__name__}.ocg_rules")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.ocg_rules":
            raise  # the generated module exists but imports something missing
        return None


class EngineNotBuilt(AttributeError):
    """An engine name asked for before ``rulings build`` wrote the engine.
    An AttributeError (the module has no such name yet), so ``from engine
    import runtime`` and ``getattr(engine, name, default)`` still work."""


_generated = _load()

if _generated is not None:
    # The generated module's public names (its __all__), the same objects.
    globals().update({name: getattr(_generated, name) for name in _generated.__all__})
    __all__ = list(_generated.__all__)
else:
    __all__ = []

    def __getattr__(name: str):
        """Explain, for any engine name, that the rules are not compiled yet."""
        if name.startswith("__"):
            raise AttributeError(name)
        where = _engine_path() or Path(__file__).with_name("ocg_rules.py")
        raise EngineNotBuilt(f"engine.{name}: {where} is not generated yet: run `rulings build` (or `make run`) first")
