"""The seed's LangChain loop, instrumented with one line, logging the seed's own zh line.

Start a server first (``fairstream serve --mode static --time-scale 0.2``) and pass its URL,
or run with no argument to use an embedded one. Needs the ``langchain`` extra.

    python examples/langchain_seed_loop.py [http://127.0.0.1:PORT/v1]
"""

from __future__ import annotations

import asyncio
import logging
import sys

from langchain_openai import ChatOpenAI

import fairstream
from fairstream import LOG_DATEFMT, LOG_FORMAT, LogSink, Recorder, ReferenceServer, ServerConfig


async def analyse(llm: ChatOpenAI, request_id: int) -> None:
    system_prompt = "You describe images."
    message = ("human", f"Describe image {request_id}.")
    with fairstream.tag(request_id=request_id):
        async for _chunk in llm.astream([("system", system_prompt), message]):
            pass  # the seed printed time.time() here; the trace now keeps every chunk's time


async def run(base_url: str) -> None:
    rec = Recorder([LogSink("zh")])
    llm = ChatOpenAI(model="fairstream-ref", base_url=base_url, api_key="local", max_tokens=8)
    llm = fairstream.instrument(llm, recorder=rec, label="LLM图像分析")
    await asyncio.gather(*(analyse(llm, i) for i in range(455, 463)))
    summary = fairstream.summarize(rec.traces)
    assert summary.ttft is not None and summary.e2e is not None
    print(
        f"TTFT p50 {summary.ttft.p50:.3f}s, E2E p50 {summary.e2e.p50:.3f}s "
        f"over {summary.requests} requests"
    )


async def main() -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, datefmt=LOG_DATEFMT)
    if len(sys.argv) > 1:
        await run(sys.argv[1])
        return
    config = ServerConfig(mode="static", batch_size=8, time_scale=0.2)
    async with ReferenceServer(config) as server:
        await run(server.base_url)


if __name__ == "__main__":
    asyncio.run(main())
