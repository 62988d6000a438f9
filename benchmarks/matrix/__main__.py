"""``python -m benchmarks.matrix run | show | compare``: see the package's docstring."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._pin import pinning
from ._run import run
from ._show import compare, show

RESULTS = Path(__file__).resolve().parents[1] / "results"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.matrix", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the cells into a results file (resuming it)")
    size = r.add_mutually_exclusive_group()
    quick = "a representative subset, smaller workloads, 1 seed (<= 20 min)"
    size.add_argument("--quick", dest="size", action="store_const", const="quick", help=quick)
    full = "every server and workload, larger workloads, 2 seeds (<= 2 h)"
    size.add_argument("--full", dest="size", action="store_const", const="full", help=full)
    tiny = "the quick cells, tiny workloads, 1 seed (the smoke test's)"
    size.add_argument("--tiny", dest="size", action="store_const", const="tiny", help=tiny)
    r.add_argument("--only", help="cells whose 'server / workload' matches these globs (a,b)")
    r.add_argument("--seeds", type=int, help="seeds per cell (quick: 1, full: 3)")
    r.add_argument("--scale", type=float, default=0.5, help="the reference server's time scale")
    r.add_argument("--no-pin", action="store_true", help="leave server and client unpinned")
    r.add_argument(
        "-o", "--out", type=Path, help="the results file (default: results/matrix-SIZE.jsonl)"
    )
    s = sub.add_parser("show", help="a results file as a table, with its targets")
    s.add_argument("file", type=Path)
    c = sub.add_parser("compare", help="two results files cell by cell; exit 1 on a regression")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    if args.command == "run":
        size = args.size or "quick"
        seeds = args.seeds or (2 if size == "full" else 1)
        out = args.out or RESULTS / f"matrix-{size}.jsonl"
        run(out, size, seeds, args.scale, args.only, pinning(not args.no_pin))
        print("\n".join(show(out)))
        return 0
    if args.command == "show":
        print("\n".join(show(args.file)))
        return 0
    lines, worse = compare(args.a, args.b)
    print("\n".join(lines))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
