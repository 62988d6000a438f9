"""The instrumentation's per-chunk work, counted (not timed): a guard that cannot flake.

Python and C function calls under ``sys.setprofile``, instrumented minus raw, per chunk of a
canned stream (``fairstream.server._canned``: the reference server's bytes in memory), through
the openai SDK's chat completions and Responses, and through LangChain's ChatOpenAI. Two
stream lengths cancel what a request costs once; what is left is each chunk's.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

import fairstream
from fairstream.server._canned import canned_client

BUDGET = 10  # calls a chunk adds over the raw SDK (9 measured on each path; 15 at first)
SHORT, LONG, REQUESTS = 200, 1200, 4


async def _streams(family: str, instrumented: bool, tokens: int) -> None:
    http = canned_client()
    if family in ("openai", "responses"):
        from openai import AsyncOpenAI

        client: Any = AsyncOpenAI(
            base_url="http://replay.invalid/v1", api_key="k", http_client=http
        )
    else:
        from langchain_openai import ChatOpenAI

        client = ChatOpenAI(
            model="m",
            base_url="http://replay.invalid/v1",
            api_key="k",  # type: ignore[arg-type]
            stream_usage=True,  # type: ignore[arg-type]
            http_async_client=http,
        )
    if instrumented:
        client = fairstream.instrument(client, recorder=fairstream.Recorder())
    for _ in range(REQUESTS):
        if family == "responses":
            events = await client.responses.create(
                model="m", input="x", max_output_tokens=tokens, stream=True
            )
            async for _event in events:
                pass
        elif family == "openai":
            stream = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "x"}],
                max_tokens=tokens,
                stream=True,
                stream_options={"include_usage": True},
            )
            async for _chunk in stream:
                pass
        else:
            async for _msg in client.astream("x", max_tokens=tokens):
                pass
    await http.aclose()


def _calls(family: str, instrumented: bool, tokens: int) -> int:
    n = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal n
        if event in ("call", "c_call"):
            n += 1

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_streams(family, instrumented, 8))  # imports, caches warmed
        sys.setprofile(count)
        try:
            loop.run_until_complete(_streams(family, instrumented, tokens))
        finally:
            sys.setprofile(None)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return n


def _per_chunk(family: str, instrumented: bool) -> float:
    calls = _calls(family, instrumented, LONG) - _calls(family, instrumented, SHORT)
    return calls / (REQUESTS * (LONG - SHORT))


@pytest.mark.parametrize("family", ["openai", "responses", "langchain"])
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_chunk_costs_at_most_the_budget_in_calls(family: str) -> None:
    raw, instrumented = _per_chunk(family, False), _per_chunk(family, True)
    added = instrumented - raw
    assert raw > 100  # the SDK's own parsing: the count sees real work
    assert 0 < added <= BUDGET, f"a chunk now adds {added:.2f} calls over the raw {raw:.0f}"
