"""N concurrent streams through the dispatcher against the reference server in its own process.

The server runs continuous batching with room for every stream (flat 20 ms steps, no
per-sequence or prefill cost, 4 tokens a chunk); this process sends N streamed requests of
48 tokens at once through ``fairstream.Dispatcher(Fixed(N))`` with the lean httpx client.

Prints: streams, traces kept (must be N), unexpected errors (must be 0), chunks/s received,
the server's step drift (mean step period over the configured step, and the worst lateness),
peak RSS of this process and of the server, and wall time. Exits 0 (1 if a trace was lost
or an error happened, so CI notices).

Run:  python benchmarks/load.py [--streams 1000] [--tokens 48] [--step-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import resource
import sys
import time
import urllib.request
from pathlib import Path

import record

from fairstream import Dispatcher, Fixed, Recorder, ReferenceServer, ServerConfig, StreamClient


def metrics(base_url: str) -> dict[str, float]:
    text = urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/metrics").read().decode()
    return {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^fairstream_server_(\w+) ([\d.e+-]+)$", text, re.M)
    }


def peak_rss_mb(pid: int | None = None) -> float:
    if pid is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    status = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(m.group(1)) / 1024 if m else float("nan")


async def run(streams: int, tokens: int, step_ms: float) -> int:
    config = ServerConfig(
        mode="continuous",
        max_num_seqs=max(streams, 1),
        step_ms=step_ms,
        per_seq_ms=0.0,
        prefill_ms_per_token=0.0,
        tokens_per_chunk=4,
        max_connections=streams + 64,
    )
    recorder = Recorder()
    with ReferenceServer.in_subprocess(config) as server:
        before = metrics(server.base_url)
        t0 = time.perf_counter()
        async with (
            StreamClient(server.base_url, recorder=recorder, max_connections=streams + 8) as client,
            Dispatcher(Fixed(streams)) as d,
        ):
            await d.map(
                lambda n: client.complete(
                    model=config.model,
                    messages=[{"role": "user", "content": "load"}],
                    max_tokens=n,
                    ignore_eos=True,
                ),
                [tokens] * streams,
                return_exceptions=True,
            )
        wall = time.perf_counter() - t0
        after = metrics(server.base_url)
        server_rss = peak_rss_mb(server.pid)
    traces = recorder.traces
    errors = [t for t in traces if t.outcome != "ok"]
    chunks = sum(len(t.chunk_times) for t in traces)
    steps = after["steps_total"] - before["steps_total"]
    late = after["step_lateness_seconds_sum"] - before["step_lateness_seconds_sum"]
    active = max(t.end or 0 for t in traces) - min(t.sent or 0 for t in traces)
    sending = max(t.sent or 0 for t in traces) - min(t.sent or 0 for t in traces)
    print(f"streams                 {streams}")
    print(f"traces kept             {len(traces)}")
    print(f"unexpected errors       {len(errors)}")
    print(f"chunks received         {chunks} ({chunks / active:,.0f} chunks/s over {active:.2f} s)")
    print(f"sending all requests    {sending:.2f} s (client side: connections and requests)")
    mean_late = late / max(steps, 1)
    worst = after["step_lateness_seconds_max"]
    print(f"server steps            {steps:.0f} on a {step_ms:g} ms step")
    print(f"step drift              {mean_late * 1e3:.1f} ms late on average"
          f" ({mean_late * 1e3 / step_ms:+.0%} of a step), worst {worst * 1e3:.0f} ms")  # fmt: skip
    print(f"peak RSS                client {peak_rss_mb():.0f} MB, server {server_rss:.0f} MB")
    print(f"wall time               {wall:.2f} s")
    return 0 if len(traces) == streams and not errors else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--step-ms", type=float, default=20.0)
    args = ap.parse_args()
    sys.exit(asyncio.run(run(args.streams, args.tokens, args.step_ms)))


if __name__ == "__main__":
    record.main("load", main)
