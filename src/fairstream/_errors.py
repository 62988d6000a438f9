"""fairstream's exception tree: misuse apart from remote failures (httpx's habit).

The openai and LangChain wrappers re-raise the SDK's own exceptions untouched; these
are what fairstream's own httpx client raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ._trace import StreamTrace

__all__ = [
    "FairstreamError",
    "MissingExtraError",
    "ServerError",
    "StreamError",
    "StreamProtocolError",
    "TransportError",
]


class FairstreamError(Exception):
    """Base of every exception fairstream raises itself."""


class MissingExtraError(FairstreamError, ImportError):
    """An optional integration was used without its extra installed."""


class StreamError(FairstreamError):
    """A request or its stream failed; ``trace`` holds what was received before."""

    trace: StreamTrace | None = None


class TransportError(StreamError):
    """The connection failed (refused, reset, timed out)."""


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
