"""The classic comparison on the reference engines: naive static batching vs continuous.

Anyscale's workload scaled down: N requests arrive at once, prompts of 512 tokens, output
lengths drawn exponentially (mean 128, capped at 1024) so they vary a lot, as real answers
do. The same scheduling engines the reference server runs are driven in virtual time (exact,
no network): static batches of B (each runs until its longest member is done) against
continuous batching with the same number of slots, and with vLLM's default 256.

Run:  python benchmarks/static_vs_continuous.py [--requests 512] [--batch 32] [--seeds 3]
Prints throughput and p50/p99 latency per scheduler and the ratios; exits 0.
"""

from __future__ import annotations

import argparse
import random
import statistics

import record

from fairstream import ServerConfig
from fairstream.sim import SimRequest, simulate


def workload(n: int, seed: int) -> list[SimRequest]:
    rng = random.Random(seed)
    return [
        SimRequest(0.0, 512, min(1024, max(1, int(rng.expovariate(1 / 128))))) for _ in range(n)
    ]


def measure(config: ServerConfig, reqs: list[SimRequest]) -> tuple[float, float, float]:
    run = simulate(config.build_engine(), reqs)
    e2e = [r.e2e for r in run.results if r.e2e is not None]
    q = statistics.quantiles(e2e, n=100, method="inclusive")
    return run.output_tokens_per_second, q[49], q[98]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=512)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    b = args.batch
    schedulers = {
        f"static, batches of {b}": ServerConfig(mode="static", batch_size=b, release="stream"),
        f"continuous, {b} slots": ServerConfig(mode="continuous", max_num_seqs=b),
        "continuous, 256 slots": ServerConfig(mode="continuous", max_num_seqs=256),
    }
    rows: dict[str, list[tuple[float, float, float]]] = {k: [] for k in schedulers}
    for seed in range(args.seeds):
        reqs = workload(args.requests, seed)
        for name, config in schedulers.items():
            rows[name].append(measure(config, reqs))
    print(
        f"{args.requests} requests at once, prompt 512, output exp(128) <= 1024, {args.seeds} seeds"
    )
    print(f"{'scheduler':<26}{'tokens/s':>10}{'p50 E2E s':>11}{'p99 E2E s':>11}")
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in rows.items()}
    for name, (tps, p50, p99) in med.items():
        print(f"{name:<26}{tps:>10.0f}{p50:>11.2f}{p99:>11.2f}")
    record.current().figures["schedulers"] = {
        name: {"tokens_per_s": tps, "e2e_p50_s": p50, "e2e_p99_s": p99}
        for name, (tps, p50, p99) in med.items()
    }
    base = med[f"static, batches of {b}"]
    for name in list(med)[1:]:
        tps, p50, _ = med[name]
        print(
            f"{name} over static: throughput x{tps / base[0]:.2f}, p50 latency x{p50 / base[1]:.2f}"
        )


if __name__ == "__main__":
    record.main("static_vs_continuous", main)
