"""``show`` and ``compare``: a results file as a table, and two files cell by cell."""

from __future__ import annotations

import math
from pathlib import Path

from ._judge import CellView
from ._results import Results, read

__all__ = ["compare", "show"]

COLUMNS = ("naive", "sorted", "fixed 1/4", "fixed x1", "fixed x2", "auto", "oracle")


def _arm_columns(cell: CellView) -> dict[str, str]:
    """Column name -> arm: the fixed limits by their share of the server's slots."""
    limits = cell.raw["limits"]
    names = {"naive": "naive", "sorted": "sorted", "auto": "auto"}
    slots = cell.raw["slots"]
    for n in limits:
        col = "fixed x2" if n > slots else "fixed x1" if n == slots else "fixed 1/4"
        names[col] = f"fixed:{n}"
    return names


def _pair(span: float, e2e: float) -> str:
    return "-" if math.isnan(span) else f"{span:.2f} / {e2e:.2f}"


def source(results: Results, path: Path) -> str:
    h = results.header
    git = h["git"]
    commit = (git.get("commit") or "unknown")[:10] + (
        " with local changes" if git.get("dirty") else ""
    )
    took = sum(c["duration_s"] for c in results)
    return (
        f"`{path.name}`: `--{h['size']}`, {h['seeds']} seed(s), time scale {h['time_scale']},"
        f" {h['pinning']}; fairstream {h['fairstream']} ({commit}) on {h['machine']['cpu']},"
        f" {h['machine']['cores']} cores, Python {h['python']}; {took / 60:.0f} min of cells"
    )


def show(path: Path) -> list[str]:
    """The table of cell by arm (makespan / E2E p50 over the better of naive and sorted) and
    each cell's targets, in Markdown, then how many targets hold."""
    results = read(path)
    lines = [
        "| cell | " + " | ".join(COLUMNS) + " | targets |",
        "|---|" + "---:|" * len(COLUMNS) + "---|",
    ]
    tally = {"met": 0, "missed": 0, "infeasible": 0}
    infeasible: dict[str, int] = {}
    for name in results.header["cells"]:
        raw = results.cells.get(name)
        if raw is None:
            why = results.header["llama"] if name.startswith("llama") else "not run yet"
            lines.append(f"| {name} | " + " | ".join("" for _ in COLUMNS) + f" | not run: {why} |")
            continue
        cell = CellView(raw)
        cols = _arm_columns(cell)
        row = []
        for col in COLUMNS:
            if col == "oracle":
                orc = [o for o in raw["oracle"] if o]
                if orc:
                    span = sum(o["makespan"] for o in orc) / len(orc) / cell.better("makespan")
                    e2e = sum(o["e2e_p50"] for o in orc) / len(orc) / cell.better("e2e_p50")
                    row.append(_pair(span, e2e))
                else:
                    row.append("-")
            elif col in cols:
                arm = cols[col]
                row.append(_pair(cell.ratio(arm, "makespan"), cell.ratio(arm, "e2e_p50")))
            else:
                row.append("")
        verdicts = cell.verdicts()
        for v in verdicts:
            tally[v.state] += 1
            if v.state == "infeasible":
                infeasible[v.target] = infeasible.get(v.target, 0) + 1
        lines.append(
            f"| {name} | " + " | ".join(row) + " | " + "; ".join(map(str, verdicts)) + " |"
        )
    judged = tally["met"] + tally["missed"]
    lines += [
        "",
        f"Judged targets met: {tally['met']} of {judged}; infeasible (no arm that ran meets"
        " them): "
        + (
            ", ".join(f"{t} in {n} cell{'s' if n > 1 else ''}" for t, n in infeasible.items())
            or "none"
        )
        + ".",
        "",
        source(results, path),
    ]
    return lines


# the figures compare judges: (name, value of auto, higher is better, the noise it carries)
def _judged(cell: CellView) -> dict[str, tuple[float, bool, float]]:
    out = {
        "span": (cell.ratio("auto", "makespan"), False, 2 * cell.noise("makespan")),
        "e2e": (cell.ratio("auto", "e2e_p50"), False, 2 * cell.noise("e2e_p50")),
    }
    if cell.kind == "static":
        out["short"] = (cell.speedup("auto"), True, 2 * cell.noise("short_p50"))
    if cell.workload == "overload":
        out["ttft"] = (cell.fig("auto", "ttft_p50") / cell.step, False, cell.noise("ttft_p50"))
    return out


def compare(a: Path, b: Path) -> tuple[list[str], bool]:
    """Each cell's judged figures of ``auto`` in A and in B: better, worse or the same within
    the noise both runs show. True when a judged target is worse beyond noise."""
    ra, rb = read(a), read(b)
    lines, worse_any = [f"compare {a.name} -> {b.name}"], False
    counts = {"better": 0, "worse": 0, "same": 0}
    for name in ra.header["cells"]:
        if name not in ra.cells or name not in rb.cells:
            lines.append(f"  {name}: not in both files")
            continue
        ca, cb = CellView(ra.cells[name]), CellView(rb.cells[name])
        feasible = {v.target for c in (ca, cb) for v in c.verdicts() if v.state != "infeasible"}
        ja, jb = _judged(ca), _judged(cb)
        parts = []
        for key in ja:
            if key not in feasible or key not in jb:
                continue
            (va, higher, na), (vb, _, nb) = ja[key], jb[key]
            change = vb / va - 1 if va else math.nan
            band = na + nb
            gain = change if higher else -change
            state = "same" if abs(change) <= band else "better" if gain > 0 else "worse"
            counts[state] += 1
            worse_any |= state == "worse"
            parts.append(f"{key} {va:.2f} -> {vb:.2f} ({change:+.0%}, noise {band:.0%}) {state}")
        lines.append(f"  {name}: " + ("; ".join(parts) or "nothing judged"))
    lines.append(
        f"{counts['worse']} worse beyond noise, {counts['better']} better, {counts['same']} the"
        " same within noise"
    )
    return lines, worse_any
