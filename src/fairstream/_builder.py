"""``TraceBuilder``: the mutable side of a trace while its stream is running (the hot path).

Rule 1: per chunk it does one clock read and two list appends; everything else waits
        for :meth:`TraceBuilder.finish`.
Rule 2: ``finish`` runs exactly once, whatever ends the stream (exhaustion, error,
        cancellation, early close); later calls return the trace already made.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from ._attribution import CURRENT
from ._trace import Outcome, StreamTrace, Usage

__all__ = ["TraceBuilder", "current_tags", "tag"]

log = logging.getLogger("fairstream")


class RecorderLike(Protocol):
    """What a builder needs of its recorder (``fairstream.Recorder`` is one): the clock's
    origin, what to keep, and where a finished trace goes. Named here, so this module does not
    import the recorder that imports it."""

    origin: float
    wall_anchor: float
    keep_content: bool
    chunk_debug: bool

    def emit(self, trace: StreamTrace) -> None: ...


_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class _Tags:
    label: str | None = None
    request_id: str | None = None


_TAGS: ContextVar[_Tags] = ContextVar("fairstream_tags", default=_Tags())  # noqa: B039 (frozen)


@contextmanager
def tag(label: str | None = None, request_id: str | int | None = None) -> Iterator[None]:
    """Label (and optionally number) the instrumented requests made inside this block."""
    token = _TAGS.set(_Tags(label, None if request_id is None else str(request_id)))
    try:
        yield
    finally:
        _TAGS.reset(token)


def current_tags() -> tuple[str | None, str | None]:
    """(label, request id) set by the innermost :func:`tag` block."""
    tags = _TAGS.get()
    return tags.label, tags.request_id


class TraceBuilder:
    """Collects one stream's events; :meth:`finish` turns them into a :class:`StreamTrace`."""

    __slots__ = (
        "_chars",
        "_continuous_usage",
        "_debug",
        "_exact_tokens",
        "_finished_trace",
        "_job",
        "_last_completion",
        "_times",
        "add_chars",
        "add_time",
        "base_url",
        "client",
        "content_parts",
        "done",
        "enqueued",
        "finish_chunk",
        "finish_reason",
        "headers",
        "label",
        "max_tokens",
        "model",
        "plain",
        "recorder",
        "request_id",
        "response_id",
        "response_model",
        "retries",
        "sent",
        "status_code",
        "usage",
        "watch",
    )

    def __init__(
        self,
        recorder: RecorderLike,
        *,
        client: str,
        model: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        label: str | None = None,
        request_id: str | None = None,
        enqueued: float | None = None,
    ) -> None:
        tag_label, tag_id = current_tags()
        self.recorder = recorder
        self.client = client
        self.model = model
        self.base_url = base_url
        self.max_tokens = max_tokens
        self.label = label if label is not None else tag_label
        self.request_id = request_id or tag_id or str(next(_ids))
        self.enqueued = enqueued
        self.sent: float | None = None
        self.headers: float | None = None
        self.finish_chunk: float | None = None
        self.finish_reason: str | None = None
        self.response_id: str | None = None
        self.response_model: str | None = None
        self.usage: Usage | None = None
        self.retries = 0
        self.status_code: int | None = None
        self.content_parts: list[str] | None = [] if recorder.keep_content else None
        self._times: list[float] = []
        self._exact_tokens: dict[int, int] = {}  # chunk index -> tokens, from usage
        self._chars: list[int] = []
        self._continuous_usage = False
        self._last_completion = 0
        self._debug = recorder.chunk_debug
        # the SDK streams' fast lane: once ``plain``, a content chunk without a finish reason
        # or usage is only its arrival time and size, appended through these
        self.plain = False
        self.add_time = self._times.append
        self.add_chars = self._chars.append
        self.done = False  # set once finish() has run
        self._finished_trace: StreamTrace | None = None
        # inside a dispatcher submission: queue time, first token and trace go to its job
        job = CURRENT.get()
        self._job = job
        self.watch = job  # cleared at the first content chunk
        if job is not None and self.enqueued is None:
            self.enqueued = job.enqueued

    # -- events ---------------------------------------------------------------------------
    def mark_sent(self) -> None:
        self.sent = time.perf_counter()

    def mark_headers(self, status_code: int | None = None) -> None:
        self.headers = time.perf_counter()
        self.status_code = status_code

    def record(
        self,
        content: str | None,
        t: float | None = None,
        reason: str | None = None,
        response_id: str | None = None,
        usage: tuple[int | None, int | None, int | None] | None = None,
        model: str | None = None,
    ) -> None:
        """One stream event (hot path): its text, if any; its finish reason, response id and
        usage ``(prompt, completion, total)`` and model if it carries them. Every client path's
        decoder (``_instrument/_decode.py``) ends here."""
        now = time.perf_counter() if t is None else t
        self._times.append(now)
        if content:
            if self.watch is not None:
                self.watch.note_first_token(now)
                self.watch = None
            n = len(content)
            self._chars.append(n)
            if self.content_parts is not None:
                self.content_parts.append(content)
        else:
            n = 0
            self._chars.append(0)
        if reason and self.finish_reason is None:
            self.finish_reason = reason
            self.finish_chunk = now
        if self.response_id is None:
            self.response_id, self.response_model = response_id, model
        if usage is not None:
            self.chunk_usage(*usage)
        if not self.plain and self.watch is None and self.response_id is not None:
            self.plain = self.content_parts is None and not self._debug
        if self._debug:
            log.debug("request %s chunk at %.6f (%d chars)", self.request_id, time.time(), n)

    def chunk_usage(self, prompt: int | None, completion: int | None, total: int | None) -> None:
        """Usage seen on a chunk: per-chunk (vLLM continuous stats) or the final usage chunk."""
        self.usage = Usage(prompt, completion, total)
        if completion is None or not self._times:
            return
        if self._chars[-1] > 0:  # usage riding on a content chunk: exact tokens per chunk
            self._continuous_usage = True
            self._exact_tokens[len(self._chars) - 1] = completion - self._last_completion
            self._last_completion = completion

    def finish_seen(self, reason: str | None) -> None:
        if reason and self.finish_reason is None:
            self.finish_reason = reason
            self.finish_chunk = self._times[-1] if self._times else time.perf_counter()

    @property
    def chunk_count(self) -> int:
        return len(self._times)

    @property
    def finished_trace(self) -> StreamTrace | None:
        """The trace once :meth:`finish` has run, else None."""
        return self._finished_trace

    # -- end ---------------------------------------------------------------------------------
    def finish(self, outcome: Outcome = "ok", error: BaseException | None = None) -> StreamTrace:
        """Freeze the trace and hand it to the recorder's sinks (once)."""
        if self._finished_trace is not None:
            return self._finished_trace
        self.done = True
        end = time.perf_counter()
        if error is not None and is_cancellation(error):
            outcome = "cancelled"
        o = self.recorder.origin
        times = tuple([t - o for t in self._times])  # (a comprehension: no frame per chunk)
        content_idx = [i for i, c in enumerate(self._chars) if c]
        usage = self.usage
        # a content chunk counts one token unless usage on it said how many
        exact = self._exact_tokens
        if exact:
            tokens = tuple([exact.get(i, 1) if c else 0 for i, c in enumerate(self._chars)])
        else:
            tokens = tuple([1 if c else 0 for c in self._chars])
        counted = sum(tokens)
        if usage is None or usage.completion_tokens is None:
            prompt = usage.prompt_tokens if usage else None
            usage = Usage(prompt, counted, None if prompt is None else prompt + counted, True)
        trace = StreamTrace(
            request_id=self.request_id,
            label=self.label,
            model=self.model,
            base_url=self.base_url,
            max_tokens=self.max_tokens,
            client=self.client,
            response_id=self.response_id,
            response_model=self.response_model,
            enqueued=_rel(self.enqueued, o),
            sent=_rel(self.sent, o),
            headers=_rel(self.headers, o),
            first_chunk=times[0] if times else None,
            first_content=times[content_idx[0]] if content_idx else None,
            last_content=times[content_idx[-1]] if content_idx else None,
            finish_chunk=_rel(self.finish_chunk, o),
            end=end - o,
            chunk_times=times,
            chunk_tokens=tokens,
            chunk_chars=tuple(self._chars),
            chunk_tokens_estimated=not self._continuous_usage,
            usage=usage,
            finish_reason=self.finish_reason,
            retries=self.retries,
            outcome=outcome if error is None or outcome != "ok" else "error",
            error_type=None if error is None else _error_type(error),
            error_message=None if error is None else _message(error),
            status_code=self.status_code,
            wall_anchor=self.recorder.wall_anchor,
            content="".join(self.content_parts) if self.content_parts is not None else None,
        )
        self._finished_trace = trace
        self.recorder.emit(trace)
        if self._job is not None:
            self._job.note_trace(trace, o)
        return trace


def is_cancellation(error: BaseException) -> bool:
    """asyncio's or trio's cancellation, or a generator closed early; also a group of only
    those (trio delivers a cancellation through a nursery as one)."""
    if isinstance(error, BaseExceptionGroup):
        return all(is_cancellation(e) for e in error.exceptions)
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        return True
    cls = type(error)
    return cls.__name__ == "Cancelled" and cls.__module__.startswith("trio")


def _error_type(error: BaseException) -> str:
    """The name a trace gives an error: its class's, or the ``trace_type`` it declares."""
    declared = getattr(error, "trace_type", None)
    return declared if isinstance(declared, str) else type(error).__name__


def _rel(t: float | None, origin: float) -> float | None:
    return None if t is None else t - origin


def _message(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 500 else text[:497] + "..."
