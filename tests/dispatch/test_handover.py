"""``auto`` on a continuous server at its peak: a slot's next request goes a step before the
slot's expected end (a handover), not when its end reaches us, at a burst's tail and while
requests keep arriving alike.

Driven through the policy's hooks; it pays over real HTTP only (virtual time has no trip for a
stream's end to make, so nothing to gain there).
"""

from __future__ import annotations

import pytest

from fairstream import Auto
from fairstream._dispatch._job import Job
from fairstream._dispatch._queue import FairQueue
from tests.dispatch._situate import situate

STEP = 0.01  # seconds
T0 = 1.0  # the 8 running requests' first tokens


def _at_peak(auto: Auto, queue: FairQueue, arrived: float) -> list[Job]:
    """A continuous 8-slot server running 8 requests (first tokens at T0, lengths 10..80 steps,
    so the first slot is due at T0 + 10 steps); 4 more queued, the last arrived at ``arrived``."""
    s = situate(auto, "continuous", slow_start=False, peak=8)
    s.tpots.extend([STEP] * 4)  # the step, as finished streams showed it
    s.fastest[17] = 2 * STEP  # the quickest first token: 2 steps
    running = [Job(expected_tokens=10 * (i + 1), enqueued=0.0) for i in range(8)]
    for job in running:
        auto.on_send(job, T0 - 2 * STEP)
        auto.on_first_token(job, T0)
    for i in range(4):
        queue.push(Job(expected_tokens=50, enqueued=0.0 if i < 3 else arrived))
    return running


def test_a_slot_due_within_a_step_gets_its_next_request() -> None:
    auto, queue = Auto(), FairQueue()
    _at_peak(auto, queue, arrived=0.0)
    now = T0 + 5 * STEP
    assert auto.admit(queue, 8, now) == []  # no slot due: nothing waits at the server
    wake = auto.next_wakeup(now)
    due = T0 + 10 * STEP  # the 10-token request's end
    assert wake == pytest.approx(due - STEP)
    (handed,) = auto.admit(queue, 8, wake)
    auto.on_send(handed, wake)
    assert auto.admit(queue, 9, wake) == []  # one slot due, one request


@pytest.mark.parametrize("after", [0.5, 3.5])
def test_a_handovers_first_token_is_timed_from_its_slots_due_time(after: float) -> None:
    """Half a step after the slot's end (1.5 from its send) is no quickest first token (a slot
    taken at once shows 2 steps); 3.5 steps after (4.5 from its send, 2.5 past the quickest)
    is no late start that would drop the probe the slot's end allowed: it waited for that end."""
    auto, queue = Auto(), FairQueue()
    running = _at_peak(auto, queue, arrived=0.0)
    due = T0 + 10 * STEP
    (handed,) = auto.admit(queue, 8, due - STEP)
    auto.on_send(handed, due - STEP)
    auto.on_done(running[0], due, [])
    auto.on_first_token(handed, due + after * STEP)
    assert auto.situation.quickest == pytest.approx(2 * STEP)
    assert auto.situation.probe == 1 and auto.peak == 8


def test_no_handover_when_turned_off() -> None:
    auto, queue = Auto(handover=0), FairQueue()
    _at_peak(auto, queue, arrived=0.0)
    assert auto.admit(queue, 8, T0 + 9.5 * STEP) == []


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_a_negative_handover_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="handover must be >= 0"):
        Auto(handover=bad)


@pytest.mark.parametrize("arrived", [0.0, T0 + 8.5 * STEP])
def test_a_handover_while_requests_keep_arriving(arrived: float) -> None:
    """The last request arrived a step ago (or long ago): either way the slot due in half a
    step gets its next request now, and only that one (holding it back while a request
    arrived within 4 steps idles slots under open-loop load at 150%)."""
    auto, queue = Auto(), FairQueue()
    _at_peak(auto, queue, arrived=arrived)
    assert auto.admit(queue, 8, T0 + 8.7 * STEP) == []  # 1.3 steps before: not yet due
    assert len(auto.admit(queue, 8, T0 + 9.5 * STEP)) == 1


def _late_start(overtaken: bool) -> Auto:
    """A continuous 16-slot server at its proven peak: 16 short requests sent, and (when
    ``overtaken``) one more sent right after them, above the peak; the last short one starts
    10 steps late, after the first 15 shorts ended (a probe of one above the peak, as a warm
    start's)."""
    auto = Auto()
    s = situate(auto, "continuous", slow_start=False, peak=16, probe=1)
    s.tpots.extend([STEP] * 4)
    s.fastest[17] = 2 * STEP
    shorts = [Job(expected_tokens=8, enqueued=0.0) for _ in range(16)]
    for job in shorts:
        auto.on_send(job, 0.0)
    if overtaken:
        auto.on_send(Job(expected_tokens=128, enqueued=0.0), STEP / 10)
    for job in shorts[:15]:
        auto.on_first_token(job, 2 * STEP)
    for job in shorts[:15]:
        auto.on_done(job, 10 * STEP, [])
    auto.on_first_token(shorts[15], 12 * STEP)
    return auto


def test_a_late_start_lowers_the_peak_only_when_nothing_went_above_it() -> None:
    """Over HTTP a request sent above the peak can reach the server first and take the last
    slot: the late start then proves no fewer slots (a warm start that lowered its peak to 15
    left its 16th long request a whole long run in our queue: 1.47x naive's makespan)."""
    assert _late_start(overtaken=True).peak == 16
    assert _late_start(overtaken=False).peak == 15
