"""Early release for streamed calls: the caller's loop ends at the finish chunk, and the rest
of the stream (usage, ``[DONE]``) is read and closed in the dispatcher's background.

:class:`EarlyRelease` is what ``Dispatcher.astream`` and ``Dispatcher.stream`` delegate to; it
gets the dispatcher's slot machinery as three functions and its task group when opened."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from .._attribution import CURRENT
from .._instrument._finish import aclose, lc_finished, sdk_finished
from ._job import Job

__all__ = ["EarlyRelease"]

log = logging.getLogger("fairstream.dispatch")


class EarlyRelease:
    """``astream`` and ``stream`` of :class:`Dispatcher`, on its slot machinery."""

    def __init__(
        self,
        acquire: Callable[[float | None, Any, str | None], Awaitable[Job]],
        failed: Callable[[Job, BaseException], None],
        release: Callable[[Job], None],
    ) -> None:
        self._acquire, self._failed, self._release = acquire, failed, release
        self._tg: anyio.abc.TaskGroup | None = None  # the dispatcher's, while it is open

    async def astream(
        self,
        llm: Any,
        messages: Any,
        *,
        expected_tokens: float | None = None,
        key: Any = None,
        label: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        """``llm.astream(messages, **kwargs)`` through the dispatcher (LangChain models).

        Early release: the chunk carrying ``finish_reason`` is the last one the caller sees;
        the rest of the stream (usage, ``[DONE]``) is read and closed in the background.
        """
        if expected_tokens is None:
            expected_tokens = kwargs.get("max_tokens") or getattr(llm, "max_tokens", None)
        async for chunk in self._through(
            lambda: llm.astream(messages, **kwargs), lc_finished, expected_tokens, key, label
        ):
            yield chunk

    async def stream(
        self,
        client: Any,
        *,
        expected_tokens: float | None = None,
        key: Any = None,
        label: str | None = None,
        **create: Any,
    ) -> AsyncGenerator[Any, None]:
        """``client.chat.completions.create(stream=True, **create)`` through the dispatcher
        (an ``AsyncOpenAI`` client, instrumented or not), with early release."""
        if expected_tokens is None:
            expected_tokens = create.get("max_tokens") or create.get("max_completion_tokens")

        async def opened() -> AsyncIterator[Any]:
            stream = await client.chat.completions.create(stream=True, **create)
            async with stream:
                async for chunk in stream:
                    yield chunk

        async for chunk in self._through(opened, sdk_finished, expected_tokens, key, label):
            yield chunk

    async def _through(
        self,
        open_stream: Callable[[], AsyncIterator[Any]],
        finished: Callable[[Any], bool],
        expected_tokens: float | None,
        key: Any,
        label: str | None,
    ) -> AsyncGenerator[Any, None]:
        job = await self._acquire(expected_tokens, key, label)
        assert self._tg is not None
        token = CURRENT.set(job)
        inner = open_stream()
        handed_off = False
        try:
            async for chunk in inner:
                yield chunk
                if finished(chunk):
                    handed_off = True  # the caller has it all: drain and close out of its way
                    self._tg.start_soon(self._drain, inner, job)
                    return
        except BaseException as exc:
            self._failed(job, exc)
            raise
        finally:
            with contextlib.suppress(ValueError):
                CURRENT.reset(token)
            if not handed_off:
                await aclose(inner)
                self._release(job)

    async def _drain(self, inner: AsyncIterator[Any], job: Job) -> None:
        token = CURRENT.set(job)
        try:
            async for _ in inner:
                pass
        except Exception:  # the caller already has its answer; the trace says what failed
            log.debug("background drain of request %s ended with an error", job.jid)
        finally:
            await aclose(inner)
            CURRENT.reset(token)
            self._release(job)
