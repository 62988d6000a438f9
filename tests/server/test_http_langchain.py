"""The reference server through LangChain's ChatOpenAI, the seed's own loop."""

from __future__ import annotations

import asyncio
import time

from langchain_openai import ChatOpenAI

from tests.conftest import REAL_STEP, ServerFactory


def make_llm(base_url: str, max_tokens: int) -> ChatOpenAI:
    return ChatOpenAI(
        model="fairstream-ref",
        base_url=base_url,
        api_key="k",  # type: ignore[arg-type]
        max_tokens=max_tokens,  # type: ignore[call-arg]
        stream_usage=True,
        extra_body={"ignore_eos": True},
    )


async def test_astream_yields_content_and_usage(serve: ServerFactory) -> None:
    async with serve() as server:
        llm = make_llm(server.base_url, 7)
        chunks = [c async for c in llm.astream([("system", "be brief"), ("human", "hi")])]
    text = "".join(str(c.content) for c in chunks)
    assert len(text.split()) == 7
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[-1]["output_tokens"] == 7
    assert any(c.response_metadata.get("finish_reason") == "length" for c in chunks)


async def test_seed_loop_static_vs_continuous(serve: ServerFactory) -> None:
    """The seed's experiment: chunk arrival times per request, by server mode."""

    async def one(base_url: str, n: int) -> float:
        """Absolute time the last chunk arrived (clients are built at different moments)."""
        llm = make_llm(base_url, n)
        last = 0.0
        async for _chunk in llm.astream([("system", "p"), ("human", f"q{n}")]):
            last = time.perf_counter()
        return last

    ends = {}
    for mode in ("static", "continuous"):
        async with serve(mode=mode, batch_size=4) as server:
            ends[mode] = await asyncio.gather(*(one(server.base_url, n) for n in (4, 8, 32, 64)))
    assert max(ends["static"]) - min(ends["static"]) <= 2.5 * REAL_STEP
    assert ends["continuous"] == sorted(ends["continuous"])
    cont = ends["continuous"]
    # the short one ended ~60 steps before the long one
    assert cont[-1] - cont[0] > 40 * REAL_STEP
