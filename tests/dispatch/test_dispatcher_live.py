"""The asyncio Dispatcher over loopback against the reference server."""

from __future__ import annotations

import random
import time

import anyio
import anyio.lowlevel
import pytest
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

import fairstream
from fairstream import (
    Dispatcher,
    Fixed,
    Recorder,
    ServerError,
    StreamClient,
    Waves,
)

MSG = [{"role": "user", "content": "hi"}]


async def _complete(client: StreamClient, model: str, n: int) -> fairstream.StreamTrace:
    return await client.complete(model=model, messages=MSG, max_tokens=n, ignore_eos=True)


@pytest.mark.parametrize(
    ("overrides", "kind"),
    [
        ({"mode": "static", "batch_size": 6}, "static, B=6"),
        ({"mode": "continuous", "max_num_seqs": 64}, "continuous"),
    ],
    ids=["static", "continuous"],
)
async def test_auto_picks_the_policy_for_the_server(
    serve: fairstream.ServerConfig, overrides: dict[str, object], kind: str
) -> None:
    lengths = random.Random(0).choices([4, 8, 16, 24], k=72)
    async with serve(**overrides) as server:  # type: ignore[operator]
        recorder = Recorder()
        async with StreamClient(server.base_url, recorder=recorder) as c, Dispatcher() as d:
            async with anyio.create_task_group() as tg:
                for n in lengths:
                    tg.start_soon(
                        lambda n=n: d.submit(
                            _complete, c, server.config.model, n, expected_tokens=n
                        )
                    )
            assert d.policy.startswith(f"auto: {kind}"), (d.policy, d.report and d.report.evidence)
            assert d.in_flight == 0 and d.queue_length == 0
    traces = recorder.traces
    assert len(traces) == 72
    assert all(t.enqueued is not None and t.queue_time is not None for t in traces)
    assert max(t.queue_time or 0 for t in traces) > 0  # some waited in the client queue


async def test_failed_and_cancelled_requests_free_their_slots(serve: object) -> None:
    async with serve(mode="static", batch_size=4) as server:  # type: ignore[operator]
        model = server.config.model
        async with StreamClient(server.base_url) as c, Dispatcher(Waves(4)) as d:

            async def boom() -> None:
                raise RuntimeError("failed before sending")

            async def hang() -> None:
                await anyio.sleep_forever()

            async with anyio.create_task_group() as tg:
                for _ in range(2):
                    tg.start_soon(_complete, c, model, 8)  # not through d: keeps the server busy
                with pytest.raises(RuntimeError):
                    await d.submit(boom)
                with anyio.move_on_after(0.2) as scope:
                    await d.submit(hang)
                assert scope.cancelled_caught
            assert d.in_flight == 0
            # the wave is not stalled: four more complete
            results = await d.map(lambda n: _complete(c, model, n), [4, 4, 4, 4])
            assert all(r.outcome == "ok" for r in results)  # type: ignore[union-attr]
            assert d.in_flight == 0 and d.queue_length == 0


async def test_a_cancelled_waiting_submission_leaves_the_queue(serve: object) -> None:
    async with serve() as server:  # type: ignore[operator]
        ran: list[int] = []
        async with StreamClient(server.base_url) as c, Dispatcher(Fixed(1)) as d:
            busy = anyio.Event()

            async def long() -> None:
                busy.set()
                await _complete(c, server.config.model, 40)

            async def second() -> None:
                ran.append(1)

            async with anyio.create_task_group() as tg:
                tg.start_soon(d.submit, long)
                await busy.wait()
                scope = anyio.CancelScope()
                tg.start_soon(_waiting, d, second, scope)
                while d.queue_length == 0:
                    await anyio.lowlevel.checkpoint()  # until it is queued: no timing guess
                scope.cancel()
                await anyio.lowlevel.checkpoint()
                assert d.queue_length == 0
            assert ran == [] and d.in_flight == 0


async def _waiting(d: Dispatcher, fn: object, scope: anyio.CancelScope) -> None:
    with scope:
        await d.submit(fn)  # type: ignore[arg-type]


async def test_early_release_returns_before_done(serve: object) -> None:
    # the server holds [DONE] for 100 steps after the finish chunk (a margin for a busy client)
    async with serve(done_delay_ms=2000.0) as server:  # type: ignore[operator]
        recorder = Recorder()
        delay = 2000.0 / 1000 * server.config.time_scale
        async with AsyncOpenAI(base_url=server.base_url, api_key="k") as raw, Dispatcher() as d:
            client = fairstream.instrument(raw, recorder=recorder)
            t0 = time.perf_counter()
            chunks = [
                c
                async for c in d.stream(
                    client, model=server.config.model, messages=MSG, max_tokens=5
                )
            ]
            got = time.perf_counter() - t0
            assert chunks[-1].choices[0].finish_reason == "length"
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert got < delay / 2  # the caller did not wait for [DONE]
            assert d.in_flight == 1  # the slot is held until the stream really ends
            await d.idle()
        (trace,) = recorder.traces
        assert trace.outcome == "ok" and trace.e2e is not None and trace.e2e >= delay * 0.9
        assert trace.usage.completion_tokens == 5  # the usage chunk, read in the background


async def test_langchain_astream_early_release_and_routing(serve: object) -> None:
    async with serve(done_delay_ms=2000.0) as server:  # type: ignore[operator]
        delay = 2000.0 / 1000 * server.config.time_scale
        recorder = Recorder()
        llm = ChatOpenAI(
            base_url=server.base_url, api_key="k", model=server.config.model, max_tokens=5
        )
        async with Dispatcher(Fixed(2)) as d:
            traced = fairstream.instrument(llm, recorder=recorder)
            t0 = time.perf_counter()
            parts = [c.content async for c in d.astream(traced, [("user", "hi")])]
            assert time.perf_counter() - t0 < delay / 2 and "".join(map(str, parts))
            routed = fairstream.instrument(llm, recorder=recorder, dispatcher=d)
            text = "".join([str(c.content) async for c in routed.astream([("user", "hi")])])
            assert text
            await d.idle()
        assert len(recorder.traces) == 2
        assert all(t.queue_time is not None for t in recorder.traces)


async def test_429_pauses_admission_and_is_retried_before_any_chunk(serve: object) -> None:
    # one running, one waiting; the third gets 429 with Retry-After
    async with serve(mode="sequential", max_waiting=1, retry_after_s=0.3) as server:  # type: ignore[operator]
        recorder = Recorder()
        async with StreamClient(server.base_url, recorder=recorder) as c, Dispatcher(Fixed(3)) as d:
            results = await d.map(lambda n: _complete(c, server.config.model, n), [10, 10, 10])
        assert all(r.outcome == "ok" for r in results)  # type: ignore[union-attr]
    failed = [t for t in recorder.traces if t.status_code == 429]
    assert failed, "the server should have refused one"
    refused_at = min(t.end for t in failed if t.end is not None)
    later = [t.sent for t in recorder.traces if t.sent is not None and t.sent > refused_at]
    assert later and min(later) - refused_at >= 0.3 * 0.9  # nothing sent during the pause


async def test_nothing_is_retried_after_the_first_chunk(serve: object) -> None:
    async with serve() as server:  # type: ignore[operator]
        calls = 0
        async with StreamClient(server.base_url) as c, Dispatcher(Fixed(2), retries=3) as d:

            async def fails_mid_stream() -> None:
                nonlocal calls
                calls += 1
                async with c.chat(model=server.config.model, messages=MSG, max_tokens=10) as s:
                    async for chunk in s:
                        if chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                            raise ServerError("overloaded mid-stream", 503)

            with pytest.raises(ServerError):
                await d.submit(fails_mid_stream)
        assert calls == 1


async def test_an_unused_dispatcher_opens_and_closes_and_lets_errors_through() -> None:
    async with Dispatcher() as d:
        pass
    assert d.in_flight == 0
    with pytest.raises(KeyError):
        async with Dispatcher():
            raise KeyError("from the body")
    with pytest.raises(RuntimeError, match="async with"):
        await Dispatcher().submit(anyio.sleep, 0)
