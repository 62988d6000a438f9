"""The dispatcher's policies against naive concurrency, the oracle and the best fixed limit.

P2  static server (batch 8, batch_end), 64 requests (half max_tokens 8, half 256, all with
    ignore_eos), arriving at once in random order: short-request p50 E2E of naive
    (everything at once, FIFO) over fairstream `auto` (goal >= 10), and makespans (goal:
    fairstream <= naive).
P3  the same workload: fairstream's makespan over the oracle's (goal <= 1.10). The oracle
    knows every length and sends them sorted, so the server batches them best; it runs in
    the simulator. Also shown with natural lengths (no ignore_eos), which the oracle knows
    and fairstream does not.
P4  continuous server (max_num_seqs 32), a backlog of requests with exponential lengths
    (mean 128): goodput (tokens/s of requests whose TTFT <= 0.5 s) of `gradient` and
    `auto` from limit 1 over the best fixed concurrency of a sweep (goal >= 0.95); windows
    for `gradient` to reach the capacity (goal <= 15); and the windows it needs to settle
    again after the server's capacity is halved mid-run.

Each figure is the median over seeds, measured side by side in one run. P2 and P3 run in
virtual time (exact engines) and over real HTTP (reference server in its own process, time
scale --scale); P4 runs in virtual time.

Run:  python benchmarks/policies.py [--seeds 3] [--http/--no-http] [--scale 0.5] [--p4-jobs 1500]
Exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from collections.abc import Callable
from typing import Any

import record

from fairstream import Auto, Fixed, Gradient, ReferenceServer, ServerConfig
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import RequestSpec
from fairstream.sim import SimRequest, SimRun, simulate

STATIC = ServerConfig(mode="static", batch_size=8, release="batch_end")
CONT = ServerConfig(mode="continuous", max_num_seqs=32)
SLO_TTFT = 0.5


def p2_lengths(seed: int, natural: bool) -> list[tuple[int, int]]:
    """(max_tokens, real length) per request, in arrival order."""
    rng = random.Random(seed)
    asked = [8, 256] * 32
    rng.shuffle(asked)
    if not natural:
        return [(m, m) for m in asked]
    return [(m, min(m, max(1, int(rng.expovariate(1 / 128))))) for m in asked]


def vjobs(pairs: list[tuple[int, int]]) -> list[SimRequest]:
    return [SimRequest(0.0, 32, real, expected_tokens=asked) for asked, real in pairs]


def short_p50(e2e: list[tuple[int, float]]) -> float:
    return statistics.median(t for m, t in e2e if m == 8)


def vtime_p2(seed: int, natural: bool) -> dict[str, float]:
    pairs = p2_lengths(seed, natural)
    naive = simulate(STATIC.build_engine(), vjobs(pairs), Fixed(64, order="fifo"))
    fair = simulate(STATIC.build_engine(), vjobs(pairs), Auto())
    oracle_pairs = sorted(pairs, key=lambda p: p[1])
    oracle = simulate(STATIC.build_engine(), vjobs(oracle_pairs), Fixed(64, "fifo"))
    return {
        "naive_short": short_p50(_e2e(naive)),
        "fair_short": short_p50(_e2e(fair)),
        "naive_span": naive.makespan,
        "fair_span": fair.makespan,
        "oracle_span": oracle.makespan,
    }


def _e2e(run: SimRun) -> list[tuple[int, float]]:
    return [(int(r.expected_tokens or 0), r.e2e or 0.0) for r in run.results]


async def http_p2(seed: int, scale: float) -> dict[str, float]:
    pairs = p2_lengths(seed, natural=False)
    cfg = STATIC.with_(time_scale=scale)
    plans = {
        "naive": (pairs, None),
        "fair": (pairs, "auto"),
        "oracle": (sorted(pairs, key=lambda p: p[1]), None),  # sorted, all at once
    }
    out: dict[str, float] = {}
    with ReferenceServer.in_subprocess(cfg) as handle:
        for name, (plan, policy) in plans.items():
            specs = [
                RequestSpec(m, [{"role": "user", "content": "x"}], "short" if m == 8 else "long")
                for m, _ in plan
            ]
            run = await run_workload(handle.base_url, cfg.model, specs, policy=policy)
            e2e = [(8 if t.label == "short" else 256, run.submit_e2e(t) or 0.0) for t in run.traces]
            out[f"{name}_short"] = short_p50(e2e) / scale  # in model seconds
            out[f"{name}_span"] = run.wall / scale
    sim = sorted(pairs, key=lambda p: p[1])
    out["sim_oracle_span"] = simulate(STATIC.build_engine(), vjobs(sim), Fixed(64, "fifo")).makespan
    return out


async def llama_burst(seed: int, slots: int) -> dict[str, float]:
    """The P2 burst shape on a real engine (continuous, ``slots`` slots): all at once vs auto."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from llama_server import MODEL_NAME, LlamaServer

    lengths = [8, 64] * 16
    random.Random(seed).shuffle(lengths)
    specs = [
        RequestSpec(m, [{"role": "user", "content": "x"}], "short" if m == 8 else "long")
        for m in lengths
    ]
    out: dict[str, float] = {}
    with LlamaServer(slots=slots) as server:
        for name, policy in (("naive", None), ("fair", "auto")):
            run = await run_workload(server.base_url, MODEL_NAME, specs, policy=policy)
            short = [run.submit_e2e(t) or 0.0 for t in run.traces if t.label == "short"]
            out[f"{name}_short"] = statistics.median(short)
            out[f"{name}_span"] = run.wall
    out["short_ratio"] = out["naive_short"] / out["fair_short"]
    out["span_ratio"] = out["fair_span"] / out["naive_span"]
    return out


def p4_jobs(seed: int, n: int) -> list[SimRequest]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        length = min(1024, max(1, int(rng.expovariate(1 / 128))))
        out.append(SimRequest(0.0, rng.randint(16, 256), length))
    return out


def goodput(run: SimRun) -> float:
    good = sum(
        len(r.token_times)
        for r in run.results
        if r.first_token is not None and r.sent is not None and r.first_token - r.sent <= SLO_TTFT
    )
    return good / run.makespan


def settle(history: list[int], lo: float, hi: float, start: int = 0) -> int | None:
    """Windows from ``start`` until the limit enters [lo, hi] and stays for 3 windows."""
    for i in range(start, len(history) - 2):
        if all(lo <= v <= hi for v in history[i : i + 3]):
            return i - start + 1
    return None


def vtime_p4(seed: int, n: int) -> dict[str, float]:
    jobs = p4_jobs(seed, n)
    sweep = {
        c: goodput(simulate(CONT.build_engine(), jobs, Fixed(c, order="fifo")))
        for c in (8, 16, 24, 28, 32, 36, 40, 48, 64)
    }
    best_c = max(sweep, key=lambda c: sweep[c])
    grad = Gradient(1, order="fifo")
    g = goodput(simulate(CONT.build_engine(), jobs, grad))
    auto = goodput(simulate(CONT.build_engine(), jobs, Auto(order="fifo")))
    # capacity halved halfway through (by time of the fixed-32 run)
    half_at = simulate(CONT.build_engine(), jobs, Fixed(32, "fifo")).makespan / 2
    grad2 = Gradient(1, order="fifo")
    marks: list[int] = []

    def halve(engine: Any) -> None:
        engine.max_num_seqs = 16
        marks.append(grad2.windows)

    simulate(CONT.build_engine(), jobs, grad2, events=[(half_at, halve)])
    again = settle(grad2.history, 12, 20, marks[0]) if marks else None
    return {
        "best_c": best_c,
        "best": sweep[best_c],
        "gradient": g / sweep[best_c],
        "auto": auto / sweep[best_c],
        "windows": settle(grad.history, 24, 40) or float("nan"),
        "rewindows": again or float("nan"),
    }


def med(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


Rows = list[dict[str, float]]


def report(title: str, rows: Rows, fmt: Callable[[Rows], list[str]]) -> None:
    print(f"\n{title}")
    for line in fmt(rows):
        print(f"  {line}")


def p23_lines(rows: list[dict[str, float]]) -> list[str]:
    ratio = [r["naive_short"] / r["fair_short"] for r in rows]
    span = [r["fair_span"] / r["naive_span"] for r in rows]
    oracle = [r["fair_span"] / r["oracle_span"] for r in rows]
    return [
        f"P2 short p50 E2E naive/fairstream: {statistics.median(ratio):6.1f}x   (goal >= 10)"
        f"   [naive {med(rows, 'naive_short'):.2f} s, fairstream {med(rows, 'fair_short'):.2f} s]",
        f"P2 makespan fairstream/naive:      {statistics.median(span):6.3f}    (goal <= 1)"
        f"   [naive {med(rows, 'naive_span'):.1f} s, fairstream {med(rows, 'fair_span'):.1f} s]",
        f"P3 makespan fairstream/oracle:     {statistics.median(oracle):6.3f}    (goal <= 1.10)"
        f"   [oracle {med(rows, 'oracle_span'):.1f} s]",
    ] + (
        [
            "P3 makespan fairstream/simulated oracle: "
            f"{statistics.median(r['fair_span'] / r['sim_oracle_span'] for r in rows):.3f}"
            f"   [simulated oracle {med(rows, 'sim_oracle_span'):.1f} s]"
        ]
        if "sim_oracle_span" in rows[0]
        else []
    )  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--http", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--scale", type=float, default=0.5)
    ap.add_argument("--p4-jobs", type=int, default=1500)
    ap.add_argument(
        "--llama", type=int, default=0, metavar="SLOTS", help="add a llama.cpp row (N slots)"
    )
    args = ap.parse_args()
    seeds = range(args.seeds)
    print(
        f"policies benchmark: {args.seeds} seeds, model seconds (HTTP at time scale {args.scale})"
    )
    report("virtual time, ignore_eos lengths", [vtime_p2(s, False) for s in seeds], p23_lines)
    natural = [vtime_p2(s, True) for s in seeds]
    report("virtual time, natural lengths (oracle knows them)", natural, p23_lines)
    if args.http:
        rows = [asyncio.run(http_p2(s, args.scale)) for s in seeds]
        report(
            "real HTTP (server in its own process), ignore_eos lengths; oracle = sorted, all"
            " at once, over the same HTTP",
            rows,
            p23_lines,
        )
    if args.llama:
        rows = [asyncio.run(llama_burst(s, args.llama)) for s in seeds]
        report(
            f"real engine: llama.cpp llama-server -np {args.llama}, random 136M model, 2 threads;"
            " 16 x 8 + 16 x 64 tokens at once, wall seconds",
            rows,
            lambda rs: [
                f"short p50 E2E all-at-once/auto:  {med(rs, 'short_ratio'):6.2f}x   [all at"
                f" once {med(rs, 'naive_short'):.2f} s, auto {med(rs, 'fair_short'):.2f} s]",
                f"makespan auto/all-at-once:       {med(rs, 'span_ratio'):6.3f}   [all at"
                f" once {med(rs, 'naive_span'):.1f} s, auto {med(rs, 'fair_span'):.1f} s]",
            ],
        )
    if args.p4_jobs:
        rows = [vtime_p4(s, args.p4_jobs) for s in seeds]
        report("P4, virtual time, continuous max_num_seqs 32", rows, lambda rs: [
            f"best fixed concurrency (sweep): {statistics.median(r['best_c'] for r in rs):.0f}"
            f"   goodput {med(rs, 'best'):.0f} tok/s",
            f"P4 goodput gradient/best fixed:  {med(rs, 'gradient'):.3f}   (goal >= 0.95)",
            f"P4 goodput auto/best fixed:      {med(rs, 'auto'):.3f}",
            f"P4 windows to converge from 1:   {med(rs, 'windows'):.0f}       (goal <= 15)",
            f"P4 windows to settle after the capacity is halved: {med(rs, 'rewindows'):.0f}",
        ])  # fmt: skip


if __name__ == "__main__":
    record.main("policies", main)
