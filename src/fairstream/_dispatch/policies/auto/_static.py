"""STATIC(B): the next batch of B similar lengths goes just in time as the running one ends.

A static server never refills a running batch; at its end it starts whatever waits. So the
next batch should reach the server as the running one ends: sent earlier it waits there,
committed; sent later the server idles a round trip. A request joins the batch waiting at the
server only within 2x of its longest (or of 16 tokens), so short requests are not stretched to
a long one's length, and a partial batch of long ones is held while requests keep arriving
(``_batches.py``). While B is a lower bound (no full batch seen) twice it goes, so a full batch
shows. Without ``just_in_time`` (a shared pool's leader, whose samples come late) a full batch
waits at the server when the running one ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._base import Budget, Plain, State
from ._batches import take_band
from ._state import STATIC

if TYPE_CHECKING:
    from ..._job import Job
    from ..._queue import FairQueue
    from ._situation import Situation

__all__ = ["Static", "in_time"]


class Static(State):
    """Batches of similar lengths, each sent as the last is due to end."""

    name = STATIC
    kind = "static"
    caps_slo = False  # a batch's wait is not ours to cut

    def budget(self, s: Situation) -> Budget:
        run, size = s.running, s.batch or s.start
        if in_time(s):  # the next batch when this one ends (or explores)
            if not s.batch_exact:  # a lower bound: twice it, so a full batch shows
                size *= 2
            return Budget(_next_batch(s, size) if run else size, full=True)
        # a full batch waiting when the running one ends
        return Budget(max(run, size if s.batch_exact else 2 * size))

    def admit(
        self,
        s: Situation,
        queue: FairQueue,
        in_flight: int,
        now: float,
        limit: Callable[[], int],
        plain: Plain,
    ) -> list[Job]:
        """Shortest first within a band; the next batch goes when due, or is held."""
        batches, running, timed = s.batches, s.running, in_time(s)
        s.full_next = len(queue) + len(s.waiting) >= s.batch
        if timed and running and not batches.sent_ahead:
            due = next_batch_due(s)
            batches.due_now = due is not None and now >= due
        room = limit() - in_flight
        if timed and not running and batches.left_over(s.waiting):
            return []  # the server starts those alone now: ours would miss their batch
        out = take_band(queue, room, now, max(s.waiting_len.values(), default=-math.inf))
        # the next batch: what already waits for it at the server (behind a running one), and out
        room_in_batch = s.batch - (len(s.waiting) if running else 0)
        if out and timed and batches.hold(out, queue, now, s.step(), room_in_batch):
            for job in reversed(out):
                queue.push_front(job)
            return []
        if out and timed:
            batches.sent_batch(running)
        return out

    def wakeups(self, s: Situation, now: float) -> list[float]:
        """When a competitor's wait would prove B, and when the running batch is due to end
        (less a few steps)."""
        if not s.runs:
            return []
        times = []
        if not s.batch_exact:
            times.append(s.batches.overdue_at(s.waiting, s.overdue()) or -math.inf)
        if in_time(s) and not s.batches.sent_ahead:
            times.append(next_batch_due(s) or -math.inf)
        return times

    def label(self, s: Situation) -> str:
        return f"static, B={s.batch_size}" if s.batch_size else "static"


def in_time(s: Situation) -> bool:
    """Are batches sent just in time (B read, and the setting on)?"""
    return s.just_in_time and bool(s.batch_size)


def _next_batch(s: Situation, size: int) -> int:
    """Just in time, while a batch runs: what may wait at the server for the next one.

    Due (the running batch about to end), the next batch, what already waits counted in it: a
    batch sent on top of a full one waits a whole run (a continuous server read as static kept
    a batch waiting for a whole burst, its first one sent by slow start). Exploring, a batch at
    once, but only behind requests whose ends spread (see :func:`_lead`). A partial next batch
    is filled at once only while no due time is known (else it would run alone)."""
    wait, batches = len(s.waiting), s.batches
    if batches.due_now:
        return max(wait, size)
    if batches.explore and s.staggered():
        return wait + size
    if wait and batches.due(s.runs, s.step()) is None:
        return max(wait, s.batch)  # (to B: exact, or a lower bound)
    return wait


def _lead(s: Situation) -> int:
    """Steps before the running batch's end that the next one goes: 2; 8 when it explores and
    the running requests end together (a continuous server with free slots starts it at once,
    a refill; a full one, or a static one, keeps it 8 steps, not a whole run)."""
    return 8 if s.batches.explore and not s.staggered() else 2


def next_batch_due(s: Situation) -> float | None:
    """When the next batch goes: :func:`_lead` steps before the running one's expected end;
    when it is a full one, earlier by what our client takes to get a request on the wire.

    A server gathering a partial batch waits from its first request's arrival (the reference
    server 25 ms): a full batch whose last request comes later than that starts without it,
    and it runs alone after it, a whole run for one request (3 ms a request on a busy 2-core
    client: 8 took 25 ms). Only a full one: a partial one goes out sooner, and sent earlier
    each batch of a light load waited at the server past a 4-step TTFT SLO."""
    due = s.batches.due(s.runs, s.step(), _lead(s))
    if due is None:
        return None
    return due - s.send_lead() if s.full_next else due
