"""A circuit breaker for the coordinator: after a failed Redis call, stop calling it for a
while (1 s, doubling up to a cap) and say so once in the log; close again on the first success.

Calls made before it opened and failing after count as the same failure: a process's heartbeat,
tries and sample publishing all fail together when Redis goes away, and counted one by one they
doubled the cooldown past the outage (a process that came back 16 s late ran on its local share
beside one that was back, and the server saw both)."""

from __future__ import annotations

import logging
import time

__all__ = ["Breaker", "CoordinatorDown"]

log = logging.getLogger("fairstream.dispatch")


class CoordinatorDown(Exception):
    """Redis is unreachable (or the breaker is open): use the local fallback."""


class Breaker:
    """Open after a failure, half-open after a cooldown, closed after a success."""

    def __init__(self, what: str, first: float = 1.0, most: float = 30.0) -> None:
        self.what, self.first, self.most = what, first, most
        self.open_until = 0.0
        self.cooldown = 0.0
        self.failures = 0

    @property
    def is_open(self) -> bool:
        return time.monotonic() < self.open_until

    def check(self) -> None:
        """Raise :class:`CoordinatorDown` while open."""
        if self.is_open:
            raise CoordinatorDown(self.what)

    def failed(self, exc: BaseException) -> None:
        if self.is_open:  # the outage already counted (a call made before it opened)
            return
        if not self.cooldown:
            log.warning("%s unreachable (%s)", self.what, exc)
        self.cooldown = min(self.most, self.cooldown * 2 or self.first)
        self.open_until = time.monotonic() + self.cooldown
        self.failures += 1

    def succeeded(self) -> None:
        if self.cooldown:
            log.warning("%s reachable again: shared admission resumes", self.what)
        self.cooldown = 0.0
        self.open_until = 0.0
