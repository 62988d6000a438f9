"""Static batching: gather a batch, prefill it, decode until its longest member is done.

Rule 1: a batch is never refilled; newcomers wait for the whole batch to end.
Rule 2: finished members keep their slot (padding), so every decode step costs
        for the full batch, as on a server whose tensors must stay aligned.
Rule 3: with ``release="batch_end"`` a finished member's stream stays open and
        silent until the batch ends (the seed's "fast waits for slow").
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

from ._costmodel import CostModel
from ._types import (
    Admitted,
    EngineStats,
    Event,
    Finished,
    QueueFull,
    SeqRequest,
    StepStarted,
    Tokens,
)

__all__ = ["StaticEngine"]

Release = Literal["batch_end", "stream"]


@dataclass(slots=True, eq=False)
class _Member:
    req: SeqRequest
    arrival: float
    generated: int = 0
    released: bool = False
    aborted: bool = False

    @property
    def done(self) -> bool:
        return self.aborted or self.generated >= self.req.output_tokens


class StaticEngine:
    """Static (request-level) batching with a gather timeout."""

    def __init__(
        self,
        cost: CostModel,
        *,
        batch_size: int = 8,
        batch_timeout: float = 0.05,
        release: Release = "batch_end",
        max_waiting: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if batch_timeout < 0:
            raise ValueError("batch_timeout must be >= 0")
        if release not in ("batch_end", "stream"):
            raise ValueError(f"release must be 'batch_end' or 'stream', not {release!r}")
        self.cost = cost
        self.batch_size = batch_size
        self.batch_timeout = batch_timeout
        self.release: Release = release
        self.max_waiting = max_waiting
        self.stats = EngineStats()
        self._waiting: deque[_Member] = deque()
        self._batch: list[_Member] = []
        self._step_end: float | None = None
        self._prefilled = False

    # -- inputs -----------------------------------------------------------------
    def add(self, req: SeqRequest, now: float) -> None:
        if self.max_waiting is not None and len(self._waiting) >= self.max_waiting:
            raise QueueFull(f"{len(self._waiting)} requests already waiting")
        self._waiting.append(_Member(req, now))
        self._sync_stats()

    def abort(self, rid: str, now: float) -> None:
        for m in self._waiting:
            if m.req.rid == rid:
                self._waiting.remove(m)
                self.stats.aborted += 1
                break
        else:
            for m in self._batch:
                if m.req.rid == rid and not m.released:
                    m.aborted = True
                    m.released = True
                    self.stats.aborted += 1
        self._sync_stats()

    # -- clock ------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        if self._step_end is not None:
            return self._step_end
        if not self._waiting:
            return None
        if len(self._waiting) >= self.batch_size:
            return self._waiting[0].arrival
        return self._waiting[0].arrival + self.batch_timeout

    def advance(self, now: float) -> list[Event]:
        events: list[Event] = []
        if self._step_end is not None:
            if now < self._step_end:
                return events
            self._finish_step(self._step_end, events)
        if self._step_end is None:
            self._start_step(now, events)
        self._sync_stats()
        return events

    # -- internals --------------------------------------------------------------
    def _finish_step(self, t: float, events: list[Event]) -> None:
        self._step_end = None
        for m in self._batch:
            if m.done:
                continue
            m.generated += 1
            self.stats.generated_tokens += 1
            events.append(Tokens(m.req.rid, t, 1, m.generated))
            if m.done and self.release == "stream":
                self._release(m, t, events)
        self._prefilled = True
        if all(m.done for m in self._batch):
            for m in self._batch:
                if not m.released:
                    self._release(m, t, events)
            self._batch = []
            self._prefilled = False

    def _release(self, m: _Member, t: float, events: list[Event]) -> None:
        m.released = True
        self.stats.finished += 1
        events.append(Finished(m.req.rid, t, m.req.finish_reason, m.generated))

    def _start_step(self, now: float, events: list[Event]) -> None:
        if not self._batch:
            if not self._waiting:
                return
            if (
                len(self._waiting) < self.batch_size
                and now < self._waiting[0].arrival + self.batch_timeout
            ):
                return
            while self._waiting and len(self._batch) < self.batch_size:
                m = self._waiting.popleft()
                self._batch.append(m)
                events.append(Admitted(m.req.rid, now))
            self.stats.stretched += _stretched([m.req.output_tokens for m in self._batch])
        n = len(self._batch)
        if not self._prefilled:
            # Padded prefill: every member is as long as the longest prompt.
            prefill = max(m.req.prompt_tokens for m in self._batch) * n
            decoding = 0
        else:
            prefill = 0
            decoding = n
        duration = self.cost.step_seconds(decoding, prefill)
        self._step_end = now + duration
        self.stats.steps += 1
        self.stats.prefill_tokens += prefill
        self.stats.busy_seconds += duration
        events.append(StepStarted(now, duration, decoding, prefill, n))

    def _sync_stats(self) -> None:
        self.stats.waiting = len(self._waiting)
        self.stats.running = sum(1 for m in self._batch if not m.released)


def _stretched(lengths: list[int]) -> int:
    """Members (in arrival order) with a later one over 2x (and 16 tokens) longer."""
    return sum(
        1 for i, n in enumerate(lengths) if any(m > 2 * max(n, 16) for m in lengths[i + 1 :])
    )
