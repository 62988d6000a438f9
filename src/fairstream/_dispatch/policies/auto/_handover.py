"""``auto`` on a continuous server at its peak: a slot's next request sent just before it frees.

A mixin of :class:`~fairstream.Auto`. Refilled only when a stream's end reaches us, a slot
idles for the end's trip to the client, the new request's trip to the server and the rest
of the server step it lands in, once per request.
With lengths known (``max_tokens`` with ``ignore_eos``, or a server that runs to them), a
running request's end is due at its first token plus its length in steps: ``handover`` steps
before it, its slot's next request goes, to wait at most that long at the server. A request
that ends sooner than its length (an EOS) is simply refilled at its end. Also while
requests keep arriving, not only at a burst's tail: under open-loop load at 150%
of capacity the idle slots cost 16-slot servers E2E p50 1.02-1.31x naive's, 0.83-0.94x with
handovers. Its wait there is not a slot wait: its first
token is timed from its due time, and never taken as the quickest (see ``docs/dispatcher.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ._batches import Batches

__all__ = ["Handover"]


class Handover:
    """The handover half of :class:`~fairstream.Auto`."""

    kind: str
    slow_start: bool
    handover: float
    _batches: Batches
    _running: dict[int, float]
    _ahead: dict[int, float]  # sent ahead of a slot's end: jid -> when that slot is due
    _now: float
    step: Callable[[], float | None]

    def _applies(self) -> bool:
        kinds = ("continuous", "sequential")  # sequential: its one slot
        return self.handover > 0 and self.kind in kinds and not self.slow_start

    def _send_times(self) -> list[float]:
        """When each running request's slot gets its next one: its expected end less
        ``handover`` steps (none when the rule does not apply)."""
        if not self._applies() or not (step := self.step()):
            return []
        lead = self.handover * step
        return [e - lead for e in self._batches.ends(self._running, step) if e < math.inf]

    def _handovers(self) -> int:
        """Slots due to free within ``handover`` steps: as many may wait at the server."""
        return sum(1 for t in self._send_times() if t <= self._now)

    def _handover_at(self, now: float) -> float:
        """When the next slot comes within ``handover`` steps of its end (-inf: none)."""
        return min((t for t in self._send_times() if t > now), default=-math.inf)

    def _sent_ahead(self, jid: int, now: float, in_flight: int, slots: int) -> None:
        """Mark a request sent while every slot we know of is taken: it waits for a handover."""
        if self._applies() and in_flight > slots:
            self._ahead[jid] = now + self.handover * (self.step() or 0.0)

    def _timed_from(self, jid: int, sent: float, now: float) -> tuple[float, bool]:
        """When a start's wait began (a handover's: its due time) and whether it was one."""
        due = self._ahead.pop(jid, None)
        if due is None:
            return sent, False
        return max(sent, min(due, now)), True
