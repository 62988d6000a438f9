"""Continuous (iteration-level) batching in vLLM V1's order, and prefill-first stalls.

Rule 1: each step schedules running sequences first (oldest first), then admits
        waiting ones FCFS while ``max_num_seqs`` and the token budget allow.
Rule 2: a sequence that finishes leaves after the step; its slot is free for the next.
Rule 3: with a KV budget, a running sequence that cannot grow preempts the newest
        running one (recompute: it goes back to the *front* of the queue and later
        prefills its prompt plus what it had already generated).
Rule 4: ``prefill_priority`` (MindIE "Standard", vLLM V0): if anything waiting can be
        admitted, the step is prefill-only and every running decode stalls.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from ._costmodel import CostModel
from ._types import (
    Admitted,
    EngineStats,
    Event,
    Finished,
    Preempted,
    QueueFull,
    SeqRequest,
    StepStarted,
    Tokens,
)

__all__ = ["ContinuousEngine"]


@dataclass(slots=True, eq=False)  # identity semantics: sequences are compared by `is`
class _Seq:
    req: SeqRequest
    generated: int = 0
    computed: int = 0  # tokens whose KV is in cache (prompt + generated)
    prefill_target: int = 0  # set on admission: what this residency must prefill
    reserved: int = 0  # KV tokens held: the whole prefill on admission, +1 per decode
    admitted_once: bool = False

    @property
    def prefill_len(self) -> int:
        """Tokens to prefill: the prompt, plus generated tokens after a preemption."""
        return self.req.prompt_tokens + self.generated

    @property
    def in_prefill(self) -> bool:
        return self.computed < self.prefill_target


class ContinuousEngine:
    """Iteration-level scheduler; ``max_num_seqs=1`` gives one-at-a-time service."""

    def __init__(
        self,
        cost: CostModel,
        *,
        max_num_seqs: int = 256,
        max_num_batched_tokens: int = 8192,
        chunked_prefill: bool = True,
        prefill_priority: bool = False,
        kv_tokens: int | None = None,
        max_waiting: int | None = None,
    ) -> None:
        if max_num_seqs < 1 or max_num_batched_tokens < 1:
            raise ValueError("max_num_seqs and max_num_batched_tokens must be >= 1")
        if kv_tokens is not None and kv_tokens < 2:
            raise ValueError("kv_tokens must be >= 2")
        self.cost = cost
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.chunked_prefill = chunked_prefill
        self.prefill_priority = prefill_priority
        self.kv_tokens = kv_tokens
        self.max_waiting = max_waiting
        self.stats = EngineStats()
        self._waiting: deque[_Seq] = deque()
        self._running: list[_Seq] = []
        self._scheduled: list[tuple[_Seq, int]] = []  # (seq, tokens computed this step)
        self._step_end: float | None = None
        self._kv_used = 0

    # -- inputs -----------------------------------------------------------------
    def add(self, req: SeqRequest, now: float) -> None:
        if self.max_waiting is not None and len(self._waiting) >= self.max_waiting:
            raise QueueFull(f"{len(self._waiting)} requests already waiting")
        if not self.chunked_prefill and req.prompt_tokens > self.max_num_batched_tokens:
            raise ValueError(
                f"prompt of {req.prompt_tokens} tokens exceeds max_num_batched_tokens "
                f"{self.max_num_batched_tokens} and chunked prefill is off"
            )
        if (
            not self.chunked_prefill
            and self.kv_tokens is not None
            and req.prompt_tokens + req.output_tokens > self.max_num_batched_tokens
        ):
            # A preempted sequence recomputes prompt + output in one step (vLLM asks
            # max_num_batched_tokens >= max_model_len without chunked prefill).
            raise ValueError(
                f"request may need {req.prompt_tokens + req.output_tokens} tokens in one "
                f"recompute step, above max_num_batched_tokens {self.max_num_batched_tokens}"
            )
        if self.kv_tokens is not None and req.prompt_tokens + req.output_tokens > self.kv_tokens:
            raise ValueError(
                f"request needs {req.prompt_tokens + req.output_tokens} KV tokens, "
                f"the cache holds {self.kv_tokens}"
            )
        self._waiting.append(_Seq(req))
        self._sync_stats()

    def abort(self, rid: str, now: float) -> None:
        for s in self._waiting:
            if s.req.rid == rid:
                self._waiting.remove(s)
                break
        else:
            for s in self._running:
                if s.req.rid == rid:
                    self._running.remove(s)
                    self._release_kv(s)
                    break
            else:
                return
        self._scheduled = [(x, n) for x, n in self._scheduled if x.req.rid != rid]
        self.stats.aborted += 1
        self._sync_stats()

    # -- clock ------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        if self._step_end is not None:
            return self._step_end
        if self._waiting or self._running:
            return -math.inf  # work is ready: step at once
        return None

    def advance(self, now: float) -> list[Event]:
        events: list[Event] = []
        if self._step_end is not None:
            if now < self._step_end:
                return events
            self._finish_step(self._step_end, events)
        self._start_step(now, events)
        self._sync_stats()
        return events

    # -- internals --------------------------------------------------------------
    def _finish_step(self, t: float, events: list[Event]) -> None:
        self._step_end = None
        for seq, n in self._scheduled:
            seq.computed += n
            if seq.in_prefill:
                continue  # a chunk of a longer prefill: no token yet
            seq.generated += 1
            self.stats.generated_tokens += 1
            events.append(Tokens(seq.req.rid, t, 1, seq.generated))
            if seq.generated >= seq.req.output_tokens:
                self._running.remove(seq)
                self._release_kv(seq)
                self.stats.finished += 1
                events.append(Finished(seq.req.rid, t, seq.req.finish_reason, seq.generated))
        self._scheduled = []

    def _kv_free(self) -> float:
        return math.inf if self.kv_tokens is None else self.kv_tokens - self._kv_used

    def _release_kv(self, seq: _Seq) -> None:
        self._kv_used -= seq.reserved
        seq.reserved = 0

    def _preempt_newest(self, now: float, events: list[Event]) -> _Seq:
        victim = self._running.pop()
        self._release_kv(victim)
        victim.computed = 0
        self._scheduled = [(s, n) for s, n in self._scheduled if s is not victim]
        self._waiting.appendleft(victim)
        self.stats.preemptions += 1
        events.append(Preempted(victim.req.rid, now))
        return victim

    def _reserve_decode(self, seq: _Seq, now: float, events: list[Event]) -> bool:
        """Hold one more KV token for ``seq``, preempting the newest until it fits."""
        while self._kv_free() < 1:
            if self._preempt_newest(now, events) is seq:
                return False
        seq.reserved += 1
        self._kv_used += 1
        return True

    def _head_admissible(self, budget: int) -> bool:
        """FCFS head fits: a free slot, its first chunk in the budget, its whole prefill in KV."""
        if not self._waiting or len(self._running) >= self.max_num_seqs:
            return False
        need = self._waiting[0].prefill_len
        if not self.chunked_prefill and need > budget:
            return False
        return need <= self._kv_free()

    def _start_step(self, now: float, events: list[Event]) -> None:
        budget = self.max_num_batched_tokens
        scheduled: list[tuple[_Seq, int]] = []
        self._scheduled = scheduled
        prefill_only = self.prefill_priority and self._head_admissible(budget)

        # 1. running sequences, oldest first
        i = 0
        while i < len(self._running) and budget > 0:
            seq = self._running[i]
            if seq.in_prefill:  # its KV was reserved on admission
                n = seq.prefill_target - seq.computed
                n = min(n, budget) if self.chunked_prefill else (n if n <= budget else 0)
            elif prefill_only:
                n = 0  # decode stalled behind the prefill
            elif self._reserve_decode(seq, now, events):
                n = 1
            else:
                break  # it was the newest: preempted itself
            if n:
                scheduled.append((seq, n))
                budget -= n
            i += 1

        # 2. waiting sequences, FCFS, no skipping
        while budget > 0 and self._head_admissible(budget):
            seq = self._waiting.popleft()
            seq.prefill_target = seq.prefill_len
            seq.reserved = seq.prefill_target
            self._kv_used += seq.reserved
            self._running.append(seq)
            if not seq.admitted_once:
                seq.admitted_once = True
                events.append(Admitted(seq.req.rid, now))
            n = min(seq.prefill_target, budget)
            scheduled.append((seq, n))
            budget -= n

        if not scheduled:
            return
        prefill_tokens = sum(n for s, n in scheduled if s.in_prefill)
        decoding = len(scheduled) - sum(1 for s, _ in scheduled if s.in_prefill)
        duration = self.cost.step_seconds(decoding, prefill_tokens)
        self._step_end = now + duration
        self.stats.steps += 1
        self.stats.prefill_tokens += prefill_tokens
        self.stats.busy_seconds += duration
        events.append(StepStarted(now, duration, decoding, prefill_tokens, len(scheduled)))

    def _sync_stats(self) -> None:
        self.stats.waiting = len(self._waiting)
        self.stats.running = len(self._running)
