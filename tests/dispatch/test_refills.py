"""A refill (a request starting while one started before it was sent still runs) tells
continuous batching only when the earlier one outlives the start by more than stamp jitter."""

from __future__ import annotations

from fairstream import Auto
from fairstream._dispatch._job import Job


def _batches(auto: Auto, overlap: float, step: float = 0.01) -> None:
    """Three batches of 4 requests, each batch sent while the one before runs (as a static
    server's queue fills); the first of each batch starts ``overlap`` before the previous
    batch's last end (negative: a step after it)."""
    t = 0.0
    jobs = [Job(expected_tokens=8) for _ in range(4)]
    for job in jobs:
        auto.on_send(job, t)
    t += step
    for job in jobs:
        auto.on_first_token(job, t)
    for _ in range(2):
        nxt = [Job(expected_tokens=8) for _ in range(4)]
        for job in nxt:
            auto.on_send(job, t + 2 * step)
        end = t + 8 * step
        start = end - overlap
        events = [(end + i * 0.0005, "done", j) for i, j in enumerate(jobs)]
        events += [(start + i * 0.0005, "first", j) for i, j in enumerate(nxt)]
        for when, kind, job in sorted(events, key=lambda e: e[0]):
            if kind == "done":
                auto.on_done(job, when, [])
            else:
                auto.on_first_token(job, when)
        jobs, t = nxt, start
    for job in jobs:
        auto.on_done(job, t + 8 * step, [])


def test_a_start_a_few_ms_before_the_last_end_is_no_refill() -> None:
    """The swap a busy client's (or another process's) stamps make on a static server."""
    auto = Auto()
    _batches(auto, overlap=0.004)
    assert auto.situation.refills.count == 0
    assert auto.kind != "continuous", auto.changes


def test_a_start_well_before_earlier_ones_end_is_a_refill() -> None:
    """Requests that start while the batch before still has steps to run: continuous."""
    auto = Auto()
    _batches(auto, overlap=0.05)
    assert auto.situation.refills.count >= 2
    assert auto.kind == "continuous", auto.changes
