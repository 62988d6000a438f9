"""The openai SDK's Responses API, instrumented: each typed event is a chunk of the trace.

    python examples/openai_responses.py [http://HOST:PORT/v1 MODEL]   # needs the openai extra

Streams three responses at once with ``client.responses.create(..., stream=True)`` and one
with ``client.responses.stream(...)``, then prints each trace's TTFT, E2E and finish reason.
Without arguments it uses the embedded reference server, which serves ``POST /v1/responses``.
"""

from __future__ import annotations

import asyncio
import sys

from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder, ReferenceServer, ServerConfig


async def run(base_url: str, model: str) -> None:
    recorder = Recorder()
    async with AsyncOpenAI(base_url=base_url, api_key="local") as raw:
        client = fairstream.instrument(raw, recorder=recorder, label="responses")

        async def created(n: int) -> None:
            stream = await client.responses.create(
                model=model, input=f"question {n}", max_output_tokens=8 * n, stream=True
            )
            async for event in stream:
                if event.type == "response.output_text.delta":
                    pass  # the text arrives here; the trace keeps when

        async def managed() -> None:
            async with client.responses.stream(model=model, input="hello") as stream:
                async for _event in stream:
                    pass

        await asyncio.gather(*(created(n) for n in (1, 2, 4)), managed())

    for trace in recorder.traces:
        print(
            f"{trace.request_id}: TTFT {trace.ttft:.3f}s, E2E {trace.e2e:.3f}s,"
            f" {trace.output_tokens} tokens, finish {trace.finish_reason}"
        )


async def main() -> None:
    if len(sys.argv) > 2:
        await run(sys.argv[1], sys.argv[2])
        return
    config = ServerConfig(mode="continuous", time_scale=0.1)
    async with ReferenceServer(config) as server:
        await run(server.base_url, config.model)


if __name__ == "__main__":
    asyncio.run(main())
