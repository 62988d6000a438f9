"""FALLBACK: the kind still unknown after a request waited for a slot.

When the running requests' expected ends fall within 4 steps of each other, all their places
free then (slots or a batch): as many go once the last is due within 2 steps, and nothing
before. Sent earlier they would wait there a whole run (an 8-slot server running a burst in
bands, which reads as static B=8, kept 8 long requests waiting 150 steps); sent one by one as
each is due, the last would miss a static server's batch. Otherwise the largest wave seen is
offered again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ._base import Budget, State
from ._state import FALLBACK

if TYPE_CHECKING:
    from ._situation import Situation

__all__ = ["Fallback", "due_slots", "slots_due_at"]


class Fallback(State):
    """Refill requests that end together just in time; else offer the largest wave."""

    name = FALLBACK
    kind = "unknown"

    def label(self, s: Situation) -> str:
        return "fallback"  # the kind still unknown: the state says where auto stands

    def budget(self, s: Situation) -> Budget:
        run, soon = s.running, due_slots(s)
        if soon is not None:
            return Budget(max(0, s.peak - run + soon), full=True)
        return Budget(max(s.start, run, s.peak))

    def wakeups(self, s: Situation, now: float) -> list[float]:
        return [slots_due_at(s)]


def due_slots(s: Situation) -> int | None:
    """All the running requests once the last is due within 2 steps, else 0; None when a
    step or a length is unknown, or the ends spread (a refill soon tells)."""
    due = slots_due_at(s)
    if due == -math.inf:
        return None
    return s.running if due <= s.now else 0


def slots_due_at(s: Situation) -> float:
    """When :func:`due_slots` turns to all: the last expected end less 2 steps (-inf: never)."""
    if not s.runs or not (step := s.step()) or s.staggered():
        return -math.inf
    return max(s.batches.ends(s.runs, step)) - 2 * step
