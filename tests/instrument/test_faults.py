"""Failure paths of a stream: the caller's exception, the trace's outcome, nothing leaked."""

from __future__ import annotations

import asyncio
import gc

import anyio
import httpx
import openai
import pytest

import fairstream
from fairstream import Recorder, ReferenceServer, ServerError, StreamClient
from tests.conftest import FAST
from tests.instrument._families import FAMILIES, family_client

EXPECTED_MIDSTREAM = {
    "openai": (openai.APIError, httpx.HTTPError, Exception),
    "langchain": (openai.APIError, httpx.HTTPError, Exception),
    "httpx": (fairstream.StreamError,),
}


@pytest.mark.parametrize("family", FAMILIES)
async def test_server_dying_mid_stream_gives_the_error_and_a_partial_trace(family: str) -> None:
    rec = Recorder()
    server = ReferenceServer(FAST)
    await server.start()
    seen = 0
    try:
        async with family_client(family, server.base_url, rec) as client:

            async def reader() -> None:
                await client.stream(4000)

            task = asyncio.create_task(reader())
            assert server.driver is not None
            stats = server.driver.engine.stats
            with anyio.fail_after(5):
                await server.driver.wait_until(lambda: stats.generated_tokens >= 5)
            await server.aclose()  # the server vanishes mid-stream
            with pytest.raises(EXPECTED_MIDSTREAM[family]) as info:
                with anyio.fail_after(10):
                    await task
            assert not isinstance(info.value, asyncio.CancelledError)
    finally:
        await server.aclose()
    (trace,) = rec.traces
    assert trace.outcome == "error"
    assert trace.error_type is not None and trace.error_message
    seen = sum(1 for c in trace.chunk_chars if c)
    assert seen >= 3  # the chunks that arrived before the failure are kept


@pytest.mark.parametrize("family", FAMILIES)
async def test_cancelling_the_consumer_propagates_and_closes_the_connection(family: str) -> None:
    rec = Recorder()
    async with ReferenceServer(FAST) as server:
        assert server.driver is not None
        stats = server.driver.engine.stats
        async with family_client(family, server.base_url, rec) as client:
            task = asyncio.create_task(client.stream(4000))
            with anyio.fail_after(5):
                await server.driver.wait_until(lambda: stats.generated_tokens >= 3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # the server sees the client go: its request is aborted, not left running
            with anyio.fail_after(5):
                await server.driver.wait_until(lambda: stats.aborted == 1)
            assert stats.running == 0
    (trace,) = rec.traces
    assert trace.outcome == "cancelled"
    assert trace.error_type == "CancelledError"
    assert any(trace.chunk_chars)


async def test_http_error_status_is_a_server_error_with_a_trace() -> None:
    rec = Recorder()
    async with ReferenceServer(FAST) as server, StreamClient(server.base_url, recorder=rec) as c:
        with pytest.raises(ServerError) as info:
            async with c.chat(model="nope", messages=[{"role": "user", "content": "x"}]) as s:
                async for _ in s:
                    pass
    assert info.value.status_code == 404
    assert info.value.trace is not None and info.value.trace.outcome == "error"
    assert rec.traces[0].status_code == 404


async def test_openai_error_before_the_stream_is_recorded() -> None:
    rec = Recorder()
    async with (
        ReferenceServer(FAST) as server,
        openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as raw,
    ):
        client = fairstream.instrument(raw, recorder=rec)
        with pytest.raises(openai.NotFoundError):
            await client.chat.completions.create(
                model="nope", messages=[{"role": "user", "content": "x"}], stream=True
            )
    (trace,) = rec.traces
    assert trace.outcome == "error" and trace.status_code == 404
    assert trace.error_type == "NotFoundError"


async def test_no_task_or_connection_leaks_after_200_mixed_streams() -> None:
    """ok, early close, cancellation and HTTP errors, 50 each, through all three families."""
    rec = Recorder()
    async with ReferenceServer(FAST.with_(time_scale=0.05)) as server:
        assert server.driver is not None
        stats = server.driver.engine.stats
        before = len(asyncio.all_tasks())
        async with (
            family_client("openai", server.base_url, rec) as oa,
            family_client("langchain", server.base_url, rec) as lc,
            family_client("httpx", server.base_url, rec) as hx,
        ):
            clients = [oa, lc, hx]

            async def one(i: int) -> None:
                kind = i % 4
                client = clients[i % 3]
                if kind == 0:  # completes
                    await client.stream(5)
                elif kind == 1:  # the consumer gives up early
                    with anyio.move_on_after(0.002 * (i % 5 + 1)):
                        await client.stream(4000)
                elif kind == 2:  # cancelled by its task group
                    with anyio.CancelScope() as scope:
                        scope.cancel()
                        await client.stream(50)
                else:  # rejected by the server
                    with pytest.raises((openai.BadRequestError, ServerError, Exception)):
                        await client.stream(0)

            async with anyio.create_task_group() as tg:
                for i in range(200):
                    tg.start_soon(one, i)
        gc.collect()
        with anyio.fail_after(10):
            await server.driver.wait_until(lambda: stats.running == 0 and stats.waiting == 0)
        assert len(asyncio.all_tasks()) <= before
        # no response left half-sent: every cancelled or closed stream's connection went away
        # (LangChain's cached client may keep idle keep-alive connections: that is its pool)
        assert server.busy_connections == 0
    outcomes = [t.outcome for t in rec.traces]
    assert outcomes.count("ok") >= 50
    assert len(rec.traces) >= 150  # the scope cancelled before sending may leave no trace
    assert all(t.end is not None for t in rec.traces)
