"""What ``auto`` keeps of a static server's batches: when the running one should end, who was
sent mid-batch, and whether a full batch was seen (the batch size is then exact).

A static server never refills a batch; at its end it starts whatever waits at once, its
gathering time long passed. So the next batch should reach the server as the running one ends:
sent earlier it waits there, committed; sent later the server idles a round trip; and a lone
request sent mid-batch runs alone as the next batch. A partial batch of long requests runs as
long as a full one: while requests keep arriving it is held, so short ones do not wait it out.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._job import Job
    from ..._queue import FairQueue

__all__ = ["Batches", "band_size", "take_band"]


def _similar(n: float, longest: float) -> bool:
    """Lengths one static batch runs without stretching the short: within 2x of its longest
    (or of 16 tokens)."""
    return n <= 2 * max(longest, 16)


def band_size(lengths: list[float]) -> int:
    """How many of ``lengths`` (sorted) are similar to the shortest."""
    return sum(1 for n in lengths if _similar(n, lengths[0]))


def take_band(queue: FairQueue, room: int, now: float, longest: float) -> list[Job]:
    """Up to ``room`` jobs, shortest first, each similar to the longest taken or already waiting
    for the batch (``longest``; -inf: none), so short requests are not stretched to a long one's
    length. A job that waited past the queue's reorder bound goes regardless."""
    out: list[Job] = []
    while room > 0:
        job = queue.peek(now)
        if job is None:
            break
        n = job.expected_tokens if job.expected_tokens is not None else math.inf
        overdue = now - job.enqueued > queue.max_reorder_wait
        if longest > -math.inf and not _similar(n, longest) and not overdue:
            break  # it goes in a later batch
        queue.pop(now)
        out.append(job)
        longest, room = max(longest, n), room - 1
    return out


class Batches:
    """Just-in-time batches: the bookkeeping, per request id, of :class:`~fairstream.Auto`."""

    def __init__(self, explore_every: int) -> None:
        self.explore_every = explore_every
        self.sent = 0  # batches sent just in time
        self.explore = False  # send the next batch as soon as this one started (pipelined)
        self.due_now = False  # the running batch is about to end: the next may go
        self.sent_ahead = False  # ... and it went (or went exploring)
        self.lengths: dict[int, float] = {}  # running requests' expected lengths
        self.run_sent: dict[int, float] = {}  # ... and when they were sent
        self.mid: set[int] = set()  # sent while a batch ran, no first token yet
        self.first = 0.0  # the running batch's first first token
        self.sends: list[float] = []  # ... its members' send times
        self.peak = 0  # ... and the most of it that ran at once
        self.hold_until = -math.inf  # a partial batch of long requests is held until then
        self.lengths_sent: deque[float] = deque(maxlen=64)  # expected lengths of recent sends
        self.enqueued_sent: deque[float] = deque(maxlen=64)  # ... and when they were queued

    def on_send(self, jid: int, running: int) -> None:
        if running:
            self.mid.add(jid)

    def on_start(self, jid: int, length: float, running: int, sent: float, now: float) -> None:
        self.mid.discard(jid)
        self.lengths[jid] = length
        self.run_sent[jid] = sent
        if running == 1:  # a new batch
            self.first, self.sends, self.peak = now, [], 0
        self.sends.append(sent)
        self.peak = max(self.peak, running)

    def on_end(self, jid: int, running: int) -> None:
        self.mid.discard(jid)
        self.lengths.pop(jid, None)
        self.run_sent.pop(jid, None)
        if not running:
            self.sent_ahead = False  # the batch it was sent ahead of has ended

    def full(self, waiting: dict[int, float], size: int, quickest: float) -> int | None:
        """At a batch's end: its size if it ran full while a request that competed for it
        waited through it (sent with its members, or before it formed: a quickest first token
        before its first one); else None. The detector, which does not know what was in
        flight, needs a burst it did not send to see this. Not when some of it ended before the
        rest started: a busy client read a batch of 16 one- and two-token answers as 10
        running at once, B = 10 on a B=16 server."""
        if self.peak < len(self.sends):
            return None
        formed = self.first - quickest
        held = any(
            sent < formed or any(abs(sent - s) < 1e-3 for s in self.sends)
            for sent in waiting.values()
        )
        return self.peak if held and self.peak >= size else None

    def waited_out(
        self, waiting: dict[int, float], size: int, wait: float, now: float
    ) -> int | None:
        """Mid-batch: what runs, if at least ``size`` run while a request sent no later than one
        of them has waited ``wait`` seconds (it competed for the batch and lost: the batch is
        full); else None. Over HTTP a batch's last ends reach us after the next batch's first
        tokens, so the check at an end with nothing running (:meth:`full`) can miss every
        batch: a continuous 16-slot server running two lengths in bands (they start and end
        together, as on a static one) was kept twice B in flight for a whole run."""
        running = len(self.run_sent)
        if running < size or not waiting:
            return None
        due = self.overdue_at(waiting, wait)
        return running if due is not None and due <= now else None

    def overdue_at(self, waiting: dict[int, float], wait: float) -> float | None:
        """When the oldest request that competed with a running one (sent no later) will have
        waited ``wait`` seconds; None if none did."""
        last = max(self.run_sent.values(), default=-math.inf)
        competed = [t for t in waiting.values() if t <= last]
        return min(competed) + wait if competed else None

    def due(self, running: dict[int, float], step: float | None, lead: int = 2) -> float | None:
        """When the next batch should go: ``lead`` steps before the running batch's expected
        end (its longest member's first token plus its length in steps), so it reaches the
        server as the batch ends. None while that is not known."""
        if not step or not running:
            return None
        end = max(self.ends(running, step))
        return end - lead * step if end < math.inf else None

    def ends(self, running: dict[int, float], step: float) -> list[float]:
        """The running requests' expected ends: first token plus length in steps (inf: unknown)."""
        return [t + self.lengths.get(j, math.inf) * step for j, t in running.items()]

    def staggered(self, running: dict[int, float], step: float) -> bool:
        """Do the running requests' expected ends spread over more than 4 steps (or is a length
        unknown)? Only then can a batch sent at once to explore show a full continuous server's
        refill before the running one ends: a 16-slot continuous server running 16 long
        requests of one band kept the 16 sent to explore waiting a whole 128-token run."""
        ends = self.ends(running, step)
        return not ends or max(ends) == math.inf or max(ends) - min(ends) > 4 * step

    def left_over(self, waiting: dict[int, float]) -> bool:
        """Does a request sent while the last batch ran still wait? The server starts it now,
        alone: what we send would miss its batch."""
        return bool(self.mid & waiting.keys())

    def sent_batch(self, running: int) -> None:
        self.sent += 1
        if running:  # sent ahead of the running batch's end
            self.explore = self.due_now = False
            self.sent_ahead = True
        else:
            self.explore = self.sent % self.explore_every == 0

    def hold(self, out: list[Job], queued: Iterable[Job], now: float, step: float | None,
             size: int) -> bool:  # fmt: skip
        """Hold a partial batch of long requests while requests keep arriving, until it fills or
        its oldest member has waited twice its run: a static server runs it as long as a full
        one, and the short requests that arrive meanwhile would wait it out (held, they start at
        once on an idle server). A burst's tail (nothing arrived for a run) goes at once, and so
        does one burst at least a batch big with nothing since (held, the long half of a
        32-request burst on a B=48 server read as B=32 waited a whole run for nobody)."""
        self.hold_until = -math.inf  # not held: no wake-up for it
        lengths = [j.expected_tokens for j in out]
        if not step or len(out) >= size or None in lengths:
            return False
        longest = max(n for n in lengths if n is not None)
        if longest <= 2 * max(16.0, min(self.lengths_sent, default=0.0)):
            return False  # short: holding it would only delay it
        run = longest * step
        arrived = [j.enqueued for j in [*out, *queued]]
        newest = max(arrived)
        arrived += [t for t in self.enqueued_sent if t > newest - run]
        if len(arrived) >= size and newest - min(arrived) <= 2 * step:
            return False  # a burst a batch big, and nothing since: nobody to wait for
        until = min(j.enqueued for j in out) + 2 * run
        held = now - newest < run and now < until
        if held:  # wake when it ends: nothing else may call on an idle server's tail
            self.hold_until = min(until, newest + run)
        return held
