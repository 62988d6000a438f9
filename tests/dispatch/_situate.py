"""Put an ``Auto`` in a made-up situation: a state, and situation fields by name."""

from __future__ import annotations

from typing import Any

from fairstream import Auto
from fairstream._dispatch.policies.auto._auto import STATES
from fairstream._dispatch.policies.auto._situation import Situation
from fairstream._dispatch.policies.auto._state import StateName

__all__ = ["situate"]


def situate(auto: Auto, state: StateName | None = None, **fields: Any) -> Situation:
    if state is not None:
        auto.state = STATES[state]
    s = auto.situation
    for name, value in fields.items():
        if not hasattr(s, name):
            raise AttributeError(f"Situation has no {name!r}")
        setattr(s, name, value)
    return s
