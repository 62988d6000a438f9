"""The sans-IO admission core both drivers share: queue, in-flight count, pause, policy.

The asyncio ``Dispatcher`` and the virtual-time simulator call the same methods with their
own clocks, so every policy is tested deterministically and runs unchanged for real.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ._estimate import LengthEstimator
from ._queue import FairQueue

if TYPE_CHECKING:
    from .._trace import StreamTrace
    from ._job import Job
    from ._policy import Policy

__all__ = ["Admission"]


class Admission:
    """Who may send now."""

    def __init__(self, policy: Policy, *, max_reorder_wait: float = 60.0) -> None:
        self.policy = policy
        self.queue = FairQueue(policy.order, max_reorder_wait)
        self.in_flight = 0
        self.paused_until = -math.inf
        self.lengths = LengthEstimator()

    def enqueue(self, job: Job, now: float) -> None:
        job.enqueued = now
        if job.expected_tokens is None:
            job.expected_tokens = self.lengths.guess(job.label)
        self.queue.push(job)

    def cancel(self, job: Job) -> bool:
        """Take a job that was never sent out of the queue."""
        return self.queue.remove(job)

    def release(self, now: float) -> list[Job]:
        """Jobs to send now (each counted in flight until :meth:`done`)."""
        if now < self.paused_until:
            return []
        jobs = self.policy.admit(self.queue, self.in_flight, now)
        for job in jobs:
            job.sent = now
            self.in_flight += 1
            self.policy.on_send(job, now)
        return jobs

    def next_wakeup(self, now: float) -> float | None:
        times = [self.paused_until, self.policy.next_wakeup(now) or -math.inf]
        future = [t for t in times if t > now]
        return min(future) if future else None

    def first_token(self, job: Job, now: float) -> None:
        self.policy.on_first_token(job, now)

    def done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        job.done = now
        self.in_flight -= 1
        for t in traces:
            if t.outcome == "ok":
                self.lengths.learn(job.label, t.output_tokens)
        self.policy.on_done(job, now, traces)

    def overload(self, now: float, retry_after: float | None) -> None:
        """429/503: pause admission for ``retry_after`` (1 s when not given)."""
        self.paused_until = max(self.paused_until, now + (retry_after or 1.0))
        self.policy.on_overload(now, retry_after)
