"""``StreamClient``: a lean OpenAI-compatible streaming client on httpx, traced.

It is what the probe and the benchmarks use: one JSON parse and one trace event per
chunk, SSE framing by ``httpx-sse``. Failures are translated into fairstream's exception
tree (``ServerError``, ``TransportError``, ``StreamProtocolError``), each carrying the
trace of what arrived before.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import anyio
import httpx
from httpx_sse import EventSource

from .._builder import TraceBuilder
from .._errors import (
    ConnectError,
    LifecycleError,
    ServerError,
    StreamError,
    StreamProtocolError,
    TransportError,
    parse_retry_after,
)
from .._recorder import Recorder, default_recorder
from .._trace import StreamTrace
from ._decode import wire_chunk
from ._finish import end_stream

__all__ = ["ChatStream", "StreamClient"]

_TIMEOUT = httpx.Timeout(30.0, read=60.0)  # read: the longest silence between two chunks
_NOT_CONNECTED = (httpx.ConnectError, httpx.ConnectTimeout)  # nothing reached the server


class StreamClient:
    """Streams chat completions from an OpenAI-compatible ``base_url`` (``.../v1``)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        recorder: Recorder | None = None,
        label: str | None = None,
        timeout: float | httpx.Timeout = _TIMEOUT,
        http: httpx.AsyncClient | None = None,
        max_connections: int = 1000,
    ) -> None:
        if recorder is None:
            recorder = default_recorder()
        self.base_url = base_url.rstrip("/")
        self.recorder = recorder
        self.label = label
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._own = http is None
        self.http = http or httpx.AsyncClient(
            timeout=timeout,
            headers=headers,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=100),
        )
        if http is not None and headers:
            self.http.headers.update(headers)
        self._closed = False

    def chat(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        max_tokens: int | None = None,
        include_usage: bool = True,
        label: str | None = None,
        request_id: str | None = None,
        enqueued: float | None = None,
        **body: Any,
    ) -> ChatStream:
        """An ``async with`` stream of chat chunks (dicts); its ``trace`` is set at the end."""
        if self._closed:
            raise LifecycleError("the StreamClient is closed: make a new one")
        payload: dict[str, Any] = {"model": model, "messages": messages, "stream": True, **body}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if include_usage:
            payload.setdefault("stream_options", {"include_usage": True})
        builder = self.recorder.start(
            client="httpx",
            model=model,
            base_url=self.base_url,
            max_tokens=max_tokens,
            label=label if label is not None else self.label,
            request_id=request_id,
            enqueued=enqueued,
        )
        return ChatStream(self.http, self.base_url + "/chat/completions", payload, builder)

    async def complete(self, **kwargs: Any) -> StreamTrace:
        """Run one streamed chat request to the end and return its trace."""
        async with self.chat(**kwargs) as stream:
            async for _ in stream:
                pass
        assert stream.trace is not None
        return stream.trace

    async def aclose(self) -> None:
        """Close the connections (if the client made them); later requests are refused."""
        self._closed = True
        if self._own:
            await self.http.aclose()

    async def __aenter__(self) -> StreamClient:
        if self._closed:
            raise LifecycleError("the StreamClient is closed: it cannot be entered again")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class ChatStream:
    """One streamed request: ``async with client.chat(...) as s: async for chunk in s``."""

    def __init__(
        self, http: httpx.AsyncClient, url: str, payload: dict[str, Any], builder: TraceBuilder
    ) -> None:
        self._http = http
        self._url = url
        self._payload = payload
        self._builder = builder
        self._response: httpx.Response | None = None
        self._events: AsyncIterator[Any] | None = None

    @property
    def trace(self) -> StreamTrace | None:
        return self._builder.finished_trace

    async def __aenter__(self) -> ChatStream:
        b = self._builder
        request = self._http.build_request("POST", self._url, json=self._payload)
        b.mark_sent()
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            kind = ConnectError if isinstance(exc, _NOT_CONNECTED) else TransportError
            raise self._fail(kind(f"{type(exc).__name__}: {exc}")) from exc
        except BaseException as exc:
            end_stream(b, "failed", exc)
            raise
        b.mark_headers(response.status_code)
        self._response = response
        if response.status_code >= 400:
            try:
                body = await response.aread()
            finally:
                await self._close()
            err = _server_error(response.status_code, body)
            err.retry_after = parse_retry_after(response.headers.get("retry-after"))
            raise self._fail(err)
        self._events = EventSource(response).aiter_sse()
        return self

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        b = self._builder
        if b.done:
            raise StopAsyncIteration
        if self._events is None:
            raise RuntimeError("use 'async with client.chat(...) as stream' before iterating")
        try:
            event = await self._events.__anext__()
        except StopAsyncIteration:  # closed without [DONE]: complete if the finish came
            await self._ended()
            raise
        except httpx.HTTPError as exc:
            raise self._fail(TransportError(f"{type(exc).__name__}: {exc}")) from exc
        except BaseException as exc:
            end_stream(b, "failed", exc)
            await self._close()
            raise
        data = event.data
        if data == "[DONE]":
            await self._ended()
            raise StopAsyncIteration
        try:
            chunk = json.loads(data)
        except ValueError:
            raise self._fail(StreamProtocolError(f"chunk is not JSON: {data[:200]!r}")) from None
        if not isinstance(chunk, dict):
            raise self._fail(StreamProtocolError(f"chunk is not an object: {data[:200]!r}"))
        if "error" in chunk:
            raise self._fail(_server_error(None, data.encode()))
        wire_chunk(b, chunk)
        return chunk

    async def _ended(self) -> None:
        """The server ended the stream: complete if its finish reason came, else raise."""
        cut = end_stream(self._builder, "ended")
        if cut is not None:
            await self._close()
            raise cut from None

    def _fail(self, err: StreamError) -> StreamError:
        end_stream(self._builder, "failed", err)
        err.trace = self._builder.finished_trace
        return err

    async def _close(self) -> None:
        with anyio.CancelScope(shield=True):
            events, self._events = self._events, None
            if events is not None:  # close the SSE generator too: GC would need a task
                with contextlib.suppress(Exception):
                    await events.aclose()  # type: ignore[attr-defined]
            if self._response is not None:
                await self._response.aclose()

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        end_stream(self._builder, "failed" if ev is not None else "closed", ev)
        await self._close()


def _server_error(status: int | None, body: bytes) -> ServerError:
    try:
        parsed = json.loads(body)
        message = parsed["error"]["message"]
    except (ValueError, KeyError, TypeError):
        parsed, message = body[:500].decode("utf-8", "replace"), "server error"
    where = f"HTTP {status}" if status else "in-band error"
    return ServerError(f"{where}: {message}", status, parsed)
