"""``auto`` on a static server sends a full next batch early enough for all of it to be there
when the running one ends: 2 steps before, and earlier by the time our own client takes to
send a request; a partial one 2 steps before (sent earlier, a light load's batches wait at
the server past a 4-step TTFT SLO: static-B8's 50% open loop).

Over real HTTP a busy 2-core client puts a request on the wire every 3 ms, so the last of a
batch of 8 goes 25 ms after the first; 2 steps before the end, the server (which starts a
partial batch after a 25 ms gathering) forms its batch without it, and it runs alone after
it, a whole run for one request (on a burst of 160: 2-7 server batches short of B a run,
makespan 1.05x sorted's).
"""

from __future__ import annotations

import pytest

from fairstream import Auto, StreamTrace
from fairstream._dispatch._job import Job
from fairstream._dispatch._queue import FairQueue
from fairstream._dispatch.policies.auto._static import next_batch_due
from tests.dispatch._situate import situate

STEP = 0.010
T0 = 5.0
LENGTH = 40


def _static_batch_running(wire: list[float]) -> Auto:
    """A static B=8 server running a batch of 8 requests of ``LENGTH`` tokens, first tokens at
    T0; earlier requests reached the wire ``wire`` seconds after their admission."""
    auto = Auto()
    s = situate(auto, "static", slow_start=False, batch_size=8, batch_exact=True)
    s.tpots.extend([STEP] * 8)
    for i, delay in enumerate(wire):
        done = Job(expected_tokens=1, enqueued=0.0)
        done.sent = 1.0 + i
        # the trace counts from its own origin: only differences within it are comparable
        trace = StreamTrace(request_id=f"r{i}", enqueued=100.0, sent=100.0 + done.sent + delay)
        auto._note_wire(done, [trace])
    for _ in range(8):
        job = Job(expected_tokens=LENGTH, enqueued=0.0)
        auto.on_send(job, T0 - 2 * STEP)
        auto.on_first_token(job, T0)
    return auto


def test_what_our_client_takes_to_send_is_measured_per_request() -> None:
    auto = _static_batch_running([0.003 * k for k in range(10)])
    assert auto.situation.send_lead() == pytest.approx(0.024)


def _due_with_queued(auto: Auto, queued: int) -> float | None:
    """When ``auto`` sends the next batch, ``queued`` requests waiting in our queue."""
    queue = FairQueue()
    for _ in range(queued):
        queue.push(Job(expected_tokens=LENGTH, enqueued=T0))
    assert auto.admit(queue, 8, T0 + STEP) == []  # the running batch is far from its end
    return next_batch_due(auto.situation)


@pytest.mark.parametrize("queued", [8, 20])
def test_a_full_next_batch_goes_2_steps_and_a_send_before_the_end(queued: int) -> None:
    end = T0 + LENGTH * STEP
    quick = _due_with_queued(_static_batch_running([0.0] * 10), queued)
    slow = _due_with_queued(_static_batch_running([0.025] * 10), queued)
    assert quick is not None and slow is not None
    assert quick == pytest.approx(end - 2 * STEP)
    assert slow == pytest.approx(quick - 0.025)


def test_a_partial_next_batch_goes_2_steps_before_the_end() -> None:
    end = T0 + LENGTH * STEP
    slow = _due_with_queued(_static_batch_running([0.025] * 10), 5)
    assert slow == pytest.approx(end - 2 * STEP)
