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

Before the first build ``engine/ocg_rules.py`` does not exist: ``import
engine`` and ``import engine.runtime`` still work (the runtime needs no rules),
and asking for any engine name raises ImportError saying to run the build.
"""

from __future__ import annotations

import importlib

try:
    _generated = importlib.import_module(f"{__name__}.ocg_rules")
except ModuleNotFoundError as exc:
    if exc.name != f"{__name__}.ocg_rules":
        raise  # the generated module exists but imports something missing
    _generated = None

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
        raise ImportError(f"engine.{name}: engine/ocg_rules.py is not generated yet: "
                          "run `rulings build` (or `make run`) first")
