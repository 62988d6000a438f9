"""One instrumented client per family, shared by concurrent streams as an app would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

import fairstream
from fairstream import Recorder, StreamClient

FAMILIES = ("openai", "langchain", "httpx")
MODEL = "fairstream-ref"


def make_llm(base_url: str, recorder: Recorder, **kw: Any) -> Any:
    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="k", max_retries=0, **kw)  # type: ignore[arg-type]
    return fairstream.instrument(llm, recorder=recorder)


class FamilyClient:
    """``await client.stream(max_tokens, ...)`` consumes one request to its end."""

    def __init__(self, family: str, handle: Any, usage: bool) -> None:
        self.family = family
        self.handle = handle
        self.usage = usage

    async def stream(
        self,
        max_tokens: int,
        *,
        prompt: str = "hi",
        extra: dict[str, Any] | None = None,
        request_id: str | None = None,
        into: list[str] | None = None,
    ) -> list[str]:
        """The content pieces the caller got (also appended to ``into`` as they come)."""
        body_extra: dict[str, Any] = {"ignore_eos": True, **(extra or {})}
        pieces: list[str] = [] if into is None else into
        messages = [{"role": "user", "content": prompt}]
        if self.family == "openai":
            kwargs: dict[str, Any] = {}
            if not self.usage:
                kwargs["stream_options"] = None
            elif "stream_options" in body_extra:
                kwargs["stream_options"] = body_extra.pop("stream_options")
            with fairstream.tag(request_id=request_id):
                stream = await self.handle.chat.completions.create(
                    model=MODEL,
                    messages=messages,
                    max_tokens=max_tokens,
                    stream=True,
                    extra_body=body_extra,
                    **kwargs,
                )
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    pieces.append(chunk.choices[0].delta.content)
        elif self.family == "langchain":
            with fairstream.tag(request_id=request_id):
                async for msg in self.handle.astream(
                    [("system", "p"), ("human", prompt)],
                    max_tokens=max_tokens,
                    extra_body=body_extra,
                ):
                    if msg.content:
                        pieces.append(str(msg.content))
        else:
            async with self.handle.chat(
                model=MODEL,
                messages=messages,
                max_tokens=max_tokens,
                include_usage=self.usage,
                request_id=request_id,
                **body_extra,
            ) as stream:
                async for chunk in stream:
                    if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                        pieces.append(chunk["choices"][0]["delta"]["content"])
        return pieces


@asynccontextmanager
async def family_client(
    family: str, base_url: str, recorder: Recorder, *, usage: bool = True
) -> AsyncIterator[FamilyClient]:
    if family == "openai":
        async with AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0) as raw:
            yield FamilyClient(family, fairstream.instrument(raw, recorder=recorder), usage)
    elif family == "langchain":
        yield FamilyClient(family, make_llm(base_url, recorder, stream_usage=usage), usage)
    else:
        async with StreamClient(base_url, recorder=recorder) as client:
            yield FamilyClient(family, client, usage)


async def consume(
    family: str,
    base_url: str,
    recorder: Recorder,
    max_tokens: int,
    *,
    usage: bool = True,
    **kw: Any,
) -> list[str]:
    """One request through a fresh client of ``family``."""
    async with family_client(family, base_url, recorder, usage=usage) as client:
        return await client.stream(max_tokens, **kw)
