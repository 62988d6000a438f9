"""Each of ``auto``'s states as a pure object, on a made-up situation (no server, no clock)."""

from __future__ import annotations

from fairstream._dispatch._job import Job
from fairstream._dispatch._queue import FairQueue
from fairstream._dispatch.policies.auto._continuous import Continuous
from fairstream._dispatch.policies.auto._fallback import Fallback, due_slots
from fairstream._dispatch.policies.auto._probing import Probing
from fairstream._dispatch.policies.auto._sequential import Sequential
from fairstream._dispatch.policies.auto._situation import Situation
from fairstream._dispatch.policies.auto._static import Static

STEP = 0.01


def _running(s: Situation, lengths: list[float], first: float = 1.0) -> None:
    """Requests of ``lengths`` tokens running, first tokens at ``first``; the step known."""
    s.tpots.extend([STEP] * 4)
    s.fastest[17] = 2 * STEP
    for i, n in enumerate(lengths):
        s.runs[i] = first
        s.batches.lengths[i] = n


def _queue(*lengths: float) -> FairQueue:
    q = FairQueue()
    for n in lengths:
        q.push(Job(expected_tokens=n, enqueued=0.0))
    return q


def _no_plain() -> list[Job]:
    raise AssertionError("this state chooses its own jobs")


def test_probing_offers_what_slow_start_allows() -> None:
    s = Situation(start=8)
    s.offer = 12
    _running(s, [64] * 5)
    assert Probing().budget(s) == (7, False)  # 12 in flight, 5 of them running
    s.offer = 3
    assert Probing().budget(s).wait == 0


def test_fallback_refills_requests_that_end_together_just_in_time() -> None:
    s = Situation(start=8)
    s.slow_start, s.peak = False, 8
    _running(s, [100] * 8)  # all due at 1.0 + 100 steps = 2.0
    s.now = 1.5
    assert due_slots(s) == 0 and Fallback().budget(s) == (0, True)  # none before they end
    s.now = 2.0 - 2 * STEP
    assert due_slots(s) == 8 and Fallback().budget(s) == (8, True)  # all of them, at once
    assert Fallback().wakeups(s, 1.5) == [2.0 - 2 * STEP]


def test_fallback_offers_the_largest_wave_when_the_ends_spread() -> None:
    s = Situation(start=8)
    s.slow_start, s.peak = False, 12
    _running(s, [10, 200])  # ends 190 steps apart
    assert due_slots(s) is None
    assert Fallback().budget(s) == (12, False)


def test_continuous_fills_the_proved_slots_and_probes_for_one_more() -> None:
    s = Situation(start=8, handover=0)
    s.slow_start, s.peak, s.probe = False, 16, 1
    _running(s, [64] * 10)
    assert Continuous().budget(s) == (6 + 1, True)
    s.slow_start, s.offer = True, 12  # its ramp: the offer decides
    assert Continuous().budget(s) == (2, False)


def test_continuous_hands_a_slot_over_a_step_before_its_end() -> None:
    s = Situation(start=8, handover=1.0)
    s.slow_start, s.peak = False, 4
    _running(s, [10, 50, 50, 50])  # the first slot due at 1.0 + 10 steps
    s.now = 1.0 + 5 * STEP
    assert Continuous().budget(s).wait == 0
    s.now = 1.0 + 9 * STEP
    assert Continuous().budget(s).wait == 1  # its next request may wait there one step
    (t,) = [t for t in Continuous().wakeups(s, 1.0) if t > 1.0]
    assert abs(t - (1.0 + 9 * STEP)) < 1e-9


def test_continuous_sends_critical_first_at_a_bursts_tail() -> None:
    """Nothing arrived for 4 steps: the longest go first, so the burst ends soonest."""
    s = Situation(start=8, handover=0)
    s.slow_start, s.peak = False, 4
    _running(s, [64, 64])
    q = _queue(8, 256, 16)
    out = Continuous().admit(s, q, 2, 10.0, lambda: 3, _no_plain)
    assert out[0].expected_tokens == 256


def test_static_sends_the_next_batch_only_when_the_running_one_is_due() -> None:
    s = Situation(start=8)
    s.slow_start, s.batch_size, s.batch_exact = False, 4, True
    _running(s, [100] * 4)  # due at 2.0
    q = _queue(*[100] * 8)
    assert Static().budget(s) == (0, True)
    assert Static().admit(s, q, 4, 1.5, lambda: 4 + Static().budget(s).wait, _no_plain) == []
    out = Static().admit(s, q, 4, 2.0 - STEP, lambda: 4 + Static().budget(s).wait, _no_plain)
    assert len(out) == 4 and s.batches.sent == 1


def test_static_keeps_lengths_over_twice_apart_out_of_one_batch() -> None:
    s = Situation(start=8)
    s.slow_start, s.batch_size, s.batch_exact = False, 4, True
    s.tpots.extend([STEP] * 4)
    q = _queue(8, 8, 300, 300)
    out = Static().admit(s, q, 0, 0.0, lambda: 4, _no_plain)
    assert [j.expected_tokens for j in out] == [8, 8]


def test_static_with_a_lower_bound_sends_twice_it_so_a_full_batch_shows() -> None:
    s = Situation(start=8)
    s.batch_size, s.batch_exact = 4, False
    assert Static().budget(s).wait == 8
    assert Static().label(s) == "static, B=4"


def test_sequential_sends_the_next_one_as_the_running_one_is_due() -> None:
    s = Situation(start=8, handover=1.0)
    s.slow_start = False
    assert Sequential().budget(s) == (1, True)  # nothing runs: one goes
    _running(s, [20])
    s.now = 1.0 + 10 * STEP
    assert Sequential().budget(s).wait == 0
    s.now = 1.0 + 19 * STEP
    assert Sequential().budget(s).wait == 1
    s.sequential_wait = True
    assert Sequential().budget(s) == (1, False)


def test_a_burst_of_one_band_of_long_answers_goes_as_one_wave() -> None:
    """Cold, 12 answers of 96 tokens at once: all of them, or a static server of B=16 runs a
    first round of 8 and the other 4 as a second batch as long as the first. A band of short
    answers keeps the ramp (a wave of them costs a prefill-heavy server its first tokens)."""
    from fairstream._dispatch.policies.auto._wave import FirstWave

    assert FirstWave(16, 0.005).size(_queue(*[96] * 12)) == 12
    assert FirstWave(16, 0.005).size(_queue(*[96] * 40)) == 16  # the cap
    assert FirstWave(16, 0.005).size(_queue(*[8] * 12)) is None
    assert FirstWave(16, 0.005).size(_queue(8, 8, 128)) == 2  # the shortest band, as before
