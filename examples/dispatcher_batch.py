"""A batch job through the adaptive dispatcher: short answers first, batches filled.

    python examples/dispatcher_batch.py [http://HOST:PORT/v1 MODEL]   # needs the openai extra

Sends 24 streamed requests (12 short, 12 long) with the instrumented openai client through
`fairstream.Dispatcher()`: `auto` finds out how the server batches and adapts; then again with
a warm `Auto(prior=traces)` that starts from what the first pass showed. Prints the policy
each ended on, when the short and the long answers came back, and the detector's summary.
Without arguments it uses the embedded reference server in the seed's configuration.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from openai import AsyncOpenAI

import fairstream
from fairstream import ReferenceServer, ServerConfig


async def run(base_url: str, model: str) -> None:
    recorder = fairstream.Recorder()
    async with AsyncOpenAI(base_url=base_url, api_key="local") as raw:
        client = fairstream.instrument(raw, recorder=recorder, label="batch")
        t0 = time.perf_counter()

        async def ask(max_tokens: int) -> tuple[int, float]:
            stream = await client.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": "summarize this document"}],
                max_tokens=max_tokens,
                stream=True,
                extra_body={"ignore_eos": True},
            )
            async for _chunk in stream:
                pass
            return max_tokens, time.perf_counter() - t0

        # cold: auto knows nothing of the server; warm: it starts from the traffic seen so far
        for how in ("cold", "warm"):
            policy = fairstream.Auto(prior=recorder.traces) if how == "warm" else "auto"
            t0 = time.perf_counter()
            async with fairstream.Dispatcher(policy) as dispatcher:
                results = await dispatcher.map(ask, [8, 96] * 12, expected_tokens=lambda n: n)
            print(f"{how}: policy {dispatcher.policy}")
            done = [r for r in results if isinstance(r, tuple)]
            for kind, n in (("short", 8), ("long", 96)):
                p50 = statistics.median(t for m, t in done if m == n)
                print(f"  {kind} answers back after {p50:.2f} s (p50)")
    print("detector:", fairstream.analyze(recorder.traces).summary)


async def main() -> None:
    if len(sys.argv) > 2:
        await run(sys.argv[1], sys.argv[2])
        return
    config = ServerConfig(mode="static", batch_size=4, release="batch_end", time_scale=0.25)
    async with ReferenceServer(config) as server:
        await run(server.base_url, config.model)


if __name__ == "__main__":
    asyncio.run(main())
