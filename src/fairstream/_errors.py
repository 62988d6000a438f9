"""fairstream's exception tree, in one module: misuse apart from remote failures (httpx's habit).

    FairstreamError
    ├── MissingExtraError      an optional integration used without its extra (also ImportError)
    ├── LifecycleError         a component used before it was opened or after it was closed
    ├── StreamError            a request or its stream failed; ``.trace`` has what came before
    │   ├── TransportError     the connection failed (reset, timed out, closed)
    │   │   └── ConnectError   ... before any answer: safe to send again
    │   ├── ServerError        an error status or an in-band error event (``.status_code``)
    │   └── StreamProtocolError  not a valid OpenAI stream (bad JSON, bad frame)
    │       └── IncompleteStreamError  it ended without a finish_reason: the answer may be cut
    ├── ReplayRefused          ``replay`` cannot answer honestly from these traces (also ValueError)
    └── StreamEnded            recorded on traces only, never raised to the caller:
        ├── ClosedByCaller     the caller closed the stream before it ended
        └── StreamAbandoned    the stream object was dropped unfinished and unclosed

The openai and LangChain wrappers re-raise the SDK's own exceptions untouched; these
are what fairstream's own httpx client raises.
"""

from __future__ import annotations

import email.utils
import time
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ._trace import StreamTrace

__all__ = [
    "ClosedByCaller",
    "ConnectError",
    "FairstreamError",
    "IncompleteStreamError",
    "LifecycleError",
    "MissingExtraError",
    "ReplayRefused",
    "ServerError",
    "StreamAbandoned",
    "StreamEnded",
    "StreamError",
    "StreamProtocolError",
    "TransportError",
    "parse_retry_after",
]


class FairstreamError(Exception):
    """Base of every exception fairstream raises itself."""


class MissingExtraError(FairstreamError, ImportError):
    """An optional integration was used without its extra installed."""


class LifecycleError(FairstreamError, RuntimeError):
    """A component was used outside its open state (before ``async with``, after close);
    the message names the component and its state. Also a RuntimeError, as before."""


class StreamError(FairstreamError):
    """A request or its stream failed; ``trace`` holds what was received before."""

    trace: StreamTrace | None = None


class TransportError(StreamError):
    """The connection failed (refused, reset, timed out)."""


class ConnectError(TransportError):
    """The connection could not be made (refused, connect timeout): nothing was sent."""


class ServerError(StreamError):
    """The server answered with an error status or an in-band error event."""

    def __init__(
        self,
        message: str,
        status_code: int | None = None,
        body: object = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.retry_after = retry_after  # seconds, from the Retry-After header


class StreamProtocolError(StreamError):
    """The server sent something that is not a valid OpenAI stream (bad JSON, bad frame)."""


class IncompleteStreamError(StreamProtocolError):
    """The stream ended (closed, or ``[DONE]``) without a ``finish_reason`` on its choice:
    a proxy or a dying worker cut it, and the answer the caller has may be truncated."""

    trace_type = "IncompleteStream"  # the trace's error_type


class ReplayRefused(FairstreamError, ValueError):
    """``replay`` refuses to answer: the traces are too thin, or the fitted model does not
    reproduce what they show. ``reasons`` names each gap; ``check`` holds the self-check's
    figures (observed, replayed, error, tolerance per figure) when it ran."""

    suggestion = (
        "measure the server cleanly with `fairstream probe --base-url URL`, or record more"
        " overlapping requests from a client that is not busy elsewhere"
    )

    def __init__(self, reasons: list[str], check: dict[str, dict[str, float]] | None = None):
        self.reasons = list(reasons)
        self.check = dict(check or {})
        super().__init__("; ".join(self.reasons))

    def __str__(self) -> str:
        return f"replay refused: {'; '.join(self.reasons)}. Instead, {self.suggestion}."


class StreamEnded(FairstreamError):
    """How a stream ended early, as recorded on its trace (never raised to the caller)."""


class ClosedByCaller(StreamEnded):
    """The caller closed the stream before it ended."""

    def __str__(self) -> str:
        return "stream closed by the caller before it ended"


class StreamAbandoned(StreamEnded):
    """The stream object was dropped unfinished and unclosed."""

    def __str__(self) -> str:
        return "stream dropped before it ended, without close()"


def parse_retry_after(value: object) -> float | None:
    """Seconds from a ``Retry-After`` value: delta seconds or an HTTP date; None if neither."""
    if value is None or value == "":
        return None
    try:
        return max(0.0, float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def require(module: str, extra: str) -> None:
    """Raise :class:`MissingExtraError` naming the extra that provides ``module``."""
    raise MissingExtraError(
        f"{module} is not installed; install it with: pip install 'fairstream[{extra}]'"
    )


E = TypeVar("E", bound=BaseException)


def first_error(group: BaseExceptionGroup[BaseException], kind: type[E]) -> E | None:
    """The first exception of ``kind`` in a (nested) exception group, or None.

    A task group that failed raises a group; callers of a single operation want the error.
    """
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = first_error(exc, kind)
            if found is not None:
                return found
        elif isinstance(exc, kind):
            return exc
    return None
