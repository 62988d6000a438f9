"""What ``fairstream bench`` itself costs: its CPU per request and per chunk, and its share of a
core, measured while it loads a server in another process.

A load generator on the same cores as a CPU-bound server takes cycles from it (measured here:
aiperf's TTFT p50 on a llama.cpp server came out 1.9 s against fairstream bench's 47 ms at the
same load); ``fairstream bench`` warns when its share passes ``--max-client-cpu``.

Run:  python benchmarks/client_footprint.py [--requests 256] [--tokens 128] [--llama SLOTS]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import record

from fairstream import ReferenceServer, ServerConfig
from fairstream._cli._bench._results import client_cpu
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import make_workload

# a server that costs the client nothing but sockets: 10 ms steps, up to 256 at once
SERVER = ServerConfig(step_ms=20.0, per_seq_ms=0.0, prefill_ms_per_token=0.0, time_scale=0.5)


async def measure(
    base_url: str, model: str, n: int, tokens: int
) -> list[tuple[str, dict[str, float]]]:
    specs = make_workload(n, str(tokens), "32", 0)
    rows = []
    for name, kw in (("all at once", {}), ("concurrency 16", {"concurrency": 16}),
                     ("policy auto", {"policy": "auto"})):  # fmt: skip
        run = await run_workload(base_url, model, specs, **kw)  # type: ignore[arg-type]
        rows.append((name, client_cpu(run)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=256)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--llama", type=int, default=0, help="also against llama-server, N slots")
    args = ap.parse_args(argv)
    targets = []
    with ReferenceServer.in_subprocess(SERVER) as handle:
        rows = asyncio.run(measure(handle.base_url, SERVER.model, args.requests, args.tokens))
        targets.append(("reference server (own process)", rows))
    if args.llama:
        sys.path.insert(0, str(Path(__file__).parent))
        from llama_server import MODEL_NAME, LlamaServer

        with LlamaServer(slots=args.llama) as server:
            n = min(args.requests, 8 * args.llama)
            rows = asyncio.run(measure(server.base_url, MODEL_NAME, n, min(args.tokens, 64)))
        targets.append((f"llama.cpp -np {args.llama}", rows))
    print(f"client CPU of fairstream bench ({args.requests} requests x {args.tokens} tokens)")
    print(
        f"{'target':<32} {'load':<16} {'cpu s':>7} {'core share':>10} {'ms/req':>8} {'us/chunk':>9}"
    )
    for target, rows in targets:
        for load, c in rows:
            print(
                f"{target:<32} {load:<16} {c['seconds']:>7.2f} {c['share_of_a_core']:>10.2f}"
                f" {c['per_request_ms']:>8.2f} {c['per_chunk_us']:>9.1f}"
            )
    return 0


if __name__ == "__main__":
    record.main("client_footprint", main)
