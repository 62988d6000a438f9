"""A stream cut without ``finish_reason`` is never ok: the openai SDK on its own ends such a
stream quietly; through fairstream every client family raises IncompleteStreamError after the
last chunk, the trace says error / IncompleteStream and the log line says it failed."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from openai import AsyncOpenAI

import fairstream
from fairstream import IncompleteStreamError, LogSink, Recorder
from tests.conftest import ServerFactory

from ._families import FAMILIES, MODEL, consume, make_llm

CUT = {"faults": "cut_close:at=1,after=4"}  # role chunk + 3 content chunks, then a clean close
MSG = [{"role": "user", "content": "hi"}]


async def test_the_sdk_alone_ends_a_cut_stream_quietly(serve: ServerFactory) -> None:
    """Why this matters: without fairstream the caller believes it has the whole answer."""
    async with serve(**CUT) as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as c:
        stream = await c.chat.completions.create(
            model=MODEL,
            messages=MSG,
            max_tokens=12,
            stream=True,  # type: ignore[arg-type]
        )
        chunks = [chunk async for chunk in stream]
    assert 1 < len(chunks) < 12
    assert not any(ch.choices and ch.choices[0].finish_reason for ch in chunks)


@pytest.mark.parametrize("family", FAMILIES)
async def test_every_family_raises_after_the_last_chunk_and_records_it(
    serve: ServerFactory, family: str, caplog: pytest.LogCaptureFixture
) -> None:
    rec = Recorder([LogSink()])
    seen: list[str] = []

    async def run() -> None:
        await consume(family, server.base_url, rec, 12, into=seen)

    async with serve(**CUT) as server:
        with (
            caplog.at_level(logging.INFO, logger="fairstream"),
            pytest.raises(IncompleteStreamError) as info,
        ):
            await run()
    (trace,) = rec.traces
    assert trace.outcome == "error" and trace.error_type == "IncompleteStream"
    assert 1 <= len(seen) < 12  # the caller got part of the answer, then the error
    assert len(trace.content_chunk_times) == len(seen)  # and the trace has exactly that
    assert info.value.trace is trace
    assert any(
        " error in " in r.getMessage() and "IncompleteStream" in r.getMessage()
        for r in caplog.records
    ), [r.getMessage() for r in caplog.records]


async def test_langchain_ainvoke_on_a_streaming_model_raises_too(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve(**CUT) as server:
        llm = make_llm(server.base_url, rec, streaming=True, max_tokens=12)
        with pytest.raises(IncompleteStreamError):
            await llm.ainvoke("hi")
    assert rec.traces[0].error_type == "IncompleteStream"


@pytest.mark.parametrize("family", ["openai", "langchain"])
async def test_on_incomplete_record_keeps_the_quiet_ending(
    serve: ServerFactory, family: str
) -> None:
    rec = Recorder()
    async with serve(**CUT) as server:
        if family == "openai":
            async with AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
                client = fairstream.instrument(raw, recorder=rec, on_incomplete="record")
                stream = await client.chat.completions.create(
                    model=MODEL,
                    messages=MSG,
                    max_tokens=12,
                    stream=True,  # type: ignore[arg-type]
                )
                got: list[Any] = [c async for c in stream]
        else:
            from langchain_openai import ChatOpenAI

            llm = ChatOpenAI(model=MODEL, base_url=server.base_url, api_key="k", max_tokens=12)  # type: ignore[arg-type]
            traced = fairstream.instrument(llm, recorder=rec, on_incomplete="record")
            got = [c async for c in traced.astream("hi")]
    assert got  # no exception: the SDK's own ending
    (trace,) = rec.traces
    assert trace.outcome == "error" and trace.error_type == "IncompleteStream"


def test_on_incomplete_is_checked() -> None:
    with pytest.raises(ValueError, match="on_incomplete"):
        fairstream.instrument(AsyncOpenAI(api_key="k"), on_incomplete="ignore")  # type: ignore[arg-type]


async def test_a_finish_chunk_without_done_stays_ok(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve(faults="no_done:rate=1") as server:
        for family in FAMILIES:
            await consume(family, server.base_url, rec, 5)
    assert [t.outcome for t in rec.traces] == ["ok"] * len(FAMILIES)
