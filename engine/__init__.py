"""The generated rules engine and its runtime.

``rulings build`` writes ``engine/ocg_rules.py`` (standard library only);
this package re-exports its API so ``import engine`` works in the project:

    >>> import engine
    >>> engine.retains("synchro_summoned", "face_down").verdict
    'kept'
    >>> engine.answer({"id": "x", "events": [], "ask": {"turn": 1, "question": "can_conduct_battle_phase", "player": "A"}})["answer"]
    False

Other tools may instead copy ``engine/ocg_rules.py`` alone and import it.
"""

from __future__ import annotations

try:
    from . import ocg_rules as _generated
except ImportError as exc:  # pragma: no cover - only before the first build
    raise ImportError("engine/ocg_rules.py is not generated yet: run `rulings build` (or `make run`) first") from exc

retains = _generated.retains
answer = _generated.answer
answer_all = _generated.answer_all
citation = _generated.citation
Retention = _generated.Retention
ScenarioError = _generated.ScenarioError
RULES_HASH = _generated.RULES_HASH

__all__ = ["retains", "answer", "answer_all", "citation", "Retention", "ScenarioError", "RULES_HASH"]
