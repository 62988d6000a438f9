"""Instrumentation cost in CPU instructions per chunk, counted by valgrind (deterministic).

The CPU-time benchmark (``overhead.py``) drifts by several microseconds per chunk on a
shared machine; instruction counts do not. Each variant (raw SDK, instrumented SDK) runs
under ``valgrind --tool=callgrind`` twice, with short and with long streams over the same
number of requests and the reference server's replayed bytes; the difference between the
two runs divided by the extra chunks is the cost of one chunk, with start-up and
per-request costs cancelled out.

Run:  python benchmarks/overhead_instructions.py [--requests 10] [--short 50] [--long 250]
Needs valgrind (Debian package ``valgrind``); about two minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import record


def _child(variant: str, requests: int, tokens: int) -> None:
    """Run inside valgrind: ``requests`` replayed streams of ``tokens`` chunks."""
    from openai import AsyncOpenAI

    import fairstream
    from fairstream.server._canned import canned_client

    async def main() -> None:
        http = canned_client()  # the reference server's bytes, in memory
        client = AsyncOpenAI(base_url="http://replay.invalid/v1", api_key="k", http_client=http)
        if variant == "instrumented":
            client = fairstream.instrument(client, recorder=fairstream.Recorder())
        seen = 0
        for _ in range(requests):
            stream = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "x"}],
                max_tokens=tokens,
                stream=True,
                stream_options={"include_usage": True},
            )
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    seen += 1
        assert seen == requests * tokens, seen

    asyncio.run(main())


def _instructions(variant: str, requests: int, tokens: int, workdir: Path) -> int:
    out = workdir / f"cg.{variant}.{tokens}"
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            __file__,
            "--child",
            variant,
            str(requests),
            str(tokens),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"Collected : (\d+)", proc.stderr)
    assert match, proc.stderr[-2000:]
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--short", type=int, default=50)
    ap.add_argument("--long", type=int, default=250)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]), int(args.child[2]))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind): nothing measured")
        return 0
    extra_chunks = args.requests * (args.long - args.short)
    per_chunk = {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("raw", "instrumented"):
            short = _instructions(variant, args.requests, args.short, Path(tmp))
            long = _instructions(variant, args.requests, args.long, Path(tmp))
            per_chunk[variant] = (long - short) / extra_chunks
    raw, inst = per_chunk["raw"], per_chunk["instrumented"]
    print(f"openai SDK path, replayed: instructions per chunk over {extra_chunks} extra chunks")
    print(f"{'raw':>12} {'instrumented':>13} {'added':>9} {'ratio':>7}")
    print(f"{raw:>12.0f} {inst:>13.0f} {inst - raw:>9.0f} {inst / raw:>7.3f}")
    return 0


if __name__ == "__main__":
    record.main("overhead_instructions", main)
