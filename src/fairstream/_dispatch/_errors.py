"""What the dispatcher reads off a failure: overload (429/503, Retry-After), retry-safety."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx

__all__ = ["is_overload", "is_retryable", "retry_after"]

_OVERLOAD = (429, 503)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an error carries (ours, openai's, httpx's), if any."""
    for obj in (exc, getattr(exc, "response", None)):
        code = getattr(obj, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_overload(exc: BaseException) -> bool:
    return status_of(exc) in _OVERLOAD


def is_retryable(exc: BaseException) -> bool:
    """Overload or a connection that failed before any answer: safe to send again."""
    if is_overload(exc):
        return True
    name = type(exc).__name__
    if name in ("APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout"):
        return True
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return True
    from .._errors import TransportError

    return isinstance(exc, TransportError) and "Connect" in str(exc)


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` header (delta or HTTP date) on the error, if any."""
    headers: Any = getattr(getattr(exc, "response", None), "headers", None)
    value = None
    if headers is not None:
        value = headers.get("retry-after")
    if value is None:
        value = getattr(exc, "retry_after", None)
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        parsed = email.utils.parsedate_to_datetime(str(value)) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())
