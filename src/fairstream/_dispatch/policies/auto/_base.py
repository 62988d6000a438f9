"""The interface of ``auto``'s states: what each decides, given a :class:`Situation`.

A state holds no data of its own (B is the situation's): it answers how many requests may wait
at the server, which to send, and when to look again. Moving between states is ``_state.py``'s.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, NamedTuple

from ._state import StateName

if TYPE_CHECKING:
    from ..._job import Job
    from ..._queue import FairQueue
    from ._situation import Situation

__all__ = ["Budget", "Kind", "Plain", "State"]

Kind = Literal["unknown", "continuous", "static", "sequential"]
Plain = Callable[[], "list[Job]"]  # the plain admission: up to the limit, in queue order


class Budget(NamedTuple):
    """Requests allowed to wait at the server, and whether none may while one runs (the
    server is exactly full: what runs frees the next place)."""

    wait: int
    full: bool = False


class State(ABC):
    """One of ``auto``'s states (``_state.py`` lists them and their moves)."""

    name: StateName
    kind: Kind  # what the server is taken for
    hands_over = False  # a slot's next request goes ahead of the slot's expected end
    caps_slo = True  # ``Auto(ttft_slo=...)`` caps what is in flight here

    @abstractmethod
    def budget(self, s: Situation) -> Budget:
        """How many requests may wait at the server now, beyond those running."""

    def admit(
        self,
        s: Situation,
        queue: FairQueue,
        in_flight: int,
        now: float,
        limit: Callable[[], int],
        plain: Plain,
    ) -> list[Job]:
        """Jobs to send now (shortest first); by default up to the limit."""
        return plain()

    def wakeups(self, s: Situation, now: float) -> list[float]:
        """Times to look again with no other event (past ones are ignored)."""
        return []

    def label(self, s: Situation) -> str:
        """The kind as :meth:`Auto.describe` says it."""
        return self.kind
