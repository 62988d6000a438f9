"""CONTINUOUS: the slots the server proved, nothing waiting, one probe above the peak.

In slow start (a ramp that doubles per round, as what waits costs only slots) the offer
decides; after it, the peak, a probe for one slot more, and the slots due to free within a
handover (``_handover.py``). Requests go shortest first, but long-first at a burst's tail
(``critical_first``: once nothing has arrived for 4 steps).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .._tail import critical_first
from ._base import Budget, Plain, State
from ._handover import handover_at, handovers
from ._state import CONTINUOUS

if TYPE_CHECKING:
    from ..._job import Job
    from ..._queue import FairQueue
    from ._situation import Situation

__all__ = ["Continuous"]


class Continuous(State):
    """Fills the proved slots, probes for one more, hands slots over before their ends."""

    name = CONTINUOUS
    kind = "continuous"
    hands_over = True

    def budget(self, s: Situation) -> Budget:
        run = s.running
        if s.slow_start:
            return Budget(max(0, s.offer - run))
        return Budget(max(s.peak - run, 0) + s.probe + handovers(s), full=True)

    def admit(
        self,
        s: Situation,
        queue: FairQueue,
        in_flight: int,
        now: float,
        limit: Callable[[], int],
        plain: Plain,
    ) -> list[Job]:
        return critical_first(queue, limit() - in_flight, now, s.peak, 4 * s.unit())

    def wakeups(self, s: Situation, now: float) -> list[float]:
        return [handover_at(s, now)]
