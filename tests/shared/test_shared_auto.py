"""Shared ``auto``: the leader judges the server from every process's samples, on one clock."""

from __future__ import annotations

from pathlib import Path

import anyio

from fairstream import Dispatcher, ReferenceServer, ServerConfig

from .conftest import RedisServer
from .test_shared_slots import _worker

STATIC = ServerConfig(mode="static", batch_size=4, step_ms=20.0, time_scale=0.5)


async def test_the_leader_sees_a_static_server_as_static_from_several_processes(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """3 worker processes, each with its own recorder (started at different times) and its
    own event loop, send mixed lengths to a static server (B=4) through one pool whose leader
    is this process: it must find static batching with B=4 and never take the server for a
    continuous one (traces on each recorder's clock, or samples applied in the order they
    reached Redis, made that up: a batch seemed to start while the previous still ran)."""
    with ReferenceServer.in_subprocess(STATIC) as server:
        async with Dispatcher("auto", coordinator=redis_server.url, pool="s", lease_ttl=1.5) as d:
            assert d._shared is not None and d._shared.leader is not None
            leader = d._shared.leader
            with anyio.fail_after(3):
                while not leader.leading:  # noqa: ASYNC110 (its own loop's state)
                    await anyio.sleep(0.02)
            procs = [
                _worker(
                    server.base_url,
                    STATIC.model,
                    redis_server.url,
                    "s",
                    4,
                    12,
                    tmp_path / f"{i}",
                    policy="auto",
                )
                for i in range(3)
            ]
            for p in procs:
                assert await anyio.to_thread.run_sync(lambda p=p: p.wait(timeout=60)) == 0
            with anyio.fail_after(3):  # every sample published and applied
                while leader._jobs or leader._pending:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            policy = leader.policy
    assert policy is not None
    assert policy.kind == "static" and policy.batch_size == 4, policy.changes
    assert not any("continuous" in c for c in policy.changes), policy.changes
