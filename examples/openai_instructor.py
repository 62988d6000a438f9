"""instructor through an instrumented client: a typed answer, and its trace.

    python examples/openai_instructor.py [http://HOST:PORT/v1 MODEL]   # needs openai and instructor

``fairstream.instrument`` returns a subclass of your client's own class, so
``instructor.from_openai`` (which accepts only ``AsyncOpenAI`` instances) takes it, and every
call instructor makes is traced. instructor pins ``jiter`` below what openai 3.x needs: install
it beside openai 2.x. Without arguments it uses the embedded reference server, which answers a
JSON-schema request with JSON that fits the schema.
"""

from __future__ import annotations

import asyncio
import sys

import instructor
import pydantic
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder, ReferenceServer, ServerConfig


class City(pydantic.BaseModel):
    name: str
    population: int


async def run(base_url: str, model: str) -> None:
    recorder = Recorder()
    async with AsyncOpenAI(base_url=base_url, api_key="local") as raw:
        client = fairstream.instrument(raw, recorder=recorder, label="instructor")
        typed = instructor.from_openai(client, mode=instructor.Mode.JSON_SCHEMA)
        city = await typed.chat.completions.create(
            model=model,
            response_model=City,
            messages=[{"role": "user", "content": "The largest city of France?"}],
            max_tokens=200,
        )
    [trace] = recorder.traces
    print(f"{city!r}: E2E {trace.e2e:.3f}s, outcome {trace.outcome}")


async def main() -> None:
    if len(sys.argv) > 2:
        await run(sys.argv[1], sys.argv[2])
        return
    async with ReferenceServer(ServerConfig(time_scale=0.1)) as server:
        await run(server.base_url, "fairstream-ref")


if __name__ == "__main__":
    asyncio.run(main())
