"""A run's figures as JSON (``fairstream.bench/1``), as a table, and two runs compared."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ..._stats import Percentiles, summarize
from ._run import RunResult

__all__ = ["BENCH_SCHEMA", "compare_table", "results_json", "summary_table"]

BENCH_SCHEMA = "fairstream.bench/1"
_METRICS = ("ttft", "tpot", "itl", "e2e", "queue_time", "submit_e2e")


def _pct(p: Percentiles | None) -> dict[str, float] | None:
    if p is None:
        return None
    return {"mean": p.mean, "p50": p.p50, "p90": p.p90, "p99": p.p99, "n": p.n}


def results_json(
    run: RunResult,
    *,
    slo_ttft: float | None = None,
    slo_tpot: float | None = None,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything a run measured; times in seconds."""
    traces = run.traces
    s = summarize(traces)
    ok = [t for t in traces if t.outcome == "ok"]
    good = [
        t
        for t in ok
        if (slo_ttft is None or (t.ttft is not None and t.ttft <= slo_ttft))
        and (slo_tpot is None or t.tpot is None or t.tpot <= slo_tpot)
    ]
    span = s.duration or run.wall
    submit = [v for v in map(run.submit_e2e, ok) if v is not None]
    labels = sorted({t.label for t in ok if t.label})
    by_label = {}
    for label in labels:
        waits = [run.submit_e2e(t) for t in ok if t.label == label]
        by_label[label] = _pct(Percentiles.of([v for v in waits if v is not None]))
    return {
        "schema": BENCH_SCHEMA,
        "config": config or {},
        "policy": run.policy,
        "requests": s.requests,
        "ok": s.ok,
        "errors": s.errors,
        "cancelled": s.cancelled,
        "duration": span,
        "makespan": run.wall,
        "output_tokens": s.output_tokens,
        "output_tokens_per_second": s.output_tokens / span if span else 0.0,
        "requests_per_second": s.ok / span if span else 0.0,
        "goodput_requests_per_second": len(good) / span if span else 0.0,
        "goodput_tokens_per_second": sum(t.output_tokens for t in good) / span if span else 0.0,
        "slo": {"ttft": slo_ttft, "tpot": slo_tpot},
        "tokens_estimated": s.tokens_estimated,
        "ttft": _pct(s.ttft),
        "tpot": _pct(s.tpot),
        "itl": _pct(s.itl),
        "e2e": _pct(s.e2e),
        "queue_time": _pct(s.queue_time),
        "submit_e2e": _pct(Percentiles.of(submit)),
        "submit_e2e_by_label": by_label,
        "client_cpu": client_cpu(run),
    }


def client_cpu(run: RunResult) -> dict[str, float]:
    """What the load generator itself used: CPU seconds, share of one core, and per request
    and per chunk. A client that keeps a core busy on the server's machine distorts what it
    measures (a CPU-bound server loses that core)."""
    chunks = sum(len(t.chunk_times) for t in run.traces)
    return {
        "seconds": run.client_cpu,
        "share_of_a_core": run.client_cpu_share,
        "per_request_ms": 1e3 * run.client_cpu / len(run.traces) if run.traces else 0.0,
        "per_chunk_us": 1e6 * run.client_cpu / chunks if chunks else 0.0,
    }


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:,.1f}"


def summary_table(res: dict[str, Any], title: str = "results") -> Table:
    """Latency percentiles (ms) and throughput of one run."""
    table = Table(title=title)
    table.add_column("metric (ms)")
    for col in ("p50", "p90", "p99", "mean"):
        table.add_column(col, justify="right")
    names = {"submit_e2e": "E2E from submit", "queue_time": "client queue"}
    for m in _METRICS:
        p = res.get(m)
        if p:
            table.add_row(
                names.get(m, m.upper()), *(_ms(p[c]) for c in ("p50", "p90", "p99", "mean"))
            )
    table.caption = (
        f"{res['ok']}/{res['requests']} ok, {res['output_tokens_per_second']:,.0f} tok/s, "
        f"{res['requests_per_second']:.2f} req/s, goodput {res['goodput_requests_per_second']:.2f}"
        f" req/s, makespan {res['makespan']:.2f} s, policy {res['policy']}"
    )  # fmt: skip
    return table


_COMPARE = (
    ("output tok/s", lambda r: r["output_tokens_per_second"]),
    ("goodput req/s", lambda r: r["goodput_requests_per_second"]),
    ("makespan s", lambda r: r["makespan"]),
    ("TTFT p50 ms", lambda r: _get(r, "ttft", "p50", 1e3)),
    ("TTFT p99 ms", lambda r: _get(r, "ttft", "p99", 1e3)),
    ("TPOT p50 ms", lambda r: _get(r, "tpot", "p50", 1e3)),
    ("E2E p50 ms", lambda r: _get(r, "submit_e2e", "p50", 1e3)),
    ("E2E p99 ms", lambda r: _get(r, "submit_e2e", "p99", 1e3)),
)


def _get(r: dict[str, Any], metric: str, col: str, scale: float) -> float | None:
    p = r.get(metric)
    return None if not p else p[col] * scale


def compare_table(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> Table:
    """Two runs side by side with the ratio B/A."""
    table = Table(title=f"{names[0]} (A) vs {names[1]} (B)")
    for col, just in (("metric", "left"), ("A", "right"), ("B", "right"), ("B/A", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for name, get in _COMPARE:
        x, y = get(a), get(b)
        ratio = "-" if not x or y is None else f"{y / x:.3f}"
        table.add_row(name, _fmt(x), _fmt(y), ratio)
    return table


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.2f}"


def print_table(table: Table, console: Console | None = None) -> None:
    (console or Console()).print(table)
