"""llama.cpp's decode step, measured on the machine the matrix runs on.

The reference server's step is what its config says; llama.cpp's is whatever this CPU gives
(18-30 ms a token on 2-core VMs). The matrix's
4-step TTFT SLO and its open loops' share of capacity are in steps, so a step taken from
another machine judges a slower one by a stricter SLO and runs "50%" past saturation.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import anyio
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder

__all__ = ["Calibration", "measure"]

TOKENS = 64  # long enough for a few dozen gaps, short enough to take seconds


@dataclass(frozen=True)
class Calibration:
    """Median gap between tokens, seconds: one request alone, and every slot busy."""

    step: float
    full: float

    def __str__(self) -> str:
        return f"step {self.step * 1e3:.1f} ms alone, {self.full * 1e3:.1f} ms with every slot busy"


async def _gaps(raw: AsyncOpenAI, model: str, n: int) -> list[float]:
    """``n`` requests of ``TOKENS`` tokens sent at once; every gap between their tokens."""
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


async def measure(base_url: str, model: str, slots: int) -> Calibration:
    """A warm-up, then 3 requests one at a time and one round with every slot busy."""
    async with AsyncOpenAI(base_url=base_url, api_key="k", max_retries=2, timeout=300) as raw:
        await _gaps(raw, model, 1)  # warm-up: the first request loads and allocates
        alone = [g for _ in range(3) for g in await _gaps(raw, model, 1)]
        busy = await _gaps(raw, model, slots)
    return Calibration(statistics.median(alone), statistics.median(busy))
