"""Drop-in instrumentation for the three client families: openai SDK, LangChain, plain httpx."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from .._recorder import Recorder, default_recorder
from ._finish import OnIncomplete

__all__ = ["default_recorder", "instrument"]

T = TypeVar("T")


def instrument(
    target: T,
    *,
    recorder: Recorder | None = None,
    label: str | None = None,
    dispatcher: Any = None,
    on_incomplete: OnIncomplete = "raise",
) -> T:
    """Wrap an ``AsyncOpenAI`` client or a LangChain chat model so every call leaves a trace.

    The result has the type the caller relies on: a LangChain model stays a
    ``BaseChatModel`` of its own class; an ``AsyncOpenAI`` client (``AsyncAzureOpenAI``, a
    subclass) becomes a copy sharing its connection pool, still an instance of the client's
    class, whose ``chat.completions`` and ``completions`` calls are traced. With
    ``dispatcher`` every call waits for a slot of that :class:`~fairstream.Dispatcher` first
    (openai SDK clients and openai-backed models).

    A stream that ends without a ``finish_reason`` (cut by a proxy or a dying worker) raises
    :class:`~fairstream.IncompleteStreamError` after its last chunk, where the SDK would end
    quietly; ``on_incomplete="record"`` keeps the SDK's quiet ending and only marks the
    trace ``error`` / ``IncompleteStream``.
    """
    if on_incomplete not in ("raise", "record"):
        raise ValueError(f"on_incomplete must be 'raise' or 'record', not {on_incomplete!r}")
    rec = recorder or default_recorder()
    if any(c.__module__.startswith("openai") for c in type(target).__mro__[:-1]):
        from ._client import instrument_openai

        return cast(T, instrument_openai(target, rec, label, dispatcher, on_incomplete))
    if _is_langchain_model(target):
        from ._langchain import instrument_langchain

        return cast(T, instrument_langchain(target, rec, label, dispatcher, on_incomplete))
    raise TypeError(
        f"don't know how to instrument {type(target).__qualname__}: expected openai.AsyncOpenAI "
        "or a LangChain BaseChatModel (for plain HTTP use fairstream.StreamClient)"
    )


def _is_langchain_model(target: Any) -> bool:
    for cls in type(target).__mro__:
        if cls.__name__ == "BaseChatModel" and cls.__module__.startswith("langchain_core"):
            return True
    return False
