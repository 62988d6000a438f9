"""``auto`` converged on a continuous server drops a slot it does not have: one request
always waiting at the server for the next slot's end shows only as starts about 2 steps late.

Over real HTTP a busy 2-core client read a 16-slot server as 17 slots (a stream's end read
after its slot's next first token), and at 17 in flight every start waited a slot's end,
4-step goodput 0.18x fixed:16's on a burst of 160; the rule lowered the peak only for a
start 4 steps late.
"""

from __future__ import annotations

import pytest

from fairstream import Auto
from fairstream._dispatch._job import Job
from tests.dispatch._situate import situate

STEP = 0.01
T0 = 1.0


def _one_too_many(ttft_steps: float) -> Auto:
    """8 slots, ``auto`` believing 9: 8 run (first tokens at T0, the quickest 2 steps); a 9th
    sent at T0 + 5 steps starts ``ttft_steps`` after its send, a step after a slot freed."""
    auto = Auto(handover=0)
    s = situate(auto, "continuous", slow_start=False, peak=9)
    s.tpots.extend([STEP] * 4)
    s.fastest[17] = 2 * STEP
    running = [Job(expected_tokens=40, enqueued=0.0) for _ in range(8)]
    for job in running:
        auto.on_send(job, T0 - 2 * STEP)
        auto.on_first_token(job, T0)
    ninth = Job(expected_tokens=40, enqueued=0.0)
    sent = T0 + 5 * STEP
    auto.on_send(ninth, sent)
    start = sent + ttft_steps * STEP
    auto.on_done(running[0], start - STEP, [])
    auto.on_first_token(ninth, start)
    return auto


@pytest.mark.parametrize("ttft_steps", [4.5, 6.5])
def test_a_start_that_waited_for_a_slot_lowers_the_peak(ttft_steps: float) -> None:
    """2.5 and 4.5 steps past the quickest first token: it waited for the slot that freed."""
    auto = _one_too_many(ttft_steps)
    assert auto.peak == 8


def test_a_start_a_step_past_the_quickest_keeps_the_peak() -> None:
    """A step of jitter (the step under way when it landed) is no slot wait."""
    auto = _one_too_many(3.0)
    assert auto.peak == 9
