"""``auto``'s first wave: cold, a burst's shortest band goes at once, once its arrivals pause.

Sent shortest first, a band (lengths up to twice the shortest, or 32 tokens) fills a static
server's batches in order with similar lengths (its own first come, first served), and a
continuous server's slots as sending everything at once would; the long ones wait one round of
first tokens (slow start), so a burst no larger than a static batch does not run as one mixed
batch. Only when the band is not the whole burst: over real HTTP a prefill-heavy mix of similar
short answers lost most of its 4-step goodput to a wave of 16. A burst of one band of long
answers (over 32 tokens) goes at once too: sent in a first round below a static server's B it
runs as two batches, each as long as the whole (12 answers of 96 tokens on a B=16 server: 1.7x
the makespan of sending them at once). The cap (16 by default) keeps a
small server's first tokens prompt: a wave of 32 cost 16-slot servers most of their 4-step
goodput on a burst of exponential lengths. The wave waits until no request arrived for
``gather`` seconds (at most 10x that after the first): a client that spreads a burst's sends
over 10 ms showed the first admission one request and no short class (``docs/dispatcher.md``).
"""

from __future__ import annotations

import math

from ..._queue import FairQueue, _length
from ._batches import band_size

LONG = 32  # tokens: a burst of one band longer than this goes as one wave

__all__ = ["FirstWave"]


class FirstWave:
    """Sizes the first wave once: :meth:`gathering` while the burst still arrives, then
    :meth:`size`."""

    def __init__(self, cap: int, gather: float) -> None:
        self.cap, self.gather = cap, gather
        self.sized = False
        self.until = -math.inf  # the gathering ends then
        # until the first start (or end): the wave's longest length, when longer ones follow;
        # only its band goes meanwhile (-inf: no hold)
        self.band = -math.inf

    def gathering(self, queue: FairQueue, now: float) -> bool:
        """Is the burst still arriving (a request within ``gather``, the first one within
        10x that)?"""
        if self.gather <= 0:
            return False
        times = [j.enqueued for j in queue]
        self.until = min(max(times) + self.gather, min(times) + 10 * self.gather)
        return now < self.until

    def size(self, queue: FairQueue) -> int | None:
        """The wave: the shortest band, at most the cap, when longer requests follow (they are
        then held until the first start: :meth:`holding`), or when the burst is one band of long
        answers; else None."""
        lengths = sorted(_length(j) for j in queue)
        band = band_size(lengths)
        if band < len(lengths):
            self.band = lengths[band - 1]
        if band < len(lengths) or LONG < lengths[0] < math.inf:
            return min(band, self.cap)
        return None

    def holding(self) -> bool:
        """Does only the wave's band go (cold, before the first start)?"""
        return self.band > -math.inf

    def release(self) -> None:
        """A request started or ended: slow start decides what goes from now on."""
        self.band = -math.inf

    def wakeup(self, now: float) -> float | None:
        """When the gathering ends, while it has not."""
        return self.until if not self.sized and self.until > now else None
