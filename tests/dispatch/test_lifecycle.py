"""Explicit lifecycles: Dispatcher, ReferenceServer, StreamClient and Recorder each refuse use
outside their open state with a LifecycleError naming it; a closing Dispatcher cancels its
queued jobs and awaits (or, when its block raised, cancels) the running ones. The Dispatcher
cases run under asyncio and trio."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from fairstream import (
    Dispatcher,
    Fixed,
    JsonlSink,
    LifecycleError,
    Recorder,
    ReferenceServer,
    StreamClient,
)
from tests.conftest import FAST

BACKENDS = ["asyncio", "trio"]


async def _job() -> str:
    return "ran"


async def misuse() -> None:
    d = Dispatcher("fixed:2")
    assert d.state == "unopened"
    for use in (lambda: d.submit(_job), lambda: d.map(lambda _: _job(), [1])):
        with pytest.raises(LifecycleError, match="unopened"):
            await use()
    with pytest.raises(LifecycleError, match="unopened"):
        async for _ in d.stream(object(), model="m", messages=[]):
            pass
    async with d:
        assert d.state == "open"
        assert await d.submit(_job) == "ran"
        with pytest.raises(LifecycleError, match="opened only once"):
            await d.__aenter__()
    assert d.state == "closed"
    with pytest.raises(LifecycleError, match="closed"):
        await d.submit(_job)
    with pytest.raises(LifecycleError, match="closed"):
        async with d:
            pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_dispatcher_refuses_use_outside_its_open_state(backend: str) -> None:
    anyio.run(misuse, backend=backend)


async def close_with_work(raise_in_block: bool) -> dict[str, str]:
    """One job running and three queued behind ``Fixed(1)``, submitted from tasks outside the
    dispatcher's block; then the block ends (normally, or by raising)."""
    results: dict[str, str] = {}
    release = anyio.Event()
    cancelled = (anyio.get_cancelled_exc_class(), LifecycleError)

    async def long() -> str:
        await release.wait()
        return "done"

    async def call(name: str, fn: Callable[[], Awaitable[str]], d: Dispatcher) -> None:
        try:
            results[name] = await d.submit(fn)
        except cancelled:
            results[name] = "cancelled"

    async with anyio.create_task_group() as outer:
        try:
            async with Dispatcher(Fixed(1)) as d:
                outer.start_soon(call, "running", long, d)
                await anyio.wait_all_tasks_blocked()
                for i in range(3):
                    outer.start_soon(call, f"queued{i}", _job, d)
                await anyio.wait_all_tasks_blocked()
                assert (d.in_flight, d.queue_length) == (1, 3)
                if raise_in_block:
                    raise RuntimeError("boom")
                release.set()  # no await until the block ends: the queue is still full
        except RuntimeError:
            results["block"] = "raised"
    assert (d.in_flight, d.queue_length, d.state) == (0, 0, "closed")
    return results


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("raise_in_block", "running"), [(False, "done"), (True, "cancelled")], ids=["ended", "raised"]
)
def test_close_cancels_queued_jobs_and_awaits_or_cancels_running_ones(
    backend: str, raise_in_block: bool, running: str
) -> None:
    results = anyio.run(close_with_work, raise_in_block, backend=backend)
    queued = {f"queued{i}": "cancelled" for i in range(3)}
    block = {"block": "raised"} if raise_in_block else {}
    assert results == {"running": running, **queued, **block}


async def test_reference_server_lifecycle() -> None:
    server = ReferenceServer(FAST)
    assert server.state == "unopened"
    with pytest.raises(LifecycleError, match="unopened"):
        _ = server.base_url
    async with server:
        assert server.state == "open" and server.base_url.startswith("http://127.0.0.1:")
        with pytest.raises(LifecycleError, match="open"):
            await server.start()
    assert server.state == "closed"
    with pytest.raises(LifecycleError, match="closed"):
        _ = server.base_url
    with pytest.raises(LifecycleError, match="closed"):
        await server.start()
    await server.aclose()  # twice is harmless


async def client_and_recorder(base_url: str, path: Path) -> None:
    rec = Recorder([JsonlSink(path)])
    client = StreamClient(base_url, recorder=rec)
    async with client:
        msg = [{"role": "user", "content": "x"}]
        trace = await client.complete(model="fairstream-ref", messages=msg, max_tokens=2)
    with pytest.raises(LifecycleError, match="StreamClient is closed"):
        client.chat(model="fairstream-ref", messages=msg)
    with pytest.raises(LifecycleError, match="closed"):
        async with client:
            pass
    rec.close()
    kw: dict[str, Any] = {"client": "httpx"}
    with pytest.raises(LifecycleError, match="Recorder is closed"):
        rec.start(**kw)
    with pytest.raises(LifecycleError, match="Recorder is closed"):
        rec.emit(trace)
    with pytest.raises(LifecycleError, match=r"JSONL sink .* is closed"):
        rec.sinks[0](trace)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stream_client_and_recorder_lifecycles(tmp_path: Path, backend: str) -> None:
    with ReferenceServer.in_thread(FAST) as handle:
        anyio.run(client_and_recorder, handle.base_url, tmp_path / "t.jsonl", backend=backend)
