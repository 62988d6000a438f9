"""``replay`` on traces a starved client recorded: an answer whose interval holds the truth, or a
refusal. Never a confident answer outside its own interval.

Each case records a mixed burst over real HTTP while the client's event loop is starved (a
task that blocks the loop at random, or a CPU-bound thread fighting for the GIL), against a
reference server in its own process. The truth is the same burst sent through the same policy
(``auto``, the default what-if) on a fresh server of the same configuration, by the same client
starved the same way: replay answers "what would this app, as it runs, have got through the
dispatcher", and the app stays as busy as it was.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from fairstream import ReplayRefused, ServerConfig, StreamTrace, replay
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import make_workload
from fairstream.server._server import ReferenceServer

SERVERS = {
    "static-4": ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.5),
    "continuous-8": ServerConfig(mode="continuous", max_num_seqs=8, time_scale=0.5),
    "sequential": ServerConfig(mode="sequential", time_scale=0.5),
}


async def _block_at_random(seed: int, stop: asyncio.Event) -> None:
    """Hold the event loop 20-150 ms at a time, every 0-50 ms: an app busy elsewhere."""
    rng = random.Random(seed)
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(0.0, 0.05))
        until = time.perf_counter() + rng.uniform(0.02, 0.15)
        while time.perf_counter() < until:
            pass


@contextmanager
def _cpu_bound_thread() -> Iterator[None]:
    """A pure-Python loop in another thread: the event loop gets the GIL in 5 ms slices."""
    stop = threading.Event()

    def spin() -> None:
        n = 0
        while not stop.is_set():
            n += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _submission_figures(traces: list[StreamTrace], cut: float) -> tuple[float, float]:
    """Makespan and short requests' E2E p50, both from submission (as replay reports them)."""

    def start(t: StreamTrace) -> float:
        return t.enqueued if t.enqueued is not None else (t.sent or 0.0)

    t0 = min(start(t) for t in traces)
    short = [(t.end or 0.0) - start(t) for t in traces if t.output_tokens <= cut]
    return max(t.end or 0.0 for t in traces) - t0, statistics.median(short)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("kind", sorted(SERVERS))
async def test_starved_traces_get_an_honest_answer_or_a_refusal(kind: str, seed: int) -> None:
    cfg = SERVERS[kind]
    specs = make_workload(16, "mix:8,64", "16", seed=seed)

    async def starved_run(policy: str | None) -> list[StreamTrace]:
        with ReferenceServer.in_subprocess(cfg) as server:
            if seed % 2:
                stop = asyncio.Event()
                blocker = asyncio.create_task(_block_at_random(seed, stop))
                try:
                    run = await run_workload(server.base_url, cfg.model, specs, policy=policy)
                finally:
                    stop.set()
                    await blocker
            else:
                with _cpu_bound_thread():
                    run = await run_workload(server.base_url, cfg.model, specs, policy=policy)
        return run.traces

    starved, truth_run = await starved_run(None), await starved_run("auto")
    assert all(t.outcome == "ok" for t in starved + truth_run)

    try:
        answer = replay(starved, "auto")
    except ReplayRefused as refusal:  # an honest outcome: it names what it lacks
        assert refusal.reasons and "fairstream probe" in str(refusal)
        return
    cut = statistics.median(r.output_tokens for r in answer.fit.requests)
    makespan, short_p50 = _submission_figures(truth_run, cut)
    for name, truth in (("makespan", makespan), ("short_p50", short_p50)):
        low, high = answer.intervals[name]
        assert low <= truth <= high, (name, truth, answer.intervals, answer.check.to_dict())
