"""The contracts we hold our own server to, against a real engine: llama.cpp's llama-server
(random 136M-parameter model, 2 CPU threads)."""

from __future__ import annotations

import logging
import statistics
from typing import Any

import anyio
import httpx
import pytest
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI, BadRequestError

import fairstream
from fairstream import (
    ConnectError,
    LogSink,
    Recorder,
    ServerError,
    StreamClient,
    StreamTrace,
    format_line,
)
from fairstream._cli._bench._run import run_workload
from fairstream._cli._bench._workload import RequestSpec

from .conftest import llama_server

MODEL = llama_server.MODEL_NAME
MSG = [{"role": "user", "content": "hello"}]
N = 24


async def _openai(url: str, rec: Recorder) -> None:
    async with AsyncOpenAI(base_url=url, api_key="k", max_retries=0) as raw:
        client = fairstream.instrument(raw, recorder=rec, label="openai")
        stream = await client.chat.completions.create(
            model=MODEL, messages=MSG, max_tokens=N, stream=True, extra_body={"ignore_eos": True}
        )
        async for _ in stream:
            pass


async def _langchain(url: str, rec: Recorder) -> None:
    llm = ChatOpenAI(model=MODEL, base_url=url, api_key="k", max_tokens=N, max_retries=0)  # type: ignore[arg-type]
    llm = fairstream.instrument(llm, recorder=rec, label="langchain")
    async for _ in llm.astream(MSG, extra_body={"ignore_eos": True}):
        pass


async def _httpx(url: str, rec: Recorder) -> None:
    async with StreamClient(url, recorder=rec, label="httpx") as client:
        await client.complete(model=MODEL, messages=MSG, max_tokens=N, ignore_eos=True)


@pytest.mark.parametrize("family", ["openai", "langchain", "httpx"])
async def test_instrumentation_is_complete_on_a_real_engine(
    llama: Any, family: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = llama(4)
    rec = Recorder([LogSink()])
    with caplog.at_level(logging.INFO, logger="fairstream"):
        await {"openai": _openai, "langchain": _langchain, "httpx": _httpx}[family](
            server.base_url, rec
        )
    (t,) = rec.traces
    assert t.outcome == "ok" and t.finish_reason == "length"
    assert t.usage.completion_tokens == N and not t.usage.estimated
    assert t.usage.prompt_tokens and t.usage.prompt_tokens > 0
    assert len(t.content_chunk_times) == N  # one token a chunk: every token seen
    assert t.ttft is not None and t.ttft > 0 and t.tpot is not None and t.tpot > 0
    assert caplog.records[-1].getMessage() == format_line(t)
    assert f"out {N}" in format_line(t)


def _say(capsys: pytest.CaptureFixture[str], line: str) -> None:
    """Figures for the record (shown with -s and in CI's log)."""
    with capsys.disabled():
        print(f"\n[llama.cpp] {line}")


@pytest.mark.alone
@pytest.mark.parametrize(("slots", "verdict"), [(4, "continuous"), (1, "sequential")])
async def test_probe_tells_the_scheduling(
    llama: Any, slots: int, verdict: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = llama(slots)
    report = await fairstream.probe(server.base_url, MODEL, budget=32, max_tokens=48)
    _say(capsys, f"-np {slots}: {report.verdict} {report.confidence:.2f}: {report.summary}")
    assert report.verdict == verdict, report.summary
    assert report.confidence >= 0.6, report.summary


@pytest.mark.alone
async def test_probe_is_never_confidently_wrong_with_8_slots(
    llama: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    report = await fairstream.probe(llama(8).base_url, MODEL, budget=32, max_tokens=48)
    _say(capsys, f"-np 8: {report.verdict} {report.confidence:.2f}: {report.summary}")
    wrong = report.verdict in ("static", "sequential")
    assert not (wrong and report.confidence >= 0.8), report.summary


def _short_p50_and_makespan(traces: list[StreamTrace], wall: float) -> tuple[float, float]:
    e2e = [
        (t.end - (t.enqueued if t.enqueued is not None else t.sent or 0.0))
        for t in traces
        if t.end is not None
    ]
    return statistics.median(e2e), wall


@pytest.mark.alone
async def test_auto_is_no_worse_than_all_at_once_on_a_mixed_burst(
    llama: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Makespan and E2E p50 (from submission) within 5% of sending everything at once.

    Three short requests to one long, as chat traffic mostly is. (With an even split the
    median sits on the boundary between the two lengths, and shortest-first, which starts
    the long ones last, lost to random order by up to 8% in about half the runs.)
    """
    server = llama(4)
    specs = [
        RequestSpec(n, [{"role": "user", "content": "x"}], "short" if n == 8 else "long")
        for n in [8, 8, 8, 64] * 4
    ]
    runs: dict[str, list[tuple[float, float]]] = {"naive": [], "auto": []}
    read: list[str] = []  # what each auto run made of the server, for a failure's message
    # one of each (suite time: the margins were 0.53 and 0.74 against 1.05)
    for name in ("naive", "auto"):
        policy = fairstream.Auto() if name == "auto" else None
        run = await run_workload(server.base_url, MODEL, specs, policy=policy)
        assert all(t.outcome == "ok" for t in run.traces)
        runs[name].append(_short_p50_and_makespan(run.traces, run.wall))
        if policy is not None:
            read.append(f"{policy.describe()}, peak {policy.peak}, step {policy.step()}")
    naive = [statistics.median(v) for v in zip(*runs["naive"], strict=True)]
    auto = [statistics.median(v) for v in zip(*runs["auto"], strict=True)]
    _say(
        capsys,
        f"-np 4, 12 x 8 + 4 x 64 tokens at once: auto / all-at-once E2E p50"
        f" {auto[0] / naive[0]:.3f}, makespan {auto[1] / naive[1]:.3f}",
    )
    assert auto[0] <= 1.05 * naive[0], (runs, read)  # E2E p50
    assert auto[1] <= 1.05 * naive[1], (runs, read)  # makespan


async def _busy_slots(server: Any) -> int:
    """Slots processing a request now, from llama-server's own ``GET /slots``."""
    async with httpx.AsyncClient() as http:
        slots = (await http.get(server.root_url + "/slots")).json()
    return sum(1 for s in slots if s.get("is_processing"))


async def test_a_cancelled_stream_frees_its_slot(llama: Any) -> None:
    server = llama(4)
    rec = Recorder()
    async with StreamClient(server.base_url, recorder=rec) as client:
        got = 0
        with anyio.CancelScope() as scope:
            async with client.chat(
                model=MODEL, messages=MSG, max_tokens=400, ignore_eos=True
            ) as stream:
                async for chunk in stream:
                    if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                        got += 1
                        if got == 5:
                            assert await _busy_slots(server) == 1
                            scope.cancel()
    assert rec.traces[0].outcome == "cancelled"
    with anyio.fail_after(10):  # the engine notices the closed connection at its next step
        while await _busy_slots(server):  # noqa: ASYNC110 (the server's own /slots)
            await anyio.sleep(0.05)


async def test_an_oversize_prompt_is_its_400(llama: Any) -> None:
    server = llama(4)
    huge = [{"role": "user", "content": "word " * 4000}]  # past a slot's 1024-token context
    rec = Recorder()
    async with AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as raw:
        client = fairstream.instrument(raw, recorder=rec)
        with pytest.raises(BadRequestError):
            stream = await client.chat.completions.create(
                model=MODEL, messages=huge, max_tokens=8, stream=True
            )
            async for _ in stream:
                pass
    async with StreamClient(server.base_url, recorder=rec) as lean:
        with pytest.raises(ServerError) as info:
            await lean.complete(model=MODEL, messages=huge, max_tokens=8)
    assert info.value.status_code == 400
    assert [t.status_code for t in rec.traces] == [400, 400]
    assert all(t.outcome == "error" for t in rec.traces)


async def test_a_dead_server_is_connection_refused(llama: Any) -> None:
    server = llama(4)
    dead = server.base_url.replace(str(server.port), str(llama_server._free_port()))
    rec = Recorder()
    async with StreamClient(dead, recorder=rec) as client:
        with pytest.raises(ConnectError):
            await client.complete(model=MODEL, messages=MSG, max_tokens=4)
    assert rec.traces[0].outcome == "error"
    async with httpx.AsyncClient() as http:
        assert (await http.get(server.root_url + "/health")).status_code == 200  # untouched


@pytest.mark.alone  # two timings compared: another worker's load between them moved one 2x
async def test_the_matrix_measures_llama_cpp_s_step_on_this_machine(llama: Any) -> None:
    """The matrix judges llama.cpp's cells by the step measured as each server starts (its
    2-step TTFT target, its open loops' capacity): a lone request timed apart from the measure
    decodes at about that step, and with every slot busy a token comes no sooner."""
    from benchmarks.matrix._llama import calibrate

    server = llama(4)
    cal = await calibrate(server.base_url, MODEL, 4)
    rec = Recorder()
    async with AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as raw:
        client = fairstream.instrument(raw, recorder=rec)
        stream = await client.chat.completions.create(
            model=MODEL, messages=MSG, max_tokens=96, stream=True, extra_body={"ignore_eos": True}
        )
        async for _ in stream:
            pass
    [trace] = rec.traces
    lone = statistics.median(trace.itl)
    assert 0.6 < lone / cal.step < 1.6, (lone, cal)
    assert cal.full > 0.9 * cal.step, cal


async def test_the_matrix_s_prompts_are_computed_whole(llama: Any) -> None:
    """llama.cpp reuses the prompt prefix a slot already holds: a prompt after a longer one
    of the same text costs it two tokens. The matrix leads each job's prompt with its own
    byte, so every prompt is computed whole, as distinct users' prompts are."""
    import dataclasses

    from benchmarks.matrix._cells import llama_servers, workload

    server = llama(1)  # one slot: each request finds the previous prompt in it
    [np4] = llama_servers("quick")
    jobs = workload("burst", 0, np4, 0.02, "tiny")[:2]
    longer, shorter = (
        dataclasses.replace(j, prompt_words=w) for j, w in zip(jobs, (200, 150), strict=True)
    )

    async def computed(text: str) -> int:
        body = {"model": MODEL, "messages": [{"role": "user", "content": text}], "max_tokens": 2}
        async with httpx.AsyncClient(timeout=60) as http:
            r = await http.post(server.base_url + "/chat/completions", json=body)
        return int(r.json()["timings"]["prompt_n"])

    whole = await computed(longer.prompt)
    assert whole > 0.9 * 2 * 200, whole  # byte tokens: two a word, nothing cached
    assert longer.lead != shorter.lead
    assert await computed(shorter.prompt) > 0.9 * 2 * 150
    same_text = [dataclasses.replace(j, lead="w") for j in (longer, shorter)]
    await computed(same_text[0].prompt)
    assert await computed(same_text[1].prompt) < 10  # what distinct leads avoid
