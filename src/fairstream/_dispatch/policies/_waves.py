"""``waves``: batches of B similar lengths for a static server whose B is known."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._policy import Policy
from .._queue import FairQueue, Order, _length

if TYPE_CHECKING:
    from ..._trace import StreamTrace
    from .._job import Job

__all__ = ["Waves"]


class Waves(Policy):
    """For static servers of batch size B: send B similar-length jobs at once.

    A static server never refills a batch, so a request sent mid-batch waits for the next
    one anyway. Waves use that: once the current wave's batch has started (its first
    token came), the next wave of B is sent to wait in the server's queue, so it becomes
    the next batch exactly, with no round trip between batches (``pipeline``), and the
    client still chose who shares it. ``order="shortest"`` minimizes mean latency (the
    one partial wave a backlog needs goes first, made of the shortest jobs);
    ``"longest"`` the makespan of a finite job.

    Every ``explore_every`` waves ``explorers`` extra jobs are sent mid-wave (one per first
    token of the wave, only jobs much shorter than the wave's once the ramp is over), so a
    watcher (``auto``) can
    tell a continuous server (it starts the job at once) from a static one (it waits for
    the batch to end); such a wave is not pipelined. With ``grow`` the wave doubles each
    time (a ramp, until a watcher fixes the size).
    """

    name = "waves"
    bands = True  # a static server by definition

    def __init__(
        self,
        batch_size: int,
        *,
        order: Order = "shortest",
        explore_every: int = 0,
        grow: bool = False,
        max_size: int = 256,
        explorers: int = 1,
        pipeline: bool = True,
    ) -> None:
        super().__init__()
        if batch_size < 1:
            raise ValueError("waves needs batch_size >= 1")
        self.batch_size, self.order, self.explore_every = batch_size, order, explore_every
        self.grow, self.max_size, self.explorers = grow, max_size, explorers
        self.pipeline = pipeline
        self.waves = 0
        self._current: set[int] = set()  # the wave in the server's batch now
        self._next: set[int] = set()  # the wave sent ahead, queued at the server
        self._explorers: dict[int, set[int]] = {}  # explorer -> the wave it was sent into
        self.refills = 0  # explorers that started while their wave was still running
        self._wave_max = 0.0  # longest expected length in the current wave
        self._wave_started = False
        self._explored = 0

    def limit(self) -> int:
        return self.batch_size

    def admit(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        if not self._current and self._next:  # the wave sent ahead is now the batch
            self._current, self._next = self._next, set()
            self._wave_started = False
        if not self._current:
            jobs = self._take(queue, now)
            if jobs:
                self._current = {j.jid for j in jobs}
                self._wave_started = False
            return jobs
        exploring = bool(self.explore_every) and self.waves % self.explore_every == 0
        if not self._wave_started:
            return []
        if exploring:
            if self._explored >= self.explorers:
                return []
            nxt = queue.peek(now)
            limit = 1.5 * self._wave_max if self.grow else 0.5 * self._wave_max
            unknown = nxt is not None and nxt.expected_tokens is None
            if nxt is None or (_length(nxt) > limit and not (unknown and self.grow)):
                return []  # on a static server it may run alone: only a short one may go
            self._explored += 1  # one per first token of the wave, up to `explorers`
            self._wave_started = False
            jobs = queue.pop_many(1, now)
            for j in jobs:  # remember the wave it was sent into
                self._explorers[j.jid] = set(self._current)
            return jobs
        if self.pipeline and not self.grow and not self._next:
            jobs = self._take(queue, now)
            self._next = {j.jid for j in jobs}
            return jobs
        return []

    def _take(self, queue: FairQueue, now: float) -> list[Job]:
        if self.grow and self.waves:
            self.batch_size = min(self.max_size, self.batch_size * 2)
        size = self.batch_size
        if self.order == "shortest" and not self.grow and len(queue) > size:
            # the batch left partial should be the cheapest one: the shortest jobs, now,
            # rather than the longest, last (makespan, at no cost in latency)
            size = len(queue) % size or size
        jobs = queue.pop_many(size, now)
        if jobs:
            self.waves += 1
            self._wave_max = max(_length(j) for j in jobs)
            self._explored = 0
        return jobs

    def on_first_token(self, job: Job, now: float) -> None:
        if job.jid in self._current:
            self._wave_started = True
        elif self._explorers.get(job.jid, set()) & self._current:
            # an explorer started while the wave it was sent into still runs: the server
            # refills its batch, which static batching never does
            self.refills += 1
            self._wave_started = True  # the next explorer may go

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        self._current.discard(job.jid)
        self._next.discard(job.jid)
        self._explorers.pop(job.jid, None)

    def describe(self) -> str:
        ramp = ", growing" if self.grow else ""
        return f"waves(B={self.batch_size}, {self.order} first{ramp})"
