"""Slow start's signs: how far a cold start grows, and what ends it.

Cold, ``auto`` offers a first round and grows it by one for each start above the peak (a slot
nobody freed), until a request waits for a slot. Over real HTTP most of the work is telling a
slot wait from our own client's delays (a busy 2-core client reads first tokens late and
bunched). Each function reads and updates a :class:`Situation`; those that find slow start
over say so, and ``auto`` moves (``_state.py``). The readings behind the rules are in
``docs/dispatcher.md``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...._trace import StreamTrace
    from ._situation import Situation

__all__ = ["miss", "overdue", "undo_growth"]


def overdue(s: Situation, now: float) -> bool:
    """Slow start ends as soon as a request *is* waiting (4 steps past the quickest first
    token, none yet), not when its first token finally comes: that is a slot later, and
    meanwhile prompt starts elsewhere keep raising what is offered."""
    if not s.slow_start or not s.waiting or s.quickest == math.inf:
        return False
    oldest = min(s.waiting.values())
    waited = now - oldest - s.client_lag(oldest, now)  # not our own loop's stalls
    # a start that grew the batch after it was sent: the server had room, so it waits in
    # our own client (CPU, connections), not for a slot
    return s.late(waited, 4) and s.last_grew < oldest + s.quickest


def undo_growth(s: Situation, jid: int, traces: list[StreamTrace], now: float) -> bool:
    """Over real HTTP the end of one stream can reach us after the first token of the request
    the server started in its slot: that start did not grow the batch. True when the start
    undone had waited for this slot after all (slow start is over).

    (A one-token request's own start is at its end: it is not such a start.)"""
    ended = min((t.last_content for t in traces if t.last_content is not None), default=now)
    while s.grew and s.grew[0][0] < ended:
        s.grew.popleft()  # before this end: not its slot (and no later end's either)
    handover = ended + 4 * s.unit()
    if not s.grew or s.grew[-1][0] > handover or s.grew[-1][2] == jid:
        return False  # long after the end: a slot the server had free, not this one
    _, late, _ = s.grew.pop()
    s.peak = max(s.running, s.peak - 1)
    s.offer = max(s.start, s.offer - 1)
    return late


def miss(s: Situation, continuous: bool) -> None:
    """A request waited for a slot: stop probing for a while, longer after each miss."""
    if s.probe and continuous:
        s.misses, s.miss_peak = min(s.misses + 1, 4), s.peak
    s.probe, s.calm = 0, s.peak << s.misses
