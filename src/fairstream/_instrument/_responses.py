"""openai SDK, the Responses API: ``client.responses.create(...)`` and ``.stream(...)``, traced
like chat completions.

A streamed response is typed events. Every event is a chunk of the trace (arrival time, from
the wire stamps); ``response.output_text.delta`` carries the content; ``response.created``
names the response and model; ``response.completed`` (or OpenAI's ``response.incomplete``)
carries the usage and ends the answer: status ``completed`` is finish reason ``stop``,
``incomplete`` for ``max_output_tokens`` is ``length``. A stream that ends without one of
them is incomplete, as a chat stream without a ``finish_reason`` is.

Routed through the client's dispatcher like chat calls; ``max_output_tokens`` is the expected
length. Nothing is added to the request (the Responses API always reports usage).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._finish import OnIncomplete
from ._openai import (
    InstrumentedStream,
    TracedCompletions,
    _Finishing,
    _Forward,
    _TracedStreamManager,
)

if TYPE_CHECKING:
    from .._builder import TraceBuilder

__all__ = ["InstrumentedResponseStream", "TracedResponses", "response_event"]

_ENDS = ("response.completed", "response.incomplete", "response.failed")


def response_event(b: TraceBuilder, event: Any, t: float | None = None) -> None:
    """One Responses API stream event into the trace (hot path: text deltas)."""
    kind = event.type
    if kind == "response.output_text.delta":
        b.record(event.delta, t)
        return
    response = getattr(event, "response", None)
    if response is None:
        b.record(None, t)
        return
    reason = usage = None
    if kind in _ENDS:
        reason = finish_reason(response)
        u = response.usage
        if u is not None:
            usage = (u.input_tokens, u.output_tokens, u.total_tokens)
    b.record(None, t, reason, response.id, usage, response.model)


def finish_reason(response: Any) -> str | None:
    """A response's status as a chat finish reason: completed is ``stop``; incomplete for
    ``max_output_tokens`` is ``length`` (its own reason otherwise); failed or running: none."""
    status = getattr(response, "status", None)
    if status == "completed":
        return "stop"
    if status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        why = getattr(details, "reason", None) or "incomplete"
        return "length" if why == "max_output_tokens" else str(why)
    return None


def _whole(builder: TraceBuilder, result: Any) -> Any:
    """A response that was not streamed: id, model, usage, status; then finished."""
    builder.response_id = getattr(result, "id", None)
    builder.response_model = getattr(result, "model", None)
    u = getattr(result, "usage", None)
    if u is not None:
        builder.chunk_usage(u.input_tokens, u.output_tokens, u.total_tokens)
    builder.finish_seen(finish_reason(result))
    builder.finish()
    return result


class TracedResponses(TracedCompletions):
    """Stands in for the SDK's ``responses``: ``create``, ``parse`` and ``stream`` traced (the
    calls are :class:`TracedCompletions`'; the streams and whole answers are this module's)."""

    max_keys = ("max_output_tokens",)
    asks_usage = False

    def whole(self, builder: TraceBuilder, result: Any) -> Any:
        return _whole(builder, result)

    @property
    def with_raw_response(self) -> Any:
        return self._inner.with_raw_response  # not traced (docs/instrument-openai.md)


class InstrumentedResponseStream(InstrumentedStream):
    """The SDK's ``AsyncStream`` of response events, each stamped on arrival."""

    async def __anext__(self) -> Any:
        b = self._builder
        try:
            event = await self._next()  # the SDK's own iterator (InstrumentedStream)
        except StopAsyncIteration:
            await self._ended()
            raise
        except BaseException as exc:
            await self._failed(exc)
            raise
        arrivals = self._arrivals
        t = arrivals.popleft() if arrivals else None
        if b.plain and t is not None and event.type == "response.output_text.delta":
            text = event.delta  # the fast lane: a text delta is its time and size
            if text:
                b.add_time(t)
                b.add_chars(len(text))
                return event
        response_event(b, event, t)
        return event


class _ResponseStreamManager(_TracedStreamManager):
    def _events(self, stream: Any, builder: TraceBuilder, on_incomplete: OnIncomplete) -> Any:
        return _ResponseEvents(stream, builder, on_incomplete)


class _ResponseEvents(_Finishing, _Forward):
    """The SDK's ``AsyncResponseStream``: every event recorded."""

    def __init__(self, stream: Any, builder: TraceBuilder, on_incomplete: OnIncomplete) -> None:
        raw = getattr(stream, "_raw_stream", None)
        super().__init__(stream, builder, on_incomplete, getattr(raw, "response", None))

    def __aiter__(self) -> _ResponseEvents:
        return self

    async def until_done(self) -> _ResponseEvents:
        """Read the stream to its end through the trace (the SDK's own would bypass it)."""
        async for _ in self:
            pass
        return self

    async def get_final_response(self) -> Any:
        await self.until_done()
        return await self._inner.get_final_response()

    async def close(self) -> None:
        self._end_early()
        await self._close_quietly()

    async def __anext__(self) -> Any:
        event = await self._pull()
        arrivals = self._arrivals
        response_event(self._builder, event, arrivals.popleft() if arrivals else None)
        return event


TracedResponses.stream_class = InstrumentedResponseStream
TracedResponses.manager_class = _ResponseStreamManager
