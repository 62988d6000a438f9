"""SEQUENTIAL: one at a time; the next goes a step before the running one's expected end (at
its end if that is unknown), so it is chosen from all that arrived by then.

``sequential_wait`` keeps one waiting at the server instead (no gap, but chosen earlier).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import Budget, State
from ._handover import handover_at, handovers
from ._state import SEQUENTIAL

if TYPE_CHECKING:
    from ._situation import Situation

__all__ = ["Sequential"]


class Sequential(State):
    """The next request as the running one is due to end."""

    name = SEQUENTIAL
    kind = "sequential"
    hands_over = True

    def budget(self, s: Situation) -> Budget:
        wait = 1 if s.sequential_wait or not s.running else handovers(s)
        return Budget(wait, full=not s.sequential_wait)

    def wakeups(self, s: Situation, now: float) -> list[float]:
        return [handover_at(s, now)]
