"""A readable report for the terminal (rich): the verdict, its numbers and the evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._report import BatchingReport

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["print_report"]

_STYLE = {"static": "bold red", "continuous": "bold green", "sequential": "bold yellow"}


def print_report(report: BatchingReport, console: Console | None = None) -> None:
    """Print ``report`` with its evidence explained (rich is imported only here)."""
    from rich.console import Console
    from rich.table import Table

    out = console or Console()
    style = _STYLE.get(report.verdict, "bold")
    out.print(f"[{style}]verdict: {report.verdict}[/]  confidence {report.confidence:.2f}")
    out.print(report.summary)
    facts = [
        ("release", report.release),
        ("synchronized completion", report.synchronized_completion),
        ("prefill stalls", report.prefill_stalls),
        (
            "batch size",
            None
            if report.batch_size is None
            else f"{report.batch_size}{'' if report.batch_size_exact else ' or more'}",
        ),
        ("step", None if report.step_ms is None else f"{report.step_ms:.3g} ms"),
        ("requests", report.requests),
    ]
    out.print("  ".join(f"{k}: {'-' if v is None else v}" for k, v in facts))
    table = Table(title="evidence", show_lines=False, expand=False)
    table.add_column("signal", style="cyan", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column("what it means")
    for e in report.evidence:
        table.add_row(e.signal, "-" if e.value is None else str(e.value), e.detail)
    out.print(table)
    rec = report.recommendation
    conc = "found online" if rec.concurrency is None else str(rec.concurrency)
    out.print(f"recommendation: dispatcher policy [bold]{rec.policy}[/], concurrency {conc}")
