"""The one decoder from an OpenAI stream event to trace updates, for every client path.

An event reaches us in one of two shapes: the openai SDK's parsed objects (the SDK proxy,
LangChain models traced at the SDK, ``beta.chat.completions.stream``) or the JSON dict of
a ``data:`` line (``StreamClient``). Each shape has a reader below that takes out the same
four things (text, finish reason, response id, usage) and hands them to
:meth:`TraceBuilder.record`, where what they mean for the trace is decided once.

Rule: a reader looks at the first choice only (``n > 1`` streams are traced as choice 0).
"""

from __future__ import annotations

from typing import Any

from .._builder import TraceBuilder

__all__ = ["sdk_chunk", "wire_chunk"]


def sdk_chunk(b: TraceBuilder, chunk: Any, t: float | None = None) -> None:
    """An SDK ``ChatCompletionChunk`` (or legacy ``Completion``) into the trace (hot path)."""
    choices = chunk.choices
    if choices:
        choice = choices[0]
        try:
            text = choice.delta.content
        except AttributeError:  # a legacy completions choice: no delta, a text
            text = getattr(choice, "text", None)
        reason = choice.finish_reason
    else:
        text = reason = None
    u = chunk.usage
    b.record(
        text,
        t,
        reason,
        chunk.id,
        None if u is None else (u.prompt_tokens, u.completion_tokens, u.total_tokens),
        chunk.model,
    )


def wire_chunk(b: TraceBuilder, chunk: dict[str, Any], t: float | None = None) -> None:
    """A chunk as parsed from the wire (``json.loads`` of a ``data:`` line)."""
    first: dict[str, Any] = (chunk.get("choices") or ({},))[0]
    delta = first.get("delta")
    u = chunk.get("usage")
    b.record(
        delta.get("content") if delta else first.get("text"),
        t,
        first.get("finish_reason"),
        chunk.get("id"),
        (u.get("prompt_tokens"), u.get("completion_tokens"), u.get("total_tokens")) if u else None,
        chunk.get("model"),
    )
