"""One streamed chat request through each client family, reduced to the same record."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import httpx
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

FAMILIES = ("openai", "langchain", "httpx")
MODEL = "fairstream-ref"


@dataclass
class Streamed:
    """What a client saw: arrival times (absolute), content pieces, usage, finish reason."""

    times: list[float] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    completion_tokens: int | None = None
    finish_reason: str | None = None

    @property
    def end(self) -> float:
        return self.times[-1]


async def stream_chat(family: str, base_url: str, max_tokens: int, prompt: str = "hi") -> Streamed:
    out = Streamed()
    if family == "openai":
        async with AsyncOpenAI(base_url=base_url, api_key="k") as client:
            stream = await client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=max_tokens,
                stream=True,
                stream_options={"include_usage": True},
                extra_body={"ignore_eos": True},
            )
            async for chunk in stream:
                out.times.append(time.perf_counter())
                if chunk.usage is not None:
                    out.completion_tokens = chunk.usage.completion_tokens
                for choice in chunk.choices:
                    if choice.delta.content:
                        out.contents.append(choice.delta.content)
                    if choice.finish_reason:
                        out.finish_reason = choice.finish_reason
    elif family == "langchain":
        llm = ChatOpenAI(
            model=MODEL,
            base_url=base_url,
            api_key="k",  # type: ignore[arg-type]
            max_tokens=max_tokens,  # type: ignore[call-arg]
            stream_usage=True,
            extra_body={"ignore_eos": True},
        )
        async for msg in llm.astream([("human", prompt)]):
            out.times.append(time.perf_counter())
            if msg.content:
                out.contents.append(str(msg.content))
            if msg.usage_metadata:
                out.completion_tokens = msg.usage_metadata["output_tokens"]
            reason = msg.response_metadata.get("finish_reason")
            if reason:
                out.finish_reason = reason
    else:
        body = {
            "model": MODEL,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "ignore_eos": True,
        }
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", base_url + "/chat/completions", json=body) as resp,
        ):
            resp.raise_for_status()
            async for line in resp.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                out.times.append(time.perf_counter())
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    out.completion_tokens = chunk["usage"]["completion_tokens"]
                for choice in chunk["choices"]:
                    if choice["delta"].get("content"):
                        out.contents.append(choice["delta"]["content"])
                    if choice.get("finish_reason"):
                        out.finish_reason = choice["finish_reason"]
    return out
