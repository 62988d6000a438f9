"""An instrumented LangChain model is still the model: same class, same Runnable surface."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

import fairstream
from fairstream import FairstreamCallbackHandler, Recorder
from tests.conftest import ServerFactory
from tests.instrument._families import MODEL, make_llm


class Answer(BaseModel):
    """A structured answer."""

    text: str


def get_weather(city: str) -> str:
    """Weather in a city."""
    return f"sunny in {city}"


async def test_same_class_and_the_seed_loop_needs_only_the_wrap(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server:
        llm = make_llm(server.base_url, rec, max_tokens=4)
        assert isinstance(llm, ChatOpenAI) and isinstance(llm, BaseChatModel)
        message = ("human", "describe the picture")
        chunks = [c async for c in llm.astream([("system", "you are terse"), message])]
    assert "".join(str(c.content) for c in chunks).split()
    assert len(rec.traces) == 1 and rec.traces[0].outcome == "ok"


async def test_ainvoke_is_recorded_without_chunks(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server:
        llm = make_llm(server.base_url, rec, max_tokens=5, extra_body={"ignore_eos": True})
        reply = await llm.ainvoke("hi")
    assert isinstance(reply, AIMessage)
    (trace,) = rec.traces
    assert trace.chunk_times == ()
    assert trace.usage.completion_tokens == 5 and not trace.usage.estimated
    assert trace.finish_reason == "length"


async def test_bind_tools_with_config_and_structured_output_keep_working(
    serve: ServerFactory,
) -> None:
    rec = Recorder()
    async with serve() as server:
        llm = make_llm(server.base_url, rec, max_tokens=3)
        with_tools = llm.bind_tools([get_weather])
        msg = await with_tools.ainvoke("weather in Paris?")
        assert isinstance(msg, AIMessage)
        configured = llm.with_config(tags=["t1"], run_name="configured")
        with fairstream.tag(request_id="cfg-1"):
            async for _ in configured.astream("hi"):
                pass
        # the reference server fills a requested JSON schema, so the parse is real
        roomy = make_llm(server.base_url, rec, max_tokens=200)
        structured = roomy.with_structured_output(Answer, method="json_schema")
        answer = await structured.ainvoke("answer as JSON with a 'text' field")
        assert isinstance(answer, Answer) and answer.text
        # json_mode sends no schema: the server's generic object fails the parse, which
        # include_raw reports next to the raw reply instead of raising
        loose = roomy.with_structured_output(Answer, method="json_mode", include_raw=True)
        out = await loose.ainvoke("answer as JSON")
        assert isinstance(out, dict) and isinstance(out["raw"], AIMessage)
        assert out["parsing_error"] is not None
    assert len(rec.traces) == 4  # tools, with_config, json_schema, json_mode
    assert {t.outcome for t in rec.traces} == {"ok"}
    assert rec.traces[1].request_id == "cfg-1"


async def test_handler_can_be_attached_by_hand(serve: ServerFactory) -> None:
    rec = Recorder()
    async with serve() as server:
        handler = FairstreamCallbackHandler(rec, label="manual")
        llm = ChatOpenAI(
            model=MODEL,
            base_url=server.base_url,
            api_key="k",
            max_tokens=3,  # type: ignore[arg-type]
            stream_usage=True,
        )
        async for _ in llm.astream("hi", config={"callbacks": [handler]}):
            pass
    (trace,) = rec.traces
    assert trace.label == "manual" and trace.usage.completion_tokens is not None
    assert len([c for c in trace.chunk_chars if c]) == trace.usage.completion_tokens


async def test_openai_backed_models_are_traced_at_the_sdk_without_callbacks(
    serve: ServerFactory,
) -> None:
    """No LangChain handler is added (its per-chunk dispatch costs); the SDK client traces."""
    rec = Recorder()
    async with serve() as server:
        llm = make_llm(server.base_url, rec, max_tokens=4)
        assert not llm.callbacks
        async for _ in llm.astream("hi"):
            pass
    (trace,) = rec.traces
    assert trace.client == "langchain" and trace.response_id is not None


async def test_other_models_use_the_callback_handler_and_read_run_metadata() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    rec = Recorder()
    fake = GenericFakeChatModel(messages=iter([AIMessage(content="one two three")]))
    llm = fairstream.instrument(fake, recorder=rec, label="fake")
    assert isinstance(llm, GenericFakeChatModel)
    config = {"metadata": {"fairstream_id": "m-7", "fairstream_label": "meta"}}
    pieces = [c.content async for c in llm.astream("x", config=config)]  # type: ignore[arg-type]
    (trace,) = rec.traces
    assert trace.request_id == "m-7" and trace.label == "meta"
    assert len([c for c in trace.chunk_chars if c]) == len([p for p in pieces if p])
    assert trace.outcome == "ok" and trace.usage.estimated
