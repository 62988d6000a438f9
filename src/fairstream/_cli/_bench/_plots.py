"""The throughput-latency picture of a concurrency sweep (matplotlib, extra ``plot``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._errors import require

__all__ = ["plot_sweep"]


def plot_sweep(
    levels: list[tuple[int, dict[str, Any]]], path: str | Path, *, verdict: str | None = None
) -> Path:
    """Throughput (x) against E2E p50/p99 and TTFT p50 (y), one point per concurrency."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        require("matplotlib", "plot")
    fig, ax = plt.subplots(figsize=(8, 5))
    xs = [r["output_tokens_per_second"] for _, r in levels]
    for key, name, style in (
        ("e2e_p50", "E2E p50", "o-"),
        ("e2e_p99", "E2E p99", "s--"),
        ("ttft_p50", "TTFT p50", "^-"),
    ):
        ys = [(r.get(key) or 0.0) * 1e3 for _, r in levels]
        ax.plot(xs, ys, style, label=name)
        if key == "e2e_p50":
            for (c, _), x, y in zip(levels, xs, ys, strict=True):
                ax.annotate(f"c={c}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("throughput (output tokens / s)")
    ax.set_ylabel("latency (ms)")
    title = "concurrency sweep: latency against throughput"
    ax.set_title(title if verdict is None else f"{title}\n{verdict}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
