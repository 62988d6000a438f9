"""A shared pool while Redis is away, and just after: what one process may admit on its own.

While Redis cannot be reached a process admits on its share of the limit, ``max(1, limit //
live processes seen last)``, never the whole, counting the leases it still holds from Redis
(their requests still run). For the first ttl of an outage the share is also cut by the leases
other processes held when this one last heard from Redis, until they would have expired there:
one process holding the whole pool of 8 and another admitting its 4 ran 12 at the server.

Back, the leases granted meanwhile are handed to Redis at the first renewal (``unshared`` until
then), and for a heartbeat the process keeps to its share: others may still run on theirs,
unknown to Redis until their own next try (a restarted Redis counted only the first process
back, which took the whole pool again: 12 at the server).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator

import anyio

__all__ = ["Outage"]

_LOCAL = "local:"  # a slot granted by the fallback, not by Redis


class Outage:
    """One process's view of an outage: its share, the leases it granted alone, the settling."""

    def __init__(self, owner: str, ttl: float, timeout: float) -> None:
        self.owner, self.ttl, self.timeout = owner, ttl, timeout
        self.away = False  # Redis was unreachable at the last try
        self.since = 0.0  # when it was found unreachable
        self.others = 0  # leases other processes held, as this one last heard from Redis
        self.settle_until = 0.0  # back: keep to this process's share until then
        self.unshared: set[str] = set()  # held leases granted here, not in Redis yet
        self._entering = 0  # settling: acquires let through to Redis, not granted yet
        self._freed = anyio.Event()  # set (and replaced) at every release

    def began(self) -> bool:
        """Redis was found unreachable; True if that starts an outage."""
        if self.away:
            return False
        self.away, self.since = True, time.monotonic()
        return True

    def ended(self, restarted: bool) -> None:
        """A renewal went through (after an outage, or finding Redis restarted): settle."""
        if self.away or restarted:
            self.settle_until = time.monotonic() + self.ttl / 3 + self.timeout
        self.away = False

    @property
    def settling(self) -> bool:
        return time.monotonic() < self.settle_until

    def seen(self, in_use: int, held: set[str]) -> None:
        """Redis said ``in_use`` leases exist, ``held`` (less the unshared, a subset of it)
        among them ours (each acquire reply: no set built)."""
        self.others = max(0, in_use - (len(held) - len(self.unshared)))

    def share(self, limit: int, live: int) -> int:
        """What this process may hold while Redis is away (or while settling)."""
        share = max(1, limit // max(1, live))
        if self.away and time.monotonic() - self.since < self.ttl:
            share = min(share, max(0, limit - self.others))
        return share

    def freed(self) -> None:
        """A lease was released: wake whoever waits for room in the share."""
        self._freed.set()
        self._freed = anyio.Event()

    async def grant(self, held: set[str], share: int, until: float) -> str | None:
        """A lease from the share (added to ``held``), once one is free; None at ``until``
        (monotonic: the breaker lets Redis be tried again)."""
        with anyio.move_on_after(max(0.0, until - time.monotonic())):
            while len(held) >= share:
                await self._freed.wait()
            token = f"{_LOCAL}{self.owner}:{uuid.uuid4().hex}"
            held.add(token)
            self.unshared.add(token)
            return token
        return None

    @contextlib.asynccontextmanager
    async def settled(self, held: set[str], share: int) -> AsyncIterator[None]:
        """Settling, wait until this process holds (or is being granted) less than ``share``;
        the acquires let through count until they are granted or give up."""
        if not self.settling:  # the usual case: every acquire passes here
            yield
            return
        while len(held) + self._entering >= share:
            left = self.settle_until - time.monotonic()
            if left <= 0:
                break
            with anyio.move_on_after(left):
                await self._freed.wait()
        if not self.settling:
            yield
            return
        self._entering += 1
        try:
            yield
        finally:
            self._entering -= 1
