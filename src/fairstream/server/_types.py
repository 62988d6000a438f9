"""Engine inputs and outputs: requests in, events out, all in model seconds.

Rule 1: engines never read a clock; every method takes ``now``.
Rule 2: engines know nothing of HTTP; a request is only lengths and an id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "Admitted",
    "Engine",
    "EngineStats",
    "Event",
    "Finished",
    "Preempted",
    "QueueFull",
    "SeqRequest",
    "StepStarted",
    "Tokens",
]

FinishReason = Literal["stop", "length", "abort"]


class QueueFull(Exception):
    """The waiting queue is at its cap; the caller should answer 429."""


@dataclass(frozen=True, slots=True)
class SeqRequest:
    """What the scheduler needs to know of one request."""

    rid: str
    prompt_tokens: int
    output_tokens: int
    finish_reason: Literal["stop", "length"] = "stop"

    def __post_init__(self) -> None:
        if self.prompt_tokens < 1 or self.output_tokens < 1:
            raise ValueError("a request needs at least one prompt and one output token")


@dataclass(frozen=True, slots=True)
class Admitted:
    """The request got a slot and its prefill starts at ``t``."""

    rid: str
    t: float


@dataclass(frozen=True, slots=True)
class Tokens:
    """``n`` new tokens were produced for ``rid`` at ``t``; ``total`` so far."""

    rid: str
    t: float
    n: int
    total: int


@dataclass(frozen=True, slots=True)
class Finished:
    """The stream of ``rid`` ends at ``t`` (for ``batch_end`` later than its last token)."""

    rid: str
    t: float
    reason: FinishReason
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class Preempted:
    """``rid`` lost its KV cache and went back to the front of the queue."""

    rid: str
    t: float


@dataclass(frozen=True, slots=True)
class StepStarted:
    """A step of ``duration`` seconds started at ``t`` with this much work."""

    t: float
    duration: float
    decoding: int
    prefill_tokens: int
    seqs: int  # sequences in the step (decoding plus prefilling)


Event = Admitted | Tokens | Finished | Preempted | StepStarted


@dataclass(slots=True)
class EngineStats:
    """Counters the server exposes on ``/metrics``."""

    running: int = 0
    waiting: int = 0
    steps: int = 0
    generated_tokens: int = 0
    prefill_tokens: int = 0
    preemptions: int = 0
    finished: int = 0
    aborted: int = 0
    busy_seconds: float = 0.0
    # static batching: requests that shared a batch with one over 2x (and 16 tokens) longer
    # that reached the server after them (held hostage by a later arrival)
    stretched: int = 0
    step_hist: dict[str, int] = field(default_factory=dict)


class Engine(Protocol):
    """The sans-IO scheduler both drivers (real time and virtual time) run."""

    stats: EngineStats

    def add(self, req: SeqRequest, now: float) -> None:
        """Queue a request; raises :class:`QueueFull` at the waiting cap."""

    def abort(self, rid: str, now: float) -> None:
        """Drop a request whose client went away; no event is sent for it again."""

    def next_wakeup(self) -> float | None:
        """Model time at which :meth:`advance` has something to do, or None when idle."""

    def advance(self, now: float) -> list[Event]:
        """Finish the step that ended by ``now`` and start the next one."""
