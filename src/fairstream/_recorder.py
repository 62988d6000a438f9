"""``Recorder``: one clock for a run's traces, and the sinks that receive each finished trace.

Rule 1: a sink is a callable taking a :class:`StreamTrace`; it runs once the stream has
        ended (in the task that ended it), so it never delays a chunk; keep it quick, or
        hand the work to a thread as :class:`JsonlSink` does.
Rule 2: a sink that raises is logged (once per sink) and counted; the caller's stream
        never sees it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ._builder import TraceBuilder
from ._errors import LifecycleError
from ._redact import capture_content
from ._trace import StreamTrace

__all__ = [
    "JsonlSink",
    "JsonlText",
    "Recorder",
    "Sink",
    "default_recorder",
    "load_jsonl",
    "parse_jsonl",
]

log = logging.getLogger("fairstream")


class Sink(Protocol):
    """Receives every finished trace."""

    def __call__(self, trace: StreamTrace) -> None: ...


class Recorder:
    """Collects the traces of any number of concurrent streams on one monotonic clock.

    ``keep`` bounds the traces held in memory (the newest are kept; None keeps all). Answer
    text is kept only with ``keep_content=True`` (or, when not given, with the OTel GenAI
    convention's ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``).
    """

    def __init__(
        self,
        sinks: Iterable[Sink | Callable[[StreamTrace], None]] = (),
        *,
        keep: int | None = 10_000,
        keep_content: bool | None = None,
        chunk_debug: bool = False,
    ) -> None:
        self.origin = time.perf_counter()
        self.wall_anchor = time.time()
        self.sinks: list[Callable[[StreamTrace], None]] = list(sinks)
        self.keep_content = capture_content(keep_content)  # off unless asked (_redact.py)
        self.chunk_debug = chunk_debug
        self._traces: deque[StreamTrace] = deque(maxlen=keep)
        self.sink_failures = 0
        self._failed: set[int] = set()
        self._closed = False

    @property
    def traces(self) -> list[StreamTrace]:
        """Finished traces kept in memory, oldest first."""
        return list(self._traces)

    def clear(self) -> None:
        self._traces.clear()

    def add_sink(self, sink: Sink | Callable[[StreamTrace], None]) -> None:
        self.sinks.append(sink)

    def start(self, *, client: str, **fields: Any) -> TraceBuilder:
        """A builder for one new stream; call its ``finish`` when the stream ends."""
        if self._closed:
            raise LifecycleError("the Recorder is closed: no new stream can be recorded")
        builder = TraceBuilder(self, client=client, **fields)
        for sink in self.sinks:  # a span sink keeps the caller's context, where the call is made
            on_start = getattr(sink, "on_start", None)
            if on_start is not None:
                on_start(builder)
        return builder

    def now(self) -> float:
        """Seconds on this recorder's clock."""
        return time.perf_counter() - self.origin

    def emit(self, trace: StreamTrace) -> None:
        """Keep ``trace`` and hand it to every sink (a closed recorder refuses it)."""
        if self._closed:
            raise LifecycleError(
                f"the Recorder is closed: trace of request {trace.request_id} not recorded"
                " (close the recorder after the streams that use it have ended)"
            )
        self._traces.append(trace)
        for sink in self.sinks:
            try:
                sink(trace)
            except Exception:
                self.sink_failures += 1
                if id(sink) not in self._failed:
                    self._failed.add(id(sink))
                    log.exception("fairstream sink %r failed; the stream is unaffected", sink)

    def close(self) -> None:
        """Flush and close every sink that can be closed; later streams are refused."""
        if self._closed:
            return
        self._closed = True
        for sink in self.sinks:
            close = getattr(sink, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.exception("closing sink %r failed", sink)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class JsonlSink:
    """Appends each trace as one JSON line (schema ``fairstream.trace/1``) as it finishes.

    Rule 1: one ``os.write`` of the whole line per trace, on an ``O_APPEND`` descriptor, in
            the task that finished the stream: the line is in the operating system before
            the stream's end returns, so a process killed (even by SIGKILL) loses no finished
            trace; at most a line whose write was under way is left torn, and the readers
            (``load_jsonl``, ``fairstream analyze``) skip such a last line and say so.
    Rule 2: a thread ``fsync``s the file at most every ``sync_every`` seconds while lines
            are being written, so a machine crash loses at most that much (None: never;
            the OS writes back on its own).
    The cost is one JSON encoding and one system call per trace, never per chunk
    (``benchmarks/overhead.py`` measures it).
    """

    def __init__(self, path: str | Path, *, sync_every: float | None = 1.0) -> None:
        self.path = Path(path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()  # a line is written whole, whatever thread emits
        self._dirty = False
        self._closed = False
        self._stop = threading.Event()
        self._syncer: threading.Thread | None = None
        if sync_every is not None:
            self._syncer = threading.Thread(
                target=self._sync_loop, args=(sync_every,), name="fairstream-jsonl", daemon=True
            )
            self._syncer.start()

    def __call__(self, trace: StreamTrace) -> None:
        data = (json.dumps(trace.to_dict(), ensure_ascii=False) + "\n").encode()
        with self._lock:
            if self._closed:
                raise LifecycleError(f"JSONL sink {self.path} is closed; the trace was not written")
            view = memoryview(data)
            while view:  # a short write (a full disk, a signal) goes on where it stopped
                view = view[os.write(self._fd, view) :]
            self._dirty = True

    def _sync_loop(self, every: float) -> None:
        while not self._stop.wait(every):
            self._sync()

    def _sync(self) -> None:
        with self._lock:
            if self._dirty and not self._closed:
                self._dirty = False
                os.fsync(self._fd)

    def close(self) -> None:
        """Sync the file to disk and close it; later traces raise :class:`LifecycleError`."""
        if self._closed:
            return
        self._stop.set()
        if self._syncer is not None:
            self._syncer.join()
        self._sync()
        with self._lock:
            self._closed = True
            os.close(self._fd)

    def __repr__(self) -> str:
        return f"JsonlSink({str(self.path)!r})"


@dataclass(frozen=True, slots=True)
class JsonlText:
    """What a JSONL trace file holds: its traces, a torn last line, and lines that are not
    traces (line number, why)."""

    traces: list[StreamTrace]
    torn: int = 0  # 1 when the last line was cut short (its writer died mid-line)
    bad: list[tuple[int, str]] = field(default_factory=list)


def parse_jsonl(text: str) -> JsonlText:
    """Traces from the text of a JSONL file; a last line with no newline that does not parse
    is torn, not bad (a writer killed mid-line)."""
    lines = text.split("\n")
    complete = text.endswith("\n")
    traces: list[StreamTrace] = []
    bad: list[tuple[int, str]] = []
    torn = 0
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            traces.append(StreamTrace.from_dict(json.loads(line)))
        except (ValueError, TypeError, KeyError) as exc:
            if n == len(lines) and not complete:
                torn = 1
            else:
                bad.append((n, f"{line[:80]!r}: {exc}"))
    return JsonlText(traces, torn, bad)


def load_jsonl(path: str | Path) -> list[StreamTrace]:
    """Read traces written by :class:`JsonlSink`. A bad line raises with its line number; a
    torn last line (its writer was killed mid-line) is skipped with a warning."""
    read = parse_jsonl(Path(path).read_text(encoding="utf-8"))
    if read.bad:
        n, why = read.bad[0]
        raise ValueError(f"{path}:{n}: {why}")
    if read.torn:
        log.warning("%s: skipped 1 torn last line (its writer stopped mid-line)", path)
    return read.traces


_DEFAULT: Recorder | None = None


def default_recorder() -> Recorder:
    """The process-wide recorder used when ``instrument`` is given none (logs ``en`` lines)."""
    global _DEFAULT
    if _DEFAULT is None:
        from ._logline import LogSink

        _DEFAULT = Recorder([LogSink()])
    return _DEFAULT
