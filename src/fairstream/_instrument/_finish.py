"""How a stream ended, decided in one place for every client path; and small stream helpers.

Rule 1: a stream is complete only if its choice carried a ``finish_reason``. A stream
        that ends without one (the connection closed, or even ``[DONE]``) is incomplete:
        its trace says ``error`` / ``IncompleteStream`` and the caller gets
        :class:`IncompleteStreamError` after the last chunk it received, unless the client
        was told ``on_incomplete="record"`` (then only the trace says so).
Rule 2: a stream left early (closed by the caller, or dropped and collected) is
        ``cancelled`` with :class:`ClosedByCaller` / :class:`StreamAbandoned`, unless its
        finish reason had come already (then it is complete: only ``[DONE]`` was skipped).
Rule 3: a stream that failed is ``error``, or ``cancelled`` when the failure is a
        cancellation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import anyio

from .._errors import ClosedByCaller, IncompleteStreamError, StreamAbandoned

if TYPE_CHECKING:
    from .._builder import TraceBuilder

__all__ = ["OnIncomplete", "aclose", "end_stream", "lc_finished", "sdk_finished"]

How = Literal["ended", "closed", "abandoned", "failed"]
OnIncomplete = Literal["raise", "record"]


def end_stream(
    b: TraceBuilder,
    how: How,
    error: BaseException | None = None,
    *,
    on_incomplete: OnIncomplete = "raise",
) -> IncompleteStreamError | None:
    """Finish ``b``'s trace by how its stream ended (the rules above); return the error the
    caller should now get, if any (only for an incomplete stream, with ``"raise"``).

    ``how``: ``ended`` (the server ended it: close or ``[DONE]``), ``closed`` (the caller
    closed it or left its block early), ``abandoned`` (collected unclosed), ``failed``
    (``error`` was raised while reading it). Later calls, once finished, do nothing.
    """
    if b.done:
        return None
    if how == "failed":
        assert error is not None
        b.finish(error=error)
        return None
    if b.finish_reason:
        b.finish("ok")
        return None
    if how == "closed":
        b.finish("cancelled", ClosedByCaller())
    elif how == "abandoned":
        b.finish("cancelled", StreamAbandoned())
    else:
        cut = IncompleteStreamError(
            f"stream ended after {b.chunk_count} chunks without a finish_reason"
        )
        cut.trace = b.finish(error=cut)
        return cut if on_incomplete == "raise" else None
    return None


def lc_finished(chunk: Any) -> bool:
    meta = getattr(chunk, "response_metadata", None) or {}
    return bool(meta.get("finish_reason"))


def sdk_finished(chunk: Any) -> bool:
    choices: Sequence[Any] = getattr(chunk, "choices", None) or ()
    return bool(choices and getattr(choices[0], "finish_reason", None))


async def aclose(stream: Any) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        with anyio.CancelScope(shield=True):
            await close()
