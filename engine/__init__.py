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
"""

from __future__ import annotations

try:
    from . import ocg_rules as _generated
except ImportError as exc:  # pragma: no cover - only before the first build
    raise ImportError("engine/ocg_rules.py is not generated yet: run `rulings build` (or `make run`) first") from exc

# The generated module's public names (its __all__), the same objects.
globals().update({name: getattr(_generated, name) for name in _generated.__all__})
__all__ = list(_generated.__all__)
