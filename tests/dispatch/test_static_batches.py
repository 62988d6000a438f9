"""``auto`` on a static server (or a continuous one read as static): when B is exact, and what
goes when the running batch is due to end.

Driven through the policy's own hooks with the event order real HTTP gave: the next batch's
first tokens reach us before the last stream of the running one closes, so a batch end with
nothing running (the first proof of B) never shows. The starting state (static, B=16, what the
detector reads from a first batch of 16) is set directly; the rest is events.
"""

from __future__ import annotations

from fairstream import Auto, StreamTrace
from fairstream._dispatch._job import Job
from fairstream._dispatch._queue import FairQueue
from fairstream._trace import Usage
from tests.dispatch._situate import situate

B = 16
STEP = 0.01  # seconds; the quickest first token is 5 steps


def _static_lower_bound(b: int = B, exact: bool = False) -> Auto:
    auto = Auto()
    situate(auto, "static", batch_size=b, batch_exact=exact, slow_start=False)
    return auto


def _ran(auto: Auto, tokens: int, at: float) -> None:
    """A request of ``tokens`` that ran alone from ``at``: the policy learns the step."""
    (job,) = _send(auto, 1, at, tokens)
    first = at + 5 * STEP
    auto.on_first_token(job, first)
    times = tuple(first + i * STEP for i in range(tokens))
    trace = StreamTrace(request_id=str(job.jid), sent=at, first_content=first,
                        last_content=times[-1], end=times[-1], chunk_times=times,
                        chunk_tokens=(1,) * tokens, chunk_chars=(4,) * tokens,
                        usage=Usage(completion_tokens=tokens), finish_reason="length")  # fmt: skip
    auto.on_done(job, times[-1], [trace])


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


def _due_with(waiting: int, tokens: list[int]) -> tuple[Auto, float]:
    """B=16 exact, a batch of ``tokens`` running, ``waiting`` requests sent mid-batch; the time
    the next batch is due."""
    auto = _static_lower_bound(exact=True)
    _ran(auto, 8, 0.0)
    batch = [Job(expected_tokens=n, enqueued=1.0) for n in tokens]
    for job in batch:
        auto.on_send(job, 1.0)
    for job in batch:
        auto.on_first_token(job, 1.0 + 5 * STEP)
    _send(auto, waiting, 1.1)
    wake = auto.next_wakeup(1.1)
    assert wake is not None
    return auto, wake


def test_a_full_batch_already_waiting_is_the_next_one() -> None:
    """Due, what waits at the server counts in the next batch: sent on top of a full one, a
    batch would wait a whole run (a continuous server read as static kept one batch waiting
    for a whole burst: 4-step goodput 19 tok/s where 1100 were possible)."""
    auto, due = _due_with(B, [128] * B)
    assert 1.0 + 5 * STEP + 120 * STEP < due < 1.0 + 5 * STEP + 128 * STEP  # a few steps early
    auto.admit(FairQueue(), 2 * B, due)
    assert auto.limit() == 2 * B  # the running batch and the waiting one, nothing on top
    partial, due = _due_with(B // 2, [128] * B)
    partial.admit(FairQueue(), B + B // 2, due)
    assert partial.limit() == 2 * B  # filled to a batch


def test_an_explored_batch_goes_8_steps_early_when_the_running_one_ends_together() -> None:
    """Sent at once to explore, a batch behind 16 requests that end together waits their whole
    run on a full continuous server; 8 steps early, a continuous server with free slots still
    starts it at once (a refill), and a full one keeps it 8 steps."""
    together, due = _due_with(0, [128] * B)
    together.situation.batches.explore = True
    assert together.limit() == B  # not at once
    early = together.next_wakeup(1.1)
    assert early is not None and abs(early - (due - 6 * STEP)) < STEP / 10  # 8 steps, not 2
    spread, _ = _due_with(0, [64, 128] * (B // 2))
    spread.situation.batches.explore = True
    assert spread.limit() == 2 * B  # at once: a refill shows at the first end
