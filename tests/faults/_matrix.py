"""One request through each client family against a server committing one fault."""

from __future__ import annotations

from typing import Any

import httpx
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder, StreamClient

IDLE = 0.3  # the client's idle timeout between chunks in these tests (seconds)
FAMILIES = ("httpx", "openai", "langchain", "responses")
MODEL = "fairstream-ref"
MSG = [{"role": "user", "content": "hi"}]


async def one_request(family: str, base_url: str, recorder: Recorder) -> tuple[str, int]:
    """Run one streamed request; return (outcome, content chunks the caller saw).

    outcome is "ok" or the name of the exception that reached the caller.
    """
    seen = 0
    try:
        if family == "httpx":
            timeout = httpx.Timeout(5.0, read=IDLE)
            async with (
                StreamClient(base_url, recorder=recorder, timeout=timeout) as client,
                client.chat(model=MODEL, messages=MSG, max_tokens=12) as stream,
            ):
                async for chunk in stream:
                    delta = (chunk.get("choices") or [{}])[0].get("delta", {})
                    seen += bool(delta.get("content"))
        elif family == "openai":
            async with AsyncOpenAI(
                base_url=base_url, api_key="k", max_retries=0, timeout=IDLE
            ) as raw:
                client = fairstream.instrument(raw, recorder=recorder)
                stream = await client.chat.completions.create(
                    model=MODEL,
                    messages=MSG,
                    max_tokens=12,
                    stream=True,  # type: ignore[arg-type]
                )
                async with stream:
                    async for chunk in stream:
                        seen += bool(chunk.choices and chunk.choices[0].delta.content)
        elif family == "responses":  # the openai SDK's Responses API: typed events
            async with AsyncOpenAI(
                base_url=base_url, api_key="k", max_retries=0, timeout=IDLE
            ) as raw:
                client = fairstream.instrument(raw, recorder=recorder)
                events = await client.responses.create(
                    model=MODEL, input="hi", max_output_tokens=12, stream=True
                )
                async with events:
                    async for event in events:
                        seen += event.type == "response.output_text.delta"
        else:
            llm: Any = fairstream.instrument(
                ChatOpenAI(
                    base_url=base_url,
                    api_key="k",
                    model=MODEL,
                    max_tokens=12,  # type: ignore[arg-type]
                    max_retries=0,
                    timeout=IDLE,
                ),
                recorder=recorder,
            )
            async for chunk in llm.astream([("user", "hi")]):
                seen += bool(chunk.content)
    except Exception as exc:
        return type(exc).__name__, seen
    return "ok", seen
