"""Streams through the reference server forever, recording to JSONL, until it is killed.

After each trace's JSONL line is written, prints ``done <request id>`` (flushed), so the
parent knows which traces had finished when it sent SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys

from fairstream import JsonlSink, Recorder, StreamClient, StreamTrace


def announce(trace: StreamTrace) -> None:
    print(f"done {trace.request_id}", flush=True)


async def main(base_url: str, path: str) -> None:
    # JsonlSink first: by the time a trace is announced, its line has been written
    recorder = Recorder([JsonlSink(path), announce])
    async with StreamClient(base_url, recorder=recorder) as client:

        async def worker(w: int) -> None:
            for i in range(10_000):  # bounded; the parent kills the process long before
                await client.complete(
                    model="fairstream-ref",
                    messages=[{"role": "user", "content": "x"}],
                    max_tokens=3 + (w + i) % 13,
                    request_id=f"w{w}-{i}",
                    ignore_eos=True,
                )

        await asyncio.gather(*(worker(w) for w in range(8)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
