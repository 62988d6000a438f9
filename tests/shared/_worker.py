"""One app process of a shared pool: submits jobs through a Dispatcher with a coordinator.

    python _worker.py BASE_URL MODEL REDIS_URL POOL LIMIT JOBS OUT [hold]

Writes its traces to OUT (JSONL) and prints "ready" once the dispatcher is open. With
``hold`` it submits LIMIT long jobs and prints "holding" once all are streaming (for kill
tests); it then runs until killed. ``FAIRSTREAM_TEST_POLICY`` names another policy than
``fixed:LIMIT``, ``FAIRSTREAM_TEST_LENGTHS`` (``4,64``) the answer lengths its jobs cycle
through; with ``FAIRSTREAM_TEST_GO`` set it waits for a line on stdin before submitting.
"""

from __future__ import annotations

import os
import sys

import anyio

from fairstream import Dispatcher, JsonlSink, Recorder, StreamClient


async def main(base: str, model: str, redis: str, pool: str, limit: int, jobs: int, out: str,
               hold: bool) -> None:  # fmt: skip
    rec = Recorder([JsonlSink(out)])
    policy = os.environ.get("FAIRSTREAM_TEST_POLICY", f"fixed:{limit}")
    lengths = [int(x) for x in os.environ.get("FAIRSTREAM_TEST_LENGTHS", "4,12,20").split(",")]
    started = anyio.Event()
    streaming = 0

    async def one(client: StreamClient, d: Dispatcher, n: int) -> None:
        nonlocal streaming

        async def run() -> None:
            nonlocal streaming
            async with client.chat(
                model=model, messages=[{"role": "user", "content": "hi"}], max_tokens=n,
                ignore_eos=True,
            ) as stream:  # fmt: skip
                first = True
                async for _ in stream:
                    if first:
                        first = False
                        streaming += 1
                        if streaming == limit:
                            started.set()

        await d.submit(run, expected_tokens=n)

    async with (
        StreamClient(base, recorder=rec) as client,
        Dispatcher(policy, coordinator=redis, pool=pool, lease_ttl=1.5) as d,
    ):
        print("ready", flush=True)
        if os.environ.get("FAIRSTREAM_TEST_GO"):
            await anyio.to_thread.run_sync(sys.stdin.readline)
        async with anyio.create_task_group() as tg:
            if hold:
                for _ in range(limit):
                    tg.start_soon(one, client, d, 4000)
                await started.wait()
                print("holding", flush=True)
            else:
                for i in range(jobs):
                    tg.start_soon(one, client, d, lengths[i % len(lengths)])
    rec.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    anyio.run(main, a[0], a[1], a[2], a[3], int(a[4]), int(a[5]), a[6], len(a) > 7)
