"""Shared ``auto``: the leader judges the server from every process's samples, on one clock."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import anyio.lowlevel
import httpx
import redis as redis_lib

from fairstream import Dispatcher, ReferenceServer, ServerConfig
from fairstream._dispatch._job import Job
from fairstream._dispatch.shared._leader import Samples
from fairstream._dispatch.shared._lua import keys
from fairstream._dispatch.shared._slots import SharedSlots

from .conftest import RedisServer
from .test_shared_slots import WORKER, _worker

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
                    16,
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
    assert policy.kind == "static" and policy.batch_size == 4, (policy.changes, policy.report)
    assert not any("continuous" in c for c in policy.changes), policy.changes


async def test_samples_cut_mid_publish_still_reach_the_stream(redis_server: RedisServer) -> None:
    """The dispatcher closing cancels its publisher, maybe mid-send: the batch it had taken from
    the buffer must still reach Redis (lost, the leader would wait for those jobs' ends
    forever)."""
    slots = SharedSlots(redis_server.url, "cut", ttl=5)
    await slots.open()
    try:
        samples = Samples(slots)
        for jid in range(50):
            samples.add("send", Job(jid=jid, expected_tokens=4), time.perf_counter())
        await slots._redis.connection_pool.disconnect()  # as when the others hold them: the
        async with anyio.create_task_group() as tg:  # send first awaits a new connection
            tg.start_soon(samples.flush)
            while samples._buffer:  # the publisher took the batch: it is on its way
                await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()
        assert await slots._redis.xlen(slots.keys["samples"]) == 50
    finally:
        await slots.aclose()


B = 4


def _stretched(base_url: str) -> int:
    text = httpx.get(base_url.rsplit("/v1", 1)[0] + "/metrics").text
    line = next(x for x in text.splitlines() if x.startswith("fairstream_server_requests_stretch"))
    return int(line.split()[-1])


JOBS = (6, 8, 8)  # 6 short ones: the second batch of them has room for 2 more


def _go(p: subprocess.Popen[str]) -> None:
    assert p.stdin is not None
    p.stdin.write("go\n")
    p.stdin.flush()


def _waves_run(redis: str, tmp_path: Path, policy: str) -> int:
    """3 processes on a static server (B=4): one sends 4-token answers, one 64-token ones,
    one both; the server's count of requests stretched by a later, longer batch-mate."""
    cfg = STATIC.with_(batch_size=B)
    with ReferenceServer.in_subprocess(cfg) as server:
        procs = []
        for i, lengths in enumerate(("4", "64", "4,64")):
            env = {**os.environ, "FAIRSTREAM_TEST_POLICY": policy, "FAIRSTREAM_TEST_GO": "1"}
            env["FAIRSTREAM_TEST_LENGTHS"] = lengths
            argv = [server.base_url, cfg.model, redis, "w", 2 * B, JOBS[i], tmp_path / f"{i}"]
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(WORKER), *map(str, argv)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    env=env,
                )
            )
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        # the short jobs are in line first (as when they come first), then the others go
        _go(procs[0])
        with redis_lib.Redis.from_url(redis) as r:
            k = keys("w")
            deadline = time.monotonic() + 10
            while r.zcard(k["tickets"]) + r.zcard(k["leases"]) < JOBS[0]:
                assert time.monotonic() < deadline, "the first process never queued"
                time.sleep(0.005)
        for p in procs[1:]:
            _go(p)
        for p in procs:
            assert p.wait(timeout=60) == 0
            assert p.stdin is not None and p.stdout is not None
            p.stdin.close()
            p.stdout.close()
        return _stretched(server.base_url)


def test_static_waves_across_processes_never_mix_lengths_in_a_batch(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """``waves:4`` shared by 3 processes: no request shares a batch with one over 2x longer
    that reached the server after it (the pool's band keeps lengths over 2x apart out of one
    waiting batch; without the band this run stretches a few requests)."""
    assert _waves_run(redis_server.url, tmp_path, f"waves:{B}") == 0
