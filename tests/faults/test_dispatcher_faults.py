"""The dispatcher when the server fails: slots come back, the limit backs off, nothing hangs."""

from __future__ import annotations

import anyio
import pytest

from fairstream import (
    AIMD,
    Dispatcher,
    Fixed,
    ReferenceServer,
    ServerConfig,
    ServerError,
    StreamClient,
)

MSG = [{"role": "user", "content": "hi"}]
FAST = ServerConfig(step_ms=20.0, per_seq_ms=0.0, prefill_ms_per_token=0.0, time_scale=0.5)


async def test_when_every_request_fails_the_dispatcher_drains_and_raises() -> None:
    config = FAST.with_(faults="status_503:rate=1", retry_after_s=0.05)
    async with (
        ReferenceServer(config) as server,
        StreamClient(server.base_url) as client,
        Dispatcher(Fixed(4), retries=1) as d,
    ):
        with anyio.fail_after(20), pytest.raises(ServerError) as info:
            await d.map(
                lambda n: client.complete(model=config.model, messages=MSG, max_tokens=n),
                [4] * 12,
            )
        assert info.value.status_code == 503
        with anyio.fail_after(10):
            await d.idle()
        assert d.in_flight == 0 and d.queue_length == 0


async def test_mid_stream_failures_free_their_slots() -> None:
    config = FAST.with_(faults="disconnect_mid:rate=0.5,after=2")
    async with (
        ReferenceServer(config) as server,
        StreamClient(server.base_url) as client,
        Dispatcher(Fixed(3)) as d,
    ):
        with anyio.fail_after(20):
            results = await d.map(
                lambda n: client.complete(model=config.model, messages=MSG, max_tokens=n),
                [6] * 20,
                return_exceptions=True,
            )
            await d.idle()
        failed = [r for r in results if isinstance(r, BaseException)]
        assert failed and len(failed) < 20  # some failed mid-stream, the rest went through
        assert d.in_flight == 0


async def test_the_limit_backs_off_on_429_and_recovers() -> None:
    # the first five requests are refused with Retry-After; the rest succeed
    config = FAST.with_(faults="status_429:at=1|2|3|4|5", retry_after_s=0.05)
    limits: list[int] = []
    async with (
        ReferenceServer(config) as server,
        StreamClient(server.base_url) as client,
        Dispatcher(AIMD(start=8), retries=3) as d,
    ):

        async def one(n: int) -> object:
            limits.append(d.limit)
            return await client.complete(model=config.model, messages=MSG, max_tokens=n)

        with anyio.fail_after(30):
            results = await d.map(one, [4] * 60)
    assert all(r.outcome == "ok" for r in results)  # type: ignore[union-attr]
    assert min(limits) < 8  # backed off
    assert limits[-1] > min(limits)  # and grew again
