"""The admission policy interface: small strategy objects, each testable alone (like tenacity's).

A policy sees the queue, how many of its requests are in flight and the time, and answers
which jobs to send now; it hears each request's first token and end. Times are seconds on
one monotonic clock. The policies themselves live in :mod:`.policies`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._lag import no_lag
from ._queue import FairQueue, Order

if TYPE_CHECKING:
    from .._trace import StreamTrace
    from ._job import Job

__all__ = ["Policy"]


class Policy(ABC):
    """Base: send while fewer than :meth:`limit` are in flight, at most one per ``interval``.

    A subclass must say its :meth:`limit`; every other hook has a default.
    """

    name = "policy"
    order: Order = "shortest"
    reads_client_lag = False  # True: the Dispatcher measures its loop's stalls for it

    def __init__(self) -> None:
        self.interval = 0.0  # paced release: at least this long between two sends
        self._next_send = -math.inf
        # seconds our own event loop stalled between two times (the Dispatcher measures it)
        self.client_lag: Callable[[float, float], float] = no_lag

    @abstractmethod
    def limit(self) -> int:
        """How many of its requests may be in flight now."""

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        """Jobs to send now, taken from ``queue``."""
        room = self.limit() - in_flight
        if room <= 0 or not len(queue):
            return []
        if self.interval > 0:
            if now < self._next_send:
                return []
            self._next_send = now + self.interval
            room = 1
        return queue.pop_many(room, now)

    def next_wakeup(self, now: float) -> float | None:
        """When :meth:`admit` may say yes again without any other event (pacing)."""
        return self._next_send if self.interval > 0 and self._next_send > now else None

    def on_send(self, job: Job, now: float) -> None:
        """A job was sent."""

    def on_first_token(self, job: Job, now: float) -> None:
        """A job's request got its first content."""

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        """A job ended (``job.ok`` says how); ``traces`` are its instrumented streams."""

    def on_overload(self, now: float, retry_after: float | None) -> None:
        """The server said 429 or 503."""

    def describe(self) -> str:
        return f"{self.name}({self.limit()})"

    @property
    def bands(self) -> bool:
        """Does a batch waiting at the server hold similar lengths (a static server)? A
        shared pool then keeps lengths over 2x apart out of one batch, in every process."""
        return False
