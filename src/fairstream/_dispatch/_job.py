"""One submission to the dispatcher, and how instrumented calls inside it find it.

Rule: while a submitted function runs, ``_attribution.CURRENT`` holds its job; a trace
started then reports its first content and its finished trace to that job, so the policy
sees chunk-level signals whichever instrumented client the function used.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .._trace import StreamTrace

__all__ = ["Job", "JobListener"]

_ids = itertools.count(1)


class JobListener(Protocol):
    """Who hears a job's events (the dispatcher)."""

    def first_token(self, job: Job, t: float) -> None:  # t: perf_counter seconds
        """The job's request got its first content."""

    def trace_done(self, job: Job, trace: StreamTrace) -> None:
        """An instrumented stream inside the job finished."""


@dataclass(eq=False, slots=True)
class Job:
    """A unit of work waiting for, or holding, a slot. Times: ``perf_counter`` seconds."""

    key: Any = None
    label: str | None = None
    expected_tokens: float | None = None
    enqueued: float = 0.0
    jid: int = field(default_factory=lambda: next(_ids))
    sent: float | None = None
    first_token: float | None = None
    done: float | None = None
    ok: bool = True
    traces: list[StreamTrace] = field(default_factory=list)  # moved onto perf_counter
    listener: JobListener | None = None
    payload: Any = None  # whatever the driver needs (an event, a simulated request)
    release_on_trace: bool = False  # the slot ends with the first trace (routed SDK calls)
    rejected: bool = False  # dropped unadmitted because the dispatcher closed
    lease: str | None = None  # its slot in a shared pool (Redis), while held

    def note_first_token(self, t: float) -> None:
        if self.first_token is None:
            self.first_token = t
            if self.listener is not None:
                self.listener.first_token(self, t)

    def note_trace(self, trace: StreamTrace, origin: float = 0.0) -> None:
        """Keep the trace on the job's clock (a recorder counts from its own origin: the
        policy compares trace times with the job's events)."""
        trace = trace.shifted(origin) if origin else trace
        self.traces.append(trace)
        if self.listener is not None:
            self.listener.trace_done(self, trace)
