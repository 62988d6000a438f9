"""The TTFT SLO cap of ``Auto(ttft_slo=...)``: AIMD on first tokens past the SLO."""

from __future__ import annotations

import math
from collections import deque

__all__ = ["SloCap"]


class SloCap:
    """``Auto(ttft_slo=...)``: a cap on what is in flight, so first tokens come within the SLO.

     Filling a continuous server ends a burst soonest, but every newcomer's prefill then shares
     loaded steps: on a prefill-heavy mix no first token comes within 4 steps at full occupancy
    . AIMD on TTFT from send: the third miss among the last 16
     first tokens cuts the cap to 0.9 of what was in flight (once per round: samples sent before
     a cut do not cut again; a lone miss is a client hiccup more often than a full server); each
     first token within the SLO adds 1/cap (one more per round of first tokens)."""

    def __init__(self, slo: float) -> None:
        self.slo = slo
        self.value = math.inf  # no cap until the first cut
        self._cut_at = -math.inf
        self._recent: deque[bool] = deque(maxlen=16)  # missed?

    @property
    def cap(self) -> int:
        return 1 << 30 if self.value == math.inf else max(1, int(self.value))

    def sample(self, ttft: float, sent: float, now: float, in_flight: int) -> None:
        miss = ttft > self.slo
        if sent <= self._cut_at:
            return  # sent before the last cut: it shows the old cap, not this one
        self._recent.append(miss)
        if miss and sum(self._recent) >= 3:
            self.value = max(1.0, 0.9 * min(self.value, in_flight))
            self._cut_at = now
            self._recent.clear()
        elif not miss and self.value != math.inf:
            self.value += 1.0 / self.value
