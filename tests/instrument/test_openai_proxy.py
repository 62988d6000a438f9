"""The instrumented AsyncOpenAI behaves like the SDK's own client and stream."""

from __future__ import annotations

import openai
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder
from tests.conftest import ServerFactory

MSG = [{"role": "user", "content": "hi"}]


async def test_stream_proxy_supports_async_with_close_and_attributes(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec, label="proxy")
        assert client.base_url == raw.base_url  # attribute pass-through
        assert isinstance(client.with_options(timeout=5), type(client))
        stream = await client.chat.completions.create(
            model="fairstream-ref",
            messages=MSG,
            max_tokens=50,
            stream=True,  # type: ignore[arg-type]
        )
        assert stream.response.status_code == 200  # the SDK stream's own attribute
        async with stream:
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    break  # leave early: the async with closes the stream
        assert stream.trace is not None
        assert stream.trace.outcome == "cancelled"
        assert stream.trace.error_type == "ClosedByCaller"
        # close() twice is harmless and the trace is finalized once
        await stream.close()
    assert len(rec.traces) == 1
    assert rec.traces[0].label == "proxy"


async def test_include_usage_is_requested_unless_the_caller_said_otherwise(
    serve: ServerFactory,
) -> None:
    rec = Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec)
        for options in ({}, {"stream_options": {"include_usage": False}}):
            stream = await client.chat.completions.create(
                model="fairstream-ref",
                messages=MSG,
                max_tokens=3,
                stream=True,  # type: ignore[arg-type]
                extra_body={"ignore_eos": True},
                **options,
            )
            usage = [c.usage async for c in stream if c.usage]
            assert bool(usage) == (options == {})
    assert [t.usage.estimated for t in rec.traces] == [False, True]
    assert [t.usage.completion_tokens for t in rec.traces] == [3, 3]


async def test_non_streaming_calls_are_recorded(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec)
        result = await client.chat.completions.create(
            model="fairstream-ref",
            messages=MSG,
            max_tokens=4,  # type: ignore[arg-type]
            extra_body={"ignore_eos": True},
        )
        text = await client.completions.create(model="fairstream-ref", prompt="x", max_tokens=2)
    assert isinstance(result, openai.types.chat.ChatCompletion)
    assert text.choices[0].text
    first, second = rec.traces
    assert first.chunk_times == () and first.usage.completion_tokens == 4
    assert first.finish_reason == "length" and first.response_id == result.id
    assert second.usage.completion_tokens == 2


def test_sync_client_is_refused_clearly() -> None:
    import pytest

    with pytest.raises(TypeError, match="AsyncOpenAI"):
        fairstream.instrument(openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(TypeError, match="don't know how to instrument"):
        fairstream.instrument(object())
