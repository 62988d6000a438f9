"""Names removed from the public API that the README documented: they still work for one
release, with a ``DeprecationWarning`` naming what replaces them."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["DEPRECATED", "deprecated"]

# old name -> what replaces it (said in the warning)
DEPRECATED = {
    "simulate_dispatch": "fairstream.sim.simulate(engine, workload, policy)",
    "VJob": "fairstream.sim.SimRequest",
    "VRun": "fairstream.sim.SimRun",
}


def deprecated(name: str) -> Any:
    """The object behind a deprecated name, after warning once per access."""
    warnings.warn(
        f"fairstream.{name} is deprecated; use {DEPRECATED[name]}",
        DeprecationWarning,
        stacklevel=3,
    )
    from . import sim

    if name == "VRun":
        return sim.SimRun
    if name == "VJob":
        return _vjob
    return _simulate_dispatch


def _vjob(
    arrival: float,
    output_tokens: int,
    expected_tokens: float | None = None,
    prompt_tokens: int = 32,
    key: Any = None,
    label: str | None = None,
) -> Any:
    """The old ``VJob`` argument order, building a :class:`fairstream.sim.SimRequest`."""
    from .sim import SimRequest

    return SimRequest(
        arrival, prompt_tokens, output_tokens, expected_tokens=expected_tokens, key=key, label=label
    )


def _simulate_dispatch(
    engine: Any,
    workload: Iterable[Any],
    policy: Any,
    *,
    events: Iterable[tuple[float, Callable[[Any], None]]] = (),
    until: float = math.inf,
) -> Any:
    from .sim import simulate

    return simulate(engine, workload, policy, events=events, until=until)
