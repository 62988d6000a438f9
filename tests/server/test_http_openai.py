"""The reference server through the real openai SDK (AsyncOpenAI) over loopback."""

from __future__ import annotations

import time

import openai
import pytest
from openai import AsyncOpenAI

from tests.conftest import ServerFactory

MODEL = "fairstream-ref"
MSG = [{"role": "user", "content": "hello there"}]


async def stream_times(client: AsyncOpenAI, max_tokens: int) -> tuple[list[float], list[object]]:
    """Arrival time of every chunk (absolute perf_counter), and the chunks."""
    t0 = 0.0
    times: list[float] = []
    chunks: list[object] = []
    stream = await client.chat.completions.create(
        model=MODEL,
        messages=MSG,
        max_tokens=max_tokens,
        stream=True,  # type: ignore[arg-type]
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    async with stream:
        async for chunk in stream:
            times.append(time.perf_counter() - t0)
            chunks.append(chunk)
    return times, chunks


async def test_chunk_sequence_is_well_formed_with_usage(serve: ServerFactory) -> None:
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as client:
        _, chunks = await stream_times(client, 6)
    first, *content, finish, usage = chunks
    assert first.object == "chat.completion.chunk"  # type: ignore[attr-defined]
    assert first.choices[0].delta.role == "assistant"  # type: ignore[attr-defined]
    assert first.choices[0].delta.content == ""  # type: ignore[attr-defined]
    assert len(content) == 6
    assert all(c.choices[0].delta.content for c in content)  # type: ignore[attr-defined]
    assert all(c.choices[0].finish_reason is None for c in content)  # type: ignore[attr-defined]
    assert finish.choices[0].finish_reason == "length"  # type: ignore[attr-defined]
    assert usage.choices == []  # type: ignore[attr-defined]
    assert usage.usage.completion_tokens == 6  # type: ignore[attr-defined]
    assert usage.usage.total_tokens == usage.usage.prompt_tokens + 6  # type: ignore[attr-defined]
    assert len({c.id for c in chunks}) == 1  # type: ignore[attr-defined]


async def test_natural_end_says_stop_and_respects_max_tokens(serve: ServerFactory) -> None:
    async with (
        serve(output_mean=3.0, output_distribution="fixed") as server,
        AsyncOpenAI(base_url=server.base_url, api_key="k") as client,
    ):
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=MSG,
            max_tokens=50,
            stream=True,  # type: ignore[arg-type]
        )
        chunks = [c async for c in stream]
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) == 3


async def test_non_streaming_and_legacy_completions(serve: ServerFactory) -> None:
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as client:
        whole = await client.chat.completions.create(
            model=MODEL,
            messages=MSG,
            max_tokens=5,
            extra_body={"ignore_eos": True},  # type: ignore[arg-type]
        )
        assert whole.usage is not None and whole.usage.completion_tokens == 5
        assert (
            whole.choices[0].message.content and len(whole.choices[0].message.content.split()) == 5
        )
        text = await client.completions.create(
            model=MODEL,
            prompt="once upon",
            max_tokens=4,
            extra_body={"ignore_eos": True},
            stream=True,
        )
        parts = [c.choices[0].text async for c in text if c.choices]
        assert len([p for p in parts if p]) == 4
        models = await client.models.list()
        assert [m.id for m in models.data] == [MODEL]


async def test_errors_surface_as_the_sdk_exception_types(serve: ServerFactory) -> None:
    async with serve(api_key="sekret") as server:
        async with AsyncOpenAI(base_url=server.base_url, api_key="wrong", max_retries=0) as bad:
            with pytest.raises(openai.AuthenticationError):
                await bad.chat.completions.create(model=MODEL, messages=MSG)  # type: ignore[arg-type]
        async with AsyncOpenAI(base_url=server.base_url, api_key="sekret", max_retries=0) as ok:
            with pytest.raises(openai.NotFoundError):
                await ok.chat.completions.create(model="nope", messages=MSG)  # type: ignore[arg-type]
            with pytest.raises(openai.BadRequestError):
                await ok.chat.completions.create(model=MODEL, messages=MSG, max_tokens=0)  # type: ignore[arg-type]
            r = await ok.chat.completions.create(model=MODEL, messages=MSG, max_tokens=2)  # type: ignore[arg-type]
            assert r.choices[0].message.content
