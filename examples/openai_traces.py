"""openai SDK streaming, instrumented: the seed's zh log line, a JSONL trace file, a summary.

python examples/openai_traces.py [http://127.0.0.1:PORT/v1]   # needs the openai extra
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
from pathlib import Path

from openai import AsyncOpenAI

import fairstream
from fairstream import JsonlSink, LogSink, Recorder, ReferenceServer, ServerConfig


async def run(base_url: str, out: Path) -> None:
    rec = Recorder([LogSink("zh"), JsonlSink(out)])
    async with AsyncOpenAI(base_url=base_url, api_key="local") as raw:
        client = fairstream.instrument(raw, recorder=rec, label="LLM图像分析")

        async def one(n: int) -> None:
            stream = await client.chat.completions.create(
                model="fairstream-ref",
                messages=[{"role": "user", "content": f"question {n}"}],
                max_tokens=16 * n,
                stream=True,
            )
            async for _chunk in stream:
                pass

        await asyncio.gather(*(one(n) for n in range(1, 7)))
    rec.close()
    traces = fairstream.load_jsonl(out)
    print(
        f"{len(traces)} traces in {out}; first chunk times of the first one:",
        [round(t, 4) for t in traces[0].chunk_times[:5]],
    )


async def main() -> None:
    logging.basicConfig(
        level=logging.INFO, format=fairstream.LOG_FORMAT, datefmt=fairstream.LOG_DATEFMT
    )
    out = Path(tempfile.mkdtemp()) / "traces.jsonl"
    if len(sys.argv) > 1:
        await run(sys.argv[1], out)
        return
    async with ReferenceServer(ServerConfig(time_scale=0.2)) as server:
        await run(server.base_url, out)


if __name__ == "__main__":
    asyncio.run(main())
