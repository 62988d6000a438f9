"""Random interleavings of the lease scripts from several clients, against a real Redis:
the pool never counts more than its limit, and Redis holds exactly what the clients think
they hold (no lease or ticket leaked or dropped without expiry)."""

from __future__ import annotations

import uuid

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairstream._dispatch._shared import SharedSlots

from .conftest import RedisServer

OPS = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(["enqueue", "try", "release", "cancel", "renew"])),
    min_size=1,
    max_size=40,
)


async def _run(url: str, ops: list[tuple[int, str]], limit: int) -> None:
    pool = uuid.uuid4().hex
    clients = [SharedSlots(url, pool, limit=limit, ttl=30) for _ in range(3)]
    queued: list[list[tuple[str, str]]] = [[] for _ in clients]  # (ticket, lease) in order
    for c in clients:
        await c.open()
    try:
        for i, op in ops:
            c = clients[i]
            if op == "enqueue":
                ticket, lease = f"t:{uuid.uuid4().hex}", f"l:{uuid.uuid4().hex}"
                await c._call("enqueue", [ticket, c._ttl_ms(), 0])
                c.waiting.add(ticket)
                queued[i].append((ticket, lease))
            elif op == "try" and queued[i]:
                ticket, lease = queued[i][0]
                granted, used, lim, _paused = await c._call(
                    "acquire", [ticket, lease, c._ttl_ms(), limit, 0]
                )
                assert granted in (0, 1) and used <= lim == limit
                if granted:
                    queued[i].pop(0)
                    c.waiting.discard(ticket)
                    c.held.add(lease)
            elif op == "release" and c.held:
                await c.release(sorted(c.held)[0])
            elif op == "cancel" and queued[i]:
                ticket, lease = queued[i].pop()
                await c._call("release", [ticket, lease])
                c.waiting.discard(ticket)
            elif op == "renew":
                assert await c.renew() == []
            leases = {x.decode() for x in await c._redis.zrange(c.keys["leases"], 0, -1)}
            tickets = {x.decode() for x in await c._redis.zrange(c.keys["tickets"], 0, -1)}
            assert len(leases) <= limit
            assert leases == set().union(*(k.held for k in clients))
            assert tickets == set().union(*(k.waiting for k in clients))
    finally:
        for c in clients:
            await c.aclose()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, limit=st.integers(1, 3))
def test_random_interleavings_keep_the_pool_consistent(
    redis_server: RedisServer, ops: list[tuple[int, str]], limit: int
) -> None:
    anyio.run(_run, redis_server.url, ops, limit)
