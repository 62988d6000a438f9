"""The reference server's stream bytes without a socket: an in-memory HTTP client that answers
every streamed chat or Responses call with what the server would send, one SSE event a read.

For measuring the client alone (``benchmarks/overhead*.py``, the per-chunk call guard): the
bytes, the SDK's parsing and the instrumentation are real; the noise of a live socket, whose
reads batch a varying number of events, is gone.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from ._lengths import TokenText
from ._responses import ResponseEvents
from ._wire import DONE, ChunkFormat

__all__ = ["canned_client", "chat_events", "http_module", "response_events"]

MODEL = "fairstream-ref"


def chat_events(n: int, usage: bool = True) -> AsyncIterator[bytes]:
    """A chat completion of ``n`` content chunks: role, contents, finish, usage, ``[DONE]``."""
    fmt, words = ChunkFormat("chat", "chatcmpl-canned", 0, MODEL), TokenText()

    async def events() -> AsyncIterator[bytes]:
        yield fmt.role()
        for i in range(n):
            yield fmt.content(words.json_word(0, i))
        yield fmt.finish("length")
        if usage:
            yield fmt.usage(4, n)
        yield DONE

    return events()


def response_events(n: int) -> AsyncIterator[bytes]:
    """A streamed response of ``n`` text deltas, its opening and closing events one a read."""
    shape = SimpleNamespace(max_tokens=n, prompt_tokens=4)
    ev = ResponseEvents("resp_canned", 0, MODEL, shape)  # type: ignore[arg-type]
    words = TokenText()

    async def events() -> AsyncIterator[bytes]:
        for head in ev.start().split(b"\n\n")[:-1]:
            yield head + b"\n\n"
        for i in range(n):
            yield ev.delta(words.json_word(0, i))
        text = "".join(words.word(0, i) for i in range(n))
        for tail in ev.finish(text, "length", 4, n).split(b"\n\n")[:-1]:
            yield tail + b"\n\n"

    return events()


def http_module() -> Any:
    """httpx2 (openai 3.x runs on it) when installed, else httpx."""
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


def canned_client(module: Any | None = None) -> Any:
    """An ``AsyncClient`` of ``module`` (httpx or httpx2; default :func:`http_module`) whose
    every POST is answered from the canned events, as long as the body asks for."""
    http = module or http_module()

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        if request.url.path.endswith("/responses"):
            content = response_events(int(body.get("max_output_tokens") or 16))
        else:
            n = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            content = chat_events(n, usage)
        headers = {"content-type": "text/event-stream"}
        return http.Response(200, headers=headers, content=content)

    return http.AsyncClient(transport=http.MockTransport(handler), timeout=60)
