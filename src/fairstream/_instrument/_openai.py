"""openai SDK: the traced resources of an instrumented client (built in ``_client.py``),
streams included.

Works whether the SDK runs on httpx (openai 1.x/2.x) or httpx2 (3.x): it only touches
the SDK's public objects (and, for wire stamps, the response's ``aiter_bytes``). Streaming
calls get ``stream_options={"include_usage": True}`` unless the caller passed
``stream_options`` (then tokens may be counted, ``estimated``).

Traced: ``chat.completions.create`` / ``parse`` (also through ``with_raw_response``),
``chat.completions.stream``, ``beta.chat.completions.stream``, ``completions.create`` and the
Responses API (``responses.create`` / ``parse`` / ``stream``, in ``_responses.py``);
each is routed through the client's dispatcher when it has one. Everything else is the
SDK's own.

Rule 1: the trace is finished exactly once: exhaustion, error, cancellation, close,
        ``async with`` exit, or (last resort) garbage collection of an abandoned stream.
Rule 2: the caller sees the SDK's own exceptions, untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar

import anyio

from .._attribution import CURRENT
from .._builder import TraceBuilder
from .._recorder import Recorder
from ._decode import sdk_chunk
from ._finish import OnIncomplete, end_stream
from ._stamp import stamp_response

__all__ = [
    "InstrumentedStream",
    "TracedCompletions",
    "Settings",
]


class _Forward:
    """Forwards unknown attributes to the wrapped object."""

    _inner: Any

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@dataclass(frozen=True, slots=True)
class Settings:
    """What every traced call of one instrumented client shares."""

    recorder: Recorder
    label: str | None
    family: str = "openai"  # the client family named in traces
    ask_usage: bool = True  # add include_usage to streams that do not say
    dispatcher: Any = None  # route every call through this Dispatcher
    on_incomplete: OnIncomplete = "raise"  # a stream cut without finish_reason: raise or record
    base_url: str | None = None  # filled in from the client


class _Namespace(_Forward):
    """An SDK namespace object with some attributes replaced."""

    def __init__(self, inner: Any, **replaced: Any) -> None:
        self._inner = inner
        self.__dict__.update(replaced)


class TracedCompletions(_Forward):
    """Stands in for the SDK's ``chat.completions`` (or ``completions``): calls traced."""

    max_keys: tuple[str, ...] = ("max_completion_tokens", "max_tokens")  # the length asked
    asks_usage = True  # streams ask for the usage chunk (``stream_options``)
    # what a stream, an ``async with`` stream and a whole answer become (set at the end of the
    # module, below their definitions; the Responses API's resource sets its own)
    stream_class: ClassVar[type[InstrumentedStream]]
    manager_class: ClassVar[type[_TracedStreamManager]]

    def __init__(self, completions: Any, settings: Settings) -> None:
        self._inner = completions
        self._settings = settings

    def _max_tokens(self, kwargs: dict[str, Any]) -> Any:
        return next((kwargs[k] for k in self.max_keys if k in kwargs), None)

    def begin(self, kwargs: dict[str, Any]) -> TraceBuilder:
        """Start the trace of a call made with ``kwargs`` (asks for usage on streams)."""
        st = self._settings
        asks = self.asks_usage and st.ask_usage
        if kwargs.get("stream") and asks and "stream_options" not in kwargs:
            kwargs["stream_options"] = {"include_usage": True}
        max_tokens = self._max_tokens(kwargs)
        builder = st.recorder.start(
            client=st.family,
            model=kwargs.get("model"),
            base_url=st.base_url,
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
            label=st.label,
        )
        builder.mark_sent()
        return builder

    async def begin_routed(self, kwargs: dict[str, Any]) -> TraceBuilder:
        """:meth:`begin`, after waiting for a slot of the client's dispatcher (if it has one
        and the call is not already inside a submission); the slot is given back when the
        call's trace ends."""
        st = self._settings
        if st.dispatcher is None or CURRENT.get() is not None:
            return self.begin(kwargs)
        job = await st.dispatcher._acquire_for_trace(self._max_tokens(kwargs), st.label)
        token = CURRENT.set(job)
        try:
            return self.begin(kwargs)
        finally:
            CURRENT.reset(token)

    async def create(self, **kwargs: Any) -> Any:
        builder = await self.begin_routed(kwargs)
        result = await _call(builder, self._inner.create, kwargs)
        if kwargs.get("stream"):
            return self.stream_class(result, builder, self._settings.on_incomplete)
        return self.whole(builder, result)

    async def parse(self, **kwargs: Any) -> Any:
        builder = await self.begin_routed(kwargs)
        return self.whole(builder, await _call(builder, self._inner.parse, kwargs))

    def whole(self, builder: TraceBuilder, result: Any) -> Any:
        """A call answered whole (not streamed) into its trace, then finished."""
        return _whole(builder, result)

    def stream(self, **kwargs: Any) -> _TracedStreamManager:
        """``.stream(...)``: the SDK's event stream (``async with``), traced."""
        return self.manager_class(self._inner.stream(**kwargs), self, kwargs)

    @property
    def with_raw_response(self) -> _TracedRaw:
        return _TracedRaw(self)


class _TracedRaw(_Forward):
    """``completions.with_raw_response``: the raw response back, the call traced."""

    def __init__(self, owner: TracedCompletions) -> None:
        self._owner = owner
        self._inner = owner._inner.with_raw_response

    async def create(self, **kwargs: Any) -> Any:
        builder = await self._owner.begin_routed(kwargs)
        raw = await _call(builder, self._inner.create, kwargs)
        if kwargs.get("stream"):
            stream = InstrumentedStream(raw.parse(), builder, self._owner._settings.on_incomplete)
            return _RawWith(raw, stream)
        _whole(builder, raw.parse())
        return raw

    async def parse(self, **kwargs: Any) -> Any:
        builder = await self._owner.begin_routed(kwargs)
        raw = await _call(builder, self._inner.parse, kwargs)
        _whole(builder, raw.parse())
        return raw


class _RawWith(_Forward):
    """A raw response whose ``parse()`` gives the traced stream."""

    def __init__(self, raw: Any, parsed: Any) -> None:
        self._inner = raw
        self._parsed = parsed

    def parse(self, **kwargs: Any) -> Any:
        return self._parsed


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


def _whole(builder: TraceBuilder, result: Any) -> Any:
    """A non-streamed answer: no chunks, but usage, finish reason and id; then finished."""
    builder.response_id = getattr(result, "id", None)
    builder.response_model = getattr(result, "model", None)
    usage = getattr(result, "usage", None)
    if usage is not None:
        builder.chunk_usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
    choices = getattr(result, "choices", None) or []
    if choices:
        builder.finish_seen(choices[0].finish_reason)
    builder.finish()
    return result


class _Finishing:
    """Pulling and closing rules shared by the traced streams."""

    _arrivals: Any

    def __init__(
        self, stream: Any, builder: TraceBuilder, on_incomplete: OnIncomplete, response: Any
    ) -> None:
        self._inner = stream
        self._builder = builder
        self._closed = False
        self._on_incomplete = on_incomplete
        self._arrivals = stamp_response(response)

    async def _pull(self) -> Any:
        """The inner stream's next item; its end or failure finishes the trace."""
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            await self._ended()
            raise
        except BaseException as exc:
            await self._failed(exc)
            raise

    async def _ended(self) -> None:
        """The server ended the stream: complete, or incomplete (then raised, by default)."""
        cut = end_stream(self._builder, "ended", on_incomplete=self._on_incomplete)
        if cut is not None:
            await self._close_quietly()
            raise cut from None

    async def _failed(self, exc: BaseException) -> None:
        end_stream(self._builder, "failed", exc)
        await self._close_quietly()

    async def _close_quietly(self) -> None:
        """Close the inner stream's connection, even while being cancelled."""
        if self._closed:
            return
        self._closed = True
        close = getattr(self._inner, "close", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()

    @property
    def trace(self) -> Any:
        """The finished trace, or None while the stream runs."""
        return self._builder.finished_trace

    def _end_early(self) -> None:
        end_stream(self._builder, "closed")

    def __del__(self) -> None:
        end_stream(self._builder, "abandoned")


class InstrumentedStream(_Finishing, _Forward):
    """The SDK's ``AsyncStream``, with every chunk stamped on arrival."""

    def __init__(
        self, stream: Any, builder: TraceBuilder, on_incomplete: OnIncomplete = "raise"
    ) -> None:
        super().__init__(stream, builder, on_incomplete, getattr(stream, "response", None))
        # the SDK stream's own iterator when it has one: its ``__anext__`` only awaits that,
        # a coroutine frame per chunk for nothing
        self._next = getattr(getattr(stream, "_iterator", stream), "__anext__", stream.__anext__)

    def __aiter__(self) -> InstrumentedStream:
        return self

    async def __anext__(self) -> Any:
        # The hot path: ``_pull`` written out (one frame less per chunk).
        try:
            chunk = await self._next()
        except StopAsyncIteration:
            await self._ended()
            raise
        except BaseException as exc:
            await self._failed(exc)
            raise
        arrivals = self._arrivals
        t = arrivals.popleft() if arrivals else None
        b = self._builder
        if b.plain and t is not None:  # the fast lane: a content chunk, nothing else on it
            choices = chunk.choices
            if choices and chunk.usage is None:
                choice = choices[0]
                try:
                    text = choice.delta.content
                except AttributeError:  # a legacy completions choice
                    text = None
                if text and choice.finish_reason is None:
                    b.add_time(t)
                    b.add_chars(len(text))
                    return chunk
        sdk_chunk(b, chunk, t)
        return chunk

    async def close(self) -> None:
        """Close the connection; an unfinished trace ends ``cancelled`` (closed by caller)."""
        self._end_early()
        await self._close_quietly()

    async def __aenter__(self) -> InstrumentedStream:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if ev is not None:
            end_stream(self._builder, "failed", ev)
        await self.close()


class _TracedBetaCompletions(_Forward):
    """``beta.chat.completions``: ``stream(...)`` (structured output, streamed) traced."""

    def __init__(self, inner: Any, traced: TracedCompletions) -> None:
        self._inner = inner
        self._traced = traced

    def stream(self, **kwargs: Any) -> _TracedStreamManager:
        return _TracedStreamManager(self._inner.stream(**kwargs), self._traced, kwargs)


class _TracedStreamManager(_Forward):
    """The SDK's stream manager; entering it gives a traced event stream."""

    def __init__(self, manager: Any, traced: TracedCompletions, kwargs: dict[str, Any]) -> None:
        self._inner = manager
        self._traced = traced
        self._kwargs = kwargs
        self._builder: TraceBuilder | None = None

    async def __aenter__(self) -> Any:
        # the request goes out here, so here is where it waits for a dispatcher slot
        self._builder = await self._traced.begin_routed({**self._kwargs, "stream": True})
        try:
            stream = await self._inner.__aenter__()
        except BaseException as exc:
            self._builder.status_code = getattr(exc, "status_code", None)
            self._builder.finish(error=exc)
            raise
        self._builder.mark_headers(200)
        return self._events(stream, self._builder, self._traced._settings.on_incomplete)

    def _events(self, stream: Any, builder: TraceBuilder, on_incomplete: OnIncomplete) -> Any:
        return _TracedEvents(stream, builder, on_incomplete)

    async def __aexit__(self, *exc: Any) -> Any:
        ev = exc[1] if len(exc) > 1 else None
        if self._builder is not None:
            end_stream(self._builder, "failed" if ev is not None else "closed", ev)
        return await self._inner.__aexit__(*exc)


class _TracedEvents(_Finishing, _Forward):
    """The SDK's event stream; ``chunk`` events are recorded."""

    def __init__(
        self, stream: Any, builder: TraceBuilder, on_incomplete: OnIncomplete = "raise"
    ) -> None:
        raw = getattr(stream, "_raw_stream", None)
        super().__init__(stream, builder, on_incomplete, getattr(raw, "response", None))

    def __aiter__(self) -> _TracedEvents:
        return self

    async def until_done(self) -> _TracedEvents:
        """Read the stream to its end through the trace (the SDK's own would bypass it)."""
        async for _ in self:
            pass
        return self

    async def get_final_completion(self) -> Any:
        await self.until_done()
        return await self._inner.get_final_completion()

    async def __anext__(self) -> Any:
        event = await self._pull()
        if getattr(event, "type", None) == "chunk":
            arrivals = self._arrivals
            sdk_chunk(self._builder, event.chunk, arrivals.popleft() if arrivals else None)
        return event


TracedCompletions.stream_class = InstrumentedStream
TracedCompletions.manager_class = _TracedStreamManager
