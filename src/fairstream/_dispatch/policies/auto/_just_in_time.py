"""``auto`` on a static server: the next batch just in time, and when B is exact.

A mixin of :class:`~fairstream.Auto` (its static half; the bookkeeping per request is
:class:`~._batches.Batches`). The rules, and the real-HTTP readings they came from, are in
``docs/dispatcher.md``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ._batches import Batches, take_band

if TYPE_CHECKING:
    from ...._trace import StreamTrace
    from ..._job import Job
    from ..._queue import FairQueue

__all__ = ["JustInTime"]


class JustInTime:
    """The static half of :class:`~fairstream.Auto`."""

    kind: str
    batch_size: int | None
    batch_exact: bool
    peak: int
    just_in_time: bool
    _batches: Batches
    _running: dict[int, float]  # first token seen, not done: jid -> first token
    _waiting: dict[int, float]  # sent, no first token yet: jid -> sent
    _waiting_len: dict[int, float]
    step: Callable[[], float | None]
    limit: Callable[[], int]
    describe: Callable[[], str]
    _unit: Callable[[], float]
    _overdue: Callable[[], float]
    _log_change: Callable[[str], None]
    slow_start: bool
    _now: float
    _wire: deque[float]  # recent requests: seconds from admission until sent (_note_wire)
    _full_next: bool  # at the last admission our queue (and the server's) held a full batch

    @property
    def _batch(self) -> int:
        """B, or while it is a lower bound the most seen running at once if more (the detector
        reads a batch whose 1-token answers ended at their first token as a smaller one)."""
        if self.batch_exact:
            return self.batch_size or 0
        return max(self.batch_size or 0, self.peak)

    def _in_time(self) -> bool:
        return self.just_in_time and self.kind == "static" and bool(self.batch_size)

    def _next_batch(self, size: int) -> int:
        """Just in time, while a batch runs: what may wait at the server for the next one.

        Due (the running batch about to end), the next batch, what already waits counted in
        it: a batch sent on top of a full one waits a whole run (a continuous server read as
        static kept a batch waiting for a whole burst, its first one sent by slow start).
        Exploring, a batch at once, but only behind requests whose ends spread (see
        :meth:`_lead`). A partial next batch is filled at once only while no due time is known
        (else it would run alone)."""
        wait, batches = len(self._waiting), self._batches
        if batches.due_now:
            return max(wait, size)
        if batches.explore and self._staggered():
            return wait + size
        if wait and batches.due(self._running, self.step()) is None:
            return max(wait, self._batch)  # (to B: exact, or a lower bound)
        return wait

    def _staggered(self) -> bool:
        return self._batches.staggered(self._running, self._unit())

    def _lead(self) -> int:
        """Steps before the running batch's end that the next one goes: 2; 8 when it explores
        and the running requests end together (a continuous server with free slots starts it
        at once, a refill; a full one, or a static one, keeps it 8 steps, not a whole run)."""
        return 8 if self._batches.explore and not self._staggered() else 2

    def _admit_batch(self, queue: FairQueue, in_flight: int, now: float) -> list[Job]:
        """Static: a request joins the batch waiting at the server only within 2x of its
        longest (or of 16 tokens); the next batch goes when due, or is held (``Batches``)."""
        batches, running = self._batches, len(self._running)
        self._full_next = len(queue) + len(self._waiting) >= self._batch
        if self._in_time() and running and not batches.sent_ahead:
            due = self._due()
            batches.due_now = due is not None and now >= due
        room = self.limit() - in_flight
        if self._in_time() and not running and batches.left_over(self._waiting):
            return []  # the server starts those alone now: ours would miss their batch
        out = take_band(queue, room, now, max(self._waiting_len.values(), default=-math.inf))
        # the next batch: what already waits for it at the server (behind a running one), and out
        room_in_batch = self._batch - (len(self._waiting) if running else 0)
        if out and self._in_time() and batches.hold(out, queue, now, self.step(), room_in_batch):
            for job in reversed(out):
                queue.push_front(job)
            return []
        if out and self._in_time():
            batches.sent_batch(running)
        return out

    def _batch_wakeups(self) -> list[float]:
        """When to look again: a held batch's deadline, when a competitor's wait would prove B,
        and when the running batch is due to end (less a few steps)."""
        times = [self._batches.hold_until]
        if not self._running:
            return times
        if self._b_lower_bound():
            times.append(self._batches.overdue_at(self._waiting, self._overdue()) or -math.inf)
        if self._in_time() and not self._batches.sent_ahead:
            times.append(self._due() or -math.inf)
        return times

    def _due(self) -> float | None:
        """When the next batch goes: :meth:`_lead` steps before the running one's expected end;
        when it is a full one, earlier by what our client takes to get a request on the wire.

        A server gathering a partial batch waits from its first request's arrival (the reference
        server 25 ms): a full batch whose last request comes later than that starts without
        it, and it runs alone after it, a whole run for one request (3 ms a request on a busy
        2-core client: 8 took 25 ms). Only a full one: a partial one goes out sooner, and sent
        earlier each batch of a light load waited at the server past a 4-step TTFT SLO."""
        due = self._batches.due(self._running, self.step(), self._lead())
        if due is None:
            return None
        return due - self._send_lead() if self._full_next else due

    def _note_wire(self, job: Job, traces: Sequence[StreamTrace]) -> None:
        """How long after its admission ``job``'s request was sent (each clock's own origin)."""
        t = traces[0] if traces else None
        if t is not None and t.sent is not None and t.enqueued is not None and job.sent:
            self._wire.append(max(0.0, (t.sent - t.enqueued) - (job.sent - job.enqueued)))

    def _send_lead(self) -> float:
        """The time a batch takes to reach the wire: the p90 of recent requests' (0: unknown)."""
        waits = sorted(self._wire)
        return waits[int(0.9 * (len(waits) - 1))] if waits else 0.0

    def _due_slots(self) -> int | None:
        """Kind unknown, slow start over (a request waited for a slot), the running requests'
        expected ends within 4 steps of each other: all of them once the last is due within 2
        steps, else 0. Their slots (or their batch) free then, and what is sent for them starts
        at once; sent earlier it would wait there a whole run (an 8-slot server running a burst
        in bands, which reads as static B=8, kept 8 long requests waiting 150 steps), and sent
        one by one as each is due the last would miss a static server's batch. None otherwise:
        a step or a length unknown, or ends that spread (a refill soon tells)."""
        due = self._slots_due_at()
        if due == -math.inf:
            return None
        return len(self._running) if due <= self._now else 0

    def _slots_due_at(self) -> float:
        """When :meth:`_due_slots` turns to all: the last expected end less 2 steps (-inf when
        the rule does not apply)."""
        if self.kind != "unknown" or self.slow_start or not self._running:
            return -math.inf
        if not (step := self.step()) or self._staggered():
            return -math.inf
        return max(self._batches.ends(self._running, step)) - 2 * step

    def _b_lower_bound(self) -> bool:
        return self.kind == "static" and not self.batch_exact

    def _waited_out(self, now: float) -> None:
        """B is exact once a request that competed for the running batch has waited 8 steps while
        as many ran as ever did (a batch's 1-token answers end at their first token: fewer run)."""
        if self._b_lower_bound() and self.batch_size:
            size = self._batches.waited_out(self._waiting, self._batch, self._overdue(), now)
            self._exact(size, "a full batch ran while a request sent with it waited")

    def _exact(self, size: int | None, why: str) -> None:
        if size is not None:
            before = self.describe()
            self.batch_size, self.batch_exact = size, True
            self._log_change(f"{before} -> {self.describe()}: {why}")
