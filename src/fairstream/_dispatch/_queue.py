"""The client-side queue: fair across keys, ordered by expected length within a key.

Rule 1: keys take turns (round robin), so one heavy caller cannot starve the others.
Rule 2: within a key, jobs go shortest first, longest first or FIFO, as the policy asks;
        a job that has waited longer than ``max_reorder_wait`` goes first whatever its length.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, Literal

from ._job import Job

__all__ = ["FairQueue", "Order"]

Order = Literal["shortest", "longest", "fifo"]


class FairQueue:
    """Jobs waiting for a slot."""

    def __init__(self, order: Order = "shortest", max_reorder_wait: float = 60.0) -> None:
        self.order: Order = order
        self.max_reorder_wait = max_reorder_wait
        self._keys: OrderedDict[Any, list[Job]] = OrderedDict()
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Job]:
        for jobs in self._keys.values():
            yield from jobs

    def push(self, job: Job) -> None:
        self._keys.setdefault(job.key, []).append(job)
        self._n += 1

    def push_front(self, job: Job) -> None:
        """Put back a job taken but not sent; its key gets the next turn."""
        jobs = self._keys.setdefault(job.key, [])
        jobs.append(job)
        self._keys.move_to_end(job.key, last=False)
        self._n += 1

    def drain(self) -> list[Job]:
        """Take every job out (oldest key first)."""
        jobs = [j for js in self._keys.values() for j in js]
        self._keys.clear()
        self._n = 0
        return jobs

    def remove(self, job: Job) -> bool:
        jobs = self._keys.get(job.key)
        if not jobs or job not in jobs:
            return False
        jobs.remove(job)
        self._n -= 1
        if not jobs:
            del self._keys[job.key]
        return True

    def pop(self, now: float) -> Job | None:
        """The next job in fair order (the key whose turn it is, its best job)."""
        if not self._keys:
            return None
        key, jobs = next(iter(self._keys.items()))
        job = self._best(jobs, now)
        jobs.remove(job)
        self._n -= 1
        del self._keys[key]
        if jobs:
            self._keys[key] = jobs  # to the back of the round
        return job

    def peek(self, now: float) -> Job | None:
        """The job :meth:`pop` would return, left in place."""
        if not self._keys:
            return None
        return self._best(next(iter(self._keys.values())), now)

    def pop_many(self, n: int, now: float) -> list[Job]:
        out: list[Job] = []
        while len(out) < n:
            job = self.pop(now)
            if job is None:
                break
            out.append(job)
        return out

    def _best(self, jobs: list[Job], now: float) -> Job:
        oldest = min(jobs, key=lambda j: j.enqueued)
        if self.order == "fifo" or now - oldest.enqueued > self.max_reorder_wait:
            return oldest
        if self.order == "shortest":
            return min(jobs, key=lambda j: (_length(j), j.enqueued))
        return max(jobs, key=lambda j: (_length(j), -j.enqueued))


def _length(job: Job) -> float:
    """Expected tokens, or infinity when unknown."""
    return math.inf if job.expected_tokens is None else job.expected_tokens
