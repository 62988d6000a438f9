"""Real-time driver: runs the engine's step loop on the event loop's clock.

Rule 1: the loop never blocks; it sleeps until the engine's next wake-up (or an
        arrival), then hands each event to the request's sink synchronously.
Rule 2: a step end reached within a small tolerance (timer jitter) keeps the engine's
        grid; reached later (the loop is overloaded), the next step starts when it
        starts, so overload shows as a longer step period: what the capacity benchmark
        measures.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Protocol

from ._types import Admitted, Engine, Finished, SeqRequest, StepStarted, Tokens

__all__ = ["Driver", "Sink"]

log = logging.getLogger("fairstream.server")

# A step end reached this late (real seconds) still counts as on time: the next step
# starts at the engine's planned instant, so timer jitter does not stretch every step.
# Later than that (an overloaded loop), the next step starts when the loop gets to it.
_MIN_TOLERANCE = 0.001
_TOLERANCE_SHARE = 0.25


class Sink(Protocol):
    """Where one request's events go (an SSE writer or a response collector)."""

    def on_admitted(self) -> None: ...

    def on_tokens(self, n: int, total: int) -> None: ...

    def on_finish(self, reason: str, completion_tokens: int) -> None: ...


class Driver:
    """Steps ``engine`` in real time; model seconds are ``time_scale`` real seconds."""

    def __init__(self, engine: Engine, time_scale: float) -> None:
        self.engine = engine
        self.time_scale = time_scale
        self._t0 = time.perf_counter()
        self._sinks: dict[str, Sink] = {}
        self._kicked = False
        self._wake: asyncio.Future[bool] | None = None
        self._task: asyncio.Task[None] | None = None
        self.step_late_sum = 0.0  # real seconds steps started after they were due
        self.step_late_max = 0.0
        self.step_count = 0
        self.sink_errors = 0
        self.active_peak = 0  # the most requests in the engine at once (running + waiting)
        self._waiters: list[asyncio.Future[None]] = []
        self._tolerance = _MIN_TOLERANCE

    def now(self) -> float:
        """Model time now."""
        return (time.perf_counter() - self._t0) / self.time_scale

    @property
    def active(self) -> int:
        return len(self._sinks)

    def submit(self, req: SeqRequest, sink: Sink) -> None:
        """Queue a request; raises ``QueueFull`` or ``ValueError`` from the engine."""
        self.engine.add(req, self.now())
        self._sinks[req.rid] = sink
        self.active_peak = max(self.active_peak, len(self._sinks))
        self._kick()

    def cancel(self, rid: str) -> None:
        """The client went away: forget its sink and free its place in the engine."""
        if self._sinks.pop(rid, None) is not None:
            self.engine.abort(rid, self.now())
            self._kick()
            self._notify()

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds; it is re-checked after every engine change."""
        while not predicate():
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)

    def _notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="fairstream-steps")

    async def stop(self) -> None:
        """Cancel the step loop and wait for it; our own cancellation still propagates."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait([task])

    def _kick(self) -> None:
        """Something changed (arrival, abort): the step loop should look again."""
        self._kicked = True
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(True)

    async def _sleep(self, delay: float | None) -> bool:
        """Sleep ``delay`` seconds (None: until kicked); True if a kick ended it.

        Not ``asyncio.wait_for``: on Python 3.11 it can swallow a cancellation that
        arrives as its timeout fires, and the step loop would then never stop.
        """
        if self._kicked:
            self._kicked = False
            return True
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[bool] = loop.create_future()
        self._wake = wake
        timer = None
        if delay is not None:
            timer = loop.call_later(delay, _resolve, wake)
        try:
            return await wake
        finally:
            self._wake = None
            self._kicked = False
            if timer is not None:
                timer.cancel()

    async def _run(self) -> None:
        while True:
            wake = self.engine.next_wakeup()
            if wake is None:
                await self._sleep(None)
                continue
            delay = (wake - self.now()) * self.time_scale
            if delay <= 0:
                await asyncio.sleep(0)  # behind schedule: still let I/O run between steps
            elif await self._sleep(delay):
                continue  # something arrived: look again
            now = self.now()
            if wake != -math.inf and wake <= now:
                late = (now - wake) * self.time_scale
                self.step_late_sum += late
                self.step_late_max = max(self.step_late_max, late)
                if late <= self._tolerance:
                    now = wake  # timer jitter: stay on the engine's grid
            events = self.engine.advance(now)
            started = False
            for ev in events:
                if isinstance(ev, Tokens):
                    sink = self._sinks.get(ev.rid)
                    if sink is not None:
                        self._call(ev.rid, sink.on_tokens, ev.n, ev.total)
                elif isinstance(ev, Finished):
                    sink = self._sinks.pop(ev.rid, None)
                    if sink is not None:
                        self._call(ev.rid, sink.on_finish, ev.reason, ev.completion_tokens)
                elif isinstance(ev, Admitted):
                    sink = self._sinks.get(ev.rid)
                    if sink is not None:
                        self._call(ev.rid, sink.on_admitted)
                elif isinstance(ev, StepStarted):
                    started = True
                    self.step_count += 1
                    self._tolerance = max(
                        _MIN_TOLERANCE, _TOLERANCE_SHARE * ev.duration * self.time_scale
                    )
            if events and self._waiters:
                self._notify()
            if not started and self.engine.next_wakeup() == -math.inf:
                # Work exists but nothing fits this instant; wait for a change.
                await self._sleep(None)

    def _call(self, rid: str, fn: object, *args: object) -> None:
        try:
            fn(*args)  # type: ignore[operator]
        except Exception:  # a broken sink must not stop the other streams
            self.sink_errors += 1
            log.exception("sink for %s failed; dropping it", rid)
            self.cancel(rid)


def _resolve(fut: asyncio.Future[bool]) -> None:
    if not fut.done():
        fut.set_result(False)
