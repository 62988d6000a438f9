"""``auto``'s states and what moves it between them, in one table (in the manner of h11).

    PROBING ──slot wait──> FALLBACK
       │                      │
       └──┬── refill, verdict ┘──> CONTINUOUS, STATIC(B), SEQUENTIAL

- PROBING: cold, the kind unknown; slow start offers a first wave and ramps.
- FALLBACK: the kind still unknown, but a request waited for a slot; requests that end
  together are refilled just in time.
- CONTINUOUS: the slots the server proved, plus a probe; a slot's next request goes a step
  before its expected end.
- STATIC: the next batch of B similar lengths goes just in time as the running one ends.
- SEQUENTIAL: the next request goes a step before the running one's expected end.

Slow start (``Situation.slow_start``) is a phase, not a state: it ends at the first slot wait
whatever the kind, and in PROBING that end is the move to FALLBACK.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "CONTINUOUS",
    "FALLBACK",
    "PROBING",
    "REFILLED",
    "SAW_CONTINUOUS",
    "SAW_SEQUENTIAL",
    "SAW_STATIC",
    "SEQUENTIAL",
    "SLOT_WAIT",
    "STATIC",
    "TRANSITIONS",
    "Event",
    "StateName",
    "next_state",
]

StateName = Literal["probing", "fallback", "continuous", "static", "sequential"]
Event = Literal["slot wait", "refilled", "saw continuous", "saw static", "saw sequential"]

PROBING: Final = "probing"
FALLBACK: Final = "fallback"
CONTINUOUS: Final = "continuous"
STATIC: Final = "static"
SEQUENTIAL: Final = "sequential"

SLOT_WAIT: Final = "slot wait"  # a request waited inside the server: slow start ends
REFILLED: Final = "refilled"  # requests started while earlier ones still ran (twice)
SAW_CONTINUOUS: Final = "saw continuous"  # the detector's confident verdicts
SAW_STATIC: Final = "saw static"  # (also: a larger B, or B now exact)
SAW_SEQUENTIAL: Final = "saw sequential"

TRANSITIONS: Final[dict[StateName, dict[Event, StateName]]] = {
    PROBING: {
        SLOT_WAIT: FALLBACK,
        REFILLED: CONTINUOUS,
        SAW_CONTINUOUS: CONTINUOUS,
        SAW_STATIC: STATIC,
        SAW_SEQUENTIAL: SEQUENTIAL,
    },
    FALLBACK: {
        REFILLED: CONTINUOUS,
        SAW_CONTINUOUS: CONTINUOUS,
        SAW_STATIC: STATIC,
        SAW_SEQUENTIAL: SEQUENTIAL,
    },
    CONTINUOUS: {SAW_STATIC: STATIC, SAW_SEQUENTIAL: SEQUENTIAL},
    STATIC: {
        REFILLED: CONTINUOUS,  # static batching never refills a running batch
        SAW_CONTINUOUS: CONTINUOUS,
        SAW_STATIC: STATIC,  # B grew, or is now exact
        SAW_SEQUENTIAL: SEQUENTIAL,
    },
    SEQUENTIAL: {SAW_CONTINUOUS: CONTINUOUS, SAW_STATIC: STATIC},
}


def next_state(state: StateName, event: Event) -> StateName | None:
    """Where ``event`` moves ``auto`` from ``state``; None: it does not move it."""
    return TRANSITIONS[state].get(event)
