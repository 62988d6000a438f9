"""What the dispatcher reads off a failure: overload (429/503, Retry-After), retry-safety."""

from __future__ import annotations

import sys
from typing import Any

import httpx

from .._errors import ConnectError, parse_retry_after

__all__ = ["is_overload", "is_retryable", "retry_after", "status_of"]

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


def _connect_errors() -> tuple[type[BaseException], ...]:
    """Exceptions meaning 'no connection was made': ours, httpx's, and (when loaded) the
    openai SDK's and httpx2's. Optional packages are looked up, never imported here."""
    kinds: list[type[BaseException]] = [ConnectError, httpx.ConnectError, httpx.ConnectTimeout]
    openai = sys.modules.get("openai")
    if openai is not None:  # APITimeoutError is an APIConnectionError
        kinds.append(openai.APIConnectionError)
    httpx2 = sys.modules.get("httpx2")
    if httpx2 is not None:
        kinds += [httpx2.ConnectError, httpx2.ConnectTimeout]
    return tuple(kinds)


def is_retryable(exc: BaseException) -> bool:
    """Overload or a connection that failed before any answer: safe to send again."""
    return is_overload(exc) or isinstance(exc, _connect_errors())


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` header (delta or HTTP date) on the error, if any."""
    headers: Any = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if value is None:
        value = getattr(exc, "retry_after", None)
    return parse_retry_after(value)
