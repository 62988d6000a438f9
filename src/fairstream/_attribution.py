"""How an instrumented stream finds the dispatcher submission it runs in (bottom layer).

Rule 1: this module knows nothing of the dispatcher. ``CURRENT`` holds whatever object
        implements :class:`Attributed` (the dispatcher's job) while a submitted function
        runs; a trace started then reports its first content and its end to it.
Rule 2: there is exactly one such context variable in the package; both the trace
        builder and the instrumented clients read this one.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ._trace import StreamTrace

__all__ = ["CURRENT", "Attributed", "Router"]


class Attributed(Protocol):
    """A unit of dispatched work that hears about the streams made inside it."""

    @property
    def enqueued(self) -> float:
        """When it entered the client queue (``perf_counter`` seconds)."""
        ...

    def note_first_token(self, t: float) -> None:
        """A stream inside it got its first content at ``t``."""

    def note_trace(self, trace: StreamTrace, origin: float) -> None:
        """A stream inside it finished; its recorder counts time from ``origin``
        (``perf_counter`` seconds), so ``trace.shifted(origin)`` is on the job's clock."""


class Router(Protocol):
    """Gives a slot to one SDK call made outside any submission (``instrument(dispatcher=)``)."""

    async def _acquire_for_trace(self, expected_tokens: Any, label: str | None) -> Attributed:
        """Wait for a slot; it is given back when the call's trace finishes."""
        ...


CURRENT: ContextVar[Attributed | None] = ContextVar("fairstream_job", default=None)
