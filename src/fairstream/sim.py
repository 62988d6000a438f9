"""Virtual time: a scheduling engine, and optionally a dispatcher policy, with no sleeping.

    from fairstream.sim import SimRequest, simulate
    run = simulate(config.build_engine(), [SimRequest(0.0, 32, 128), ...], policy=Waves(8))

The same engine object the HTTP server runs, stepped event by event, so its answers are
exact: the oracle for benchmarks and the scheduler's unit tests. Without a policy each
request reaches the engine at its arrival; with one, it waits in the dispatcher's admission
core (the very one ``Dispatcher`` drives) until the policy sends it.

Rule 1: network delay is zero; a chunk carries one token; every finished request gets a
        trace shaped like those of the instrumented clients (``client="sim"``).
Rule 2: all times are model seconds; ``arrival`` is when the request was submitted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ._dispatch._core import Admission
from ._dispatch._job import Job
from ._dispatch._policy import Policy
from ._trace import StreamTrace, Usage
from .server._types import (
    Admitted,
    Engine,
    Finished,
    Preempted,
    QueueFull,
    SeqRequest,
    StepStarted,
    Tokens,
)

__all__ = ["SimRequest", "SimResult", "SimRun", "simulate"]


@dataclass(frozen=True, slots=True)
class SimRequest:
    """One request of a simulated workload (model seconds, token counts).

    ``expected_tokens``, ``key`` and ``label`` are what a dispatcher policy is told (the
    client's guess of the length, its fairness key); the engine sees only the token counts.
    """

    arrival: float
    prompt_tokens: int = 32
    output_tokens: int = 128
    rid: str | None = None
    expected_tokens: float | None = None
    key: Any = None
    label: str | None = None


@dataclass(slots=True)
class SimResult:
    """What happened to one request, all in model seconds."""

    rid: str
    arrival: float
    prompt_tokens: int
    output_tokens: int
    expected_tokens: float | None = None
    label: str | None = None
    sent: float | None = None  # when it reached the engine (the policy sent it)
    admitted: float | None = None  # when the engine started it
    token_times: list[float] = field(default_factory=list)
    end: float | None = None
    finish_reason: str | None = None
    preemptions: int = 0
    ok: bool = True  # False: refused by the engine (its queue was full)
    trace: StreamTrace | None = None

    @property
    def first_token(self) -> float | None:
        return self.token_times[0] if self.token_times else None

    @property
    def content_end(self) -> float | None:
        return self.token_times[-1] if self.token_times else None

    @property
    def ttft(self) -> float | None:
        """Arrival (submission) to first token: client queue time included."""
        ft = self.first_token
        return None if ft is None else ft - self.arrival

    @property
    def e2e(self) -> float | None:
        """Arrival (submission) to the stream's end."""
        return None if self.end is None else self.end - self.arrival

    @property
    def hold(self) -> float | None:
        ce = self.content_end
        return None if ce is None or self.end is None else self.end - ce


@dataclass(slots=True)
class SimRun:
    """Every request's result (in arrival order), the engine's steps, the policy's limits."""

    results: list[SimResult]
    steps: list[StepStarted] = field(default_factory=list)
    limits: list[tuple[float, int]] = field(default_factory=list)  # (time, limit) on changes

    @property
    def makespan(self) -> float:
        ends = [r.end for r in self.results if r.end is not None]
        return max(ends) - min(r.arrival for r in self.results) if ends else 0.0

    @property
    def output_tokens_per_second(self) -> float:
        span = self.makespan
        return sum(len(r.token_times) for r in self.results) / span if span > 0 else 0.0

    @property
    def traces(self) -> list[StreamTrace]:
        return [r.trace for r in self.results if r.trace is not None]

    def by_id(self) -> dict[str, SimResult]:
        return {r.rid: r for r in self.results}


def simulate(
    engine: Engine,
    workload: Iterable[SimRequest],
    policy: Policy | None = None,
    *,
    events: Iterable[tuple[float, Callable[[Engine], None]]] = (),
    until: float = math.inf,
) -> SimRun:
    """Run ``workload`` on ``engine`` (through ``policy`` if given) until all have ended.

    ``events`` are ``(time, change)`` pairs that alter the engine midway (a server that
    loses capacity, say); the run stops early once the clock passes ``until``.
    """
    reqs = sorted(_with_ids(workload), key=lambda pair: pair[1].arrival)
    results = [_result(rid, r) for rid, r in reqs]
    sim = _Sim(engine, results, policy)
    sim.run([r for _, r in reqs], sorted(events, key=lambda e: e[0]), until)
    return sim.out


class _Sim:
    """One run's state: the clock, who is waiting, and the events read off the engine."""

    def __init__(self, engine: Engine, results: list[SimResult], policy: Policy | None) -> None:
        self.engine = engine
        self.policy = policy
        self.admission = None if policy is None else Admission(policy)
        self.out = SimRun(results)
        self.by_rid = {r.rid: r for r in results}
        self.jobs: dict[str, Job] = {}
        self.waiting = 0  # submitted, not yet ended

    def submit(self, res: SimResult, req: SimRequest, now: float) -> None:
        self.waiting += 1
        if self.admission is None:
            self.send(res, now)
            return
        job = Job(key=req.key, label=req.label, expected_tokens=req.expected_tokens)
        job.payload = res
        self.jobs[res.rid] = job
        self.admission.enqueue(job, req.arrival)

    def send(self, res: SimResult, now: float) -> None:
        res.sent = now
        try:
            self.engine.add(SeqRequest(res.rid, res.prompt_tokens, res.output_tokens), now)
        except QueueFull:
            res.ok, res.end = False, now
            self.waiting -= 1
            if self.admission is not None:
                job = self.jobs[res.rid]
                job.ok = False
                self.admission.done(job, now, [])
                self.admission.overload(now, 1.0)

    def release(self, now: float) -> None:
        if self.admission is not None:
            for job in self.admission.release(now):
                self.send(job.payload, now)

    def run(
        self,
        reqs: list[SimRequest],
        changes: list[tuple[float, Callable[[Engine], None]]],
        until: float,
    ) -> None:
        results, engine, adm = self.out.results, self.engine, self.admission
        now = reqs[0].arrival if reqs else 0.0
        i = c = 0
        last_limit = -1
        while True:
            wakes = [
                engine.next_wakeup(),
                reqs[i].arrival if i < len(reqs) else None,
                None if adm is None else adm.next_wakeup(now),
                changes[c][0] if c < len(changes) else None,
            ]
            future = [t for t in wakes if t is not None and t != math.inf]
            if not future or not (self.waiting or i < len(reqs)) or now > until:
                break
            now = max(now, min(future))
            while c < len(changes) and changes[c][0] <= now:
                changes[c][1](engine)
                c += 1
            while i < len(reqs) and reqs[i].arrival <= now:
                self.submit(results[i], reqs[i], now)
                i += 1
            self.release(now)
            events = engine.advance(now)
            for ev in events:
                self.on_event(ev)
            self.release(now)  # a slot freed or the policy changed: send now, not later
            if self.policy is not None and (limit := self.policy.limit()) != last_limit:
                self.out.limits.append((now, limit))
                last_limit = limit
            if not events and engine.next_wakeup() == -math.inf:
                raise RuntimeError("engine has work but schedules nothing: stuck")

    def on_event(self, ev: Any) -> None:
        if isinstance(ev, StepStarted):
            self.out.steps.append(ev)
            return
        res = self.by_rid[ev.rid]
        job = self.jobs.get(ev.rid)
        if isinstance(ev, Tokens):
            if not res.token_times and job is not None and self.admission is not None:
                job.note_first_token(ev.t)
                self.admission.first_token(job, ev.t)
            res.token_times.extend([ev.t] * ev.n)
        elif isinstance(ev, Finished):
            res.end, res.finish_reason = ev.t, ev.reason
            res.trace = _trace(res)
            self.waiting -= 1
            if job is not None and self.admission is not None:
                self.admission.done(job, ev.t, [res.trace])
        elif isinstance(ev, Admitted):
            res.admitted = ev.t
        elif isinstance(ev, Preempted):
            res.preemptions += 1


def _result(rid: str, r: SimRequest) -> SimResult:
    return SimResult(rid, r.arrival, r.prompt_tokens, r.output_tokens, r.expected_tokens, r.label)


def _with_ids(requests: Iterable[SimRequest]) -> list[tuple[str, SimRequest]]:
    """Pair each request with its id, ``r<index>`` where none was given."""
    pairs = [(r.rid if r.rid is not None else f"r{i}", r) for i, r in enumerate(requests)]
    if len({rid for rid, _ in pairs}) != len(pairs):
        raise ValueError("request ids must be unique")
    return pairs


def _trace(res: SimResult) -> StreamTrace:
    times, end = res.token_times, res.end
    assert end is not None
    n = len(times)
    return StreamTrace(
        request_id=res.rid,
        label=res.label,
        max_tokens=None if res.expected_tokens is None else int(res.expected_tokens),
        client="sim",
        enqueued=res.arrival,
        sent=res.sent,
        first_chunk=times[0] if times else end,
        first_content=times[0] if times else None,
        last_content=times[-1] if times else None,
        finish_chunk=end,
        end=end,
        chunk_times=(*times, end),
        chunk_tokens=(*([1] * n), 0),
        chunk_chars=(*([4] * n), 0),
        chunk_tokens_estimated=False,
        usage=Usage(res.prompt_tokens, n, res.prompt_tokens + n),
        finish_reason=res.finish_reason,
    )
