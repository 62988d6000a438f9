"""Is ``fairstream replay`` honest? Its answers against what the dispatcher then really does.

For each reference-server configuration (its own process, real HTTP, the traced client of
``fairstream bench``) and seed: a mixed burst is sent all at once while the client's event
loop is starved (``--starve``: none; light, blocked about a fifth of the time; heavy, about
three quarters) and its traces recorded. ``replay`` fits a server model to them and predicts,
through ``auto``, the makespan and the short requests' p50 with an interval, or refuses. Then
the same burst really goes through ``Dispatcher("auto")``, from an unstarved client, on a
fresh server of the same configuration: the truth. Each case is counted as *held* (the truth
lies in both intervals), *refused*, or *missed* (a confident answer outside its interval: the
one outcome that must never happen).

Run:  python benchmarks/replay_check.py [--seeds 3] [--requests 16] [--starve none,light,heavy]
Writes benchmarks/results/replay_check.json: the totals and every case.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

from fairstream import ReplayRefused, ServerConfig, replay
from fairstream._cli._bench._workload import make_workload

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import record
from tests._starve import record as record_starved
from tests._starve import submission_figures, through

SERVERS = {
    "static B4 (batch_end)": ServerConfig(
        mode="static", batch_size=4, release="batch_end", time_scale=0.5
    ),
    "static B8 (stream)": ServerConfig(
        mode="static", batch_size=8, release="stream", time_scale=0.5
    ),
    "continuous 8": ServerConfig(mode="continuous", max_num_seqs=8, time_scale=0.5),
    "continuous 8, prefill first": ServerConfig(
        mode="continuous", max_num_seqs=8, preset="ascend-7b", time_scale=0.25
    ),
    "sequential": ServerConfig(mode="sequential", time_scale=0.25),
}


async def one(cfg: ServerConfig, n: int, seed: int, how: str) -> dict[str, Any]:
    specs = make_workload(n, "mix:8,64", "16", seed=seed)
    starved = await record_starved(cfg, specs, how, seed)
    try:
        got = replay(starved, "auto")
    except ReplayRefused as exc:
        return {"outcome": "refused", "reasons": exc.reasons}
    truth_traces = await through(cfg, specs, "auto")
    cut = statistics.median(r.output_tokens for r in got.fit.requests)
    truth = submission_figures(truth_traces, cut)
    held = all(got.intervals[k][0] <= truth[k] <= got.intervals[k][1] for k in truth)
    return {
        "outcome": "held" if held else "missed",
        "truth": truth,
        "predicted": {"makespan": got.after.makespan, "short_p50": got.after.short_p50},
        "intervals": {k: list(got.intervals[k]) for k in truth},
        "self_check": got.check.errors,
    }


async def run_all(seeds: int, n: int, starves: list[str], picks: list[int]) -> dict[str, Any]:
    """Run every case, print the table; the results, for :func:`save`."""
    cases = []
    print(f"{n} requests at once (half 8, half 64 tokens); truth: auto from an unstarved client")
    print(f"{'server':30} {'starve':7} {'held':>5} {'refused':>8} {'missed':>7}")
    for i, (name, cfg) in enumerate(SERVERS.items(), 1):
        if picks and i not in picks:
            continue
        for how in starves:
            rows = [await one(cfg, n, seed, how) for seed in range(1, seeds + 1)]
            for seed, row in enumerate(rows, 1):
                cases.append({"server": name, "starve": how, "seed": seed, **row})
            count = {k: sum(r["outcome"] == k for r in rows) for k in ("held", "refused", "missed")}
            print(
                f"{name:30} {how:7} {count['held']:>5} {count['refused']:>8} {count['missed']:>7}"
            )
            sys.stdout.flush()
    total = {k: sum(c["outcome"] == k for c in cases) for k in ("held", "refused", "missed")}
    print(f"all: {total['held']} held, {total['refused']} refused, {total['missed']} missed")
    return {"totals": total, "cases": cases}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--starve", default="none,light,heavy")
    ap.add_argument("--servers", default="", help="which rows, 1-based (default: all)")
    args = ap.parse_args()
    found = asyncio.run(
        run_all(
            args.seeds,
            args.requests,
            [s for s in args.starve.split(",") if s],
            [int(x) for x in args.servers.split(",") if x],
        )
    )
    record.current().figures.update(found)


if __name__ == "__main__":
    record.main("replay_check", main)
