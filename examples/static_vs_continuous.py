"""See the seed's phenomenon on the embedded server: static batching ends everyone together.

Runs the reference server twice (static with ``batch_end``, then continuous) in this
process, sends four concurrent streamed requests of 4, 8, 32 and 64 tokens through the
openai SDK, and prints when each one's first and last chunk arrived.

    pip install -e '.[openai]' && python examples/static_vs_continuous.py
"""

from __future__ import annotations

import asyncio
import time

from openai import AsyncOpenAI

from fairstream import ReferenceServer, ServerConfig


async def one(client: AsyncOpenAI, n: int, t0: float) -> tuple[int, float, float]:
    first = last = 0.0
    stream = await client.chat.completions.create(
        model="fairstream-ref",
        messages=[{"role": "user", "content": f"answer in {n} tokens"}],
        max_tokens=n,
        stream=True,
        extra_body={"ignore_eos": True},
    )
    async for chunk in stream:
        last = time.perf_counter() - t0
        if not first and chunk.choices and chunk.choices[0].delta.content:
            first = last
    return n, first, last


async def main() -> None:
    for mode in ("static", "continuous"):
        config = ServerConfig(mode=mode, batch_size=4, release="batch_end", time_scale=0.5)
        async with (
            ReferenceServer(config) as server,
            AsyncOpenAI(base_url=server.base_url, api_key="local") as client,
        ):
            await one(client, 1, 0.0)  # warm-up: connection and first-call imports
            t0 = time.perf_counter()
            rows = await asyncio.gather(*(one(client, n, t0) for n in (4, 8, 32, 64)))
        print(f"\n{mode} batching:")
        for n, first, last in rows:
            print(f"  {n:>3} tokens: first token {first:6.3f} s, done {last:6.3f} s")


if __name__ == "__main__":
    asyncio.run(main())
