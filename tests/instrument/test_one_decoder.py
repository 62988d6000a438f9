"""One decoder for every client path: the same server answer leaves the same trace whichever
way it was read; and the SDK's other entry points (``parse``, ``with_raw_response``,
``chat.completions.stream``, ``beta.chat.completions.stream``) are traced and routed through
a dispatcher like ``create``."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI
from pydantic import BaseModel

import fairstream
from fairstream import Dispatcher, FairstreamCallbackHandler, Fixed, Recorder, StreamTrace
from tests.conftest import ServerFactory

MODEL = "fairstream-ref"
MSG = [{"role": "user", "content": "hi"}]
N = 7


def fingerprint(t: StreamTrace) -> dict[str, Any]:
    """What the decoder decides, without the times and ids that differ between requests."""
    return {
        "content_chunks": tuple(c > 0 for c in t.chunk_chars),  # texts differ by request
        "chunk_tokens": t.chunk_tokens,
        "completion_tokens": t.usage.completion_tokens,
        "prompt_tokens": t.usage.prompt_tokens,
        "estimated": t.usage.estimated,
        "finish_reason": t.finish_reason,
        "has_response_id": t.response_id is not None,
        "outcome": t.outcome,
        "first_content_is_a_chunk": t.first_content in t.chunk_times,
    }


async def via_sdk(url: str, rec: Recorder) -> None:
    async with AsyncOpenAI(base_url=url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec)
        stream = await client.chat.completions.create(
            model=MODEL, messages=MSG, max_tokens=N, stream=True, extra_body={"ignore_eos": True}
        )
        async for _ in stream:
            pass


async def via_raw_response(url: str, rec: Recorder) -> None:
    async with AsyncOpenAI(base_url=url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec)
        response = await client.chat.completions.with_raw_response.create(
            model=MODEL, messages=MSG, max_tokens=N, stream=True, extra_body={"ignore_eos": True}
        )
        async for _ in response.parse():
            pass


async def via_sdk_stream_helper(url: str, rec: Recorder) -> None:
    async with AsyncOpenAI(base_url=url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec)
        async with client.chat.completions.stream(
            model=MODEL,
            messages=MSG,
            max_tokens=N,
            stream_options={"include_usage": True},
            extra_body={"ignore_eos": True},
        ) as events:
            async for _ in events:
                pass


async def via_langchain_sdk(url: str, rec: Recorder) -> None:
    llm = ChatOpenAI(model=MODEL, base_url=url, api_key="k", max_tokens=N, stream_usage=True)  # type: ignore[arg-type]
    llm = fairstream.instrument(llm, recorder=rec)
    async for _ in llm.astream(MSG, extra_body={"ignore_eos": True}):
        pass


async def via_langchain_callback(url: str, rec: Recorder) -> None:
    handler = FairstreamCallbackHandler(rec, base_url=url)
    llm = ChatOpenAI(model=MODEL, base_url=url, api_key="k", max_tokens=N, stream_usage=True)  # type: ignore[arg-type]
    async for _ in llm.astream(
        MSG, config={"callbacks": [handler]}, extra_body={"ignore_eos": True}
    ):
        pass


async def via_stream_client(url: str, rec: Recorder) -> None:
    async with fairstream.StreamClient(url, recorder=rec) as client:
        await client.complete(model=MODEL, messages=MSG, max_tokens=N, ignore_eos=True)


PATHS: dict[str, Callable[[str, Recorder], Awaitable[None]]] = {
    "sdk": via_sdk,
    "raw_response": via_raw_response,
    "sdk_stream_helper": via_sdk_stream_helper,
    "langchain_sdk": via_langchain_sdk,
    "langchain_callback": via_langchain_callback,
    "stream_client": via_stream_client,
}


@pytest.mark.parametrize("tokens_per_chunk", [1, 3])
async def test_every_path_decodes_the_same_answer_into_the_same_trace(
    serve: ServerFactory, tokens_per_chunk: int
) -> None:
    prints: dict[str, dict[str, Any]] = {}
    async with serve(tokens_per_chunk=tokens_per_chunk) as server:
        for name, path in PATHS.items():
            rec = Recorder()
            await path(server.base_url, rec)
            (trace,) = rec.traces
            prints[name] = fingerprint(trace)
    # LangChain's stream chunks carry no response id (their ids are its run's), so the
    # callback path cannot record one
    assert prints["langchain_callback"].pop("has_response_id") is False
    prints["langchain_callback"]["has_response_id"] = True
    reference = prints["sdk"]
    assert reference["completion_tokens"] == N and reference["finish_reason"] == "length"
    assert sum(reference["chunk_tokens"]) == -(-N // tokens_per_chunk)  # chunks counted
    differ = {name: fp for name, fp in prints.items() if fp != reference}
    assert not differ, (reference, differ)


class Answer(BaseModel):
    text: str


async def test_other_entry_points_are_traced_and_routed_through_the_dispatcher(
    serve: ServerFactory,
) -> None:
    rec = Recorder()
    kw: dict[str, Any] = {"model": MODEL, "messages": MSG, "max_tokens": 64}
    async with (
        serve() as server,
        AsyncOpenAI(base_url=server.base_url, api_key="k") as raw,
        Dispatcher(Fixed(1)) as d,
    ):
        if True:
            client = fairstream.instrument(raw, recorder=rec, dispatcher=d)
            comp = client.chat.completions

            async def parse() -> None:
                result = await comp.parse(response_format=Answer, **kw)
                assert isinstance(result.choices[0].message.parsed, Answer)

            async def raw_create() -> None:
                response = await comp.with_raw_response.create(**kw)
                assert response.http_response.status_code == 200
                assert response.parse().choices[0].message.content

            async def raw_parse() -> None:
                response = await comp.with_raw_response.parse(response_format=Answer, **kw)
                assert isinstance(response.parse().choices[0].message.parsed, Answer)

            async def beta_stream() -> None:
                async with client.beta.chat.completions.stream(
                    response_format=Answer, **kw
                ) as events:
                    final = await events.get_final_completion()
                assert isinstance(final.choices[0].message.parsed, Answer)

            async def stream_helper() -> None:
                async with comp.stream(**kw) as events:
                    async for _ in events:
                        pass

            calls = [parse, raw_create, raw_parse, beta_stream, stream_helper]
            async with anyio.create_task_group() as tg:  # plain tasks: routed by the client
                for call in calls + calls:
                    tg.start_soon(call)
            assert d.in_flight == 0 and d.queue_length == 0
    traces = sorted(rec.traces, key=lambda t: t.sent or 0)
    assert len(traces) == 2 * len(calls)
    assert [(t.outcome, t.finish_reason in ("stop", "length")) for t in traces] == [
        ("ok", True)
    ] * len(traces), [
        (t.outcome, t.error_type, t.error_message, len(t.chunk_times)) for t in traces
    ]
    assert [t.enqueued is not None for t in traces] == [True] * len(traces), traces
    for a, b in itertools.pairwise(traces):  # Fixed(1): never two at once
        assert a.end <= (b.sent or 0) + 1e-6, (a, b)
    streamed = [t for t in traces if t.chunk_times]
    assert len(streamed) == 4  # beta_stream and stream_helper, twice each
