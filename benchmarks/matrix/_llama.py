"""llama.cpp in the matrix: built or not, and its decode step measured on this machine."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import anyio
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder

from .. import llama_server

TOKENS = 64  # long enough for a few dozen gaps, short enough to take seconds


def missing() -> str | None:
    """Why llama.cpp cells cannot run here, or None when its server is built."""
    if not llama_server.binary_path().exists():
        return "llama.cpp is not built: python benchmarks/llama_server.py build"
    return None


@dataclass(frozen=True)
class Calibration:
    """Median gap between tokens, model seconds: one request alone, and every slot busy."""

    step: float
    full: float


async def _gaps(raw: AsyncOpenAI, model: str, n: int) -> list[float]:
    rec = Recorder()
    client = fairstream.instrument(raw, recorder=rec)

    async def one() -> None:
        stream = await client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "calibrate"}],
            max_tokens=TOKENS,
            stream=True,
            extra_body={"ignore_eos": True},
        )
        async for _ in stream:
            pass

    async with anyio.create_task_group() as tg:
        for _ in range(n):
            tg.start_soon(one)
    return [g for t in rec.traces for g in t.itl]


async def calibrate(base_url: str, model: str, slots: int) -> Calibration:
    """A warm-up, then 3 requests one at a time and one round with every slot busy."""
    async with AsyncOpenAI(base_url=base_url, api_key="k", max_retries=2, timeout=300) as raw:
        await _gaps(raw, model, 1)  # the first request loads and allocates
        alone = [g for _ in range(3) for g in await _gaps(raw, model, 1)]
        busy = await _gaps(raw, model, slots)
    return Calibration(statistics.median(alone), statistics.median(busy))
