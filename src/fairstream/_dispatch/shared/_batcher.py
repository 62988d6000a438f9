"""``Batcher``: a process's calls of one Redis script, made together, go as one call.

When a burst's requests enqueue, or its gathering window ends and all of them look again, a
process makes as many script calls at once as it has waiters. So the calls made while one is
on its way wait for it and then go together, as one call of the script's ``_many`` form (the
same as calling it for each in turn: a script is atomic). Measured side by side, this cuts
Redis's commands per job by a quarter, not the acquire round trip.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ._breaker import CoordinatorDown

__all__ = ["Batcher"]

_Entry = tuple[list[Any], anyio.Event, list[Any]]  # the call's args, its reply's arrival, reply


class Batcher:
    """Calls of ``call(name, args)`` gathered into ``call(name + "_many", all args)`` while
    :meth:`run` runs; without it each goes on its own."""

    def __init__(self, call: Callable[[str, list[Any]], Awaitable[Any]]) -> None:
        self._call = call
        self._queues: dict[str, list[_Entry]] = {}
        self._more: anyio.Event | None = None  # None: run() is not running

    async def call(self, name: str, args: list[Any]) -> Any:
        """What ``name`` replies for ``args``, sent with whatever else waits to be sent."""
        if self._more is None:  # no run(): a call of its own
            return await self._call(name, args)
        done, box = anyio.Event(), list[Any]()
        entry = (args, done, box)
        self._queues.setdefault(name, []).append(entry)
        self._more.set()
        try:
            await done.wait()
        except BaseException:
            queue = self._queues.get(name, [])  # what has not been sent yet
            if entry in queue:  # not sent: nothing to undo
                queue.remove(entry)
            else:  # on its way: let it land first, so the caller's undo comes after it
                with anyio.CancelScope(shield=True):
                    await done.wait()
            raise
        if box[0] is None:  # run() ended before the reply: a call of its own
            return await self._call(name, args)
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    async def run(self) -> None:
        """Send what waits, one call per script, until cancelled; then let each unanswered
        caller call on its own."""
        batch: list[_Entry] = []
        try:
            while True:
                self._more = anyio.Event()
                if not any(self._queues.values()):
                    await self._more.wait()
                for name in list(self._queues):  # (a caller may add a name meanwhile)
                    batch, self._queues[name] = self._queues[name], []
                    if not batch:
                        continue
                    flat = [x for args, _, _ in batch for x in args]
                    try:
                        got: list[Any] = list(await self._call(f"{name}_many", flat))
                    except CoordinatorDown as exc:  # each caller falls back on its own
                        got = [exc] * len(batch)
                    for (_, done, box), reply in zip(batch, got, strict=True):
                        box.append(reply)
                        done.set()
                    batch = []
        finally:
            self._more = None
            for _, done, box in [*batch, *(e for q in self._queues.values() for e in q)]:
                if not box:
                    box.append(None)
                done.set()
            self._queues = {}
