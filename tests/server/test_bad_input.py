"""Every bad input the issue names gets OpenAI's error shape and the right status."""

from __future__ import annotations

import asyncio
import json

import anyio
import httpx
import pytest

from tests.conftest import ServerFactory

MSGS = [{"role": "user", "content": "hi"}]
GOOD = {"model": "fairstream-ref", "messages": MSGS, "max_tokens": 2}


def assert_error_shape(resp: httpx.Response, status: int) -> dict[str, object]:
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert isinstance(err["message"], str) and err["message"]
    return dict(err)


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        (b"{not json", 400, None),
        (b"[1, 2]", 400, None),
        (json.dumps({"model": "fairstream-ref"}).encode(), 400, "messages"),
        (json.dumps({"model": "fairstream-ref", "messages": []}).encode(), 400, "messages"),
        (json.dumps({"model": "fairstream-ref", "messages": ["x"]}).encode(), 400, "messages"),
        (json.dumps({"messages": MSGS}).encode(), 400, "model"),
        (json.dumps({**GOOD, "model": "gpt-9"}).encode(), 404, "model"),
        (json.dumps({**GOOD, "max_tokens": 0}).encode(), 400, "max_tokens"),
        (json.dumps({**GOOD, "max_tokens": -3}).encode(), 400, "max_tokens"),
        (json.dumps({**GOOD, "max_tokens": 4097}).encode(), 400, "max_tokens"),
        (json.dumps({**GOOD, "max_tokens": "12"}).encode(), 400, "max_tokens"),
        (json.dumps({**GOOD, "stream": "yes"}).encode(), 400, "stream"),
        (json.dumps({**GOOD, "n": 3}).encode(), 400, "n"),
    ],
)
async def test_invalid_requests(
    serve: ServerFactory, body: bytes, status: int, param: str | None
) -> None:
    async with serve() as server, httpx.AsyncClient() as client:
        resp = await client.post(
            server.base_url + "/chat/completions",
            content=body,
            headers={"content-type": "application/json"},
        )
        err = assert_error_shape(resp, status)
        assert err["param"] == param
        # the connection and the server are still fine afterwards
        ok = await client.post(server.base_url + "/chat/completions", json=GOOD)
        assert ok.status_code == 200


async def test_unknown_path_and_method(serve: ServerFactory) -> None:
    async with serve() as server, httpx.AsyncClient() as client:
        assert_error_shape(await client.post(server.base_url + "/embeddings", json=GOOD), 404)
        assert_error_shape(await client.get(server.base_url + "/chat/completions"), 405)


async def test_body_over_one_mib_gets_413(serve: ServerFactory) -> None:
    async with serve() as server, httpx.AsyncClient() as client:
        big = {**GOOD, "messages": [{"role": "user", "content": "x" * (1 << 20)}]}
        assert_error_shape(await client.post(server.base_url + "/chat/completions", json=big), 413)

        async def chunked() -> object:  # no Content-Length: the cap must hold while reading
            for _ in range(20):
                yield b"x" * 65536

        resp = await client.post(server.base_url + "/chat/completions", content=chunked())
        assert_error_shape(resp, 413)
        assert (
            await client.post(server.base_url + "/chat/completions", json=GOOD)
        ).status_code == 200


@pytest.mark.parametrize("auth", [None, "Bearer wrong", "Bearer sekret2", "Basic sekret"])
async def test_wrong_or_missing_key_gets_401(serve: ServerFactory, auth: str | None) -> None:
    async with serve(api_key="sekret") as server, httpx.AsyncClient() as client:
        headers = {"authorization": auth} if auth else {}
        resp = await client.post(server.base_url + "/chat/completions", json=GOOD, headers=headers)
        assert assert_error_shape(resp, 401)["code"] == "invalid_api_key"
        assert "sekret" not in resp.text
        resp = await client.post(
            server.base_url + "/chat/completions",
            json=GOOD,
            headers={"authorization": "Bearer sekret"},
        )
        assert resp.status_code == 200


async def test_full_waiting_queue_gets_429_with_retry_after(serve: ServerFactory) -> None:
    async with serve(mode="sequential", max_waiting=2) as server, httpx.AsyncClient() as client:
        assert server.driver is not None
        long = {**GOOD, "max_tokens": 500, "ignore_eos": True, "stream": True}
        url = server.base_url + "/chat/completions"
        async with client.stream("POST", url, json=long) as running:
            # keep the iterator referenced: a collected one closes the response
            lines = running.aiter_lines()
            await anext(lines)  # the first one runs
            tasks = [asyncio.create_task(client.post(url, json=GOOD)) for _ in range(2)]
            stats = server.driver.engine.stats
            with anyio.fail_after(5):
                await server.driver.wait_until(lambda: stats.waiting == 2)
            resp = await client.post(url, json=GOOD)
            assert_error_shape(resp, 429)
            assert stats.running == 1  # the long stream was never disturbed
            assert resp.headers["retry-after"] == "1"
        # closing the long stream lets the queued two finish normally
        done = await asyncio.gather(*tasks)
        assert [r.status_code for r in done] == [200, 200]


async def test_malformed_http_closes_that_connection_only(serve: ServerFactory) -> None:
    async with serve() as server:
        port = server.port
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"THIS IS NOT HTTP\r\n\r\n")
        await writer.drain()
        with anyio.fail_after(5):
            reply = await reader.read()  # until the server closes
        assert reply.startswith(b"HTTP/1.1 400")
        writer.close()
        await writer.wait_closed()
        # a half request then a vanished client
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
        )
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        async with httpx.AsyncClient() as client:
            ok = await client.post(server.base_url + "/chat/completions", json=GOOD)
            assert ok.status_code == 200


async def test_oversized_headers_are_refused(serve: ServerFactory) -> None:
    async with serve() as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (64 << 10) + b"\r\n\r\n"
        )
        await writer.drain()
        with anyio.fail_after(5):
            reply = await reader.read()  # the server answers and closes
        assert reply.startswith(b"HTTP/1.1 431")
        writer.close()
        await writer.wait_closed()
