"""How many concurrent streams the reference server carries before its step clock drifts.

The server runs in its own process (continuous mode, a flat 20 ms step, no per-sequence
or prefill cost); this process holds N streams open with a lean h11 client and, once
every stream is flowing, measures over a window:

- server step period: wall time / steps the server took (two /metrics samples, each
  timed at the midpoint of its request),
- client gap: mean time between chunks of one stream, as received,
- chunks/s received, and drift = max(period, gap) / 20 ms - 1.

Run:  python benchmarks/server_capacity.py [--sizes 64,128,256,512,768,896,1024] [--window 3]
It prints a table and the largest N with drift <= 5%, and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
import urllib.request
from dataclasses import dataclass, field

import h11
import record

from fairstream import ReferenceServer, ServerConfig

STEP_MS = 20.0


@dataclass
class _Stream(asyncio.Protocol):
    """One streamed request on its own connection; counts SSE frames as they arrive."""

    request: bytes
    first: asyncio.Event = field(default_factory=asyncio.Event)
    conn: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    frames: int = 0
    window_frames: int = 0
    last: float = 0.0
    gaps: list[float] = field(default_factory=list)
    measuring: bool = False
    transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self.conn.receive_data(data)
        while True:
            ev = self.conn.next_event()
            if ev is h11.NEED_DATA or isinstance(ev, h11.ConnectionClosed | h11.EndOfMessage):
                break
            if isinstance(ev, h11.Data):
                n = bytes(ev.data).count(b"\n\n")
                self.frames += n
                if self.measuring and n:
                    self.window_frames += n
                    if self.last:
                        self.gaps.append(now - self.last)
                self.last = now
                if not self.first.is_set():
                    self.first.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.first.set()


def _request_bytes(host: str, port: int, model: str) -> bytes:
    body = json.dumps(
        {
            "model": model,
            "messages": [{"role": "user", "content": "capacity"}],
            "max_tokens": 100_000,
            "ignore_eos": True,
            "stream": True,
        }
    ).encode()
    conn = h11.Connection(h11.CLIENT)
    head = conn.send(
        h11.Request(
            method="POST",
            target="/v1/chat/completions",
            headers=[
                ("host", f"{host}:{port}"),
                ("content-type", "application/json"),
                ("content-length", str(len(body))),
            ],
        )
    )
    return (
        (head or b"")
        + (conn.send(h11.Data(data=body)) or b"")
        + (conn.send(h11.EndOfMessage()) or b"")
    )


def _server_steps(base_url: str) -> int:
    text = (
        urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=10)
        .read()
        .decode()
    )
    match = re.search(r"^fairstream_server_steps_total (\d+)", text, re.M)
    assert match, text
    return int(match.group(1))


async def _sample_steps(base_url: str) -> tuple[int, float]:
    """The server's step count and when it was read (midpoint of the request)."""
    before = time.perf_counter()
    steps = await asyncio.to_thread(_server_steps, base_url)
    return steps, (before + time.perf_counter()) / 2


async def measure(base_url: str, model: str, n: int, window: float) -> dict[str, float]:
    host, port = re.match(r"http://([^:/]+):(\d+)", base_url).groups()  # type: ignore[union-attr]
    raw = _request_bytes(host, int(port), model)
    loop = asyncio.get_running_loop()
    streams = [_Stream(raw) for _ in range(n)]
    for i in range(0, n, 64):  # connect in slices so the accept queue never overflows
        await asyncio.gather(
            *(loop.create_connection(lambda s=s: s, host, int(port)) for s in streams[i : i + 64])
        )
    await asyncio.wait_for(asyncio.gather(*(s.first.wait() for s in streams)), 60)
    await asyncio.sleep(0.5)  # let prefill and connection set-up settle
    steps0, at0 = await _sample_steps(base_url)
    t0 = time.perf_counter()
    for s in streams:
        s.measuring = True
    await asyncio.sleep(window)
    for s in streams:
        s.measuring = False
    elapsed = time.perf_counter() - t0
    steps1, at1 = await _sample_steps(base_url)
    for s in streams:
        if s.transport is not None:
            s.transport.close()
    chunks = sum(s.window_frames for s in streams)
    gaps = [g for s in streams for g in s.gaps]
    period = (at1 - at0) / max(1, steps1 - steps0)
    gap = statistics.fmean(gaps) if gaps else float("inf")
    return {
        "n": n,
        "period_ms": period * 1000,
        "gap_ms": gap * 1000,
        "chunks_per_s": chunks / elapsed,
        "drift": max(period, gap) / (STEP_MS / 1000) - 1,
    }


async def run(base_url: str, model: str, sizes: list[int], window: float) -> list[dict[str, float]]:
    rows = []
    for n in sizes:
        rows.append(await measure(base_url, model, n, window))
        await asyncio.sleep(0.5)  # the server notices the closed streams
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64,128,256,512,768,896,1024")
    ap.add_argument("--window", type=float, default=3.0)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    cfg = ServerConfig(
        mode="continuous",
        step_ms=STEP_MS,
        per_seq_ms=0.0,
        prefill_ms_per_token=0.0,
        max_num_seqs=max(sizes) * 2,
        max_tokens_cap=100_000,
        max_model_len=200_000,
        max_waiting=max(sizes) * 2,
    )
    with ReferenceServer.in_subprocess(cfg) as handle:
        rows = asyncio.run(run(handle.base_url, cfg.model, sizes, args.window))
    print(f"server capacity: configured step {STEP_MS:.0f} ms, window {args.window:g} s")
    print(
        f"{'streams':>8} {'step period ms':>15} {'client gap ms':>14} {'chunks/s':>10} {'drift':>7}"
    )
    for r in rows:
        print(
            f"{int(r['n']):>8} {r['period_ms']:>15.2f} {r['gap_ms']:>14.2f} "
            f"{r['chunks_per_s']:>10.0f} {r['drift'] * 100:>6.1f}%"
        )
    ok = [int(r["n"]) for r in rows if r["drift"] <= 0.05]
    print(f"largest N with drift <= 5%: {max(ok) if ok else 'none'}")
    return 0


if __name__ == "__main__":
    record.main("server_capacity", main)
