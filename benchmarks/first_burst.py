"""The seed's exact case: the first burst of a fresh process, on a static B=8 server.

Each arm runs in a fresh Python process that imports the openai SDK and fairstream, then,
inside the timed block as users do, creates its ``AsyncOpenAI`` client (instrumented) and
sends the burst: 32 streamed requests, half 8 and half 128 tokens, in a shuffled order. The
arms, side by side in one run against one reference server (static B=8, finished streams
held to their batch's end, as in the seed):

- naive: everything at once (``asyncio.gather``);
- auto cold: through ``Dispatcher("auto")``, nothing sent before;
- auto warm: the same, after one warm-up request in that process (the SDK's first call paid);
- with ``--processes N`` (4): N fresh processes share the burst, naive and through one
  ``auto`` pool over a real ``redis-server``.

Figures: short requests' E2E p50 from the timed block's start, and the makespan; the cure is
naive's short p50 over auto's. Medians over ``--runs``.

Run:  python benchmarks/first_burst.py [--runs 3] [--scale 1.0] [--processes 4]
Writes benchmarks/results/first_burst.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import record

from fairstream import ServerConfig
from fairstream.server._server import ReferenceServer

SHORT, LONG, N = 8, 128, 32
MSG = [{"role": "user", "content": "summarize this document"}]


def lengths(n: int = N, seed: int = 1) -> list[int]:
    out = [SHORT, LONG] * (n // 2)
    random.Random(seed).shuffle(out)
    return out


# -- the child: one fresh process ----------------------------------------------------------------
async def child(args: argparse.Namespace) -> dict[str, Any]:
    from openai import AsyncOpenAI

    import fairstream

    mine = json.loads(args.lengths)
    if args.warm:
        async with AsyncOpenAI(base_url=args.base_url, api_key="local") as c:
            stream = await c.chat.completions.create(
                model=args.model, messages=MSG, max_tokens=1, stream=True
            )
            async for _ in stream:
                pass
    if args.start_at:  # several processes: start the timed block together (wall clock)
        await asyncio.sleep(max(0.0, args.start_at - time.time()))
    t0 = time.perf_counter()
    recorder = fairstream.Recorder()
    async with AsyncOpenAI(base_url=args.base_url, api_key="local") as raw:
        client = fairstream.instrument(raw, recorder=recorder)

        async def ask(n: int) -> list[float]:
            stream = await client.chat.completions.create(
                model=args.model,
                messages=MSG,
                max_tokens=n,
                stream=True,
                extra_body={"ignore_eos": True},
            )
            async for _ in stream:
                pass
            return [n, time.perf_counter() - t0]

        if args.arm == "naive":
            done = await asyncio.gather(*(ask(n) for n in mine))
            policy = "all at once"
        else:
            pooled = {"coordinator": args.redis, "pool": "first-burst"} if args.redis else {}
            async with fairstream.Dispatcher("auto", **pooled) as d:
                done = await d.map(ask, mine, expected_tokens=lambda n: n)  # type: ignore[assignment]
                policy = d.policy
    # when the first request went (client-side set-up before it: no policy can save that)
    first_sent = min(t.sent for t in recorder.traces if t.sent is not None)
    return {"done": done, "policy": policy, "first_sent": first_sent + recorder.origin - t0}


def spawn(base_url: str, model: str, arm: str, mine: list[int], **kw: Any) -> subprocess.Popen[str]:
    argv = [sys.executable, __file__, "child", "--base-url", base_url, "--model", model]
    argv += ["--arm", arm, "--lengths", json.dumps(mine)]
    if kw.get("warm"):
        argv.append("--warm")
    if kw.get("redis"):
        argv += ["--redis", kw["redis"]]
    if kw.get("start_at"):
        argv += ["--start-at", str(kw["start_at"])]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)


def collect(procs: list[subprocess.Popen[str]]) -> dict[str, float]:
    done: list[list[float]] = []
    firsts = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        if p.returncode:
            raise RuntimeError(f"a child failed ({p.returncode})")
        answer = json.loads(out.splitlines()[-1])
        done += answer["done"]
        firsts.append(answer["first_sent"])
    short = statistics.median(t for n, t in done if n == SHORT)
    first = min(firsts)
    return {
        "short_p50": short,
        "makespan": max(t for _, t in done),
        "first_sent": first,
        "short_p50_from_first_send": short - first,
    }


def one_run(base_url: str, model: str, processes: int, redis: str | None) -> dict[str, Any]:
    work = lengths()
    row: dict[str, Any] = {}
    for arm, warm in (("naive", False), ("auto", False), ("auto", True)):
        name = "naive" if arm == "naive" else f"auto {'warm' if warm else 'cold'}"
        row[name] = collect([spawn(base_url, model, arm, work, warm=warm)])
    if processes > 1 and redis:
        shares = [work[i::processes] for i in range(processes)]
        for arm in ("naive", "auto"):
            start_at = time.time() + 4.0  # imports done in every process first
            procs = [spawn(base_url, model, arm, s, redis=redis, start_at=start_at) for s in shares]
            row[f"{processes} processes {arm}"] = collect(procs)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="the server's time scale")
    ap.add_argument("--processes", type=int, default=4, help="0 or 1: skip the shared pool")
    args = ap.parse_args()
    cfg = ServerConfig(mode="static", batch_size=8, release="batch_end", time_scale=args.scale)
    redis = None
    if args.processes > 1:
        import redis_server

        binary = redis_server.binary()
        if binary is None:
            print("no redis-server (install the test extra): the shared pool is skipped")
        else:
            redis = redis_server.RedisServer(
                binary, redis_server.free_port(), Path(tempfile.mkdtemp())
            )
            redis.start()
    runs = []
    try:
        for i in range(args.runs):
            with ReferenceServer.in_subprocess(cfg) as server:
                row = one_run(
                    server.base_url, cfg.model, args.processes, redis.url if redis else None
                )
            runs.append(row)
            print(f"run {i + 1}: " + ", ".join(f"{k} {v['short_p50']:.2f}" for k, v in row.items()))
    finally:
        if redis is not None:
            redis.stop()
    arms = list(runs[0])
    med = {a: {m: statistics.median(r[a][m] for r in runs) for m in runs[0][a]} for a in arms}
    print(f"static B=8, {N} requests ({SHORT} and {LONG} tokens), time scale {args.scale}:")
    print(
        f"{'arm':<22} {'short p50 s':>12} {'makespan s':>11} {'cure':>6} {'span':>6} "
        f"{'first sent s':>13}"
    )
    for a in arms:
        base = med[f"{args.processes} processes naive"] if "processes" in a else med["naive"]
        cure = base["short_p50"] / med[a]["short_p50"]
        span = med[a]["makespan"] / base["makespan"]
        print(
            f"{a:<22} {med[a]['short_p50']:>12.2f} {med[a]['makespan']:>11.2f} "
            f"{cure:>5.1f}x {span:>5.2f}x {med[a]['first_sent']:>13.3f}"
        )
    cold, warm = med["auto cold"], med["auto warm"]
    print(
        f"cold over warm short p50: {cold['short_p50'] / warm['short_p50']:.2f}x; the cold "
        f"process's first request leaves {cold['first_sent']:.3f} s into the timed block, the "
        f"warm one's {warm['first_sent']:.3f} s (client set-up)"
    )
    print(
        "cold over warm short p50 from the first send: "
        f"{cold['short_p50_from_first_send'] / warm['short_p50_from_first_send']:.2f}x"
    )
    record.current().figures["arms"] = med
    record.current().figures["runs"] = runs


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        ap = argparse.ArgumentParser()
        ap.add_argument("child")
        ap.add_argument("--base-url", required=True)
        ap.add_argument("--model", required=True)
        ap.add_argument("--arm", choices=["naive", "auto"], required=True)
        ap.add_argument("--lengths", required=True)
        ap.add_argument("--warm", action="store_true")
        ap.add_argument("--redis")
        ap.add_argument("--start-at", type=float, default=0.0)
        print(json.dumps(asyncio.run(child(ap.parse_args()))))
    else:
        record.main("first_burst", main)
