"""A continuous server fed a burst in length bands, over real HTTP: requests of one band start
and end together, as on a static server, but ``auto`` never takes it for static, and costs no
makespan against sending everything at once."""

from __future__ import annotations

import time

import anyio
import pytest

from fairstream import Auto, Dispatcher, Recorder, StreamClient
from tests.conftest import ServerFactory

MSG = [{"role": "user", "content": "hi"}]


async def _burst(base_url: str, model: str, lengths: list[int], auto: Auto | None) -> float:
    """The makespan of ``lengths`` sent in that order, at once or through ``auto``."""
    t0 = time.perf_counter()
    async with StreamClient(base_url, recorder=Recorder()) as client:

        async def one(n: int) -> None:
            kwargs = {"model": model, "messages": MSG, "max_tokens": n, "ignore_eos": True}
            if auto is None:
                await client.complete(**kwargs)
            else:
                await d.submit(lambda: client.complete(**kwargs), expected_tokens=n)

        async with Dispatcher(auto or "fixed:4096") as d, anyio.create_task_group() as tg:
            for n in lengths:
                tg.start_soon(one, n)
    return time.perf_counter() - t0


@pytest.mark.alone  # a makespan ratio over real HTTP: not beside other load
async def test_a_banded_burst_on_a_continuous_server_is_not_read_as_static(
    serve: ServerFactory,
) -> None:
    lengths = [16] * 8 + [64] * 8 + [256] * 8
    async with serve(mode="continuous", max_num_seqs=8, time_scale=0.25) as server:
        model = server.config.model
        for _ in range(2):
            naive = await _burst(server.base_url, model, lengths, None)
            auto = Auto()
            span = await _burst(server.base_url, model, lengths, auto)
            assert not any("static" in c for c in auto.changes), auto.changes
            assert auto.kind != "static"
            assert span <= 1.1 * naive, (span, naive, auto.changes)
