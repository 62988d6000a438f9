"""An instrumented openai client is still an instance of its class: libraries that check the
type (instructor, LangChain, the caller's own code) take it, and its calls are traced."""

from __future__ import annotations

import os
from typing import Any

import pytest
from openai import AsyncAzureOpenAI, AsyncOpenAI

import fairstream
from fairstream import Recorder
from tests.conftest import ServerFactory

MSG: Any = [{"role": "user", "content": "hi"}]


class MyClient(AsyncOpenAI):
    """A caller's own subclass, defined outside the openai package."""

    def greeting(self) -> str:
        return "mine"


async def _stream(client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="fairstream-ref", messages=MSG, max_tokens=3, stream=True
    )
    async for _ in stream:
        pass


async def test_instrumented_clients_keep_their_class_and_trace_their_calls(
    serve: ServerFactory,
) -> None:
    """AsyncOpenAI, AsyncAzureOpenAI (on its deployment routes) and a subclass: the
    instrumented client and its ``with_options`` copies are instances of the original's class,
    and their streams are traced; the original itself stays untraced."""
    rec = Recorder()
    async with serve() as server:
        url = server.base_url
        raws = [
            AsyncOpenAI(base_url=url, api_key="k"),
            AsyncAzureOpenAI(base_url=url, api_key="k", api_version="2024-10-21"),
            MyClient(base_url=url, api_key="k"),
        ]
        for raw in raws:
            client = fairstream.instrument(raw, recorder=rec, label=type(raw).__name__)
            copy = client.with_options(timeout=5)
            for c in (client, copy):
                assert isinstance(c, type(raw)) and c is not raw
                assert type(c).__name__ == type(raw).__name__
            for c in (client, copy, raw):
                await _stream(c)
            await raw.close()
        assert fairstream.instrument(raws[2], recorder=rec).greeting() == "mine"
    names = [type(r).__name__ for r in raws]
    assert [t.label for t in rec.traces] == [n for n in names for _ in range(2)]
    assert all(t.outcome == "ok" and t.usage.completion_tokens == 3 for t in rec.traces)
    assert rec.traces[2].base_url == url  # Azure: the deployment route, same server


async def test_instrumenting_twice_traces_each_call_once_in_the_last_recorder(
    serve: ServerFactory,
) -> None:
    first, second = Recorder(), Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(fairstream.instrument(raw, recorder=first), recorder=second)
        await _stream(client)
    assert (len(first.traces), len(second.traces)) == (0, 1)


async def test_a_langchain_model_handed_an_instrumented_client_is_traced(
    serve: ServerFactory,
) -> None:
    """``ChatOpenAI(root_async_client=..., async_client=...chat.completions)``: LangChain
    talks through the instrumented client, so its stream is traced."""
    from langchain_openai import ChatOpenAI

    rec = Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec, label="handed")
        llm = ChatOpenAI(
            model="fairstream-ref",
            api_key="k",  # type: ignore[arg-type]
            base_url=server.base_url,
            max_tokens=4,  # type: ignore[call-arg]
            root_async_client=client,
            async_client=client.chat.completions,
        )
        text = "".join([str(c.content) async for c in llm.astream("hi")])
    assert text
    [trace] = rec.traces
    assert (trace.label, trace.outcome, trace.usage.completion_tokens) == ("handed", "ok", 4)


async def test_instructor_gets_a_structured_answer_through_an_instrumented_client(
    serve: ServerFactory,
) -> None:
    """``instructor.from_openai`` accepts only ``AsyncOpenAI`` instances. instructor cannot be
    installed beside openai 3.x (both pin jiter, apart), so CI runs this in its openai 2.x
    environment, where the test extra's ``instructor`` is installed."""
    try:
        import instructor
    except ImportError:
        if os.environ.get("FAIRSTREAM_EXPECT_OPENAI_MAJOR") == "2":
            raise
        pytest.skip("instructor is not installable beside openai 3.x; CI runs this on openai 2")
    import pydantic

    class City(pydantic.BaseModel):
        name: str
        population: int

    rec = Recorder()
    async with serve() as server, AsyncOpenAI(base_url=server.base_url, api_key="k") as raw:
        client = fairstream.instrument(raw, recorder=rec, label="instructor")
        typed = instructor.from_openai(client, mode=instructor.Mode.JSON_SCHEMA)
        city = await typed.chat.completions.create(
            model="fairstream-ref", response_model=City, messages=MSG, max_tokens=200
        )
    assert isinstance(city, City) and city.name
    [trace] = rec.traces
    assert (trace.label, trace.outcome) == ("instructor", "ok")
