"""``replay`` on traces a starved client recorded: an answer whose interval holds the truth, or a
refusal. Never a confident answer outside its own interval.

Each case records a mixed burst over real HTTP while the client's event loop is starved (a
task that blocks the loop at random with a synchronous call, lightly or most of the time, as
an app doing blocking work on its loop does) against a reference server in its own process.
The blocks sleep rather than spin: client and server share this machine's two cores here, and
a spinning client would slow the server too, which no client-side correction can or should
undo (in production the server has its own machine). The truth is the
same burst sent through the same policy (``auto``, the default what-if) by a client that is not
starved, on a fresh server of the same configuration: replay models the server, and a busy
client's delays are what it must see through (or refuse over).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time

import pytest

from fairstream import ReplayRefused, ServerConfig, StreamTrace, replay
from fairstream._cli._bench._run import RunResult, run_workload
from fairstream._cli._bench._workload import RequestSpec, make_workload
from fairstream.server._server import ReferenceServer

SERVERS = {
    "static-4": ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.5),
    "continuous-8": ServerConfig(mode="continuous", max_num_seqs=8, time_scale=0.5),
    "sequential": ServerConfig(mode="sequential", time_scale=0.25),
}


# how a task blocks the loop: (free between blocks, blocked), each drawn uniformly (seconds)
BLOCKERS = {
    "light": ((0.02, 0.12), (0.005, 0.04)),  # about a fifth of the time
    "heavy": ((0.0, 0.05), (0.02, 0.15)),  # about three quarters of the time
}


async def _block_at_random(how: str, seed: int, stop: asyncio.Event) -> None:
    """Hold the event loop at random, as an app busy elsewhere does."""
    (free_lo, free_hi), (busy_lo, busy_hi) = BLOCKERS[how]
    rng = random.Random(seed)
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(free_lo, free_hi))
        time.sleep(rng.uniform(busy_lo, busy_hi))  # noqa: ASYNC251 (the blocking call is the point)


def _submission_figures(traces: list[StreamTrace], cut: float) -> tuple[float, float]:
    """Makespan and short requests' E2E p50, both from submission (as replay reports them)."""

    def start(t: StreamTrace) -> float:
        return t.enqueued if t.enqueued is not None else (t.sent or 0.0)

    t0 = min(start(t) for t in traces)
    short = [(t.end or 0.0) - start(t) for t in traces if t.output_tokens <= cut]
    return max(t.end or 0.0 for t in traces) - t0, statistics.median(short)


async def _starved(cfg: ServerConfig, specs: list[RequestSpec], how: str, seed: int) -> RunResult:
    """The burst sent all at once by a client starved ``how``."""
    with ReferenceServer.in_subprocess(cfg) as server:
        stop = asyncio.Event()
        blocker = asyncio.create_task(_block_at_random(how, seed, stop))
        try:
            return await run_workload(server.base_url, cfg.model, specs)
        finally:
            stop.set()
            await blocker


@pytest.mark.slow
@pytest.mark.parametrize(("how", "seed"), [("light", 1), ("heavy", 2)])
@pytest.mark.parametrize("kind", sorted(SERVERS))
async def test_starved_traces_get_an_honest_answer_or_a_refusal(
    kind: str, how: str, seed: int
) -> None:
    cfg = SERVERS[kind]
    specs = make_workload(12, "mix:8,64", "16", seed=seed + 10 * sorted(SERVERS).index(kind))
    starved = (await _starved(cfg, specs, how, seed)).traces
    assert all(t.outcome == "ok" for t in starved)
    try:
        answer = replay(starved, "auto")
    except ReplayRefused as refusal:  # an honest outcome: it names what it lacks
        assert refusal.reasons and "fairstream probe" in str(refusal)
        return
    with ReferenceServer.in_subprocess(cfg) as server:
        truth_run = (await run_workload(server.base_url, cfg.model, specs, policy="auto")).traces
    assert all(t.outcome == "ok" for t in truth_run)
    cut = statistics.median(r.output_tokens for r in answer.fit.requests)
    makespan, short_p50 = _submission_figures(truth_run, cut)
    for name, truth in (("makespan", makespan), ("short_p50", short_p50)):
        low, high = answer.intervals[name]
        assert low <= truth <= high, (name, truth, answer.intervals, answer.check.to_dict())
