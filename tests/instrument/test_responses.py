"""The Responses API: the reference server's ``POST /v1/responses`` (typed SSE events, as vLLM
serves them) and its tracing through the openai SDK (``responses.create``, ``.stream``) and
LangChain's ``ChatOpenAI(use_responses_api=True)``, as chat completions are traced."""

from __future__ import annotations

from typing import Any

import anyio
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

import fairstream
from fairstream import Dispatcher, Recorder
from tests.conftest import ServerFactory

MODEL = "fairstream-ref"


async def test_a_streamed_response_is_traced_event_by_event(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec, label="resp")
        stream = await client.responses.create(
            model=MODEL,
            input="hi",
            max_output_tokens=6,
            stream=True,
            extra_body={"ignore_eos": True},
        )
        events = [e async for e in stream]
    types = [e.type for e in events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[4:10] == ["response.output_text.delta"] * 6
    assert types[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    assert final.status == "incomplete" and final.incomplete_details.reason == "max_output_tokens"
    [trace] = rec.traces
    assert (trace.outcome, trace.finish_reason, trace.label) == ("ok", "length", "resp")
    assert len(trace.chunk_times) == len(events) and len(trace.content_chunk_times) == 6
    assert (trace.usage.completion_tokens, trace.usage.estimated) == (6, False)
    assert (trace.response_id, trace.response_model) == (final.id, MODEL)
    assert trace.ttfc is not None and trace.ttft is not None and trace.e2e is not None
    assert trace.ttfc <= trace.ttft < trace.e2e


async def test_stream_helper_and_whole_responses_are_traced(serve: ServerFactory) -> None:
    """``responses.stream(...)`` (its final response still there), a whole response from a
    message list with instructions, and an answer that ends by itself (status completed)."""
    rec = Recorder(keep_content=True)
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec)
        async with client.responses.stream(model=MODEL, input="hi", max_output_tokens=3) as s:
            final = await s.get_final_response()
        whole = await client.responses.create(
            model=MODEL,
            instructions="be brief",
            input=[{"role": "user", "content": [{"type": "input_text", "text": "hi there"}]}],
            max_output_tokens=4,
            extra_body={"ignore_eos": True},
        )
        natural = await client.responses.create(model=MODEL, input="hi", max_output_tokens=2000)
    streamed, whole_t, natural_t = rec.traces
    assert streamed.content == final.output_text and streamed.usage.completion_tokens == 3
    assert streamed.outcome == "ok" and streamed.response_id == final.id
    assert whole.status == "incomplete" and whole_t.finish_reason == "length"
    assert whole_t.usage.prompt_tokens == whole.usage.input_tokens > 3  # the instructions count
    assert whole_t.usage.completion_tokens == 4 and not whole_t.chunk_times
    assert natural.status == "completed" and natural_t.finish_reason == "stop"
    assert natural_t.usage.completion_tokens == natural.usage.output_tokens < 2000


async def test_responses_wait_for_the_dispatcher_with_their_output_length(
    serve: ServerFactory,
) -> None:
    """One slot: the second response is sent only once the first has ended."""
    rec = Recorder()
    async with (
        serve() as server,
        AsyncOpenAI(base_url=server.base_url, api_key="k") as raw,
        Dispatcher("fixed:1") as d,
    ):
        client = fairstream.instrument(raw, recorder=rec, dispatcher=d)

        async def one(n: int) -> None:
            stream = await client.responses.create(
                model=MODEL, input="hi", max_output_tokens=n, stream=True
            )
            async for _ in stream:
                pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, 8)
            tg.start_soon(one, 4)
    first, second = sorted(rec.traces, key=lambda t: t.sent or 0)
    assert second.sent is not None and first.end is not None and second.sent >= first.end
    assert second.queue_time is not None and second.queue_time > 0


async def test_langchain_on_the_responses_api_is_traced_at_the_sdk(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server:
        llm: Any = fairstream.instrument(
            ChatOpenAI(
                model=MODEL,
                base_url=server.base_url,
                api_key="k",  # type: ignore[arg-type]
                use_responses_api=True,
                max_tokens=5,  # type: ignore[call-arg]
                extra_body={"ignore_eos": True},
            ),
            recorder=rec,
            label="lc-responses",
        )
        pieces = [m async for m in llm.astream("hi")]
    assert llm.callbacks is None  # traced at the SDK, no callback handler
    assert pieces
    [trace] = rec.traces
    assert (trace.client, trace.label, trace.outcome) == ("langchain", "lc-responses", "ok")
    assert (trace.finish_reason, trace.usage.completion_tokens) == ("length", 5)
    assert len(trace.content_chunk_times) == 5
