"""What one run of the detector costs the client's event loop, in the server's steps.

``auto`` analyses its last 64 finished requests every 8 completions inside the client's event
loop; while it does, no chunk is read, so every stream's next chunk (and any first token) is
stamped that much late. This streams a burst of 160 requests (5 of the matrix's bursts)
through the instrumented openai SDK to a 16-slot reference server over real HTTP, then times
``fairstream.analyze`` on each 64-request window of the traces (every 8 ends, as ``auto``
does) and prints the cost per analysis in milliseconds and in the server's decode steps.

Run:  python benchmarks/detector_cost.py [--policy fixed:16] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import record

from benchmarks.matrix._arms import run_arm
from benchmarks.matrix._cells import reference, workload
from fairstream import analyze
from fairstream.server._server import ReferenceServer


async def traces(policy: str) -> list:  # type: ignore[type-arg]
    """The matrix's cont-16 server, its full-size burst sent through ``policy``."""
    server = reference("cont-16", "continuous", 16, 0.5)
    assert server.config is not None
    step = server.config.cost_model().step_seconds(1, 0)
    jobs = workload("burst", 0, server, step, "full") * 5  # 160 requests
    with ReferenceServer.in_subprocess(server.config) as handle:
        return await run_arm(handle.base_url, server.config.model, jobs, policy, 0.5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="fixed:16")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    got = sorted(asyncio.run(traces(args.policy)), key=lambda t: t.end or 0.0)
    windows = [got[max(0, i - 64) : i] for i in range(8, len(got) + 1, 8)]
    costs = []
    for _ in range(args.repeat):
        for w in windows:
            t0 = time.perf_counter()
            analyze(w)
            costs.append(time.perf_counter() - t0)
    tpots = [t.tpot for t in got if t.tpot]
    step = statistics.median(tpots)
    p50, p90 = statistics.median(costs), statistics.quantiles(costs, n=10)[-1]
    print(f"cont-16, a burst of 160, over real HTTP ({args.policy}), {len(windows)} windows x "
          f"{args.repeat}: an analysis p50 {p50 * 1e3:.2f} ms, p90 {p90 * 1e3:.2f} ms; the "
          f"server's step as the client read it {step * 1e3:.2f} ms: p50 {p50 / step:.2f} steps, "
          f"p90 {p90 / step:.2f} steps")  # fmt: skip
    return 0


if __name__ == "__main__":
    record.main("detector_cost", main)
