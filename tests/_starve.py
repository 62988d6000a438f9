"""A client event loop starved on purpose, and the figures replay answers with: for the replay
honesty test and ``benchmarks/replay_check.py``.

The blocks sleep rather than spin: client and server share this machine's two cores, and a
spinning client would slow the server too, which no client-side correction can or should undo
(in production the server has its own machine).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time

from fairstream import ServerConfig, StreamTrace
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import RequestSpec
from fairstream.server._server import ReferenceServer

# how a task blocks the loop: (free between blocks, blocked), each drawn uniformly (seconds)
BLOCKERS = {
    "light": ((0.02, 0.12), (0.005, 0.04)),  # about a fifth of the time
    "heavy": ((0.0, 0.05), (0.02, 0.15)),  # about three quarters of the time
}


async def block_at_random(how: str, seed: int, stop: asyncio.Event) -> None:
    """Hold the event loop at random until ``stop``, as an app doing blocking work on it does."""
    (free_lo, free_hi), (busy_lo, busy_hi) = BLOCKERS[how]
    rng = random.Random(seed)
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(free_lo, free_hi))
        time.sleep(rng.uniform(busy_lo, busy_hi))  # noqa: ASYNC251 (the blocking call is the point)


def submission_figures(traces: list[StreamTrace], cut: float) -> dict[str, float]:
    """Makespan and short requests' E2E p50, both from submission (as replay reports them)."""

    def start(t: StreamTrace) -> float:
        return t.enqueued if t.enqueued is not None else (t.sent or 0.0)

    t0 = min(start(t) for t in traces)
    short = [(t.end or 0.0) - start(t) for t in traces if t.output_tokens <= cut]
    return {
        "makespan": max(t.end or 0.0 for t in traces) - t0,
        "short_p50": statistics.median(short),
    }


async def record(
    cfg: ServerConfig, specs: list[RequestSpec], how: str, seed: int
) -> list[StreamTrace]:
    """The burst sent all at once to a fresh server by a client starved ``how`` (or "none")."""
    with ReferenceServer.in_subprocess(cfg) as server:
        if how == "none":
            return (await run_workload(server.base_url, cfg.model, specs)).traces
        stop = asyncio.Event()
        blocker = asyncio.create_task(block_at_random(how, seed, stop))
        try:
            return (await run_workload(server.base_url, cfg.model, specs)).traces
        finally:
            stop.set()
            await blocker


async def through(cfg: ServerConfig, specs: list[RequestSpec], policy: str) -> list[StreamTrace]:
    """The same burst through ``Dispatcher(policy)`` from an unstarved client: the truth."""
    with ReferenceServer.in_subprocess(cfg) as server:
        return (await run_workload(server.base_url, cfg.model, specs, policy=policy)).traces
