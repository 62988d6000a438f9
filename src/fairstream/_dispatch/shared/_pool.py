"""``SharedPool``: what a :class:`Dispatcher` needs to share one pool with other processes.

It bundles the leases (:class:`SharedSlots`), the samples every process publishes and the
leader that runs the policy on them (:mod:`._leader`). With a fixed policy there is no leader:
the limit is the one every process was given (``waves:B``: 2B, a batch running and one
waiting, with the band keeping lengths over 2x apart out of one waiting batch). Locally the
dispatcher then only orders its own requests (shortest first) and hands them to the Redis line.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from .._policy import Policy
from ..policies._fixed import Fixed
from ..policies._waves import Waves
from ..policies.auto._auto import Auto
from ._breaker import CoordinatorDown
from ._leader import Leader, Samples
from ._slots import SharedSlots

if TYPE_CHECKING:
    from ..._trace import StreamTrace
    from .._job import Job

__all__ = ["SharedPool", "local_policy"]

log = logging.getLogger("fairstream.dispatch")


class SharedPool:
    """Leases, samples and (for adaptive policies) the leader, for one dispatcher."""

    def __init__(
        self,
        make_policy: Callable[[], Policy],
        coordinator: str,
        pool: str,
        *,
        ttl: float,
        max_reorder_wait: float,
    ) -> None:
        first = make_policy()
        limit = first.limit()
        self.fixed = isinstance(first, Fixed)
        if isinstance(first, Waves):  # the batch size is known: no leader needed; a batch
            # running and one waiting at the server (pipelined), of similar lengths (the band)
            self.fixed, limit = True, first.batch_size * (2 if first.pipeline else 1)
        self.slots = SharedSlots(
            coordinator, pool, limit=limit, ttl=ttl, max_reorder_wait=max_reorder_wait
        )
        self.slots.own_limit = self.fixed  # a fixed limit is everyone's; else the leader's
        self._bands = first.bands  # known static (waves): bands from the first grant
        self.samples = Samples(self.slots)
        self.leader = None if self.fixed else Leader(self.slots, lambda: _pooled(make_policy()))
        self._tg: anyio.abc.TaskGroup | None = None

    def describe(self) -> str:
        lead = self.leader
        inner = f"{lead.policy.describe()}, " if lead and lead.leading and lead.policy else ""
        return f"shared pool {self.slots.pool!r}: {inner}limit {self.slots.limit}"

    async def open(self) -> None:
        await self.slots.open()
        if self._bands:  # not only once a leader steps in: the first grants may come before
            await self.slots.set_band(True)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(CoordinatorDown):
                await self.samples.flush()
            await self.slots.aclose()

    async def run(self) -> None:
        """Heartbeats, sample publishing and, when it leads, the policy; until cancelled."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self.slots.run)
            tg.start_soon(self._publish)
            if self.leader is not None:
                tg.start_soon(self.leader.run)

    async def acquire(self, job: Job) -> None:
        job.lease = await self.slots.acquire(job.expected_tokens, job.key)
        self.samples.add("send", job, time.perf_counter())

    def note(self, kind: str, job: Job, traces: list[StreamTrace] | None = None) -> None:
        if self.leader is not None:
            self.samples.add(kind, job, time.perf_counter(), traces or [])

    def started(self, job: Job) -> None:
        """The job's request got its first token: it leaves the band (static servers)."""
        if job.lease in self.slots.banded and self._tg is not None:
            self._tg.start_soon(self.slots.started, job.lease)

    def overloaded(self, job: Job, retry_after: float | None) -> None:
        """A 429/503: every process of the pool pauses for its Retry-After (1 s if none)."""
        self.note("overload", job)
        if self._tg is not None:
            self._tg.start_soon(self.slots.pause, retry_after or 1.0)

    async def _publish(self, every: float = 0.02) -> None:
        while True:
            await anyio.sleep(every)
            with contextlib.suppress(CoordinatorDown):  # dropped; the breaker said so
                await self.samples.flush()


def _pooled(policy: Policy) -> Policy:
    """The leader's policy: its samples come 250 ms late, so a static server's next batch waits
    at the server (pipelined) rather than going when the last one ends (a late gap each time),
    and slow start ramps, never doubles (a late doubling overshoots by a round of starts)."""
    if isinstance(policy, Auto):
        policy.just_in_time = False
        policy.ramp_doubles = False
    return policy


def local_policy(policy: Policy, shared: bool) -> Policy:
    """In a shared pool the local dispatcher only orders: the Redis line holds the limit."""
    if not shared or isinstance(policy, Fixed):
        return policy
    return Fixed(4096, order=policy.order)
