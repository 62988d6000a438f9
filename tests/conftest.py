"""Shared fixtures: a reference server on loopback in the test's own event loop."""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from fairstream import ReferenceServer, ServerConfig

# 20 ms model steps at time scale 0.5: 10 ms real steps, no prefill or batch-size cost,
# so stream timings are easy to reason about and still far above timer jitter.
FAST = ServerConfig(step_ms=20.0, per_seq_ms=0.0, prefill_ms_per_token=0.0, time_scale=0.5)
REAL_STEP = 0.010

ServerFactory = Callable[..., AbstractAsyncContextManager[ReferenceServer]]


@pytest.fixture(autouse=True, scope="session")
def _results_files_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A benchmark a test runs writes its results file to a temporary directory, never over
    the committed ``benchmarks/results`` (subprocesses inherit the variable)."""
    os.environ["FAIRSTREAM_RESULTS_DIR"] = str(tmp_path_factory.mktemp("results"))


@pytest.fixture
def serve() -> ServerFactory:
    """``async with serve(mode="static", ...) as server`` with the fast test config."""

    @asynccontextmanager
    async def factory(**overrides: Any) -> AsyncIterator[ReferenceServer]:
        async with ReferenceServer(FAST.with_(**overrides)) as server:
            yield server

    return factory


@pytest.fixture(autouse=True)
def _alone_when_marked(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """A test marked ``alone`` runs while no other xdist worker runs one.

    A readers-writer lock over a file shared by this run's workers: every test holds it
    shared, an ``alone`` test exclusively. llama.cpp's two threads take both CI cores, and
    a timing comparison there reads another worker's test as the dispatcher's doing (on CI,
    ``auto`` read 2.2x all at once's E2E p50 where it is 0.4-0.6x alone).
    """
    if "PYTEST_XDIST_TESTRUNUID" not in os.environ:  # one process: nothing runs beside it
        yield
        return
    # a worker's base temp is ``<the run's base temp>/popen-gwN``: the parent is this run's
    # alone, and pytest removes it with old runs (a file in /tmp stayed behind every run)
    path = tmp_path_factory.getbasetemp().parent / "alone.lock"
    alone = request.node.get_closest_marker("alone") is not None
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
