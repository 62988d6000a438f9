"""Two helpers of :class:`~fairstream.Auto` on continuous servers: the long-first rule for a
burst's tail, and the most requests seen running at once (the slots a server proved)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._trace import StreamTrace
    from .._job import Job
    from .._queue import FairQueue

__all__ = ["critical_first", "most_running"]


def critical_first(
    queue: FairQueue,
    room: int,
    now: float,
    slots: int,
    quiet: float,
    together: float | None = None,
) -> list[Job]:
    """Up to ``room`` jobs, shortest first, except a job longer than the queue's work per slot
    goes now: sent last it would end last and stretch the burst (longest-first is what
    minimises makespan; this applies it only at a burst's tail). Only once nothing has arrived
    for ``quiet`` seconds, and only to what arrived together (within ``together``, by default
    ``quiet``): while requests keep arriving, a long one sent first only makes the short ones
    behind it wait (open-loop arrivals have no last request, and their pauses often outlast
    ``quiet``: on llama.cpp's 4 slots at 100% load that sent long requests first and tripled
    E2E p50)."""
    if room <= 0 or not len(queue):
        return []
    if room >= len(queue):  # all go now: shortest first, so the sends' own time is theirs
        return queue.pop_many(room, now)
    newest = max((j.enqueued for j in queue), default=-math.inf)
    oldest = min((j.enqueued for j in queue), default=-math.inf)
    if now - newest < quiet or newest - oldest >= (quiet if together is None else together):
        return queue.pop_many(room, now)
    known = [j for j in queue if j.expected_tokens is not None]
    work = sum(j.expected_tokens or 0.0 for j in known)
    slots = max(slots, 1)
    longest = max((j.expected_tokens or 0.0 for j in known), default=0.0)
    if longest * slots <= work:  # the usual case: nothing critical, no sort
        return queue.pop_many(room, now)
    out: list[Job] = []
    for job in sorted(known, key=lambda j: -(j.expected_tokens or 0.0)):
        n = job.expected_tokens or 0.0
        if room <= 0 or n * slots <= work:
            break
        queue.remove(job)
        out.append(job)
        work, room = work - n, room - 1
    return out + queue.pop_many(room, now)


def most_running(traces: Iterable[StreamTrace]) -> int:
    """The most requests generating at once (first to last content token) in ``traces``."""
    events = sorted(
        (t, step)
        for tr in traces
        if tr.first_content is not None
        and tr.last_content is not None
        and tr.last_content > tr.first_content
        for t, step in ((tr.first_content, 1), (tr.last_content, -1))
    )  # at a tie the end (-1) sorts first: a slot handed over is not two running
    most = running = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most
