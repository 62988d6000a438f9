"""Wire-level arrival stamps for SDK streams: the time each SSE event's bytes arrived.

An SDK parses a chunk some time after its bytes arrive (and under load, after other
streams' chunks); stamping the raw bytes as the HTTP library hands them over removes
that delay from the trace. OpenAI-compatible servers send one ``data:`` line per event,
and JSON strings cannot hold a raw newline, so counting ``\\ndata:`` (and a leading
``data:``) in each byte chunk counts the events it completes.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["stamp_response"]


def stamp_response(response: Any) -> deque[float] | None:
    """Patch ``response.aiter_bytes`` to queue one arrival time per SSE event; None if unable."""
    original = getattr(response, "aiter_bytes", None)
    if original is None:
        return None
    arrivals: deque[float] = deque()

    async def aiter_bytes(*args: Any, **kwargs: Any) -> AsyncIterator[bytes]:
        async for data in original(*args, **kwargs):
            n = data.count(b"\ndata:") + data.startswith(b"data:")
            if n == 1:  # one event per read, as servers send them: no tuple to build
                arrivals.append(time.perf_counter())
            elif n:
                arrivals.extend((time.perf_counter(),) * n)
            yield data

    try:
        response.aiter_bytes = aiter_bytes
    except (AttributeError, TypeError):
        return None
    return arrivals
