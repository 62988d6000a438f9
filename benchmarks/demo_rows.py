"""The demo's rows, repeated: all at once, a cold ``auto`` and a warm one, side by side.

``fairstream demo`` runs each row once, and one run of a 0.7 s burst moves by a few percent
from run to run on a shared machine. This runs the demo's workload (32 requests, half 8 and half
128 tokens) on the demo's servers ``--runs`` times, each run as naive, then cold
(``Dispatcher()``), then warm (``Auto(prior=<that run's naive traces>)``), each against a
fresh server in its own process, and prints the makespan ratios and their medians.

Run:  python benchmarks/demo_rows.py [--runs 6] [--server continuous|static|both] [--scale 1.0]
(``--scale`` is the servers' time scale: 1.0, ``fairstream demo``'s default, is a real 7B
model's pace; 0.25 is what the demo ran at until session 28.)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

from fairstream import Auto, ServerConfig
from fairstream._cli._bench._run import RunResult, run_workload
from fairstream._cli._bench._workload import make_workload
from fairstream._cli._demo import makespan
from fairstream.server._server import ReferenceServer


def servers(scale: float) -> dict[str, ServerConfig]:
    """The demo's two servers at time scale ``scale``."""
    return {
        "static": ServerConfig(mode="static", batch_size=8, release="batch_end", time_scale=scale),
        "continuous": ServerConfig(mode="continuous", max_num_seqs=32, time_scale=scale),
    }


async def one(cfg: ServerConfig, policy: object) -> RunResult:
    specs = make_workload(32, "mix:8,128", "16", seed=1)
    with ReferenceServer.in_subprocess(cfg) as server:
        return await run_workload(server.base_url, cfg.model, specs, policy=policy)


async def main(runs: int, names: list[str], scale: float) -> None:
    for name in names:
        cfg = servers(scale)[name]
        cold, warm = [], []
        print(f"\n{name} (time scale {scale:g}): makespan / all at once, per run")
        for i in range(runs):
            naive = await one(cfg, None)
            c = await one(cfg, "auto")
            w = await one(cfg, Auto(prior=naive.traces))
            base = makespan(naive.traces)
            cold.append(makespan(c.traces) / base)
            warm.append(makespan(w.traces) / base)
            print(
                f"  run {i + 1}: all at once {base:.3f} s, cold {cold[-1]:.3f}, warm {warm[-1]:.3f}"
            )
            sys.stdout.flush()
        print(
            f"  median cold {statistics.median(cold):.3f} (range {min(cold):.3f}-{max(cold):.3f}),"
            f" warm {statistics.median(warm):.3f} (range {min(warm):.3f}-{max(warm):.3f})"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--server", choices=["continuous", "static", "both"], default="both")
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    names = ["static", "continuous"] if args.server == "both" else [args.server]
    asyncio.run(main(args.runs, names, args.scale))
