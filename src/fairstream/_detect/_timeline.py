"""Timelines of requests, like the seed's: waiting, first token, generating, held open.

``ascii_timeline`` draws one row per request for the terminal; ``plot_timeline`` writes the
same picture as a PNG through matplotlib (extra ``plot``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .._errors import require
from .._trace import StreamTrace
from ._report import BatchingReport
from ._view import Req, estimate_step, views, with_own_end

__all__ = ["ascii_timeline", "plot_timeline"]

LEGEND = "legend: . waiting  F first token  = generating  - held open after its content ended"


def _rows(traces: Iterable[StreamTrace]) -> list[Req]:
    reqs, _ = views(traces)
    step = estimate_step(reqs)
    return sorted((with_own_end(r, step) for r in reqs), key=lambda r: (r.sent, r.rid))


def ascii_timeline(traces: Iterable[StreamTrace], *, width: int = 64, max_rows: int = 40) -> str:
    """The requests as text rows on one time axis (``width`` columns for the bars)."""
    reqs = _rows(traces)
    if not reqs:
        return "(no finished requests to draw)"
    t0, t1 = min(r.sent for r in reqs), max(r.end for r in reqs)
    span = max(t1 - t0, 1e-9)
    col = span / width
    name_w = min(max(len(r.rid) for r in reqs), 12)
    lines = [f"{'':{name_w}}  0s{'':{width - 10}}{span:>8.3g}s   (one column = {col:.3g} s)"]
    for r in reqs[:max_rows]:
        cells = [" "] * width

        def paint(a: float, b: float, ch: str, cells: list[str] = cells) -> None:
            lo = int((a - t0) / col)
            hi = max(lo + 1, int((b - t0) / col))
            for i in range(max(lo, 0), min(hi, width)):
                cells[i] = ch

        paint(r.sent, r.first, ".")
        paint(r.first, r.own_end, "=")
        if r.end - r.own_end > col:
            paint(r.own_end, r.end, "-")
        cells[min(int((r.first - t0) / col), width - 1)] = "F"
        lines.append(f"{r.rid[-name_w:]:>{name_w}}  {''.join(cells)}")
    if len(reqs) > max_rows:
        lines.append(f"... {len(reqs) - max_rows} more requests not drawn")
    lines.append(LEGEND)
    return "\n".join(lines)


def plot_timeline(
    traces: Sequence[StreamTrace],
    path: str | Path,
    *,
    report: BatchingReport | None = None,
    title: str | None = None,
) -> Path:
    """Write the timeline as a PNG at ``path`` (needs matplotlib: extra ``plot``)."""
    heading = title or (report.summary if report is not None else "request timeline")
    return plot_timelines([(heading, traces)], path)


def plot_timelines(panels: Sequence[tuple[str, Sequence[StreamTrace]]], path: str | Path) -> Path:
    """Several timelines (a title and its traces each) stacked on one time axis, in one PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        require("matplotlib", "plot")
    rows = [(title, _rows(traces)) for title, traces in panels]
    if not any(reqs for _, reqs in rows):
        raise ValueError("no finished requests to draw")
    t0 = min(r.sent for _, reqs in rows for r in reqs)
    heights = [max(3.0, 0.22 * len(reqs) + 2.0) for _, reqs in rows]
    fig, axes = plt.subplots(
        len(rows), 1, figsize=(10, sum(heights)), sharex=True, squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )  # fmt: skip
    colors = {"waiting": "#d0d0d0", "generating": "#3b75af", "held": "#e07b39"}
    for (title, reqs), ax in zip(rows, axes[:, 0], strict=True):
        for y, r in enumerate(reqs):
            ax.broken_barh(
                [(r.sent - t0, r.first - r.sent)], (y - 0.4, 0.8), color=colors["waiting"]
            )
            ax.broken_barh(
                [(r.first - t0, max(r.own_end - r.first, 1e-9))],
                (y - 0.4, 0.8),
                color=colors["generating"],
            )
            if r.end > r.own_end:
                ax.broken_barh(
                    [(r.own_end - t0, r.end - r.own_end)], (y - 0.4, 0.8), color=colors["held"]
                )
            ax.plot([r.first - t0], [y], marker="|", color="black", markersize=8)
        ax.set_yticks(range(len(reqs)))
        ax.set_yticklabels([r.rid for r in reqs], fontsize=7 if len(reqs) > 30 else 9)
        ax.invert_yaxis()
        ax.set_ylabel("request")
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(_wrap(title), fontsize=10)
    last = axes[-1, 0]
    last.set_xlabel("seconds since the first request was sent")
    handles = [
        Patch(color=colors["waiting"], label="waiting for first token"),
        Patch(color=colors["generating"], label="generating"),
        Patch(color=colors["held"], label="held open after content ended"),
    ]
    last.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16 * 3 / heights[-1]),
                ncol=3, fontsize=8)  # fmt: skip
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def _wrap(text: str, width: int = 100) -> str:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if len(cur) + len(w) + 1 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return "\n".join([*lines, cur])
