"""Traces of real streams from the reference server, for every client family."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx
import pytest

from fairstream import Recorder, ReferenceServer
from tests.conftest import FAST, REAL_STEP, ServerFactory
from tests.instrument._families import FAMILIES, consume, family_client


@pytest.mark.parametrize("family", FAMILIES)
async def test_chunk_and_token_counts(serve: ServerFactory, family: str) -> None:
    rec = Recorder()
    async with serve() as server:
        pieces = await consume(family, server.base_url, rec, 12)
    (trace,) = rec.traces
    assert trace.outcome == "ok" and trace.client == family
    assert trace.usage.completion_tokens == 12 and not trace.usage.estimated
    assert len(pieces) == 12
    content_chunks = [c for c in trace.chunk_chars if c]
    assert len(content_chunks) == 12
    assert sum(content_chunks) == sum(len(p) for p in pieces)
    assert trace.finish_reason == "length"
    if family != "langchain":  # LangChain does not surface the wire chunk id
        assert trace.response_id is not None and trace.response_id.startswith("chatcmpl-")
    assert len(trace.itl) == 11
    assert trace.ttft is not None and trace.e2e is not None and 0 < trace.ttft < trace.e2e
    assert trace.tpot is not None and trace.tpot > 0
    assert trace.tokens_per_second == pytest.approx(12 / trace.e2e)


@pytest.mark.parametrize("family", FAMILIES)
async def test_no_usage_from_server_means_counted_and_estimated(
    serve: ServerFactory, family: str
) -> None:
    rec = Recorder()
    async with serve() as server:
        await consume(family, server.base_url, rec, 7, usage=False)
    (trace,) = rec.traces
    assert trace.usage.estimated
    assert trace.usage.completion_tokens == 7


@pytest.mark.parametrize("family", FAMILIES)
async def test_role_only_first_chunk_separates_ttfc_from_ttft(
    serve: ServerFactory, family: str
) -> None:
    rec = Recorder()
    # prefill of a long prompt takes ~25 real ms; the role chunk comes when it starts
    async with serve(role_chunk_on_admission=True, prefill_ms_per_token=0.05) as server:
        await consume(family, server.base_url, rec, 3, prompt="x" * 4000)
    (trace,) = rec.traces
    assert trace.chunk_chars[0] == 0  # the role chunk carries no content
    assert trace.ttfc is not None and trace.ttft is not None
    assert trace.ttft - trace.ttfc > 0.5 * 0.025  # at least half the prefill step


@pytest.mark.parametrize("family", FAMILIES)
async def test_multi_token_chunks_keep_tokens_per_chunk(serve: ServerFactory, family: str) -> None:
    rec = Recorder()
    opts = {"stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    async with serve(tokens_per_chunk=4) as server:
        await consume(family, server.base_url, rec, 10, extra=opts)
    (trace,) = rec.traces
    content_tokens = [t for t, c in zip(trace.chunk_tokens, trace.chunk_chars, strict=True) if c]
    assert content_tokens == [4, 4, 2]
    assert not trace.chunk_tokens_estimated
    assert len(trace.itl) == 2  # a multi-token chunk counts once
    assert trace.usage.completion_tokens == 10


async def _offsets(family: str, streams: int) -> list[float]:
    """Client stamp minus server write time for every content chunk of ``streams`` streams.

    The server runs in its own process and logs each chunk's write time on CLOCK_MONOTONIC,
    which ``perf_counter`` reads in every process on Linux, so the two clocks are one. Its
    step is long enough for the client to handle every stream's chunk of a step within it
    (see ``SLOW_STEP``), and the client's CPU time per chunk is printed beside the result.
    """
    rec = Recorder()
    config = FAST.with_(record_emissions=True)
    if streams > 1:
        config = config.with_(step_ms=(FAST.step_ms or 0.0) * SLOW_STEP / REAL_STEP)
    with ReferenceServer.in_subprocess(config) as handle:
        async with family_client(family, handle.base_url, rec) as client:
            await client.stream(1)  # warm-up: first-call imports, connection set-up
            rec.clear()
            cpu = time.process_time()
            await asyncio.gather(*(client.stream(20 + i) for i in range(streams)))
            cpu = time.process_time() - cpu
        root = handle.base_url.removesuffix("/v1")
        async with httpx.AsyncClient() as http:
            emissions: dict[str, list[float]] = (await http.get(root + "/debug/emissions")).json()
    by_length = {len(times): times for times in emissions.values()}  # lengths are distinct
    assert len(by_length) == streams + 1  # and the warm-up
    offsets: list[float] = []
    for trace in rec.traces:
        sent = by_length[trace.usage.completion_tokens or 0]
        got = [rec.origin + t for t in trace.content_chunk_times]
        assert len(got) == len(sent)
        offsets += [g - s for g, s in zip(got, sent, strict=True)]
    assert min(offsets) >= 0  # never before the server wrote it
    print(f"\n{family} x{streams}: client CPU {cpu / len(offsets) * 1e6:.0f} us a chunk")
    return offsets


def _report(family: str, streams: int, offsets: list[float]) -> float:
    median = statistics.median(offsets)
    p90 = statistics.quantiles(offsets, n=10)[8]
    print(
        f"\n{family} x{streams}: chunk stamp - server write: median {median * 1e3:.3f} ms, "
        f"p90 {p90 * 1e3:.3f} ms over {len(offsets)} chunks"
    )
    return median


async def _best_median(family: str, streams: int, bound: float) -> float:
    """The lowest median offset over up to three runs, stopping at the first within ``bound``.

    A busy machine only ever delays a stamp, never hastens it, so the least-disturbed run is
    the measurement; a real regression (a stamp taken after the caller's work) fails all three.
    """
    best = float("inf")
    for _ in range(3):
        best = min(best, _report(family, streams, await _offsets(family, streams)))
        if best <= bound:
            break
    return best


@pytest.mark.parametrize("family", FAMILIES)
async def test_chunk_time_is_within_1ms_of_the_server_write_for_one_stream(family: str) -> None:
    assert await _best_median(family, 1, 0.001) <= 0.001


# 16 streams get their chunks in the same instant; the client loop then handles them one
# after the other, so a chunk's stamp also waits for the client work on the chunks read
# before it. Wire-level stamps take the bytes' arrival, but bytes are only read when the loop
# gets to them. When the 16 chunks of one step take the client longer than the step, the
# client falls behind and every later stamp also waits for that backlog: the offsets then
# measure the client's throughput, not where it stamps. That makes such a test flaky
# (LangChain x16 read 3.7-22 ms on one machine, 49-128 ms on others, single process): on
# a 2-core VM the client spends 0.6-0.8 ms of CPU a chunk on the
# httpx path, 1.2-2.1 ms through the openai SDK and 1.5-1.9 ms through LangChain, with the
# instrumentation; 16 chunks through LangChain (24 ms) do not fit a 10 ms step. So these
# streams run at a 60 ms step, which 16 chunks fit up to 3.7 ms a chunk (a loaded CI machine).
# An SDK's bound also scales with the machine: at most 12x the plain httpx path's median
# measured just before. A stamp taken after a caller's work adds that work to every one of
# the 16 streams' chunks, far past this; the accuracy test proper is the single-stream one.
SLOW_STEP = 0.060
BOUND_16 = {"httpx": 0.004, "openai": 0.008, "langchain": 0.008}


@pytest.mark.parametrize("family", FAMILIES)
async def test_chunk_times_for_16_concurrent_streams(family: str) -> None:
    bound = BOUND_16[family]
    if family != "httpx":
        bound = max(bound, 12 * await _best_median("httpx", 16, BOUND_16["httpx"]))
    assert await _best_median(family, 16, bound) <= bound
