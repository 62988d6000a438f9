"""Passive analysis of ordinary traffic: a mixed workload through the instrumented clients."""

from __future__ import annotations

import random

import anyio
import pytest

from fairstream import Auto, Recorder, ReferenceServer, StreamClient, analyze

from ._modes import MODES, answer, config


async def mixed_workload(base_url: str, model: str, n: int = 28, seed: int = 0) -> Recorder:
    """``n`` requests, half short and half long, sent at random moments over 0.4 s."""
    rng = random.Random(seed)
    recorder = Recorder()
    plan = sorted(
        (rng.uniform(0.0, 0.4), rng.randint(3, 8) if i % 2 else rng.randint(24, 40))
        for i in range(n)
    )
    async with StreamClient(base_url, recorder=recorder) as client:

        async def one(delay: float, tokens: int) -> None:
            await anyio.sleep(delay)  # arrival process of the workload, not synchronization
            await client.complete(
                model=model,
                messages=[{"role": "user", "content": "hello"}],
                max_tokens=tokens,
                ignore_eos=True,
            )

        async with anyio.create_task_group() as tg:
            for delay, tokens in plan:
                tg.start_soon(one, delay, tokens)
    return recorder


# each mode on both presets and both chunkings, in two of the four pairings (suite time; the
# live probe runs three)
CASES = [
    (mode, preset, tpc) for mode in MODES for preset, tpc in (("default-7b", 1), ("ascend-7b", 3))
]


@pytest.mark.parametrize(("mode", "preset", "tpc"), CASES)
async def test_passive_analysis_of_a_mixed_workload(mode: str, preset: str, tpc: int) -> None:
    cfg = config(mode, preset, tpc)
    # the server on its own loop, as in test_probe_live.py: on the test's loop, a busy host's
    # stalls in the client's chunk handling read as the server's
    with ReferenceServer.in_thread(cfg) as server:
        recorder = await mixed_workload(server.base_url, cfg.model)
    traces = recorder.traces
    assert len(traces) == 28
    report = analyze(traces)
    assert answer(report.verdict, report.release, report.prefill_stalls) == mode, report.evidence
    assert report.confidence >= Auto().confidence  # sure enough for ``auto`` to act on it
    if mode.startswith("static"):
        assert report.batch_size is not None and abs(report.batch_size - cfg.batch_size) <= 1
