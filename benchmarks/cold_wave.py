"""What ``auto``'s cold first wave costs on a continuous server, and what it saves on static ones.

Cold, ``auto`` does not know how the server batches. It sends a burst's shortest band at once
and the longer requests once every request of that wave has started, so that a static batch
with room for both halves does not take them together (the seed's "fast waits for slow"). On a
continuous server that wait is a price: the long half's prefill starts a step or two late.
This runs the demo's workload (32 requests at once, half 8 and half 128 tokens) over real HTTP,
each run against a fresh server in its own process, and prints both sides in one run:

- the demo's continuous server (32 slots): all at once twice (the second is the measurement's own
  noise), sorted shortest first at once (``fixed:64``, no wave) and a cold ``auto``, as makespan
  over the first all-at-once run's, and when the short and the long half's first tokens came;
- static servers of ``--batches`` (finished streams held to their batch's end, as in the seed):
  all at once, sorted at once and a cold ``auto``: short and long p50 (from submission) and
  makespan, in seconds.

Run:  python benchmarks/cold_wave.py [--runs 3] [--batches 16,24,32,48] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

from demo_rows import one, servers

from fairstream import ServerConfig
from fairstream._cli._bench._run import RunResult
from fairstream._cli._demo import _row, makespan

POLICIES = {"all at once": None, "sorted at once": "fixed:64", "auto cold": "auto"}


def when(run: RunResult) -> str:
    """When the short and the long requests' first tokens came (ms from the first submission)."""
    t0 = min(t.enqueued if t.enqueued is not None else t.sent or 0.0 for t in run.traces)
    spans = []
    for tokens, name in ((8, "short"), (128, "long")):
        firsts = [t.first_content for t in run.traces if t.max_tokens == tokens]
        ms = [1000 * (f - t0) for f in firsts if f is not None]
        spans.append(f"{name} {min(ms):.0f}-{max(ms):.0f}")
    return ", ".join(spans)


async def continuous(runs: int, scale: float) -> None:
    cfg = servers(scale)["continuous"]
    print(f"continuous, 32 slots (time scale {scale:g}): makespan / the first all at once, per run")
    ratios: dict[str, list[float]] = {
        "all at once again": [],
        "sorted at once": [],
        "auto cold": [],
    }
    for i in range(runs):
        first = await one(cfg, None)
        base = makespan(first.traces)
        line = f"  run {i + 1}: all at once {base:.3f} s"
        starts = f"    first tokens, ms from the first submission: all at once {when(first)}"
        for name, policy in [("all at once again", None), *list(POLICIES.items())[1:]]:
            run = await one(cfg, policy)
            ratios[name].append(makespan(run.traces) / base)
            line += f", {name} {ratios[name][-1]:.3f}"
            if policy == "auto":
                starts += f"; auto cold {when(run)}"
        print(line, starts, sep="\n", flush=True)
    print(
        "  median: "
        + ", ".join(
            f"{k} {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" for k, v in ratios.items()
        )
    )


async def static(runs: int, scale: float, batch: int) -> None:
    cfg = ServerConfig(mode="static", batch_size=batch, release="batch_end", time_scale=scale)
    figures: dict[str, list[tuple[float, float, float]]] = {k: [] for k in POLICIES}
    for _ in range(runs):
        for name, policy in POLICIES.items():
            row = _row("static", name, await one(cfg, policy))  # the demo's own figures
            figures[name].append((row.short_p50, row.long_p50, row.makespan))
    print(f"static B={batch} (time scale {scale:g}), medians of {runs} run(s), seconds:")
    for name, rows in figures.items():
        short, long_, span = (statistics.median(col) for col in zip(*rows, strict=True))
        print(f"  {name:<15} short p50 {short:6.2f}  long p50 {long_:6.2f}  makespan {span:6.2f}")
    sys.stdout.flush()


async def main(runs: int, batches: list[int], scale: float) -> None:
    await continuous(runs, scale)
    for b in batches:  # (--batches "": the continuous server alone)
        await static(runs, scale, b)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batches", default="16,24,32,48")
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    asyncio.run(main(args.runs, [int(b) for b in args.batches.split(",") if b], args.scale))
