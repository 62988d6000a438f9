"""The demo's before/after table, measured over several runs: what the README's figure cites.

``fairstream demo`` runs its workload (32 requests at once, half 8 and half 128 tokens) once
per row. This runs each row ``--runs`` times over real HTTP, against a fresh reference server
in its own process each time, and prints the medians and ranges of the demo's own figures:
short and long requests' p50 (from submission) and the makespan, for the requests sent all at
once, sorted shortest first at once (``fixed:64``), through a cold ``auto`` and through a warm
one (``Auto(prior=...)`` from the all-at-once run's traces).

Servers: the demo's two (static B=8 holding finished streams to the batch's end, as in the
seed; continuous with 32 slots) and, with ``--batches``, static servers of other sizes. A
static batch with room for both halves of the burst is where ``auto``'s cold first wave (the
short band first, the long half a round of first tokens later) pays; on the continuous server
that wave is its price.

Run:  python benchmarks/demo_rows.py [--runs 3] [--batches 24,48] [--scale 1.0]
(``--scale`` is the servers' time scale: 1.0, ``fairstream demo``'s default, is a real 7B
model's pace.) Writes benchmarks/results/demo_rows.json.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from typing import Any

import record

from fairstream import Auto, ServerConfig
from fairstream._cli._bench._run import RunResult, run_workload
from fairstream._cli._bench._workload import make_workload
from fairstream._cli._demo import _row
from fairstream.server._server import ReferenceServer

HOWS = ("all at once", "sorted at once", "auto cold", "auto warm")


def servers(scale: float, batches: list[int]) -> dict[str, ServerConfig]:
    """The demo's two servers, and static ones of ``batches``, at time scale ``scale``."""
    out = {
        "static B=8": ServerConfig(
            mode="static", batch_size=8, release="batch_end", time_scale=scale
        ),
        "continuous 32": ServerConfig(mode="continuous", max_num_seqs=32, time_scale=scale),
    }
    for b in batches:
        out[f"static B={b}"] = ServerConfig(
            mode="static", batch_size=b, release="batch_end", time_scale=scale
        )
    return out


async def one(cfg: ServerConfig, policy: object) -> RunResult:
    """The demo's burst, once, against a fresh server of ``cfg``."""
    specs = make_workload(32, "mix:8,128", "16", seed=1)
    with ReferenceServer.in_subprocess(cfg) as server:
        return await run_workload(server.base_url, cfg.model, specs, policy=policy)


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


async def measure(name: str, cfg: ServerConfig, runs: int) -> dict[str, dict[str, Any]]:
    """Every row of one server, ``runs`` times: the median and range of each figure."""
    seen: dict[str, dict[str, list[float]]] = {
        h: {"short_p50": [], "long_p50": [], "makespan": []} for h in HOWS
    }
    for _ in range(runs):
        naive = await one(cfg, None)
        done = {
            "all at once": naive,
            "sorted at once": await one(cfg, "fixed:64"),
            "auto cold": await one(cfg, "auto"),
            "auto warm": await one(cfg, Auto(prior=naive.traces)),
        }
        for how, run in done.items():
            row = _row(name, how, run)  # the demo's own figures
            seen[how]["short_p50"].append(row.short_p50)
            seen[how]["long_p50"].append(row.long_p50)
            seen[how]["makespan"].append(row.makespan)
    return {how: {k: spread(v) for k, v in figs.items()} for how, figs in seen.items()}


async def main_async(runs: int, batches: list[int], scale: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cfg in servers(scale, batches).items():
        rows = out[name] = await measure(name, cfg, runs)
        base = rows["all at once"]
        print(f"\n{name} (time scale {scale:g}), medians of {runs} run(s), seconds:")
        for how, figs in rows.items():
            s, lo, span = figs["short_p50"], figs["long_p50"], figs["makespan"]
            ratio = span["median"] / base["makespan"]["median"]
            print(
                f"  {how:<15} short p50 {s['median']:6.2f}  long p50 {lo['median']:6.2f}"
                f"  makespan {span['median']:6.2f} ({ratio:.3f}x"
                f" all at once; {span['min']:.2f}-{span['max']:.2f})",
                flush=True,
            )
        cure = base["short_p50"]["median"] / rows["auto cold"]["short_p50"]["median"]
        print(f"  short requests {cure:.1f}x sooner through auto (cold) than all at once")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batches", default="", help="more static servers, e.g. 24,48")
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",") if b]
    record.current().figures["servers"] = asyncio.run(main_async(args.runs, batches, args.scale))


if __name__ == "__main__":
    record.main("demo_rows", main)
