"""PROBING: cold, the kind unknown; slow start's offer decides what may be in flight.

The first wave (the burst's shortest band, ``_wave.py``) and the ramp (one more per start that
found a free slot) raise the offer; the first request that waits for a slot ends it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import Budget, State
from ._state import PROBING

if TYPE_CHECKING:
    from ._situation import Situation

__all__ = ["Probing"]


class Probing(State):
    """In flight up to slow start's offer."""

    name = PROBING
    kind = "unknown"

    def label(self, s: Situation) -> str:
        return "probing"  # the kind still unknown: the state says where auto stands

    def budget(self, s: Situation) -> Budget:
        return Budget(max(0, s.offer - s.running))
