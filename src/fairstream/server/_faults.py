"""Failure injection: the faults a real server commits, on purpose and reproducibly.

Spec (``ServerConfig.faults``, ``fairstream serve --faults``): faults separated by ``;``,
each ``kind[:key=value,...]`` with keys ``rate`` (probability per request, seeded),
``at`` (request numbers, ``|``-separated, 1-based, counting generation requests),
``after`` (chunks written before a mid-stream fault, default 2) and ``seconds`` (stall or
header delay, default 1). Example: ``disconnect_mid:at=3,after=5;status_429:rate=0.1``.
Off by default; the first fault that applies to a request wins.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._http import Exchange
from ._wire import DONE, error_json

__all__ = ["CUTS", "KINDS", "MID_STREAM", "Fault", "FaultPlan", "FaultyExchange", "parse_faults"]

KINDS = (
    "disconnect_before_headers",  # the connection drops, no response at all
    "slow_headers",  # the response starts `seconds` late
    "status_429",  # 429 with Retry-After
    "status_503",  # 503 with Retry-After
    "disconnect_mid",  # the connection drops after `after` chunks
    "bad_json",  # a malformed chunk after `after` chunks
    "stall",  # no bytes for `seconds` after `after` chunks, then the rest
    "inband_error",  # `data: {"error": ...}` then [DONE] after `after` chunks
    "no_done",  # the stream ends cleanly but without data: [DONE]
    "cut_close",  # `connection: close` framing; the body ends (FIN) after `after` chunks
    "cut_chunked",  # chunked framing; FIN after `after` chunks, no terminating chunk
)
MID_STREAM = {"disconnect_mid", "bad_json", "stall", "inband_error", "no_done"}
CUTS = {"cut_close", "cut_chunked"}  # cut without finish_reason, [DONE] or an error
MID_STREAM |= CUTS


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault and when it strikes."""

    kind: str
    rate: float = 0.0
    at: frozenset[int] = frozenset()
    after: int = 2
    seconds: float = 1.0


def parse_faults(spec: str) -> list[Fault]:
    """Faults from their spec string; ValueError naming what is wrong."""
    faults = []
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        kind, _, args = part.partition(":")
        if kind not in KINDS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(KINDS)}")
        fields: dict[str, Any] = {}
        for item in filter(None, args.split(",")):
            key, _, value = item.partition("=")
            try:
                if key == "rate":
                    fields["rate"] = float(value)
                elif key == "at":
                    fields["at"] = frozenset(int(x) for x in value.split("|"))
                elif key == "after":
                    fields["after"] = int(value)
                elif key == "seconds":
                    fields["seconds"] = float(value)
                else:
                    raise ValueError(f"unknown key {key!r}")
            except ValueError as exc:
                raise ValueError(f"fault {part!r}: {exc}") from None
        faults.append(Fault(kind, **fields))
    return faults


class FaultPlan:
    """Which fault, if any, the n-th generation request gets (deterministic with a seed)."""

    def __init__(self, faults: list[Fault], seed: int = 0) -> None:
        self.faults = faults
        self._rng = random.Random(seed)
        self.injected: dict[str, int] = {}

    def pick(self, n: int) -> Fault | None:
        if not self.faults:
            return None
        draw = self._rng.random()
        for fault in self.faults:
            if n in fault.at or (fault.rate and draw < fault.rate):
                self.injected[fault.kind] = self.injected.get(fault.kind, 0) + 1
                return fault
        return None


class FaultyExchange:
    """An :class:`Exchange` that commits a mid-stream fault after ``fault.after`` writes."""

    def __init__(
        self,
        ex: Exchange,
        fault: Fault,
        cancel: Callable[[], None],
        error: bytes | None = None,  # the in-band error event (default: a chat error + [DONE])
    ) -> None:
        self._ex, self._fault, self._cancel = ex, fault, cancel
        self._error = error
        self._writes = 0
        self._held: list[bytes] | None = None  # stall: writes waiting to go out
        self._end_held = False
        self._dead = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ex, name)

    @property
    def on_close(self) -> Callable[[], None] | None:
        return self._ex.on_close

    @on_close.setter
    def on_close(self, fn: Callable[[], None] | None) -> None:
        self._ex.on_close = fn

    def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        if self._fault.kind == "cut_close":
            self._ex.start_unframed(status, headers)
        else:
            self._ex.start(status, headers)

    def write(self, data: bytes) -> None:
        if self._dead:
            return
        kind = self._fault.kind
        if kind == "no_done" and data.endswith(DONE):
            data = data[: -len(DONE)]
        if self._held is not None:
            self._held.append(data)
            return
        self._writes += 1
        if self._writes == self._fault.after + 1:
            if kind in CUTS:  # a clean close, as a proxy or a dying worker cuts a stream
                self._dead = True
                self._cancel()
                self._ex.hangup()
                return
            if kind == "disconnect_mid":
                self._dead = True
                self._cancel()
                self._ex.abort()
                return
            if kind == "bad_json":
                self._ex.write(b'data: {"id": "broken", "choices": [{"delta": \n\n')
            elif kind == "stall":
                self._held = [data]
                asyncio.get_running_loop().call_later(self._fault.seconds, self._release)
                return
            elif kind == "inband_error":
                self._dead = True
                self._cancel()
                if self._error is not None:
                    self._ex.write(self._error)
                else:
                    self._ex.write(b"data: " + error_json("injected fault", "server_error"))
                    self._ex.write(b"\n\n" + DONE)
                self._ex.end()
                return
        if kind == "cut_close":
            self._ex.write_raw(data)
            return
        self._ex.write(data)

    def end(self) -> None:
        if self._dead:
            return
        if self._fault.kind == "cut_close":  # a short answer: the close ends its body
            self._ex.hangup()
            return
        if self._held is not None:
            self._end_held = True
            return
        self._ex.end()

    def _release(self) -> None:
        held, self._held = self._held or [], None
        for data in held:
            self._ex.write(data)
        if self._end_held:
            self._ex.end()
