"""When ``auto`` takes a static server's batch size as exact: mid-batch, from a request that
competed for the running batch and waited, as well as at a batch's end.

Driven through the policy's own hooks with the event order real HTTP gave: the next batch's
first tokens reach us before the last stream of the running one closes, so a batch end with
nothing running (the first proof) never shows. The starting state (static, B=16 a lower bound,
what the detector reads from a first batch of 16) is set directly; the rest is events.
"""

from __future__ import annotations

from fairstream import Auto
from fairstream._dispatch._job import Job
from fairstream._dispatch._queue import FairQueue

B = 16
STEP = 0.01  # seconds; the quickest first token is 5 steps


def _static_lower_bound(b: int = B) -> Auto:
    auto = Auto()
    auto.kind, auto.batch_size, auto.batch_exact = "static", b, False
    auto.slow_start = False
    return auto


def _send(auto: Auto, n: int, at: float, tokens: int = 128) -> list[Job]:
    jobs = [Job(expected_tokens=tokens, enqueued=at) for _ in range(n)]
    for job in jobs:
        auto.on_send(job, at)
    return jobs


def test_a_request_sent_with_a_full_batch_that_waits_8_steps_makes_b_exact() -> None:
    auto = _static_lower_bound()
    batch, competitors = _send(auto, B, 0.0), _send(auto, B, 0.0)
    for job in batch:
        auto.on_first_token(job, 5 * STEP)
    wake = auto.next_wakeup(6 * STEP)
    assert wake is not None and 6 * STEP < wake < 40 * STEP  # due well before the batch ends
    auto.admit(FairQueue(), 2 * B, wake)
    assert auto.batch_exact and auto.batch_size == B
    # over HTTP the next batch starts before the last of this one is heard to end
    for job in competitors:
        auto.on_first_token(job, 130 * STEP)
    for job in batch:
        auto.on_done(job, 131 * STEP, [])
    assert auto.batch_exact and auto.batch_size == B


def test_a_request_sent_mid_batch_proves_nothing() -> None:
    """A static server never refills a running batch: a request sent after it formed waits
    whatever the batch size."""
    auto = _static_lower_bound()
    batch = _send(auto, B, 0.0)
    for job in batch:
        auto.on_first_token(job, 5 * STEP)
    _send(auto, B, 6 * STEP)
    assert auto.next_wakeup(7 * STEP) is None
    auto.admit(FairQueue(), 2 * B, 60 * STEP)
    assert not auto.batch_exact


def test_a_batch_smaller_than_the_most_seen_running_proves_nothing() -> None:
    """A batch whose short answers already ended runs fewer than B: a competitor's wait then
    does not say B is what runs (a static B=16 server, its lower bound read as 10 and then
    taken as exact, took 1.16x sorted's makespan in virtual time)."""
    auto = _static_lower_bound(10)
    first = _send(auto, B, 0.0, tokens=4)
    for job in first:
        auto.on_first_token(job, 5 * STEP)
    for job in first:
        auto.on_done(job, 9 * STEP, [])
    batch, competitors = _send(auto, 10, 10 * STEP), _send(auto, 4, 10 * STEP)
    for job in batch:
        auto.on_first_token(job, 15 * STEP)
    auto.admit(FairQueue(), 14, 60 * STEP)
    assert not auto.batch_exact
    assert competitors  # they still wait
