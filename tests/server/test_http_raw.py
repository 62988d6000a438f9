"""The wire itself, through plain httpx: SSE framing, endpoints, disconnects, keep-alive."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from fairstream import ReferenceServer
from tests.conftest import ServerFactory

BODY = {"model": "fairstream-ref", "messages": [{"role": "user", "content": "hi"}]}


async def sse_events(client: httpx.AsyncClient, url: str, body: dict[str, object]) -> list[str]:
    out: list[str] = []
    async with client.stream("POST", url + "/chat/completions", json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        assert resp.headers.get("transfer-encoding") == "chunked"
        async for line in resp.aiter_lines():
            if line:
                assert line.startswith("data: ")
                out.append(line[6:])
    return out


async def test_sse_frames_end_with_done_and_usage_only_when_asked(serve: ServerFactory) -> None:
    async with serve() as server, httpx.AsyncClient() as client:
        plain = await sse_events(
            client, server.base_url, {**BODY, "max_tokens": 3, "stream": True, "ignore_eos": True}
        )
        with_usage = await sse_events(
            client,
            server.base_url,
            {
                **BODY,
                "max_tokens": 3,
                "stream": True,
                "ignore_eos": True,
                "stream_options": {"include_usage": True},
            },
        )
    assert plain[-1] == "[DONE]" and with_usage[-1] == "[DONE]"
    assert len(plain) == 1 + 3 + 1 + 1  # role, 3 content, finish, DONE
    assert not any("usage" in json.loads(e) for e in plain[:-1])
    usage = json.loads(with_usage[-2])
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] == 3


async def test_tokens_per_chunk_coalesces(serve: ServerFactory) -> None:
    async with serve(tokens_per_chunk=4) as server, httpx.AsyncClient() as client:
        events = await sse_events(
            client, server.base_url, {**BODY, "max_tokens": 10, "stream": True, "ignore_eos": True}
        )
    contents = [json.loads(e)["choices"][0]["delta"].get("content") for e in events[1:-2]]
    assert [len(c.split()) for c in contents] == [4, 4, 2]


async def test_health_models_metrics_and_keep_alive(serve: ServerFactory) -> None:
    async with serve() as server, httpx.AsyncClient() as client:
        root = server.base_url.removesuffix("/v1")
        assert (await client.get(root + "/health")).json() == {"status": "ok"}
        await client.post(server.base_url + "/chat/completions", json={**BODY, "max_tokens": 2})
        metrics = (await client.get(root + "/metrics")).text
        assert "fairstream_server_requests_finished_total 1" in metrics
        assert "fairstream_server_generation_tokens_total" in metrics
        assert server.connections == 1  # one pooled connection served all three requests


async def test_client_vanishing_mid_stream_frees_its_slot_and_others_carry_on(
    serve: ServerFactory,
) -> None:
    async with serve(max_num_seqs=2) as server, httpx.AsyncClient() as client:
        assert server.driver is not None
        body = {**BODY, "max_tokens": 400, "stream": True, "ignore_eos": True}
        async with client.stream("POST", server.base_url + "/chat/completions", json=body) as resp:
            lines = resp.aiter_lines()
            while not (await anext(lines)).startswith("data"):
                pass
        # the stream is closed from our side; the server notices and frees the slot
        stats = server.driver.engine.stats
        with anyio.fail_after(5):
            await server.driver.wait_until(lambda: stats.aborted == 1)
        assert stats.running == 0
        events = await sse_events(
            client, server.base_url, {**BODY, "max_tokens": 3, "stream": True, "ignore_eos": True}
        )
        assert events[-1] == "[DONE]"


async def test_server_shutdown_closes_open_streams() -> None:
    server = ReferenceServer(time_scale=0.5)
    await server.start()
    async with httpx.AsyncClient() as client:
        body = {**BODY, "max_tokens": 4000, "stream": True, "ignore_eos": True}
        async with client.stream("POST", server.base_url + "/chat/completions", json=body) as resp:
            lines = resp.aiter_lines()
            await anext(lines)
            await server.aclose()
            with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
                async for _ in lines:
                    pass
    assert server.connections == 0


async def test_static_member_vanishing_stops_its_writes_and_the_batch_carries_on(
    serve: ServerFactory,
) -> None:
    async with serve(mode="static", batch_size=2, batch_timeout_ms=1000.0) as server:
        assert server.driver is not None
        stats = server.driver.engine.stats
        url = server.base_url + "/chat/completions"
        body = {**BODY, "max_tokens": 30, "stream": True, "ignore_eos": True}
        async with (
            httpx.AsyncClient() as a,
            httpx.AsyncClient() as b,
            a.stream("POST", url, json=body) as gone,
            b.stream("POST", url, json=body) as stays,
        ):
            gone_lines = gone.aiter_lines()
            stay_lines = stays.aiter_lines()
            assert (await anext(gone_lines)).startswith("data: ")
            await gone.aclose()  # the client vanishes mid-batch
            rest = [line async for line in stay_lines if line]
        assert rest[-1] == "data: [DONE]"
        assert sum('"content":" ' in line for line in rest) >= 29
        assert stats.aborted == 1
        assert stats.finished == 1  # only the member that stayed got a finish
        async with httpx.AsyncClient() as c:
            ok = await c.post(url, json={**BODY, "max_tokens": 2})
        assert ok.status_code == 200
