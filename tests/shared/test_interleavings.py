"""Random interleavings of the lease scripts from several clients, against a real Redis:
the pool never counts more than its limit, and Redis holds exactly what the clients think
they hold (no lease or ticket leaked or dropped without expiry). In band mode (a static
server) a request whose length and the longest one waiting for the next batch differ over 2x
(and 16 tokens) is not granted, and the band holds exactly the granted leases whose requests
have not started. A ticket is granted exactly when it is within the free slots of the line,
where keys (callers, from any client) take turns."""

from __future__ import annotations

import uuid

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fairstream._dispatch.shared._slots import SharedSlots

from .conftest import RedisServer

OPS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.sampled_from(
            ["enqueue", "enqueue-2", "try", "try-all", "release", "cancel", "renew", "start"]
        ),
    ),
    min_size=1,
    max_size=40,
)


LENGTHS = (4, 40, 200, 20)
KEYS = ("a", "b", "a", "c", "b")
FAR = 2**50  # no ticket is due (past the reorder wait) in these runs


def _key(ticket: str) -> str:
    return ticket.split("#k")[1].split("#h")[0]


async def _tickets(c: SharedSlots) -> list[str]:
    return [x.decode() for x in await c._redis.zrange(c.keys["tickets"], 0, -1)]


def _line(tickets: list[str], turns: list[str]) -> list[str]:
    """The model of the line: keys take turns (in the order of ``turns``: a key is there while
    it has tickets waiting, and comes back last), each key's tickets in score order."""
    assert set(turns) == {_key(t) for t in tickets}, (turns, tickets)
    per = [[t for t in tickets if _key(t) == k] for k in turns]
    return [q[r] for r in range(max(map(len, per), default=0)) for q in per if r < len(q)]


def _served(turns: list[str], queued: list[list[tuple[str, str, int]]], key: str) -> None:
    """A ticket of ``key`` left the line: its key goes last, or out while it has none."""
    turns.remove(key)
    if any(_key(t) == key for q in queued for t, _, _ in q):
        turns.append(key)


async def _run(url: str, ops: list[tuple[int, str]], limit: int, band: bool) -> None:
    pool = uuid.uuid4().hex
    clients = [SharedSlots(url, pool, limit=limit, ttl=30) for _ in range(3)]
    queued: list[list[tuple[str, str, int]]] = [[] for _ in clients]  # (ticket, lease, n)
    waiting: dict[str, int] = {}  # the model of the band: granted, not started -> length
    turns: list[str] = []  # the model of the round: keys in the order of their next turn
    for c in clients:
        await c.open()
    if band:
        await clients[0].set_band(True)
    try:
        for k, (i, op) in enumerate(ops):
            c = clients[i]
            if op in ("enqueue", "enqueue-2"):  # enqueue-2: two tickets in one call
                new = []
                for j in range(1 if op == "enqueue" else 2):
                    key = KEYS[(k + j) % len(KEYS)]  # callers across clients: keys take turns
                    ticket, lease = f"t:{uuid.uuid4().hex}#k{key}#h0", f"l:{uuid.uuid4().hex}"
                    new.append((ticket, lease, LENGTHS[(k + j) % len(LENGTHS)]))
                if op == "enqueue":
                    await c._call("enqueue", [new[0][0], c._ttl_ms(), 0])
                else:
                    await c._call(
                        "enqueue_many", [x for t, _, _ in new for x in (t, c._ttl_ms(), 0)]
                    )
                for ticket, lease, n in new:
                    c.waiting.add(ticket)
                    if _key(ticket) not in turns:
                        turns.append(_key(ticket))
                    queued[i].append((ticket, lease, n))
            elif op in ("try", "try-all") and queued[i]:
                # try: the first of this client's tickets; try-all: all of them in one call,
                # which must answer as if each had been tried in turn
                tried = queued[i][:1] if op == "try" else list(queued[i])
                line = await _tickets(c)
                args = [[t, lease, c._ttl_ms(), limit, 0, n, FAR] for t, lease, n in tried]
                if op == "try":
                    replies = [await c._call("acquire", args[0])]
                else:
                    replies = await c._call("acquire_many", [x for a in args for x in a])
                assert len(replies) == len(tried)
                for (ticket, lease, n), reply in zip(tried, replies, strict=True):
                    granted, used, lim, _paused, banded = reply
                    rank = _line(line, turns).index(ticket)
                    assert granted in (0, 1) and used <= lim == limit
                    longest = max(waiting.values(), default=-1)
                    apart = n > 2 * max(longest, 16) or longest > 2 * max(n, 16)
                    blocked = band and longest >= 0 and apart
                    free = lim - (used - granted)  # ``used`` counts the lease just granted
                    assert granted == (not blocked and rank < free), (rank, n, waiting)
                    if granted:
                        assert banded == band
                        queued[i].remove((ticket, lease, n))
                        line.remove(ticket)
                        _served(turns, queued, _key(ticket))
                        c.waiting.discard(ticket)
                        c.held.add(lease)
                        if band:
                            c.banded.add(lease)
                            waiting[lease] = n
            elif op == "start" and c.banded:
                lease = sorted(c.banded)[0]
                await c.started(lease)
                waiting.pop(lease)
            elif op == "release" and c.held:
                lease = sorted(c.held)[0]
                await c.release(lease)
                waiting.pop(lease, None)
            elif op == "cancel" and queued[i]:
                ticket, lease, _ = queued[i].pop()
                await c._call("release", [ticket, lease])
                if _key(ticket) in turns and not any(
                    _key(t) == _key(ticket) for q in queued for t, _, _ in q
                ):
                    turns.remove(_key(ticket))  # its last ticket left: out of the round
                c.waiting.discard(ticket)
            elif op == "renew":
                assert await c.renew() == []
            leases = {x.decode() for x in await c._redis.zrange(c.keys["leases"], 0, -1)}
            tickets = {x.decode() for x in await c._redis.zrange(c.keys["tickets"], 0, -1)}
            assert len(leases) <= limit
            assert leases == set().union(*(k.held for k in clients))
            assert tickets == set().union(*(k.waiting for k in clients))
            in_band = await c._redis.hgetall(c.keys["band"])
            assert {x.decode(): int(n) for x, n in in_band.items()} == waiting
    finally:
        for c in clients:
            await c.aclose()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, limit=st.integers(1, 3), band=st.booleans())
@example(  # a 200-token request waits while a 4-token one waits for the batch; then goes
    ops=[(0, "enqueue"), (0, "try"), (1, "enqueue"), (1, "try"), (0, "start"), (1, "try")],
    limit=3,
    band=True,
)
@example(  # two tickets enqueued, then tried, in one call each: a is granted, then b
    ops=[(0, "enqueue-2"), (0, "renew"), (0, "try-all")],
    limit=2,
    band=False,
)
@example(  # keys a, a, then b: b's ticket is second in line (keys take turns), not third
    ops=[(0, "enqueue"), (0, "renew"), (0, "enqueue"), (1, "renew"), (1, "enqueue"), (1, "try")],
    limit=2,
    band=False,
)
def test_random_interleavings_keep_the_pool_consistent(
    redis_server: RedisServer, ops: list[tuple[int, str]], limit: int, band: bool
) -> None:
    anyio.run(_run, redis_server.url, ops, limit, band)
