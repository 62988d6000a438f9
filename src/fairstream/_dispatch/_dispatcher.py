"""``Dispatcher``: the async shell around the admission core.

    async with fairstream.Dispatcher(policy="auto") as d:
        answer = await d.submit(run_one, prompt, expected_tokens=256, key=user)
        async for chunk in d.astream(llm, messages): ...
        results = await d.map(run_one, prompts)

Rule 1: a submission waits in the client queue until the policy admits it; the function
        then runs in the caller's own task (cancellation reaches it directly).
Rule 2: 429/503 pause admission for Retry-After; a failed attempt is retried (tenacity)
        only if it never got a first token, so streamed content is never duplicated.
Rule 3: decisions run one loop turn after the event that triggered them, so requests
        submitted together are queued together and can be ordered before any is sent.
Rule 4: with ``coordinator=`` (a Redis URL) and ``pool=``, an admitted job also holds a lease
        of the shared pool (``shared/_pool.py``): the limit is the pool's, across processes.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from .._attribution import CURRENT
from .._errors import LifecycleError, first_error
from .._trace import StreamTrace
from ._core import Admission
from ._early import EarlyRelease
from ._failures import is_overload, is_retryable, retry_after
from ._job import Job
from ._lag import LoopLag
from ._names import make_policy
from ._policy import Policy
from .shared._pool import SharedPool, local_policy

__all__ = ["Dispatcher"]

T = TypeVar("T")
State = Literal["unopened", "open", "closed"]
log = logging.getLogger("fairstream.dispatch")


class Dispatcher:
    """Sizes, staggers and groups concurrent requests to how the server batches."""

    def __init__(
        self,
        policy: str | Policy = "auto",
        *,
        retries: int = 2,
        max_retry_wait: float = 30.0,
        max_reorder_wait: float = 60.0,
        coordinator: str | None = None,
        pool: str = "default",
        lease_ttl: float = 15.0,
    ) -> None:
        self._policy = make_policy(policy)
        self._shared: SharedPool | None = None
        if coordinator is not None:
            spec = policy
            self._shared = SharedPool(
                lambda: make_policy(spec),
                coordinator,
                pool,
                ttl=lease_ttl,
                max_reorder_wait=max_reorder_wait,
            )
            self._policy = local_policy(self._policy, shared=True)
        self._admission = Admission(self._policy, max_reorder_wait=max_reorder_wait)
        self._lag = LoopLag(lambda: self._admission.in_flight > 0 or len(self._admission.queue) > 0)
        # only for a policy that reads it, and not in a shared pool (its leader judges other
        # processes' requests)
        self._measure_lag = self._shared is None and self._policy.reads_client_lag
        if self._measure_lag:
            self._policy.client_lag = self._lag.within
        self.retries, self.max_retry_wait = retries, max_retry_wait
        self._admitted: dict[int, anyio.Event] = {}
        self._wake = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._state: State = "unopened"
        self._running: dict[int, anyio.CancelScope] = {}  # submitted functions now running
        self._described = ""
        self._idle = anyio.Event()
        self._early = EarlyRelease(self._acquire, self._failed, self._release)

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def state(self) -> State:
        """``unopened`` until ``async with``, ``open`` inside it, ``closed`` after."""
        return self._state

    def _require_open(self, what: str) -> None:
        if self._state != "open":
            hint = (
                "use 'async with Dispatcher(...) as d' first"
                if self._state == "unopened"
                else ("a dispatcher is used once: make a new one")
            )
            raise LifecycleError(f"Dispatcher.{what}() on a {self._state} dispatcher; {hint}")

    async def __aenter__(self) -> Dispatcher:
        if self._state != "unopened":
            raise LifecycleError(f"this Dispatcher is {self._state}: it can be opened only once")
        if self._shared is not None:
            await self._shared.open()
        self._tg = anyio.create_task_group()
        self._stop = anyio.CancelScope()  # may be cancelled before the loop even starts
        self._stop_shared = anyio.CancelScope()
        self._stop_lag = anyio.CancelScope()
        await self._tg.__aenter__()
        self._early._tg = self._tg
        self._state = "open"
        self._tg.start_soon(self._decide_loop)
        if self._measure_lag:
            self._tg.start_soon(self._lag_loop)
        if self._shared is not None:
            self._tg.start_soon(self._shared_loop, self._shared)
        log.info("dispatcher started with policy %s", self._policy.describe())
        self._described = self._policy.describe()
        return self

    async def __aexit__(self, et: Any, ev: Any, tb: Any) -> bool | None:
        """Close: queued jobs are cancelled (their callers get the cancellation); running ones
        are awaited, or cancelled when the block raised."""
        assert self._tg is not None
        self._state = "closed"  # no new submission from here on
        for job in self._admission.queue.drain():
            job.rejected = True
            ev_ = self._admitted.get(job.jid)
            if ev_ is not None:
                ev_.set()
        if ev is not None:
            for scope in list(self._running.values()):
                scope.cancel()
            self._tg.cancel_scope.cancel()  # background drains too
        else:
            await self.idle()
        self._stop.cancel()
        self._stop_shared.cancel()
        self._stop_lag.cancel()
        try:
            # the body's own exception is not the task group's: it propagates as it is, after
            # the background drains finished
            await self._tg.__aexit__(None, None, None)
        finally:
            if self._shared is not None:
                await self._shared.aclose()  # gives back whatever is still held
        return None

    # -- observability ---------------------------------------------------------------------
    @property
    def policy(self) -> str:
        """The current policy, e.g. ``auto: static, B=8 (limit 16)``."""
        if self._shared is not None:
            return self._shared.describe()
        return self._policy.describe()

    @property
    def limit(self) -> int:
        return self._policy.limit()

    @property
    def queue_length(self) -> int:
        return len(self._admission.queue)

    @property
    def in_flight(self) -> int:
        return self._admission.in_flight

    async def idle(self) -> None:
        """Wait until nothing is queued or in flight (background drains included)."""
        while self._admission.in_flight or len(self._admission.queue):
            self._idle = anyio.Event()
            await self._idle.wait()

    @property
    def report(self) -> Any:
        """The last :class:`BatchingReport` ``auto`` decided on (None for other policies)."""
        return getattr(self._policy, "report", None)

    # -- submitting ------------------------------------------------------------------------
    async def submit(
        self,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        expected_tokens: float | None = None,
        key: Any = None,
        label: str | None = None,
        **kwargs: Any,
    ) -> T:
        """Run ``fn(*args, **kwargs)`` once the policy admits it; return its result."""
        got_first = False

        def safe_to_retry(exc: BaseException) -> bool:
            return is_retryable(exc) and not got_first

        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self.retries + 1),
            wait=self._retry_wait,
            retry=retry_if_exception(safe_to_retry),
            sleep=anyio.sleep,
            reraise=True,
        ):
            with attempt:
                async with self.slot(expected_tokens=expected_tokens, key=key, label=label) as job:
                    scope = self._running[job.jid] = anyio.CancelScope()
                    try:
                        with scope:
                            return await fn(*args, **kwargs)
                        raise _cancelled("the dispatcher closed while the job ran")
                    finally:
                        self._running.pop(job.jid, None)
                        got_first = job.first_token is not None
        raise AssertionError("unreachable")  # pragma: no cover

    def _retry_wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        after = retry_after(exc) if exc is not None else None
        if after is not None:
            return min(after, self.max_retry_wait)
        return float(wait_exponential_jitter(initial=0.2, max=self.max_retry_wait)(state))

    @asynccontextmanager
    async def slot(
        self,
        *,
        expected_tokens: float | None = None,
        key: Any = None,
        label: str | None = None,
    ) -> AsyncIterator[Job]:
        """Hold one admitted slot for the block; instrumented calls inside report to it."""
        job = await self._acquire(expected_tokens, key, label)
        token = CURRENT.set(job)
        try:
            yield job
        except BaseException as exc:
            self._failed(job, exc)
            raise
        finally:
            with contextlib.suppress(ValueError):  # closed from another context (abandoned)
                CURRENT.reset(token)
            self._release(job)

    def _failed(self, job: Job, exc: BaseException) -> None:
        """A job's work raised: mark it, and pause admission if the server was overloaded."""
        job.ok = False
        if is_overload(exc):
            self._admission.overload(time.perf_counter(), retry_after(exc))
            if self._shared is not None:
                self._shared.overloaded(job, retry_after(exc))

    async def _acquire(self, expected_tokens: float | None, key: Any, label: str | None) -> Job:
        self._require_open("submit")
        job = Job(key=key, label=label, expected_tokens=expected_tokens, listener=self)
        admitted = self._admitted[job.jid] = anyio.Event()
        self._admission.enqueue(job, time.perf_counter())
        self._lag.wake()  # timing from now: the first admitted sends can stall the loop
        self._kick()
        try:
            await admitted.wait()
        except BaseException:
            if not self._admission.cancel(job):  # admitted meanwhile: give the slot back
                self._release(job)
            raise
        finally:
            self._admitted.pop(job.jid, None)
        if job.rejected:
            raise _cancelled("the dispatcher closed before the job was admitted")
        if self._shared is not None:
            try:
                await self._shared.acquire(job)
            except BaseException:
                self._release(job)
                raise
        return job

    def _release(self, job: Job) -> None:
        if job.lease is not None and self._shared is not None:
            lease, job.lease = job.lease, None
            self._shared.note("done", job, job.traces)
            if self._tg is not None and self._state == "open":
                self._tg.start_soon(self._shared.slots.release, lease)
            # else: closing; aclose() gives back every lease still held
        if job.done is None:
            traces = job.traces or [_bare_trace(job)]
            self._admission.done(job, time.perf_counter(), traces)
            self._kick()
            if not self._admission.in_flight and not len(self._admission.queue):
                self._idle.set()

    async def map(
        self,
        fn: Callable[[Any], Awaitable[T]],
        items: Iterable[Any],
        *,
        expected_tokens: Callable[[Any], float | None] | None = None,
        key: Callable[[Any], Any] | None = None,
        label: str | None = None,
        return_exceptions: bool = False,
    ) -> list[T | BaseException]:
        """``fn(item)`` for every item through the dispatcher; results in input order.

        The first failure cancels the rest and is raised (itself, not in a group), unless
        ``return_exceptions`` puts each failure in its place in the results.
        """
        self._require_open("map")
        work = list(items)
        results: list[Any] = [None] * len(work)

        async def one(i: int, item: Any) -> None:
            try:
                results[i] = await self.submit(
                    fn,
                    item,
                    expected_tokens=expected_tokens(item) if expected_tokens else None,
                    key=key(item) if key else None,
                    label=label,
                )
            except Exception as exc:
                if not return_exceptions:
                    raise
                results[i] = exc

        try:
            async with anyio.create_task_group() as tg:
                for i, item in enumerate(work):
                    tg.start_soon(one, i, item)
        except BaseExceptionGroup as group:  # the first failure cancelled the rest: raise it
            first = first_error(group, Exception)
            if first is None:
                raise
            raise first from group
        return results

    async def astream(
        self,
        llm: Any,
        messages: Any,
        *,
        expected_tokens: float | None = None,
        key: Any = None,
        label: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """``llm.astream(messages, **kwargs)`` through the dispatcher (LangChain models).

        Early release: the chunk carrying ``finish_reason`` is the last one the caller sees;
        the rest of the stream (usage, ``[DONE]``) is read and closed in the background.
        """
        stream = self._early.astream(
            llm, messages, expected_tokens=expected_tokens, key=key, label=label, **kwargs
        )
        async with contextlib.aclosing(stream):
            async for chunk in stream:
                yield chunk

    async def stream(
        self,
        client: Any,
        *,
        expected_tokens: float | None = None,
        key: Any = None,
        label: str | None = None,
        **create: Any,
    ) -> AsyncIterator[Any]:
        """``client.chat.completions.create(stream=True, **create)`` through the dispatcher
        (an ``AsyncOpenAI`` client, instrumented or not), with early release."""
        stream = self._early.stream(
            client, expected_tokens=expected_tokens, key=key, label=label, **create
        )
        async with contextlib.aclosing(stream):
            async for chunk in stream:
                yield chunk

    async def _acquire_for_trace(self, expected_tokens: Any, label: str | None) -> Job:
        """A slot for one routed SDK call; released when that call's trace finishes."""
        expected = float(expected_tokens) if isinstance(expected_tokens, int | float) else None
        job = await self._acquire(expected, None, label)
        job.release_on_trace = True
        return job

    def trace_done(self, job: Job, trace: StreamTrace) -> None:
        if job.release_on_trace and job.done is None:
            job.ok = trace.outcome == "ok"
            if trace.status_code in (429, 503):
                self._admission.overload(time.perf_counter(), None)
                if self._shared is not None:
                    self._shared.overloaded(job, None)
            self._release(job)

    # -- deciding --------------------------------------------------------------------------
    def first_token(self, job: Job, t: float) -> None:
        self._admission.first_token(job, t)
        if self._shared is not None:
            self._shared.note("first", job)
            self._shared.started(job)
        self._kick()

    def _kick(self) -> None:
        self._wake.set()

    async def _decide_loop(self) -> None:
        with self._stop:
            while True:
                self._wake = anyio.Event()
                now = time.perf_counter()
                for job in self._admission.release(now):
                    self._lag.wake()
                    ev = self._admitted.get(job.jid)
                    if ev is not None:
                        ev.set()
                described = self._policy.describe()
                if described != self._described and _kind(described) != _kind(self._described):
                    log.info("dispatcher policy now %s", described)
                self._described = described
                wake = self._admission.next_wakeup(now)
                delay = math.inf if wake is None else max(0.0, wake - now)
                with anyio.move_on_after(delay):
                    await self._wake.wait()

    async def _lag_loop(self) -> None:
        with self._stop_lag:
            await self._lag.run()

    async def _shared_loop(self, shared: SharedPool) -> None:
        with self._stop_shared:
            await shared.run()

    _stop: anyio.CancelScope
    _stop_shared: anyio.CancelScope
    _stop_lag: anyio.CancelScope


def _cancelled(why: str) -> BaseException:
    """The cancellation a caller gets when the dispatcher drops its job (asyncio's
    CancelledError; trio has no public constructor for its own, so there a LifecycleError)."""
    exc_class = anyio.get_cancelled_exc_class()
    if exc_class.__module__.startswith("trio"):
        return LifecycleError(why)
    return exc_class(why)


def _kind(described: str) -> str:
    """The policy's kind without its numbers: a limit moving is not worth a log line."""
    return described.split("(")[0]


def _bare_trace(job: Job) -> StreamTrace:
    """Start and end of a job whose function used no instrumented client."""
    return StreamTrace(
        request_id=f"job{job.jid}",
        label=job.label,
        enqueued=job.enqueued,
        sent=job.sent,
        end=time.perf_counter(),
        outcome="ok" if job.ok else "error",
    )
