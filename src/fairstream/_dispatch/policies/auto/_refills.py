"""Refills: a request starts while one that started before it was sent still runs.

Static batching never refills a running batch, so refills tell continuous batching. But a
static batch's last end and the next batch's first token are only a step apart, and the stamps
that order them come from a busy client's loop, or from several processes (a shared pool's
leader, each process on its own estimate of Redis's clock): 4 ms out of order was enough to
take a static server for a continuous one. So a refill counts only once one of the earlier
requests still runs ``slack`` after the later one's first token.
"""

from __future__ import annotations

import math

__all__ = ["Refills"]


class Refills:
    """Refills seen, each counted once an earlier request outlived the start by ``slack``."""

    def __init__(self) -> None:
        self.count = 0
        self.last = -math.inf  # the start of the latest refill counted
        self._open: list[tuple[float, set[int]]] = []  # (a start, earlier ones still running)

    @property
    def pending(self) -> bool:
        """Starts still to be confirmed (or dropped)."""
        return bool(self._open)

    def started(self, now: float, earlier: set[int]) -> None:
        """A request's first token at ``now`` while ``earlier`` (started before it was sent)
        ran: a refill, if one of them still runs past the slack."""
        if earlier:
            self._open.append((now, set(earlier)))

    def seen(self, now: float, slack: float, ended: int | None = None) -> int:
        """The clock reached ``now`` (events come in time order); ``ended``: the request that
        ended then. Returns the refills newly counted."""
        new = 0
        still: list[tuple[float, set[int]]] = []
        for start, earlier in self._open:
            if now - start > slack:  # one of the earlier ones still ran past the slack
                new += 1
                self.last = max(self.last, start)
                continue
            if ended is not None:
                earlier.discard(ended)
            if earlier:
                still.append((start, earlier))
        self._open = still
        self.count += new
        return new
