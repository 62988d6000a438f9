"""The same checks through every client family: openai SDK, LangChain ChatOpenAI, plain httpx."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import REAL_STEP, ServerFactory
from tests.server._clients import FAMILIES, stream_chat

LENGTHS = (4, 8, 32, 64)


@pytest.mark.parametrize("family", FAMILIES)
async def test_stream_is_complete_and_usage_arrives(serve: ServerFactory, family: str) -> None:
    async with serve() as server:
        got = await stream_chat(family, server.base_url, 9)
    assert len("".join(got.contents).split()) == 9
    assert got.completion_tokens == 9
    assert got.finish_reason == "length"
    assert got.times == sorted(got.times)


@pytest.mark.parametrize("family", FAMILIES)
async def test_static_batch_end_ends_together_continuous_in_length_order(
    serve: ServerFactory, family: str
) -> None:
    ends: dict[str, list[float]] = {}
    for mode in ("static", "continuous"):
        async with serve(mode=mode, batch_size=4, release="batch_end") as server:
            await stream_chat(family, server.base_url, 1)  # warm-up: imports, first connection
            runs = await asyncio.gather(*(stream_chat(family, server.base_url, n) for n in LENGTHS))
            ends[mode] = [r.end for r in runs]
            assert [r.completion_tokens for r in runs] == list(LENGTHS)
    static, cont = ends["static"], ends["continuous"]
    # static batch_end: all four within two steps although their lengths differ 16x
    assert max(static) - min(static) <= 2.5 * REAL_STEP
    # continuous: in length order, spaced in proportion to the length differences
    assert cont == sorted(cont)
    span = cont[-1] - cont[0]
    assert span > 40 * REAL_STEP  # 60 steps apart in the model
    for n, end in zip(LENGTHS, cont, strict=True):
        share = (n - LENGTHS[0]) / (LENGTHS[-1] - LENGTHS[0])
        assert (end - cont[0]) / span == pytest.approx(share, abs=0.12)
