"""openai SDK: a client proxy whose ``create`` returns a traced proxy of the SDK's stream.

Works whether the SDK runs on httpx (openai 1.x/2.x) or httpx2 (3.x): it only touches
the SDK's public objects. Streaming calls get ``stream_options={"include_usage": True}``
unless the caller passed ``stream_options`` (then tokens may be counted, ``estimated``).

Rule 1: the trace is finished exactly once: exhaustion, error, cancellation, close,
        ``async with`` exit, or (last resort) garbage collection of an abandoned stream.
Rule 2: the caller sees the SDK's own exceptions, untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Protocol

import anyio

from .._builder import TraceBuilder
from .._recorder import Recorder
from ._stamp import stamp_response

__all__ = ["InstrumentedStream", "TracedCompletions", "instrument_openai"]


class _Forward:
    """Forwards unknown attributes to the wrapped object."""

    _inner: Any

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def instrument_openai(client: Any, recorder: Recorder, label: str | None) -> Any:
    if not hasattr(client, "chat") or not hasattr(client, "base_url"):
        raise TypeError(f"{type(client).__qualname__} is not an openai client")
    if not type(client).__name__.startswith("Async"):
        raise TypeError("fairstream instruments openai.AsyncOpenAI (the async client)")
    return InstrumentedAsyncOpenAI(client, recorder, label)


class InstrumentedAsyncOpenAI(_Forward):
    """``AsyncOpenAI`` with traced ``chat.completions.create`` and ``completions.create``."""

    def __init__(self, client: Any, recorder: Recorder, label: str | None) -> None:
        self._inner = client
        self.fairstream_recorder = recorder
        self._label = label
        base_url = str(client.base_url).rstrip("/")
        self.chat = _Chat(
            client.chat,
            TracedCompletions(client.chat.completions, recorder, label=label, base_url=base_url),
        )
        self.completions = TracedCompletions(
            client.completions, recorder, label=label, base_url=base_url
        )

    def with_options(self, **options: Any) -> InstrumentedAsyncOpenAI:
        return InstrumentedAsyncOpenAI(
            self._inner.with_options(**options), self.fairstream_recorder, self._label
        )

    async def __aenter__(self) -> InstrumentedAsyncOpenAI:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._inner.__aexit__(*exc)


class _Chat(_Forward):
    def __init__(self, chat: Any, completions: TracedCompletions) -> None:
        self._inner = chat
        self.completions = completions


class TracedCompletions(_Forward):
    """Stands in for the SDK's ``chat.completions`` (or ``completions``): every call traced.

    ``create`` (streamed or not) and ``parse`` (structured output) are recorded; anything
    else is the SDK's own attribute. ``client`` names the family in the trace.
    """

    def __init__(
        self,
        completions: Any,
        recorder: Recorder,
        *,
        label: str | None,
        base_url: str | None,
        client: str = "openai",
        hooks: StreamHooks | None = None,
        ask_usage: bool = True,
    ) -> None:
        self._inner = completions
        self._recorder = recorder
        self._label = label
        self._base_url = base_url
        self._client = client
        self._hooks = hooks
        self._ask_usage = ask_usage

    def _start(self, kwargs: dict[str, Any]) -> TraceBuilder:
        max_tokens = kwargs.get("max_completion_tokens", kwargs.get("max_tokens"))
        builder = self._recorder.start(
            client=self._client,
            model=kwargs.get("model"),
            base_url=self._base_url,
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
            label=self._label,
        )
        builder.mark_sent()
        return builder

    async def create(self, **kwargs: Any) -> Any:
        streaming = bool(kwargs.get("stream"))
        if streaming and self._ask_usage and "stream_options" not in kwargs:
            kwargs["stream_options"] = {"include_usage": True}
        adopted = self._hooks.adopt() if streaming and self._hooks is not None else None
        builder = adopted[0] if adopted is not None else self._start(kwargs)
        result = await _call(builder, self._inner.create, kwargs)
        if streaming:
            if adopted is None:
                return InstrumentedStream(result, builder)
            set_streaming = adopted[1]
            set_streaming(True)
            return InstrumentedStream(result, builder, on_done=lambda: set_streaming(False))
        _record_whole(builder, result)
        builder.finish()
        return result

    async def parse(self, **kwargs: Any) -> Any:
        builder = self._start(kwargs)
        result = await _call(builder, self._inner.parse, kwargs)
        _record_whole(builder, result)
        builder.finish()
        return result


class StreamHooks(Protocol):
    """How a wrapper around the SDK (LangChain's) takes part in a traced stream."""

    def adopt(self) -> tuple[TraceBuilder, Callable[[bool], None]] | None:
        """The trace its run already started, to be filled in here, and a switch told when
        the traced stream starts (True) and ends (False); None to start a trace here."""


async def _call(builder: TraceBuilder, fn: Callable[..., Awaitable[Any]], kwargs: Any) -> Any:
    """Await the SDK call; an exception finishes the trace and goes on to the caller."""
    try:
        result = await fn(**kwargs)
    except BaseException as exc:
        builder.status_code = getattr(exc, "status_code", None)
        builder.finish(error=exc)
        raise
    builder.mark_headers(200)
    return result


def _record_whole(builder: TraceBuilder, result: Any) -> None:
    """A non-streamed answer: no chunks, but usage, finish reason and id."""
    builder.response_id = getattr(result, "id", None)
    usage = getattr(result, "usage", None)
    if usage is not None:
        builder.chunk_usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
    choices = getattr(result, "choices", None) or []
    if choices:
        builder.finish_seen(choices[0].finish_reason)


class InstrumentedStream(_Forward):
    """The SDK's ``AsyncStream``, with every chunk stamped on arrival."""

    def __init__(
        self, stream: Any, builder: TraceBuilder, on_done: Callable[[], None] | None = None
    ) -> None:
        self._inner = stream
        self._builder = builder
        self._closed = False
        self._on_done = on_done
        self._arrivals = stamp_response(getattr(stream, "response", None))

    def _finish(self, *args: Any, **kwargs: Any) -> None:
        self._builder.finish(*args, **kwargs)
        on_done, self._on_done = self._on_done, None
        if on_done is not None:
            on_done()

    @property
    def trace(self) -> Any:
        """The finished trace, or None while the stream runs."""
        return self._builder._finished_trace

    def __aiter__(self) -> InstrumentedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            chunk = await self._inner.__anext__()
        except StopAsyncIteration:
            self._finish()
            raise
        except BaseException as exc:
            self._finish(error=exc)
            await self._close_quietly()
            raise
        b = self._builder
        arrivals = self._arrivals
        t = arrivals.popleft() if arrivals else None
        choices = chunk.choices
        if choices:
            choice = choices[0]
            delta = getattr(choice, "delta", None)
            b.chunk(delta.content if delta is not None else getattr(choice, "text", None), t)
            if choice.finish_reason:
                b.finish_seen(choice.finish_reason)
        else:
            b.chunk(None, t)
        if b.response_id is None:
            b.response_id = chunk.id
        usage = chunk.usage
        if usage is not None:
            b.chunk_usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
        return chunk

    async def close(self) -> None:
        """Close the connection; an unfinished trace ends ``cancelled`` (closed by caller)."""
        if not self._builder.done:
            if self._builder.finish_reason:
                self._finish("ok")
            else:
                self._finish("cancelled", ClosedByCaller())
        await self._close_quietly()

    async def _close_quietly(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            await self._inner.close()

    async def __aenter__(self) -> InstrumentedStream:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if ev is not None and not self._builder.done:
            self._finish(error=ev)
        await self.close()

    def __del__(self) -> None:
        if not self._builder.done:
            self._finish("cancelled", StreamAbandoned())


class ClosedByCaller(Exception):
    """The caller closed the stream before it ended."""

    def __str__(self) -> str:
        return "stream closed by the caller before it ended"


class StreamAbandoned(Exception):
    """The stream object was dropped unfinished and unclosed."""

    def __str__(self) -> str:
        return "stream dropped before it ended, without close()"
