"""``SharedSlots``: one pool's slots as leases in Redis, shared by every process naming it.

A request holds a lease from admission to release. Leases expire on Redis's clock unless
their holder renews them (every ``ttl / 3``, all of a process's leases in one script call), so a
process killed with SIGKILL gives its slots back within ``ttl`` plus one heartbeat. Waiters
queue by ticket, shortest first among those that arrive together, first come first served over
longer spans (see :meth:`SharedSlots.acquire`), and heartbeat too, so a dead waiter leaves the
queue. A lease found expired on renewal is *lost*: logged and counted, never granted again.
While :meth:`SharedSlots.run` runs, a process's enqueues and tries made together go to Redis as
one script call each (``_batcher.py``).

When Redis cannot be reached, a circuit breaker stops calling it for a while and each process
admits on a local share of the limit, never the whole (``_outage.py``). A Redis that lost its
keys (a restart) is noticed by its epoch: the leases this process holds are put back rather than
reported lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import time
import uuid
from collections import deque
from collections.abc import Iterator
from typing import Any

import anyio

from ..._errors import require
from . import _lua
from ._batcher import Batcher
from ._breaker import Breaker, CoordinatorDown
from ._lua import keys, script_keys
from ._outage import Outage

__all__ = ["SharedSlots"]

log = logging.getLogger("fairstream.dispatch")
_JOINED = "+"  # on the release channel: a process joined the pool


class SharedSlots:
    """Leases on the slots of pool ``pool`` at the Redis server ``url``."""

    def __init__(
        self,
        url: str,
        pool: str,
        *,
        limit: int | None = None,
        ttl: float = 15.0,
        timeout: float = 1.0,
        poll: float = 0.25,
        max_reorder_wait: float = 60.0,
        gather: float = 0.02,
    ) -> None:
        if ttl <= 0:
            raise ValueError(f"lease ttl must be positive, got {ttl}")
        self.url, self.pool, self.ttl, self.poll = url, pool, ttl, poll
        self.limit = limit
        self.max_reorder_wait = max_reorder_wait
        self.gather = gather  # a new ticket waits this long, so a burst is in line first
        self.keys = keys(pool)
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.epoch = uuid.uuid4().hex
        self.held: set[str] = set()  # leases this process holds
        self.banded: set[str] = set()  # held leases in the band (not started yet)
        self.waiting: set[str] = set()  # tickets this process queues
        self.lost = 0  # leases found expired on renewal
        self.live = 1  # processes of the pool seen at the last heartbeat
        self.restarts = 0  # times Redis was found without our epoch
        self.own_limit = True  # False: a leader writes the limit; open() only sets a default
        self.clock_offset = 0.0  # Redis's clock minus perf_counter, seconds (each heartbeat)
        # (round trip, offset) of the last heartbeats: the quickest one's offset is the truest
        self._clock: deque[tuple[float, float]] = deque(maxlen=8)
        self._limit_written: int | None = None
        self._band_written: bool | None = None
        self.round_trips: list[float] = []  # seconds per acquire script call (bounded)
        beat = ttl / 3  # Redis back: noticed within a heartbeat, so by every process in one
        self.breaker = Breaker(f"Redis at {url}", first=min(1.0, beat), most=beat)
        self._timeout = timeout
        self._redis: Any = None
        self._scripts: dict[str, Any] = {}
        self._wakers: dict[str, anyio.Event] = {}  # waiting ticket -> its wake-up
        self._outage = Outage(self.owner, ttl, timeout)  # Redis away, and just back
        self.unshared = self._outage.unshared  # held leases granted locally, not in Redis yet
        self._renewing = anyio.Lock()  # one renewal at a time: each sees the last one's epoch
        self._batches = Batcher(self._call)  # a burst's calls, a few at a time (run())

    # -- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        """Connect, register the scripts and, when given, write the pool's limit."""
        try:
            import redis.asyncio as aioredis
        except ImportError:
            require("redis", "redis")

        self._redis = aioredis.from_url(
            self.url, socket_timeout=self._timeout, socket_connect_timeout=self._timeout
        )
        for name in ("enqueue", "enqueue_many", "acquire", "acquire_many", "release", "renew",
                     "pause"):  # fmt: skip
            self._scripts[name] = self._redis.register_script(getattr(_lua, name.upper()))
        if self.limit is not None:  # a fixed limit is everyone's; a leader's only a default
            await self._redis.set(self.keys["limit"], self.limit, nx=not self.own_limit)
        await self._redis.set(self.keys["epoch"], self.epoch, nx=True)
        self.epoch = (await self._redis.get(self.keys["epoch"])).decode()
        await self.renew()  # counts this process among the live ones
        # and tells the others now, not at their next heartbeat: the share each falls back to
        # when Redis goes away is the limit over the processes it saw last
        await self._redis.publish(self.keys["released"], _JOINED)

    async def aclose(self) -> None:
        """Give back every lease and ticket still held, then disconnect."""
        if self._redis is None:
            return
        with anyio.CancelScope(shield=True):
            left = [x for x in (*self.held, *self.waiting) if x not in self.unshared]
            if left:
                with contextlib.suppress(CoordinatorDown):  # else they expire within the ttl
                    await self._call("release", left)
            self.held.clear()
            self.unshared.clear()
            self.waiting.clear()
            await self._redis.aclose()
        self._redis = None

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Heartbeats and release notifications, until cancelled (in the owner's task group)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._listen)
            tg.start_soon(self._batches.run)
            task_status.started()
            while True:
                await anyio.sleep(self.ttl / 3)
                with contextlib.suppress(CoordinatorDown):  # logged once by the breaker
                    await self.renew()

    # -- slots -----------------------------------------------------------------------------
    async def acquire(self, expected_tokens: float | None = None, key: Any = None) -> str:
        """Wait for a lease, in line with every process's waiters; return its id.

        Keys (callers) take turns, whichever process they wait in; a key is known across
        processes by its ``str()``. A key's requests are ordered by arrival plus a handicap of
        ``expected_tokens / 1024`` of ``max_reorder_wait`` (unknown lengths: the whole of it),
        so shorter requests that arrive together go first and nothing waits much past
        ``max_reorder_wait``.
        """
        share = 1.0 if expected_tokens is None else min(1.0, max(0.0, expected_tokens) / 1024)
        handicap = round(share * self.max_reorder_wait * 1000)
        n = -1 if expected_tokens is None else max(0, round(expected_tokens))
        while True:
            try:
                if self._outage.away:  # back: put held leases back first (a Redis that lost
                    async with self._renewing:  # them would grant their slots again until the
                        if self._outage.away:  # heartbeat); one task does it for all of them
                            await self._renew()
                async with self._outage.settled(self.held, self.fallback_limit()):
                    return await self._acquire_shared(handicap, n, _key_tag(key))
            except CoordinatorDown:
                if self._outage.began():
                    log.warning(
                        "pool %r: admitting on this process's share, %d of %d (%d processes"
                        " seen, %d leases held by others), until Redis is back",
                        self.pool,
                        self.fallback_limit(),
                        self.limit or 1,
                        self.live,
                        self._outage.others,
                    )
                until = self.breaker.open_until
                granted = await self._outage.grant(self.held, self.fallback_limit(), until)
                if granted is not None:
                    return granted

    async def started(self, lease: str) -> None:
        """The lease's request got its first token: it no longer waits for a batch (band)."""
        if lease in self.banded:
            self.banded.discard(lease)
            with contextlib.suppress(CoordinatorDown), self._guarded():  # else: at release
                await self._redis.hdel(self.keys["band"], lease)

    async def set_band(self, on: bool) -> None:
        """Band mode (a static server: a waiting batch holds similar lengths), for everyone."""
        if on != self._band_written:
            if on:
                await self._redis.set(self.keys["bandmode"], 1)
            else:
                await self._redis.delete(self.keys["bandmode"], self.keys["band"])
            self._band_written = on

    async def release(self, lease: str) -> None:
        """Give a lease back (idempotent; runs to the end even when cancelled)."""
        self.banded.discard(lease)
        with anyio.CancelScope(shield=True):
            self.held.discard(lease)
            self._outage.freed()
            if lease in self.unshared:  # Redis never had it
                self.unshared.discard(lease)
                return
            with contextlib.suppress(CoordinatorDown):  # else it expires within the ttl
                await self._call("release", [lease])

    async def renew(self) -> list[str]:
        """Extend every lease and ticket of this process, hand Redis the leases the fallback
        granted; return (and count) the lost ones."""
        async with self._renewing:
            return await self._renew()

    async def _renew(self) -> list[str]:
        local = sorted(self.unshared)
        held = sorted(self.held - self.unshared)
        args = [self._ttl_ms(), self.owner, self.epoch, len(held), len(local), *held, *local]
        t0 = time.perf_counter()
        raw = await self._call("renew", [*args, *sorted(self.waiting)])
        self.unshared.difference_update(local)
        gone = [x for x in local if x not in self.held]  # released while the call ran
        if gone:
            await self._call("release", gone)
        t1 = time.perf_counter()
        self._clock.append((t1 - t0, int(raw[3]) / 1e6 - (t0 + t1) / 2))
        self.clock_offset = min(self._clock)[1]  # a slow round trip is mostly one way
        epoch, seen = _text(raw[0]), max(1, int(raw[1]))
        self._outage.ended(restarted=bool(int(raw[2])))  # back: others may still be away
        # settling, the processes seen before count (a restarted Redis has seen only us)
        self.live = max(self.live, seen) if self._outage.settling else seen
        if int(raw[2]):
            self.restarts += 1
            log.warning("Redis at %s lost the pool's keys (restarted?): leases put back", self.url)
            self.epoch = epoch
            if self.limit is not None:
                await self._redis.set(self.keys["limit"], self.limit)
        self._outage.seen(int(raw[4]), self.held)
        lost = [_text(x) for x in raw[5:]]
        for lease in lost:
            self.held.discard(lease)
        if lost:
            self.lost += len(lost)
            log.warning(
                "%d lease(s) of pool %r expired before their renewal (was this process stalled"
                " past the %.1f s ttl?): their slots may have gone to others",
                len(lost),
                self.pool,
                self.ttl,
            )
        return lost

    async def pause(self, seconds: float) -> None:
        """Hold every process's grants for ``seconds`` (a 429/503's Retry-After)."""
        with contextlib.suppress(CoordinatorDown):  # the local dispatcher pauses anyway
            await self._call("pause", [max(1, round(seconds * 1000))])

    async def set_limit(self, n: int) -> None:
        """The pool's limit for every process (takes effect at the next acquire)."""
        raised = n > (self.limit or 0)
        self.limit = n
        await self._store_limit(n, raised)

    # -- the controller's I/O (see _leader.py) -----------------------------------------------
    async def lead(self, script: str) -> bool:
        """Claim or renew the pool's leader key for this process."""
        if "lead" not in self._scripts:
            self._scripts["lead"] = self._redis.register_script(script)
        return bool(await self._call("lead", [self.owner, self._ttl_ms()]))

    async def xadd_samples(self, batch: list[str]) -> None:
        with self._guarded():
            async with self._redis.pipeline(transaction=False) as pipe:
                for item in batch:
                    pipe.xadd(self.keys["samples"], {"s": item}, maxlen=10_000, approximate=True)
                await pipe.execute()

    async def read_samples(self, last: str) -> tuple[list[str], str]:
        """Samples after stream id ``last`` (``$``: from now on); and the id to read from."""
        if last == "$":
            info = await self._redis.xrevrange(self.keys["samples"], count=1)
            return [], (_text(info[0][0]) if info else "0-0")
        got = await self._redis.xread({self.keys["samples"]: last}, count=5000)
        if not got:
            return [], last
        entries = got[0][1]
        return [_text(fields[b"s"]) for _, fields in entries], _text(entries[-1][0])

    async def write_limit(self, n: int) -> None:
        if n != self._limit_written:
            await self._store_limit(n, n > (self._limit_written or 0))
            self._limit_written = self.limit = n

    async def _store_limit(self, n: int, raised: bool) -> None:
        await self._redis.set(self.keys["limit"], n)
        if raised:  # more slots: every waiter looks again
            await self._redis.publish(self.keys["released"], "*")

    async def in_use(self) -> int:
        """Leases held now by every process (expired ones swept first)."""
        now_s, now_us = await self._redis.time()
        now = now_s * 1000 + now_us // 1000
        await self._redis.zremrangebyscore(self.keys["leases"], "-inf", now)
        return int(await self._redis.zcard(self.keys["leases"]))

    def fallback_limit(self) -> int:
        """What this process may run while Redis is away: its share, never the whole (see
        ``_outage.py``)."""
        return self._outage.share(self.limit or 1, self.live)

    # -- internals -------------------------------------------------------------------------
    async def _acquire_shared(self, handicap: int, n: int, tag: str) -> str:
        ticket = f"t:{self.owner}:{uuid.uuid4().hex}{tag}#h{handicap}"  # the scripts read both
        lease = f"l:{self.owner}:{uuid.uuid4().hex}"
        self.waiting.add(ticket)
        try:
            score = await self._batches.call("enqueue", [ticket, self._ttl_ms(), handicap])
            ready = int(score) - handicap + round(self.gather * 1000)
            due = int(score) - handicap + round(self.max_reorder_wait * 1000)
            while True:
                woken = self._wakers[ticket] = anyio.Event()  # before the call: no lost wake-up
                t0 = time.perf_counter()
                granted, used, limit, paused, banded = await self._batches.call(
                    "acquire", [ticket, lease, self._ttl_ms(), self.limit or 1, ready, n, due]
                )
                if len(self.round_trips) < 100_000:
                    self.round_trips.append(time.perf_counter() - t0)
                if granted == 1:
                    self.waiting.discard(ticket)
                    self.held.add(lease)
                self._outage.seen(int(used), self.held)
                if granted == 1:
                    if banded:
                        self.banded.add(lease)
                    return lease
                if granted == -1:  # swept as a dead waiter (we stalled past the ttl): requeue
                    await self._call("enqueue", [ticket, self._ttl_ms(), handicap])
                # free slots but not our turn yet (the gathering window, or others ahead of us
                # in theirs): look again soon; a full pool: a release that lets this ticket
                # through wakes it (or the poll does)
                wait = self.gather if used < limit else self.poll
                if paused:  # a 429/503 somewhere in the pool: its Retry-After holds everyone
                    wait = max(wait, paused / 1000)
                with anyio.move_on_after(wait):
                    await woken.wait()
        except BaseException:
            with anyio.CancelScope(shield=True):
                self.waiting.discard(ticket)
                if not self.breaker.is_open:
                    # else the ticket's heartbeat stops: it leaves the line within the ttl
                    with contextlib.suppress(CoordinatorDown):
                        await self._call("release", [ticket, lease])
                self.held.discard(lease)
            raise
        finally:
            self._wakers.pop(ticket, None)

    def _ttl_ms(self) -> int:
        return max(1, math.ceil(self.ttl * 1000))

    async def _call(self, name: str, args: list[Any]) -> Any:
        """Run one script; a Redis that cannot be reached opens the breaker."""
        names = script_keys(name, self.keys)
        with self._guarded():
            result = await self._scripts[name](keys=names, args=args)
        self.breaker.succeeded()
        return result

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        """Redis calls behind the breaker: an unreachable Redis opens it (CoordinatorDown)."""
        self.breaker.check()
        try:
            yield
        except _redis_errors() as exc:
            self.breaker.failed(exc)
            raise CoordinatorDown(str(exc)) from exc

    async def _listen(self) -> None:
        """Wake the local waiters a release lets through (``*``: all of them; else they poll)."""
        while True:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.subscribe(self.keys["released"])
                while True:
                    msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=None)
                    if msg is None:
                        continue
                    if _text(msg["data"]) == _JOINED:  # count the newcomer
                        with contextlib.suppress(CoordinatorDown):
                            await self.renew()
                    else:
                        self._wake(_text(msg["data"]).split())
            except Exception:  # Redis went away: waiters poll; listen again later
                await anyio.sleep(self.poll)
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        await pubsub.aclose()
                    except Exception:
                        log.debug("closing the pubsub connection failed", exc_info=True)

    def _wake(self, tickets: list[str]) -> None:
        every = tickets == ["*"]
        for ticket in list(self._wakers) if every else tickets:
            woken = self._wakers.get(ticket)
            if woken is not None:
                woken.set()


def _redis_errors() -> tuple[type[BaseException], ...]:
    """What an unreachable Redis raises."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return (RedisConnectionError, RedisTimeoutError, OSError)


def _text(x: Any) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _key_tag(key: Any) -> str:
    """The part of a ticket's id that names its key (none for the default key)."""
    if key is None:
        return ""
    return "#k" + hashlib.sha1(str(key).encode(), usedforsecurity=False).hexdigest()[:16]
