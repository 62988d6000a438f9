"""Does ``fairstream replay`` predict what the dispatcher then does? Predicted vs measured.

For each reference-server configuration (its own process, real HTTP, the openai-free traced
client of ``fairstream bench``): a burst is sent all at once and its traces recorded; the
replay fits a server model to those traces and predicts, through ``auto``, the makespan and
the short requests' p50 (E2E from submission) as ratios to sending everything at once. Then
the same burst really goes through ``Dispatcher("auto")`` on a fresh server of the same
configuration, and the measured ratios are printed beside the predicted ones.

Run:  python benchmarks/replay_check.py [--runs 3] [--requests 32] [--servers 1,2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

from fairstream import ServerConfig, StreamTrace
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import make_workload
from fairstream._replay import replay
from fairstream.server._server import ReferenceServer

SERVERS = {
    "static B8 (batch_end)": ServerConfig(
        mode="static", batch_size=8, release="batch_end", time_scale=0.5
    ),
    "static B4 (stream)": ServerConfig(
        mode="static", batch_size=4, release="stream", time_scale=0.5
    ),
    "continuous 16": ServerConfig(mode="continuous", max_num_seqs=16, time_scale=0.5),
    "continuous 8, prefill first": ServerConfig(
        mode="continuous", max_num_seqs=8, preset="ascend-7b", time_scale=0.25
    ),
}


def _figures(traces: list[StreamTrace], cut: float) -> tuple[float, float]:
    """Makespan and short p50, from submission."""

    def sub(t: StreamTrace) -> float:
        return t.enqueued if t.enqueued is not None else (t.sent or 0.0)

    t0 = min(sub(t) for t in traces)
    short = [(t.end or 0.0) - sub(t) for t in traces if (t.usage.completion_tokens or 0) <= cut]
    return max(t.end or 0.0 for t in traces) - t0, statistics.median(short)


async def one(cfg: ServerConfig, n: int, seed: int) -> tuple[float, ...]:
    specs = make_workload(n, "mix:8,128", "16", seed=seed)
    with ReferenceServer.in_subprocess(cfg) as server:
        naive = await run_workload(server.base_url, cfg.model, specs)
    with ReferenceServer.in_subprocess(cfg) as server:
        auto = await run_workload(server.base_url, cfg.model, specs, policy="auto")
    cut = statistics.median(t.usage.completion_tokens or 0 for t in naive.traces)
    got = replay(naive.traces, "auto")
    span0, short0 = _figures(naive.traces, cut)
    span1, short1 = _figures(auto.traces, cut)
    b, a = got.before, got.after
    return (
        got.fit.makespan_error,
        a.makespan / b.makespan,
        span1 / span0,
        a.short_p50 / b.short_p50,
        short1 / short0,
    )


async def main(runs: int, n: int, pick: list[int]) -> None:
    print(
        f"{n} requests at once (half 8, half 128 tokens), {runs} runs, medians;"
        " ratios are through auto / all at once"
    )
    head = f"{'server':30} {'fit makespan':>12} {'makespan pred':>13} {'measured':>9}"
    print(head + f" {'short p50 pred':>15} {'measured':>9}")
    for i, (name, cfg) in enumerate(SERVERS.items(), 1):
        if pick and i not in pick:
            continue
        rows = [await one(cfg, n, seed) for seed in range(runs)]
        err, sp, sm, hp, hm = (statistics.median(col) for col in zip(*rows, strict=True))
        print(f"{name:30} {err:>+12.1%} {sp:>13.2f} {sm:>9.2f} {hp:>15.2f} {hm:>9.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--servers", default="", help="which rows, 1-based (default: all)")
    args = ap.parse_args()
    asyncio.run(main(args.runs, args.requests, [int(x) for x in args.servers.split(",") if x]))
