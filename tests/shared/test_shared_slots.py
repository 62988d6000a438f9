"""Shared admission across processes through a real Redis server."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from fairstream import Dispatcher, ReferenceServer, ServerConfig, StreamClient
from fairstream._dispatch.shared._breaker import CoordinatorDown
from fairstream._dispatch.shared._slots import SharedSlots

from .conftest import RedisServer

WORKER = Path(__file__).with_name("_worker.py")
SERVER = ServerConfig(mode="continuous", max_num_seqs=32, step_ms=20.0, time_scale=0.5)


def _peak(base_url: str) -> int:
    text = httpx.get(base_url.rsplit("/v1", 1)[0] + "/metrics").text
    line = next(x for x in text.splitlines() if x.startswith("fairstream_server_requests_peak"))
    return int(line.split()[-1])


def _worker(*args: object, policy: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, **({"FAIRSTREAM_TEST_POLICY": policy} if policy else {})}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *map(str, args)], stdout=subprocess.PIPE, text=True, env=env
    )


async def _tickets(slots: SharedSlots) -> int:
    return int(await slots._redis.zcard(slots.keys["tickets"]))


@contextlib.asynccontextmanager
async def _full_pool(url: str, pool: str) -> AsyncIterator[tuple[SharedSlots, SharedSlots, str]]:
    """A pool of 1 whose slot ``holder`` holds (the lease is yielded), and ``other``, a second
    client of the pool; both closed after."""
    holder = SharedSlots(url, pool, limit=1, ttl=5)
    other = SharedSlots(url, pool, ttl=5)
    await holder.open()
    await other.open()
    try:
        yield holder, other, await holder.acquire()
    finally:
        await holder.aclose()
        await other.aclose()


def test_processes_sharing_a_pool_never_exceed_its_limit(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """4 processes, each allowed 3 locally, share one pool of 3: the server sees 3 at most
    (and 3 at some point), by its own count."""
    with ReferenceServer.in_subprocess(SERVER) as server:
        procs = [
            _worker(server.base_url, SERVER.model, redis_server.url, "p", 3, 8, tmp_path / f"{i}")
            for i in range(4)
        ]
        for p in procs:
            assert p.wait(timeout=60) == 0
        assert _peak(server.base_url) == 3
    lines = sum(len((tmp_path / f"{i}").read_text().splitlines()) for i in range(4))
    assert lines == 32  # every job ran and left its trace


async def test_a_killed_process_gives_its_slots_back_within_the_ttl(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    ttl = 1.5  # the worker's lease ttl
    with ReferenceServer.in_subprocess(SERVER) as server:
        holder = _worker(
            server.base_url, SERVER.model, redis_server.url, "k", 2, 0, tmp_path / "h", "hold"
        )
        assert holder.stdout is not None
        lines = iter(holder.stdout.readline, "")
        assert next(lines).strip() == "ready"
        assert next(lines).strip() == "holding"
        slots = SharedSlots(redis_server.url, "k", limit=2, ttl=ttl)
        await slots.open()
        try:
            assert await slots.in_use() == 2
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
            killed = time.monotonic()
            with anyio.fail_after(3 * ttl):
                await slots.acquire()
                await slots.acquire()
            waited = time.monotonic() - killed
        finally:
            await slots.aclose()
            if holder.poll() is None:
                holder.kill()
            holder.wait()
            holder.stdout.close()
    # renewed at most ttl/3 before the kill, so the leases expired ttl*2/3 to ttl after it
    assert 0.5 * ttl <= waited <= ttl + ttl / 3 + 0.5, waited


async def test_a_cancelled_acquire_leaves_no_ticket_and_the_queue_moves_on(
    redis_server: RedisServer,
) -> None:
    async with _full_pool(redis_server.url, "c") as (holder, other, lease):
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(other.acquire)
                while await _tickets(holder) == 0:  # noqa: ASYNC110 (Redis's state: its ticket queued)
                    await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
        assert await _tickets(holder) == 0 and not other.waiting
        assert await holder.in_use() == 1
        await holder.release(lease)
        await holder.release(lease)  # idempotent
        with anyio.fail_after(2):
            await other.acquire()
        assert await holder.in_use() == 1
    assert await _count(redis_server, "c") == 0  # aclose gave everything back


async def test_a_release_wakes_the_waiter_it_lets_through_not_every_waiter(
    redis_server: RedisServer,
) -> None:
    """12 waiters in one process; each release names the ticket it lets through, so each
    waiter looks again about once (24 acquire calls in all; waking every waiter on every
    release takes 12 + 12 + 11 + ... + 1 = 90). The poll is 30 s: a missed wake-up stalls."""
    holder = SharedSlots(redis_server.url, "wake", limit=1, ttl=5)
    waiters = SharedSlots(redis_server.url, "wake", ttl=5, poll=30)
    await holder.open()
    await waiters.open()
    served: list[int] = []
    try:
        first = await holder.acquire()

        async def one(i: int) -> None:
            lease = await waiters.acquire()
            served.append(i)
            await waiters.release(lease)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(waiters.run)
                for i in range(12):
                    tg.start_soon(one, i)
                while len(waiters.round_trips) < 12:  # noqa: ASYNC110 (each has looked once)
                    await anyio.sleep(0.01)
                await holder.release(first)
                while len(served) < 12:  # noqa: ASYNC110 (served one by one, by wake-ups)
                    await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
        assert len(waiters.round_trips) <= 12 + 12 + 8, len(waiters.round_trips)
    finally:
        await holder.aclose()
        await waiters.aclose()


async def _count(redis_server: RedisServer, pool: str) -> int:
    probe = SharedSlots(redis_server.url, pool)
    await probe.open()
    try:
        return await probe.in_use() + await _tickets(probe)
    finally:
        await probe.aclose()


async def test_waiters_are_served_in_ticket_order_across_clients(
    redis_server: RedisServer,
) -> None:
    clients = [SharedSlots(redis_server.url, "f", limit=1, ttl=5) for _ in range(4)]
    for c in clients:
        await c.open()
    order: list[int] = []
    try:
        first = await clients[0].acquire()

        async def wait_then_release(i: int) -> None:
            lease = await clients[i].acquire()
            order.append(i)
            await clients[i].release(lease)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in (3, 1, 2):  # queue in this order, one ticket at a time
                    before = await _tickets(clients[0])
                    tg.start_soon(wait_then_release, i)
                    while await _tickets(clients[0]) == before:  # noqa: ASYNC110 (Redis's state)
                        await anyio.sleep(0.01)
                await clients[0].release(first)
        assert order == [3, 1, 2]
    finally:
        for c in clients:
            await c.aclose()


async def test_keys_take_turns_across_dispatchers(redis_server: RedisServer) -> None:
    """Two dispatchers share a pool of 1, as two processes would (each may send 16 into the
    Redis line, as with ``auto``, whose local limit is the pool's). One queues 6 requests of a
    heavy caller, then the other 3 of a light one: the pool serves the keys in turn while both
    wait (first come first served would run all 6 heavy ones first)."""
    url, gate = redis_server.url, anyio.Event()
    served: list[str] = []
    probe = SharedSlots(url, "k")
    await probe.open()

    async def job(key: str) -> None:
        if key == "first":
            await gate.wait()  # holds the one slot until everything else is in line
        served.append(key)

    try:
        async with (
            Dispatcher("fixed:16", coordinator=url, pool="k") as heavy,
            Dispatcher("fixed:16", coordinator=url, pool="k") as light,
        ):
            await probe.set_limit(1)  # all 16 of each go in line in Redis, where keys matter
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(functools.partial(heavy.submit, job, "first", key="first"))
                    while await probe.in_use() < 1:  # noqa: ASYNC110 (Redis's state)
                        await anyio.sleep(0.01)
                    queued = 0
                    for d, key, n in ((heavy, "heavy", 6), (light, "light", 3)):
                        for _ in range(n):
                            tg.start_soon(functools.partial(d.submit, job, key, key=key))
                        queued += n
                        while await _tickets(probe) < queued:  # noqa: ASYNC110 (Redis's state)
                            await anyio.sleep(0.01)
                    gate.set()
        assert served == ["first"] + ["heavy", "light"] * 3 + ["heavy"] * 3, served
    finally:
        await probe.aclose()


async def test_a_lone_request_on_a_quiet_pool_skips_the_gathering_window(
    redis_server: RedisServer,
) -> None:
    """A 1 s gathering window: a ticket alone in line on a pool that granted nothing for a
    window goes at once; one that comes right after a grant (maybe a burst) waits it out."""
    slots = SharedSlots(redis_server.url, "q", limit=4, ttl=5, gather=1.0)
    await slots.open()
    try:
        t0 = time.perf_counter()
        first = await slots.acquire(16)
        alone = time.perf_counter() - t0
        second = await slots.acquire(16)
        after_grant = time.perf_counter() - t0 - alone
        assert alone < 0.25 * 1.0 < 0.9 * 1.0 < after_grant, (alone, after_grant)
        for lease in (first, second):
            await slots.release(lease)
    finally:
        await slots.aclose()


async def test_a_lease_that_expired_is_reported_lost_not_regranted(
    redis_server: RedisServer,
) -> None:
    stalled = SharedSlots(redis_server.url, "l", limit=1, ttl=0.3)  # no heartbeat running
    other = SharedSlots(redis_server.url, "l", ttl=5)
    await stalled.open()
    await other.open()
    try:
        lease = await stalled.acquire()
        with anyio.fail_after(3):
            taken = await other.acquire()  # granted once the stalled lease expired
        assert await stalled.renew() == [lease]
        assert stalled.lost == 1 and lease not in stalled.held
        assert await other.renew() == [] and taken in other.held
        assert int(await other._redis.get(other.keys["lost"])) == 1
        assert await other.in_use() == 1
    finally:
        await stalled.aclose()
        await other.aclose()


async def test_a_cancelled_stream_gives_its_lease_back(redis_server: RedisServer) -> None:
    async with (
        ReferenceServer(SERVER) as server,
        StreamClient(server.base_url) as client,
        Dispatcher("fixed:2", coordinator=redis_server.url, pool="s") as d,
    ):

        async def stream_until_cancelled() -> None:
            msg = [{"role": "user", "content": "hi"}]
            async with client.chat(
                model=SERVER.model, messages=msg, max_tokens=4000, ignore_eos=True
            ) as stream:
                async for _ in stream:
                    scope.cancel()  # the first chunk in: the caller gives up

        with anyio.CancelScope() as scope:
            await d.submit(stream_until_cancelled)
        assert scope.cancelled_caught
        with anyio.fail_after(5):
            while await d._shared.slots.in_use():  # type: ignore[union-attr]  # noqa: ASYNC110 (background release)
                await anyio.sleep(0.01)
    assert await _count(redis_server, "s") == 0


async def test_shorter_requests_go_first_but_not_past_the_reorder_wait(
    redis_server: RedisServer,
) -> None:
    """Arriving together, the line is shortest first; a long request that waited past
    ``max_reorder_wait`` is not overtaken by a short one that arrives after that."""
    clients = [
        SharedSlots(redis_server.url, "o", limit=1, ttl=5, max_reorder_wait=0.3) for _ in range(5)
    ]
    for c in clients:
        await c.open()
    order: list[int] = []
    try:
        first = await clients[0].acquire()

        async def wait_then_release(i: int, n: float) -> None:
            lease = await clients[i].acquire(n)
            order.append(i)
            await clients[i].release(lease)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i, n in ((1, 500), (2, 10), (3, 100)):
                    before = await _tickets(clients[0])
                    tg.start_soon(wait_then_release, i, n)
                    while await _tickets(clients[0]) == before:  # noqa: ASYNC110 (Redis's state)
                        await anyio.sleep(0.01)
                await anyio.sleep(0.4)  # past the reorder wait: ticket 1's handicap is spent
                tg.start_soon(wait_then_release, 4, 1)
                while await _tickets(clients[0]) < 4:  # noqa: ASYNC110 (Redis's state)
                    await anyio.sleep(0.01)
                await clients[0].release(first)
        assert order == [2, 3, 1, 4]
    finally:
        for c in clients:
            await c.aclose()


@contextlib.asynccontextmanager
async def _two_processes(
    server: RedisServer, pool: str, ttl: float
) -> AsyncIterator[tuple[SharedSlots, SharedSlots]]:
    """Two processes' slots on one pool of 4, each having seen the other; Redis up at the end."""
    a = SharedSlots(server.url, pool, limit=4, ttl=ttl)
    b = SharedSlots(server.url, pool, limit=4, ttl=ttl)
    await a.open()
    await b.open()
    try:
        await a.renew()
        assert a.live == b.live == 2
        yield a, b
    finally:
        if server.proc is None:  # a test stopped it
            server.start()
        await a.aclose()
        await b.aclose()


async def _renew_when_reachable(slots: SharedSlots) -> list[str]:
    with anyio.fail_after(15):
        while True:
            try:
                return await slots.renew()
            except CoordinatorDown:  # the breaker's cooldown (1 s, then 2 s, ...)
                await anyio.sleep(0.1)


async def test_redis_stopped_then_restarted_mid_run(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Down: each of 2 processes admits on its share (4 // 2), counting the lease it still
    holds from Redis, not the whole limit, and says so once. Back with its keys lost: the epoch
    tells both processes (the first to see it sets a new one), both put their held leases back,
    the one granted locally meanwhile joins them (Redis must not grant its slot again), and
    shared admission resumes."""
    async with _two_processes(redis_server, "r", 3) as (a, b):
        shared, other = await a.acquire(), await b.acquire()
        redis_server.stop()
        with caplog.at_level(logging.WARNING, logger="fairstream"):
            local = [await a.acquire()]  # with the shared one it holds: its share
            assert all(x.startswith("local:") for x in local)
            with anyio.move_on_after(0.5) as scope:
                await a.acquire()  # another would exceed this process's share
            assert scope.cancelled_caught
        unreachable = [r for r in caplog.records if "unreachable" in r.getMessage()]
        assert len(unreachable) == 1, [r.getMessage() for r in caplog.records]
        redis_server.start()  # an empty Redis: the pool's keys are gone
        assert await _renew_when_reachable(a) == []  # put back, not lost
        assert await _renew_when_reachable(b) == []  # the other process too: a new epoch
        assert a.restarts == 1 and a.lost == 0 and b.restarts == 1 and b.lost == 0
        # the lease granted locally is in Redis too: its request still runs
        assert await a.in_use() == 3 and shared in a.held and other in b.held and not a.unshared
        last = await b.acquire()  # the pool's 4th slot
        with anyio.move_on_after(0.5) as scope:
            await b.acquire()  # a 5th
        assert scope.cancelled_caught and await a.in_use() == 4
        for x in local:
            await a.release(x)
        await b.release(last)
        again = await a.acquire()
        assert again.startswith("l:") and await a.in_use() == 3


async def test_an_outage_counts_what_the_others_held_for_a_ttl(
    redis_server: RedisServer,
) -> None:
    """Redis goes away while process b holds 3 of the pool's 4 slots: a's share, 2 of 4, less
    b's 3 (as a last heard from Redis) is 1, so a and b together stay within the limit (2 + 3
    would exceed it); once b's leases would have expired (a ttl), a's share is 2 again."""
    ttl = 1.5
    async with _two_processes(redis_server, "o", ttl) as (a, b):
        held = [await b.acquire() for _ in range(3)]
        await a.renew()  # a hears of b's 3
        redis_server.stop()
        first = await a.acquire()
        assert first in a.unshared
        with anyio.move_on_after(ttl / 3) as scope:
            await a.acquire()  # b's 3 and a's 1: the pool is full
        assert scope.cancelled_caught
        with anyio.fail_after(3 * ttl):
            second = await a.acquire()  # a ttl on: b's leases would have expired
        assert a.held == {first, second} and len(held) == len(b.held) == 3


async def test_back_from_an_outage_a_process_keeps_to_its_share_while_others_are_away(
    redis_server: RedisServer,
) -> None:
    """Both processes ran on their local shares (2 of 4 each) while Redis was down. The first
    back finds a restarted Redis that counts only its own 2: it must not take the 2 slots the
    other, still away, runs (4 + 2 at the server), until that one is back or a heartbeat has
    passed."""
    async with _two_processes(redis_server, "s", 3) as (a, b):
        redis_server.stop()
        mine = [await a.acquire(), await a.acquire()]
        theirs = [await b.acquire(), await b.acquire()]
        assert set(mine) == a.unshared and set(theirs) == b.unshared
        redis_server.start()
        assert await _renew_when_reachable(a) == []
        assert await a.in_use() == 2 and a.live == 2  # b's 2 are not in Redis yet
        with anyio.move_on_after(0.5) as scope:
            await a.acquire()  # Redis has room, but not the pool: b runs 2 it does not know
        assert scope.cancelled_caught
        await _renew_when_reachable(b)
        assert await a.in_use() == 4
        await b.release(theirs[0])
        with anyio.fail_after(10):  # once a heartbeat has passed, Redis alone decides
            await a.acquire()
        assert await a.in_use() == 4


async def test_a_stalled_process_finds_its_leases_lost_and_says_so(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """SIGSTOP past the ttl: its slots go to others (the pool never counts more than its
    limit) and, once resumed, its heartbeat reports both leases lost (counted in Redis)."""
    ttl = 1.5
    with ReferenceServer.in_subprocess(SERVER) as server:
        out = tmp_path / "s"
        holder = _worker(server.base_url, SERVER.model, redis_server.url, "z", 2, 0, out, "hold")
        assert holder.stdout is not None
        slots = SharedSlots(redis_server.url, "z", limit=2, ttl=5)
        try:
            assert holder.stdout.readline().strip() == "ready"
            assert holder.stdout.readline().strip() == "holding"
            await slots.open()
            os.kill(holder.pid, signal.SIGSTOP)
            with anyio.fail_after(3 * ttl):
                await slots.acquire()
                await slots.acquire()
            assert await slots.in_use() == 2
            os.kill(holder.pid, signal.SIGCONT)
            with anyio.fail_after(3 * ttl):
                while int(await slots._redis.get(slots.keys["lost"]) or 0) < 2:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            assert await slots.in_use() == 2  # the lost leases were not granted back
        finally:
            await slots.aclose()
            os.kill(holder.pid, signal.SIGCONT)
            holder.kill()
            holder.wait()
            holder.stdout.close()


async def test_the_leader_dies_and_another_process_takes_over_within_a_ttl(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Shared ``auto``: one process leads (writes the limit); SIGKILL it and another leads
    within the leader key's ttl."""
    ttl = 1.5
    with ReferenceServer.in_subprocess(SERVER) as server:
        out = tmp_path / "a"
        first = _worker(
            server.base_url, SERVER.model, redis_server.url, "a", 2, 0, out, "hold", policy="auto"
        )
        assert first.stdout is not None
        try:
            assert first.stdout.readline().strip() == "ready"
            assert first.stdout.readline().strip() == "holding"
            async with Dispatcher(
                "auto", coordinator=redis_server.url, pool="a", lease_ttl=ttl
            ) as d:
                assert d._shared is not None and d._shared.leader is not None
                redis = d._shared.slots._redis
                leader_key = d._shared.slots.keys["leader"]
                mine = f"{first.pid}-".encode()
                with anyio.fail_after(2 * ttl):  # the worker's leader loop claims it first
                    while not (await redis.get(leader_key) or b"").startswith(mine):  # noqa: ASYNC110
                        await anyio.sleep(0.02)
                assert not d._shared.leader.leading
                os.kill(first.pid, signal.SIGKILL)
                first.wait()
                killed = time.monotonic()
                with anyio.fail_after(3 * ttl):
                    while not d._shared.leader.leading:  # noqa: ASYNC110 (its own loop's state)
                        await anyio.sleep(0.02)
                took = time.monotonic() - killed
                assert d._shared.leader.terms == 1
                assert int(await redis.get(d._shared.slots.keys["limit"])) >= 1
        finally:
            if first.poll() is None:
                first.kill()
            first.wait()
            first.stdout.close()
    assert took <= ttl + 0.5, took


async def test_a_429_in_one_process_pauses_the_whole_pool(redis_server: RedisServer) -> None:
    """``pause`` (what a dispatcher does on 429/503 with Retry-After) holds every process's
    grants on Redis's clock, though slots are free."""
    a = SharedSlots(redis_server.url, "q", limit=4, ttl=5)
    b = SharedSlots(redis_server.url, "q", limit=4, ttl=5)
    await a.open()
    await b.open()
    try:
        t0 = time.monotonic()
        await b.acquire()  # unpaused: at once (the 20 ms gathering window aside)
        free = time.monotonic() - t0
        await a.pause(0.6)
        t0 = time.monotonic()
        with anyio.fail_after(3):
            await b.acquire()
        paused = time.monotonic() - t0
        assert await b.in_use() == 2
    finally:
        await a.aclose()
        await b.aclose()
    assert free < 0.3 <= 0.5 < paused, (free, paused)


async def test_a_bursts_tries_go_to_redis_together_not_one_call_each(
    redis_server: RedisServer,
) -> None:
    """16 requests at once in one process, a pool of 16: with the pool's own task running (as
    in a Dispatcher) the tries that look again when the gathering window ends go in one script
    call, so Redis runs the acquire script a few times, not once per request or more; every
    request still gets its lease, and no more than the limit."""

    async def burst(slots: SharedSlots) -> int:
        def runs(info: dict[str, Any]) -> int:
            return sum(int(v["calls"]) for k, v in info.items() if k.startswith("cmdstat_eval"))

        before = runs(await slots._redis.info("commandstats"))
        leases: list[str] = []

        async def one(n: int) -> None:
            leases.append(await slots.acquire(n))

        async with anyio.create_task_group() as tg:
            for i in range(16):
                tg.start_soon(one, 8 if i % 2 else 128)
        assert len(set(leases)) == 16 and await slots.in_use() == 16
        for lease in leases:
            await slots.release(lease)
        return runs(await slots._redis.info("commandstats")) - before - 16  # less the releases

    alone = SharedSlots(redis_server.url, "b1", limit=16, ttl=5)
    together = SharedSlots(redis_server.url, "b2", limit=16, ttl=5)
    await alone.open()
    await together.open()
    try:
        one_each = await burst(alone)  # no run(): a call per try
        async with anyio.create_task_group() as tg:
            await tg.start(together.run)
            batched = await burst(together)
            tg.cancel_scope.cancel()
    finally:
        await alone.aclose()
        await together.aclose()
    assert one_each >= 2 * 16  # an enqueue and at least one try each
    assert batched <= 16 + 8, (batched, one_each)  # the enqueues, and a few calls for the tries


async def test_acquires_cancelled_while_their_calls_are_batched_leave_nothing(
    redis_server: RedisServer,
) -> None:
    """With the pool's task running (calls batched), 8 acquires on a full pool cancelled at
    once, after each of a range of delays (some before their enqueue went, some while a
    batched call is on its way): no ticket or lease is left, and the pool still grants."""
    async with (
        _full_pool(redis_server.url, "x") as (holder, other, lease),
        anyio.create_task_group() as outer,
    ):
        await outer.start(other.run)
        for delay in (0.0, 0.0005, 0.001, 0.002, 0.005, 0.03):
            with anyio.move_on_after(delay):
                async with anyio.create_task_group() as tg:
                    for _ in range(8):
                        tg.start_soon(other.acquire, 16)
            assert await _tickets(holder) == 0 and not other.waiting, delay
            assert await holder.in_use() == 1 and not other.held, delay
        await holder.release(lease)
        with anyio.fail_after(2):
            got = await other.acquire(16)
        assert await holder.in_use() == 1 and other.held == {got}
        outer.cancel_scope.cancel()
    assert await _count(redis_server, "x") == 0
