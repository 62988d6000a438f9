"""The instrumented openai client: a copy of the caller's, of a subclass of its class.

``isinstance`` checks (instructor, LangChain, the caller's own) hold for ``AsyncOpenAI``,
``AsyncAzureOpenAI`` and subclasses. The copy (``with_options()``) shares the original's
connection pool; its ``chat``, ``completions``, ``beta`` and ``responses`` resources are the
traced ones of :mod:`._openai` and :mod:`._responses`, and its own copies stay traced. The
original is left as it was.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from .._recorder import Recorder
from ._finish import OnIncomplete
from ._openai import Settings, TracedCompletions, _Namespace, _TracedBetaCompletions
from ._responses import TracedResponses

__all__ = ["instrument_openai", "is_async_openai", "traced_copy"]


def instrument_openai(
    client: Any,
    recorder: Recorder,
    label: str | None,
    dispatcher: Any = None,
    on_incomplete: OnIncomplete = "raise",
) -> Any:
    if not is_async_openai(client):
        if hasattr(client, "chat") and hasattr(client, "base_url"):
            raise TypeError("fairstream instruments openai.AsyncOpenAI (the async client)")
        raise TypeError(f"{type(client).__qualname__} is not an openai client")
    settings = Settings(recorder, label, dispatcher=dispatcher, on_incomplete=on_incomplete)
    return traced_copy(client, settings)


def is_async_openai(client: Any) -> bool:
    import openai

    return isinstance(client, openai.AsyncOpenAI)


def traced_copy(client: Any, settings: Settings) -> Any:
    """A copy of ``client`` (``with_options()``: same connection pool) whose class is a
    subclass of the client's own, so ``isinstance(copy, AsyncOpenAI)`` (or
    ``AsyncAzureOpenAI``, or the caller's subclass) still holds; its completion calls are
    traced. The original is left as it was."""
    copy = client.with_options()
    base: type = getattr(type(copy), "_fairstream_base", type(copy))  # twice: wrap the base
    copy.__class__ = _traced_class(base)
    _attach(copy, settings)
    return copy


def _attach(client: Any, settings: Settings) -> None:
    client._fairstream_settings = replace(settings, base_url=str(client.base_url).rstrip("/"))
    client.fairstream_recorder = settings.recorder


@functools.cache
def _traced_class(base: type) -> type:
    """``base`` with ``chat``, ``completions`` and ``beta`` traced, and copies (``copy``,
    ``with_options``) that stay traced. Named as ``base`` is, so reprs and logs read the same."""

    def resource(name: str) -> Any:
        found = getattr(base, name)
        return found.func if isinstance(found, functools.cached_property) else found.fget

    def chat(self: Any) -> Any:
        inner = resource("chat")(self)
        return _Namespace(inner, completions=TracedCompletions(inner.completions, _settings(self)))

    def completions(self: Any) -> Any:
        return TracedCompletions(resource("completions")(self), _settings(self))

    # the SDK imports its resource modules on first access (``beta`` alone costs ~0.5 s), so
    # these are wrapped only when the caller reaches for them
    def beta(self: Any) -> Any:
        inner = resource("beta")(self)
        if not hasattr(inner, "chat"):
            return inner
        stream = _TracedBetaCompletions(inner.chat.completions, self.chat.completions)
        return _Namespace(inner, chat=_Namespace(inner.chat, completions=stream))

    def copy(self: Any, *args: Any, **options: Any) -> Any:
        new = base.copy(self, *args, **options)  # type: ignore[attr-defined]
        if not isinstance(new, cls):
            new.__class__ = cls
        _attach(new, _settings(self))
        return new

    def responses(self: Any) -> Any:
        return TracedResponses(resource("responses")(self), _settings(self))

    namespace: dict[str, Any] = {
        "__module__": base.__module__,
        "__qualname__": base.__qualname__,
        "__doc__": base.__doc__,
        "_fairstream_base": base,
        "chat": functools.cached_property(chat),
        "completions": functools.cached_property(completions),
        "beta": functools.cached_property(beta),
        "responses": functools.cached_property(responses),
        "copy": copy,
        "with_options": copy,
    }
    cls = type(base.__name__, (base,), namespace)
    return cls


def _settings(client: Any) -> Settings:
    settings: Settings = client._fairstream_settings
    return settings
