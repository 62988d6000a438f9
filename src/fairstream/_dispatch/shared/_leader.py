"""One controller for a shared pool: a leader runs the policy on every process's samples.

Every process publishes what its requests did (sent, first token, done with its traces,
overloaded) to a Redis stream, with times moved onto Redis's clock (each process measures its
offset at every heartbeat), so samples from processes on different hosts line up. One process
at a time holds the leader key (``SET NX PX``, renewed every ``ttl / 3``); it feeds the samples
to its own instance of the policy and writes the pool's limit. When it dies, another takes over
within one ttl, with a fresh policy (a cold start).
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..._trace import StreamTrace
from .._job import Job
from ._breaker import CoordinatorDown

if TYPE_CHECKING:
    from .._policy import Policy
    from ._slots import SharedSlots

__all__ = ["Leader", "Samples"]

log = logging.getLogger("fairstream.dispatch")

# KEYS: leader   ARGV: owner, ttl_ms  -> 1 when the caller leads (now or still)
_LEAD = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""


class Samples:
    """What this process's requests did, buffered and published in batches."""

    def __init__(self, slots: SharedSlots) -> None:
        self.slots = slots
        self._buffer: list[str] = []

    def add(self, kind: str, job: Job, t: float, traces: list[StreamTrace] | None = None) -> None:
        """Note an event at local time ``t`` (perf_counter seconds).

        A job is done when its last stream ended, not when this process got round to
        releasing it: a busy process releases late, and the leader would see the server's
        next batch start while this one "still ran" (the sign of continuous batching)."""
        offset = self.slots.clock_offset
        ends = [x.end for x in traces or () if x.end is not None]
        if kind == "done" and ends:
            t = min(t, max(ends))
        item: dict[str, Any] = {
            "k": kind,
            "j": f"{self.slots.owner}:{job.jid}",
            "t": t + offset,
            "n": job.expected_tokens,
            "ok": job.ok,
        }
        if traces:
            item["tr"] = [x.shifted(offset).to_dict() for x in traces if x.outcome == "ok"]
        self._buffer.append(json.dumps(item))

    async def flush(self) -> None:
        """Publish what is buffered. Shielded: the dispatcher closing cancels the publisher,
        and a batch taken from the buffer but cut mid-send was lost (the leader then waits for
        those jobs' ends forever); Redis's socket timeout bounds the wait."""
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        with anyio.CancelScope(shield=True):
            await self.slots.xadd_samples(batch)


class Leader:
    """Leads when it can: reads every sample, runs ``policy``, writes the limit."""

    def __init__(
        self, slots: SharedSlots, make_policy: Callable[[], Policy], *, delay: float = 0.25
    ) -> None:
        self.slots, self.make_policy = slots, make_policy
        self.policy: Policy | None = None  # set while this process leads
        self.leading = False
        self.terms = 0  # times this process became the leader
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._last = "$"
        self._pending: list[tuple[float, int, dict[str, Any]]] = []  # by time: (t, n, sample)
        self._order = itertools.count()
        self.delay = delay  # how late a sample may reach the stream (publishing every 20 ms)

    async def step(self) -> None:
        """Claim or renew the leader key; as leader, apply new samples and write the limit."""
        leads = await self.slots.lead(_LEAD)
        if leads and not self.leading:
            self.terms += 1
            self.policy, self._jobs, self._last = self.make_policy(), {}, "$"
            self._pending.clear()
            log.info("this process now leads pool %r", self.slots.pool)
        self.leading = leads
        if not leads or self.policy is None:
            return
        entries, self._last = await self.slots.read_samples(self._last)
        for raw in entries:
            s = json.loads(raw)
            heapq.heappush(self._pending, (s["t"], next(self._order), s))
        # in time order, once every process has had time to publish: the stream holds each
        # process's batches in the order they were flushed, so a sample can land after a later
        # one of another process (a batch's next first token before its last end: a "refill")
        settled = time.perf_counter() + self.slots.clock_offset - self.delay
        while self._pending and self._pending[0][0] <= settled:
            self._apply(heapq.heappop(self._pending)[2])
        if self.policy.limit() != self.slots.limit:
            log.debug("pool %r: %s", self.slots.pool, self.policy.describe())
        await self.slots.write_limit(self.policy.limit())
        await self.slots.set_band(self.policy.bands)

    async def run(self, every: float = 0.05) -> None:
        while True:
            try:
                await self.step()
            except CoordinatorDown:
                self.leading = False
            except Exception:  # never let the controller take the dispatcher down
                log.warning("pool %r: the leader's step failed", self.slots.pool, exc_info=True)
                self.leading = False
            await anyio.sleep(every)

    def _apply(self, s: dict[str, Any]) -> None:
        assert self.policy is not None
        kind, key, t = s["k"], s["j"], s["t"]
        if kind == "send":
            job = self._jobs[key] = Job(jid=next(self._ids), expected_tokens=s["n"])
            self.policy.on_send(job, t)
            return
        job_or_none = self._jobs.get(key)
        if job_or_none is None:  # sent before this leader's term
            return
        if kind == "first":
            self.policy.on_first_token(job_or_none, t)
        elif kind == "done":
            del self._jobs[key]
            job_or_none.ok = bool(s["ok"])
            traces = [StreamTrace.from_dict(d) for d in s.get("tr", ())]
            self.policy.on_done(job_or_none, t, traces)
        elif kind == "overload":
            self.policy.on_overload(t, None)
