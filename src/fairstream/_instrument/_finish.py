"""How each client family marks a finished answer, and closing a stream without waiting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

__all__ = ["aclose", "lc_finished", "sdk_finished"]


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
