"""Our own client's stalls are no slot waits: the Dispatcher measures its event loop's lag
(``_lag.py``) and ``auto`` takes it off a first token's wait before calling the server full.

Over real HTTP on 2 cores the loop stalled up to 40-190 ms a run on a 64-slot server, and ``auto``
held it at 12-21 in flight.
"""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel

from fairstream import Auto, Dispatcher, Fixed
from fairstream._dispatch._job import Job
from fairstream._dispatch._lag import LoopLag, no_lag
from fairstream._dispatch._queue import FairQueue

from .test_handover import STEP, T0, _at_peak


def _late_start(stall: float) -> Auto:
    """A continuous 8-slot server at its peak (``test_handover._at_peak``), probing; a slot
    ends, the next request's first token comes 8 steps after its send, and our loop stalled
    ``stall`` seconds meanwhile."""
    auto = Auto()
    running = _at_peak(auto, FairQueue(), arrived=0.0)
    auto.situation.probe = 1
    sent = T0 + 20 * STEP
    job = Job(expected_tokens=50, enqueued=0.0)
    auto.on_send(job, sent)
    auto.on_done(running[0], sent + STEP, [])
    stalled_at = sent + 4 * STEP
    auto.client_lag = lambda a, b: stall if a <= stalled_at <= b else 0.0
    auto.on_first_token(job, sent + 8 * STEP)
    return auto


def test_a_first_token_late_by_our_own_stall_is_no_slot_wait() -> None:
    auto = _late_start(stall=7 * STEP)  # 8 steps, 7 of them our loop's: found its slot at once
    assert auto.situation.probe == 1 and auto.situation.misses == 0 and auto.peak == 8


def test_a_first_token_as_late_without_a_stall_is_a_slot_wait() -> None:
    auto = _late_start(stall=0.0)
    assert (
        auto.situation.probe == 0 and auto.situation.misses == 1
    )  # the server is full: probe again later
    assert auto.peak == 8  # (8 running: no fewer slots than that)


def _busy(seconds: float) -> None:
    """The stimulus: our loop kept from running (CPU-bound, as a busy client's is)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def test_loop_lag_sees_a_stall_while_busy_and_sleeps_while_idle() -> None:
    busy = True
    lag = LoopLag(lambda: busy, interval=0.005)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lag.run)
        await anyio.lowlevel.checkpoint()  # the monitor is in its 5 ms sleep
        before = time.perf_counter()
        _busy(0.05)  # our loop blocked for 50 ms
        while not lag._stalls:
            await anyio.lowlevel.checkpoint()
        after = time.perf_counter()
        assert 0.04 <= lag.within(before, after) < 1.0
        assert lag.within(before - 10.0, before - 5.0) == 0.0  # nothing long before it
        busy = False
        while not lag._work.statistics().tasks_waiting:  # asleep until requests go out
            await anyio.lowlevel.checkpoint()
        seen = len(lag._stalls)
        _busy(0.02)  # blocked again, idle: no timer to be late
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        assert len(lag._stalls) == seen
        busy = True
        lag.wake()
        for _ in range(3):  # the monitor wakes and goes back to its 5 ms sleep
            await anyio.lowlevel.checkpoint()
        _busy(0.02)
        while len(lag._stalls) == seen:
            await anyio.lowlevel.checkpoint()
        tg.cancel_scope.cancel()


async def test_only_a_policy_that_reads_the_lag_gets_it_measured() -> None:
    """``auto`` reads the loop's stalls; a fixed limit does not, and its Dispatcher runs no 5 ms
    timer for it."""
    async with Dispatcher(Auto()) as d:
        assert d._measure_lag and d._policy.client_lag == d._lag.within
    async with Dispatcher(Fixed(4)) as d:
        assert not d._measure_lag and d._policy.client_lag is no_lag


def test_a_stall_as_the_first_wave_goes_is_not_the_servers_first_token_time() -> None:
    """In a fresh process the openai SDK's first streamed call holds the loop about 0.3 s as
    the first wave goes: every first token of that wave carries it. The quickest first token,
    the yardstick of every later "late", is the server's (50 ms here), not 350 ms."""
    auto = Auto()
    auto.client_lag = lambda a, b: 0.3 if a <= 0.01 <= b else 0.0
    wave = [Job(expected_tokens=8, enqueued=0.0) for _ in range(8)]
    for job in wave:
        auto.on_send(job, 0.0)
    for job in wave:
        auto.on_first_token(job, 0.35)
    assert abs(auto.situation.quickest - 0.05) < 1e-9
