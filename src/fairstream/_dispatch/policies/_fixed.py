"""``fixed``, ``serial`` and ``aimd``: limits that do not read how the server batches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._policy import Policy
from .._queue import Order

if TYPE_CHECKING:
    from ..._trace import StreamTrace
    from .._job import Job

__all__ = ["AIMD", "Fixed", "Serial"]


class Fixed(Policy):
    """At most ``n`` in flight."""

    name = "fixed"

    def __init__(self, n: int, order: Order = "shortest") -> None:
        super().__init__()
        if n < 1:
            raise ValueError("fixed(n) needs n >= 1")
        self.n, self.order = n, order

    def limit(self) -> int:
        return self.n


class Serial(Fixed):
    """One at a time: for servers that serve one request at a time anyway."""

    name = "serial"

    def __init__(self, order: Order = "shortest") -> None:
        super().__init__(1, order)

    def describe(self) -> str:
        return "serial"


class AIMD(Policy):
    """Additive increase, multiplicative decrease on 429/503: for hosted APIs."""

    name = "aimd"

    def __init__(
        self,
        start: int = 4,
        *,
        max_limit: int = 256,
        backoff: float = 0.9,
        order: Order = "fifo",
    ) -> None:
        super().__init__()
        self.value = float(start)
        self.max_limit, self.backoff, self.order = max_limit, backoff, order

    def limit(self) -> int:
        return max(1, int(self.value))

    def on_done(self, job: Job, now: float, traces: list[StreamTrace]) -> None:
        if job.ok:  # +1 per limit's worth of successes
            self.value = min(self.max_limit, self.value + 1.0 / max(self.value, 1.0))

    def on_overload(self, now: float, retry_after: float | None) -> None:
        self.value = max(1.0, self.value * self.backoff)
