"""Shared fixtures: a reference server on loopback in the test's own event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from fairstream import ReferenceServer, ServerConfig

# 20 ms model steps at time scale 0.5: 10 ms real steps, no prefill or batch-size cost,
# so stream timings are easy to reason about and still far above timer jitter.
FAST = ServerConfig(step_ms=20.0, per_seq_ms=0.0, prefill_ms_per_token=0.0, time_scale=0.5)
REAL_STEP = 0.010

ServerFactory = Callable[..., AbstractAsyncContextManager[ReferenceServer]]


@pytest.fixture
def serve() -> ServerFactory:
    """``async with serve(mode="static", ...) as server`` with the fast test config."""

    @asynccontextmanager
    async def factory(**overrides: Any) -> AsyncIterator[ReferenceServer]:
        async with ReferenceServer(FAST.with_(**overrides)) as server:
            yield server

    return factory
