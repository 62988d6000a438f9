"""Virtual-time driver: runs an engine over a list of arrivals with no sleeping.

The same engine object the HTTP server runs, stepped event by event, so its
answers are exact: the oracle for benchmarks and the scheduler's unit tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._types import Admitted, Engine, Finished, Preempted, SeqRequest, StepStarted, Tokens

__all__ = ["SimRequest", "SimResult", "SimRun", "simulate"]


@dataclass(frozen=True, slots=True)
class SimRequest:
    """One request of a simulated workload (model seconds, token counts)."""

    arrival: float
    prompt_tokens: int
    output_tokens: int
    rid: str | None = None


@dataclass(slots=True)
class SimResult:
    """What happened to one request, all in model seconds."""

    rid: str
    arrival: float
    prompt_tokens: int
    output_tokens: int
    admitted: float | None = None
    token_times: list[float] = field(default_factory=list)
    end: float | None = None
    finish_reason: str | None = None
    preemptions: int = 0

    @property
    def first_token(self) -> float | None:
        return self.token_times[0] if self.token_times else None

    @property
    def content_end(self) -> float | None:
        return self.token_times[-1] if self.token_times else None

    @property
    def ttft(self) -> float | None:
        ft = self.first_token
        return None if ft is None else ft - self.arrival

    @property
    def e2e(self) -> float | None:
        return None if self.end is None else self.end - self.arrival

    @property
    def hold(self) -> float | None:
        ce = self.content_end
        return None if ce is None or self.end is None else self.end - ce


@dataclass(slots=True)
class SimRun:
    """Every request's result plus the steps the engine took."""

    results: list[SimResult]
    steps: list[StepStarted]

    @property
    def makespan(self) -> float:
        ends = [r.end for r in self.results if r.end is not None]
        return max(ends) - min(r.arrival for r in self.results) if ends else 0.0

    @property
    def output_tokens_per_second(self) -> float:
        span = self.makespan
        return sum(len(r.token_times) for r in self.results) / span if span > 0 else 0.0

    def by_id(self) -> dict[str, SimResult]:
        return {r.rid: r for r in self.results}


def simulate(engine: Engine, requests: Iterable[SimRequest]) -> SimRun:
    """Run ``engine`` in virtual time until every request has finished."""
    reqs = sorted(_with_ids(requests), key=lambda pair: pair[1].arrival)
    results = {rid: SimResult(rid, r.arrival, r.prompt_tokens, r.output_tokens) for rid, r in reqs}
    steps: list[StepStarted] = []
    now = reqs[0][1].arrival if reqs else 0.0
    i = 0
    while True:
        wake = engine.next_wakeup()
        next_arrival = reqs[i][1].arrival if i < len(reqs) else math.inf
        if wake is None and next_arrival == math.inf:
            break
        now = max(now, min(math.inf if wake is None else wake, next_arrival))
        while i < len(reqs) and reqs[i][1].arrival <= now:
            rid, r = reqs[i]
            engine.add(SeqRequest(rid, r.prompt_tokens, r.output_tokens), now)
            i += 1
        events = engine.advance(now)
        for ev in events:
            if isinstance(ev, StepStarted):
                steps.append(ev)
            elif isinstance(ev, Tokens):
                results[ev.rid].token_times.extend([ev.t] * ev.n)
            elif isinstance(ev, Finished):
                results[ev.rid].end = ev.t
                results[ev.rid].finish_reason = ev.reason
            elif isinstance(ev, Admitted):
                results[ev.rid].admitted = ev.t
            elif isinstance(ev, Preempted):
                results[ev.rid].preemptions += 1
        if not events and engine.next_wakeup() == -math.inf:
            raise RuntimeError("engine has work but schedules nothing: stuck")
    return SimRun(list(results.values()), steps)


def _with_ids(requests: Iterable[SimRequest]) -> list[tuple[str, SimRequest]]:
    """Pair each request with its id, ``r<index>`` where none was given."""
    pairs = [(r.rid if r.rid is not None else f"r{i}", r) for i, r in enumerate(requests)]
    if len({rid for rid, _ in pairs}) != len(pairs):
        raise ValueError("request ids must be unique")
    return pairs
