"""Handover: on a continuous server at its peak, a slot's next request goes just before it frees.

Refilled only when a stream's end reaches us, a slot idles for the end's trip to the client,
the new request's trip to the server and the rest of the server step it lands in, once per
request. With lengths known (``max_tokens`` with ``ignore_eos``, or a server that runs to
them), a running request's end is due at its first token plus its length in steps:
``handover`` steps before it, its slot's next request goes, to wait at most that long at the
server. A request that ends sooner than its length (an EOS) is simply refilled at its end.
Also while requests keep arriving, not only at a burst's tail: under open-loop load at 150% of
capacity the idle slots cost 16-slot servers E2E p50 1.02-1.31x naive's, 0.83-0.94x with
handovers. Its wait there is not a slot wait: its first token is timed from its due time, and
never taken as the quickest (see ``docs/dispatcher.md``).

The states that hand over (continuous, sequential) say so; it never applies in slow start.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._situation import Situation

__all__ = ["handover_at", "handovers", "sent_ahead", "timed_from"]


def _send_times(s: Situation, hands_over: bool) -> list[float]:
    """When each running request's slot gets its next one: its expected end less
    ``handover`` steps (none when the rule does not apply)."""
    if not (s.handover > 0 and hands_over and not s.slow_start) or not (step := s.step()):
        return []
    lead = s.handover * step
    return [e - lead for e in s.batches.ends(s.runs, step) if e < math.inf]


def handovers(s: Situation, hands_over: bool = True) -> int:
    """Slots due to free within ``handover`` steps: as many may wait at the server."""
    return sum(1 for t in _send_times(s, hands_over) if t <= s.now)


def handover_at(s: Situation, now: float, hands_over: bool = True) -> float:
    """When the next slot comes within ``handover`` steps of its end (-inf: none)."""
    return min((t for t in _send_times(s, hands_over) if t > now), default=-math.inf)


def sent_ahead(
    s: Situation, jid: int, now: float, in_flight: int, slots: int, hands_over: bool
) -> None:
    """Mark a request sent while every slot we know of is taken: it waits for a handover."""
    if s.handover > 0 and hands_over and not s.slow_start and in_flight > slots:
        s.ahead[jid] = now + s.handover * (s.step() or 0.0)


def timed_from(s: Situation, jid: int, sent: float, now: float) -> tuple[float, bool]:
    """When a start's wait began (a handover's: its due time) and whether it was one."""
    due = s.ahead.pop(jid, None)
    if due is None:
        return sent, False
    return max(sent, min(due, now)), True
