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
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from ._builder import TraceBuilder
from ._trace import StreamTrace

__all__ = ["JsonlSink", "Recorder", "Sink", "default_recorder", "load_jsonl"]

log = logging.getLogger("fairstream")


class Sink(Protocol):
    """Receives every finished trace."""

    def __call__(self, trace: StreamTrace) -> None: ...


class Recorder:
    """Collects the traces of any number of concurrent streams on one monotonic clock.

    ``keep`` bounds the traces held in memory (the newest are kept; None keeps all).
    """

    def __init__(
        self,
        sinks: Iterable[Sink | Callable[[StreamTrace], None]] = (),
        *,
        keep: int | None = 10_000,
        keep_content: bool = False,
        chunk_debug: bool = False,
    ) -> None:
        self.origin = time.perf_counter()
        self.wall_anchor = time.time()
        self.sinks: list[Callable[[StreamTrace], None]] = list(sinks)
        self.keep_content = keep_content
        self.chunk_debug = chunk_debug
        self._traces: deque[StreamTrace] = deque(maxlen=keep)
        self.sink_failures = 0
        self._failed: set[int] = set()

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
        return TraceBuilder(self, client=client, **fields)

    def now(self) -> float:
        """Seconds on this recorder's clock."""
        return time.perf_counter() - self.origin

    def emit(self, trace: StreamTrace) -> None:
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
        """Flush and close every sink that can be closed."""
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
    """Appends each trace as one JSON line (schema ``fairstream.trace/1``) from a writer thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._queue: queue.SimpleQueue[StreamTrace | None] = queue.SimpleQueue()
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        self._thread = threading.Thread(target=self._write, name="fairstream-jsonl", daemon=True)
        self._thread.start()
        self._closed = False

    def __call__(self, trace: StreamTrace) -> None:
        if self._closed:
            raise RuntimeError(f"JSONL sink {self.path} is closed")
        self._queue.put(trace)

    def _write(self) -> None:
        while (trace := self._queue.get()) is not None:
            self._file.write(json.dumps(trace.to_dict(), ensure_ascii=False) + "\n")
            if self._queue.empty():
                self._file.flush()
        self._file.flush()

    def close(self) -> None:
        """Write what is queued, then close the file."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join()
        self._file.close()

    def __repr__(self) -> str:
        return f"JsonlSink({str(self.path)!r})"


def load_jsonl(path: str | Path) -> list[StreamTrace]:
    """Read traces written by :class:`JsonlSink`; a bad line raises with its line number."""
    return list(_iter_jsonl(Path(path)))


def _iter_jsonl(path: Path) -> Iterator[StreamTrace]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield StreamTrace.from_dict(json.loads(line))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{n}: {exc}") from None


_DEFAULT: Recorder | None = None


def default_recorder() -> Recorder:
    """The process-wide recorder used when ``instrument`` is given none (logs ``en`` lines)."""
    global _DEFAULT
    if _DEFAULT is None:
        from ._logline import LogSink

        _DEFAULT = Recorder([LogSink()])
    return _DEFAULT
