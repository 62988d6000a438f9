"""How long our own event loop stalled: a short timer's lateness, while requests are queued or
in flight.

A policy that reads "this first token came late, so the server is full" must not count the
time our own client could not read it: over real HTTP on a busy 2-core client the loop stalls
for 40-190 ms at a time (reading 64 streams through the openai SDK), and ``auto`` took those
stalls for slot waits (over real HTTP, a 64-slot server held at 12-21 in flight). The monitor
starts as soon as a request is queued, so its timer is already running when the first admitted
requests go: the openai SDK's first streamed call in a fresh process holds the loop about
0.3 s, and a monitor woken only by that admission started after it and never saw it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import anyio

__all__ = ["LoopLag", "no_lag"]


def no_lag(start: float, end: float) -> float:
    """No measurement (virtual time, or a policy run without a Dispatcher): no stall."""
    return 0.0


class LoopLag:
    """Samples the loop every ``interval`` seconds while ``busy()``; keeps the stalls."""

    def __init__(
        self, busy: Callable[[], bool], interval: float = 0.005, floor: float = 0.002
    ) -> None:
        self.busy, self.interval, self.floor = busy, interval, floor
        self._stalls: deque[tuple[float, float]] = deque(maxlen=256)  # (sample start, lag)
        self._work = anyio.Event()

    def wake(self) -> None:
        """Requests went out: sample again (the monitor sleeps while nothing is in flight)."""
        self._work.set()

    async def run(self) -> None:
        while True:
            if not self.busy():
                self._work = anyio.Event()
                await self._work.wait()
            t = time.perf_counter()
            await anyio.sleep(self.interval)
            lag = time.perf_counter() - t - self.interval
            if lag >= self.floor:
                self._stalls.append((t, lag))

    def within(self, start: float, end: float) -> float:
        """The longest stall's part inside ``[start, end]`` (seconds; 0.0 if none). A sample
        started at ``t`` that came ``lag`` late shows the loop stalled over
        ``[t + interval, t + interval + lag]``."""
        span = self.interval
        overlaps = (min(end, t + span + lag) - max(start, t + span) for t, lag in self._stalls)
        return max(0.0, max(overlaps, default=0.0))
