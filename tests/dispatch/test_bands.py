"""``auto`` cold on a burst of two bands (8 and 128 tokens) whose first wave overfills an
8-slot server: nothing is sent to wait inside the server for a whole run.

Driven through the policy's hooks in the order real HTTP gave (the first wave's starts reach us
before its other half has waited 4 steps), then in virtual time on the reference engine. Over
real HTTP (8 slots, the demo burst at full size) the long requests waited
15 and 150 steps for slots; TTFT p50 18 -> 3.0 steps.
"""

from __future__ import annotations

import random

from fairstream import Auto, StreamTrace
from fairstream._detect import BatchingReport
from fairstream._dispatch._job import Job
from fairstream._dispatch._queue import FairQueue
from fairstream._dispatch.policies._fixed import Fixed
from fairstream._dispatch.policies.auto._state import REFILLED
from fairstream._dispatch.policies.auto._verdict import static_size
from fairstream._trace import Usage
from fairstream.server import ServerConfig
from fairstream.sim import SimRequest, SimRun, simulate

STEP = 0.01  # seconds; the quickest first token is 3 steps
T0 = 0.1  # the burst's first admission (its gathering over)


def _trace(job: Job, first: float, tokens: int) -> StreamTrace:
    times = tuple(first + i * STEP for i in range(tokens))
    return StreamTrace(request_id=str(job.jid), sent=T0, first_content=first,
                       last_content=times[-1], end=times[-1], chunk_times=times,
                       chunk_tokens=(1,) * tokens, chunk_chars=(4,) * tokens,
                       usage=Usage(completion_tokens=tokens), finish_reason="length")  # fmt: skip


def _start(auto: Auto, jobs: list[Job], at: float) -> None:
    for job in jobs:
        auto.on_first_token(job, at)


def _cold_burst() -> tuple[Auto, FairQueue, list[Job]]:
    """17 short and 16 long requests queued; the first wave (16 short) sent and half of it
    started on an 8-slot server: the policy, the queue, the wave."""
    auto, queue = Auto(), FairQueue()
    for n in [8] * 17 + [128] * 16:
        queue.push(Job(expected_tokens=n, enqueued=0.0))
    wave = auto.admit(queue, 0, T0)
    assert [j.expected_tokens for j in wave] == [8] * 16
    for job in wave:
        auto.on_send(job, T0)
    _start(auto, wave[:8], T0 + 3 * STEP)
    return auto, queue, wave


def test_a_longer_band_waits_while_one_sent_with_the_first_starters_waits() -> None:
    """Slow start earned 8 more by those 8 starts; only the request of the waiting band goes
    (on a static server it joins their batch), the long ones wait for the slots."""
    auto, queue, wave = _cold_burst()
    sent = auto.admit(queue, len(wave), T0 + 3.5 * STEP)
    assert [j.expected_tokens for j in sent] == [8]


def test_a_full_server_of_unknown_kind_gets_the_next_band_2_steps_before_its_end() -> None:
    auto, queue, wave = _cold_burst()
    (extra,) = auto.admit(queue, len(wave), T0 + 3.5 * STEP)
    auto.on_send(extra, T0 + 3.5 * STEP)
    for job in wave[:8]:
        auto.on_done(job, T0 + 11 * STEP, [_trace(job, T0 + 3 * STEP, 8)])
    _start(auto, wave[8:], T0 + 12 * STEP)  # waited for the slots: slow start ends
    assert not auto.slow_start and auto.kind == "unknown"
    now = T0 + 13 * STEP
    assert auto.admit(queue, 9, now) == []  # a batch's worth sent now would wait 8 steps
    wake = auto.next_wakeup(now)
    end = T0 + 20 * STEP  # the running band's expected end: first token + 8 steps
    assert wake is not None and end - 2.5 * STEP < wake < end - 1.5 * STEP
    sent = auto.admit(queue, 9, wake)
    assert [j.expected_tokens for j in sent] == [128] * 7  # 8 slots, one short already waits
    # a full batch ran while a request sent with it waited: a static verdict's B is exact
    assert static_size(BatchingReport("static", 0.9, batch_size=8), auto.situation) == (8, True)
    assert static_size(BatchingReport("static", 0.9, batch_size=16), auto.situation) == (16, False)


def test_auto_leaves_no_band_waiting_inside_an_8_slot_server() -> None:
    """Virtual time, the demo burst (16 x 8 + 16 x 128 tokens, shuffled), 3 seeds: auto's
    4-step goodput against a fixed limit of 8, and its makespan against sorted's."""
    config = ServerConfig(mode="continuous", max_num_seqs=8, step_ms=20.0, per_seq_ms=0.5)
    slo = 4 * config.cost_model().step_seconds(1, 0)

    def goodput(run: SimRun) -> float:
        span = max(r.end or 0.0 for r in run.results)
        prompt = [r for r in run.results if r.first_token is not None and r.sent is not None]
        return sum(r.output_tokens for r in prompt if r.first_token - r.sent <= slo) / span

    for seed in range(3):
        lengths = [8, 128] * 16
        random.Random(seed).shuffle(lengths)
        jobs = [SimRequest(0.0, 16, n, expected_tokens=n) for n in lengths]
        auto = simulate(config.build_engine(), jobs, Auto())
        fixed = simulate(config.build_engine(), jobs, Fixed(8))
        ordered = sorted(jobs, key=lambda j: j.output_tokens)
        assert auto.makespan <= 1.03 * simulate(config.build_engine(), ordered).makespan
        assert goodput(auto) >= 0.8 * goodput(fixed), seed


def test_slow_start_resumed_on_a_continuous_server_starts_from_the_peak() -> None:
    """Slow start ended at a late start below the peak (the first of the waiting half, its
    slot's end read just before): when the server then shows continuous, slow start resumes,
    but from the peak + 2, not from the 24 the first 8 starts earned (over HTTP those sent 8
    long requests to wait 147 steps on the 8-slot server)."""
    auto, _, wave = _cold_burst()
    for job in wave[:8]:
        auto.on_done(job, T0 + 11 * STEP, [_trace(job, T0 + 3 * STEP, 8)])
    auto.on_first_token(wave[8], T0 + 12 * STEP)  # 1 running, the peak 8
    assert not auto.slow_start
    auto._move(REFILLED, "requests started while earlier ones still ran")
    assert auto.slow_start and auto.limit() <= auto.peak + 2


def test_a_short_band_below_the_offer_goes_alone_until_its_first_start() -> None:
    """Cold, 6 short and 6 long requests, slow start offering 8: only the 6 short go. Sent with
    them, 2 long ones reached a static B=4 server's first batch in one run of four over real
    HTTP (the order of 8 simultaneous sends is the network's) and held 3 short answers there
    for a long one's whole run: short p50 0.80 s instead of 0.08 s."""
    auto, queue = Auto(), FairQueue()
    for n in [8, 64] * 6:
        queue.push(Job(expected_tokens=n, enqueued=0.0))
    wave = auto.admit(queue, 0, T0)
    assert [j.expected_tokens for j in wave] == [8] * 6
    for job in wave:
        auto.on_send(job, T0)
    assert auto.admit(queue, len(wave), T0 + STEP) == []  # no start yet: the long ones wait
    _start(auto, wave[:4], T0 + 3 * STEP)
    assert {j.expected_tokens for j in auto.admit(queue, len(wave), T0 + 3 * STEP)} <= {64}


def test_a_failed_wave_does_not_hold_the_rest() -> None:
    """A wave request that ends without a first token (an error) lets the others go."""
    auto, queue = Auto(), FairQueue()
    for n in [8, 64, 64]:
        queue.push(Job(expected_tokens=n, enqueued=0.0))
    (short,) = auto.admit(queue, 0, T0)
    auto.on_send(short, T0)
    auto.on_done(short, T0 + STEP, [])
    assert [j.expected_tokens for j in auto.admit(queue, 0, T0 + STEP)] == [64, 64]
