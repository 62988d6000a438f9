"""The dispatcher's admission core and a scheduling engine together, in virtual time.

Deterministic and fast: a policy meets an exact static or continuous engine with no network
and no sleeping, so policies are tested and benchmarked against an oracle. Network delay
is zero; chunks carry one token each; traces look like those of the instrumented clients.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .._trace import StreamTrace, Usage
from ..server._types import Engine, Finished, QueueFull, SeqRequest, Tokens
from ._core import Admission
from ._job import Job
from ._policies import Policy

__all__ = ["VJob", "VRun", "simulate_dispatch"]


@dataclass(frozen=True, slots=True)
class VJob:
    """One request of a virtual workload (model seconds, token counts)."""

    arrival: float
    output_tokens: int
    expected_tokens: float | None = None
    prompt_tokens: int = 32
    key: Any = None
    label: str | None = None


@dataclass(slots=True)
class VRun:
    """What happened: per job, its times (model seconds) and its trace."""

    jobs: list[Job]
    traces: dict[int, StreamTrace] = field(default_factory=dict)
    limits: list[tuple[float, int]] = field(default_factory=list)  # (time, limit) on changes

    def e2e(self, job: Job) -> float:
        assert job.done is not None
        return job.done - job.enqueued

    @property
    def makespan(self) -> float:
        return max(j.done or 0.0 for j in self.jobs) - min(j.enqueued for j in self.jobs)


def simulate_dispatch(
    engine: Engine,
    workload: Iterable[VJob],
    policy: Policy,
    *,
    events: Iterable[tuple[float, Callable[[Engine], None]]] = (),
    until: float = math.inf,
) -> VRun:
    """Run ``workload`` through ``policy`` into ``engine``; ``events`` change the engine midway."""
    admission = Admission(policy)
    work = sorted(workload, key=lambda w: w.arrival)
    jobs = [Job(key=w.key, label=w.label, expected_tokens=w.expected_tokens) for w in work]
    by_rid = {str(j.jid): (j, w) for j, w in zip(jobs, work, strict=True)}
    tokens: dict[str, list[float]] = {}
    changes = sorted(events, key=lambda e: e[0])
    run = VRun(jobs)

    def send(t: float) -> None:
        for job in admission.release(t):
            w = by_rid[str(job.jid)][1]
            try:
                engine.add(SeqRequest(str(job.jid), w.prompt_tokens, w.output_tokens), t)
            except QueueFull:
                job.ok = False
                admission.done(job, t, [])
                admission.overload(t, 1.0)

    now, i, c = 0.0, 0, 0
    last_limit = -1
    while True:
        wakes = [
            engine.next_wakeup(),
            work[i].arrival if i < len(work) else None,
            admission.next_wakeup(now),
            changes[c][0] if c < len(changes) else None,
        ]
        future = [t for t in wakes if t is not None and t != math.inf]
        pending = admission.in_flight or len(admission.queue) or i < len(work)
        if not future or not pending or now > until:
            break
        now = max(now, min(future))
        while c < len(changes) and changes[c][0] <= now:
            changes[c][1](engine)
            c += 1
        while i < len(work) and work[i].arrival <= now:
            admission.enqueue(jobs[i], work[i].arrival)
            i += 1
        send(now)
        for ev in engine.advance(now):
            if isinstance(ev, Tokens):
                job = by_rid[ev.rid][0]
                tokens.setdefault(ev.rid, []).extend([ev.t] * ev.n)
                if job.first_token is None:
                    job.note_first_token(ev.t)
                    admission.first_token(job, ev.t)
            elif isinstance(ev, Finished):
                job, w = by_rid[ev.rid]
                trace = _trace(job, w, tokens.pop(ev.rid, []), ev.t, ev.reason)
                run.traces[job.jid] = trace
                admission.done(job, ev.t, [trace])
        send(now)  # a slot freed or the policy changed: send now, not at the next event
        limit = policy.limit()
        if limit != last_limit:
            run.limits.append((now, limit))
            last_limit = limit
    return run


def _trace(job: Job, w: VJob, times: list[float], end: float, reason: str) -> StreamTrace:
    n = len(times)
    return StreamTrace(
        request_id=str(job.jid),
        label=w.label,
        max_tokens=None if w.expected_tokens is None else int(w.expected_tokens),
        client="sim",
        enqueued=job.enqueued,
        sent=job.sent,
        first_chunk=times[0] if times else end,
        first_content=times[0] if times else None,
        last_content=times[-1] if times else None,
        finish_chunk=end,
        end=end,
        chunk_times=(*times, end),
        chunk_tokens=(*([1] * n), 0),
        chunk_chars=(*([4] * n), 0),
        chunk_tokens_estimated=False,
        usage=Usage(w.prompt_tokens, n, w.prompt_tokens + n),
        finish_reason=reason,
    )
