"""Render the docs' tables and the README's figure from the results files.

Each table sits in a page between ``<!-- report:NAME -->`` and ``<!-- /report:NAME -->``;
this script replaces what is between them with what ``benchmarks/results/`` gives now, and
names the code and machine each table was measured on. A figure in the docs is never typed by
hand: rerun a benchmark, then this script, and commit both.

Run:  python benchmarks/report.py          # rewrite the pages
      python benchmarks/report.py --check  # exit 1 when a page differs from its results
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!-- report:(\w+) -->\n)(.*?)(<!-- /report:\2 -->)", re.DOTALL)


def load(name: str) -> dict[str, Any]:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run benchmarks/{name}.py first")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def source(data: dict[str, Any]) -> str:
    """Where a table's figures come from: the file, the command, the code and the machine."""
    git, m = data["git"], data["machine"]
    commit = (git.get("commit") or "unknown")[:10] + (" with local changes" if git["dirty"] else "")
    args = " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in data["parameters"].items() if v not in (None, "")
    )
    return (
        f"<sub>`benchmarks/results/{data['benchmark']}.json`: `python benchmarks/"
        f"{data['benchmark']}.py {args}` at fairstream {data['fairstream']} ({commit}) on"
        f" {m['cpu']}, {m['cores']} cores, Python {m['python']}.</sub>"
    )


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    right = ["---:" if h.endswith((" s", "x", "us", "%", "requests")) else "---" for h in header]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(right) + " |"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def cure() -> list[str]:
    """The README's one figure: short requests' p50 on the demo's static server."""
    data = load("demo_rows")
    rows = data["figures"]["servers"]["static B=8"]
    naive = rows["all at once"]["short_p50"]["median"]
    cold = rows["auto cold"]["short_p50"]["median"]
    span = rows["auto cold"]["makespan"]["median"] / rows["all at once"]["makespan"]["median"]
    return [
        f"**Short answers come back {naive / cold:.0f}x sooner**: their p50 falls from"
        f" {naive:.2f} s sent all at once to {cold:.2f} s through a fresh `Dispatcher()`, and"
        f" the whole burst takes {span:.2f}x the time (medians of"
        f" {data['parameters']['runs']} runs over real HTTP).",
        "",
        source(data),
    ]


def demo() -> list[str]:
    data = load("demo_rows")
    rows = []
    for server, hows in data["figures"]["servers"].items():
        base = hows["all at once"]["makespan"]["median"]
        for how, f in hows.items():
            span = f["makespan"]
            rows.append(
                [
                    server,
                    how,
                    f"{f['short_p50']['median']:.2f}",
                    f"{f['long_p50']['median']:.2f}",
                    f"{span['median']:.2f}",
                    f"{span['median'] / base:.3f}x",
                ]
            )
    head = ["server", "sent", "short p50 s", "long p50 s", "makespan s", "makespan / all at once x"]
    return [
        "32 requests at once (16 of 8 tokens, 16 of 128), each run against a fresh server;"
        " seconds from submission, medians of the runs:",
        "",
        *table(head, rows),
        "",
        source(data),
    ]


def matrix(size: str) -> list[str]:
    """The matrix judge's table for one results file, as ``python -m benchmarks.matrix show``
    prints it."""
    path = RESULTS / f"matrix-{size}.jsonl"
    if not path.exists():
        return [f"No `--{size}` results file yet: `python -m benchmarks.matrix run --{size}`."]
    sys.path.insert(0, str(ROOT))
    from benchmarks.matrix._show import show

    return [*show(path)[:-1], f"<sub>{show(path)[-1]}</sub>"]


def detector() -> list[str]:
    data = load("detector")
    probes = data["figures"]["probes"]
    right = sum(p["truth"] == p["answer"] for p in probes)
    reqs = [p["requests"] for p in probes]
    secs = [p["wall_s"] for p in probes]
    corpus = data["figures"]["corpus"]
    rows = [
        [
            "probe, reference server (real HTTP)",
            f"{right}/{len(probes)}",
            "0",
            f"{min(reqs)}-{max(reqs)} requests, {min(secs):.1f}-{max(secs):.1f} s",
        ],
        [
            "analyze, random configurations (virtual time)",
            f"{corpus['right']}/{corpus['configurations']}",
            f"{corpus['confidently_wrong']}",
            f"{corpus['ms_each']:.1f} ms each",
        ],
    ]
    head = ["what", "right", "confidently wrong", "cost"]
    return [*table(head, rows), "", source(data)]


def replay() -> list[str]:
    data = load("replay_check")
    cases = data["figures"]["cases"]
    rows = []
    for how in dict.fromkeys(c["starve"] for c in cases):
        got = [c["outcome"] for c in cases if c["starve"] == how]
        rows.append(
            [how, str(len(got))] + [str(got.count(k)) for k in ("held", "refused", "missed")]
        )
    t = data["figures"]["totals"]
    rows.append(["all", str(len(cases)), str(t["held"]), str(t["refused"]), str(t["missed"])])
    head = ["client loop starved", "cases", "held", "refused", "missed"]
    return [*table(head, rows), "", source(data)]


def overhead() -> list[str]:
    data = load("overhead")
    figs = data["figures"]
    p = data["parameters"]
    rows = []
    for family, r in figs["end_to_end"].items():
        alone = figs["added_alone"].get(family)
        rows.append(
            [
                family,
                f"{alone['inst_us'] - alone['raw_us']:.2f}" if alone else "-",
                f"{r['raw_us']:.1f}",
                f"{r['added_us']:.2f} ({r['added_us_q1']:.2f}..{r['added_us_q3']:.2f})",
                f"{r['ratio']:.3f}x",
                f"{r['per_request_us']:.0f}",
            ]
        )
    head = [
        "client",
        "added us/chunk, alone",
        "raw us/chunk",
        "added us/chunk, end to end (q1..q3)",
        "instrumented / raw x",
        "added us/request",
    ]
    return [
        "Client CPU per chunk that instrumentation adds, measured side by side in one run."
        ' "Alone": the same prebuilt SDK objects and event bytes through the SDK\'s stream'
        " shape, raw and instrumented (wire stamps included; no HTTP or parsing, whose noise"
        f" is larger than the figure). End to end: {p['streams']} streams at once over a canned"
        f" transport, of {p['short']} and of {p['long']} chunks, medians of {p['pairs']} pairs;"
        " per chunk is the slope between the two lengths, per request what each stream costs"
        " once (its trace's start and end):",
        "",
        *table(head, rows),
        "",
        f"`JsonlSink` costs {figs['jsonl_us_per_trace']:.0f} us of CPU per trace of 128 chunks.",
        "",
        source(data),
    ]


def static_vs_continuous() -> list[str]:
    data = load("static_vs_continuous")
    sched = data["figures"]["schedulers"]
    base = next(iter(sched.values()))
    rows = [
        [
            name,
            f"{f['tokens_per_s']:.0f}",
            f"{f['e2e_p50_s']:.2f}",
            f"{f['e2e_p99_s']:.2f}",
            f"{f['tokens_per_s'] / base['tokens_per_s']:.2f}x",
        ]
        for name, f in sched.items()
    ]
    head = ["scheduler", "tokens/s", "E2E p50 s", "E2E p99 s", "throughput / static x"]
    return [
        "The engines themselves, not the dispatcher: requests at once, prompts of 512 tokens,"
        " outputs drawn exponentially (mean 128):",
        "",
        *table(head, rows),
        "",
        source(data),
    ]


def first_burst() -> list[str]:
    """The seed's first burst from fresh processes: naive, auto cold and warm, a shared pool."""
    data = load("first_burst")
    arms = data["figures"]["arms"]
    rows = []
    for name, f in arms.items():
        base = next((v for k, v in arms.items() if "naive" in k and ("processes" in k) == (
            "processes" in name)), f)  # fmt: skip
        rows.append(
            [
                name,
                f"{f['short_p50']:.2f}",
                f"{base['short_p50'] / f['short_p50']:.1f}x",
                f"{f['makespan'] / base['makespan']:.2f}x",
                f"{f['first_sent']:.3f}",
                f"{f['short_p50_from_first_send']:.2f}",
            ]
        )
    head = [
        "arm",
        "short p50 s",
        "short sooner than naive x",
        "makespan / naive x",
        "first request sent s",
        "short p50 from it s",
    ]
    runs = data["parameters"]["runs"]
    return [
        f"A static B=8 server; 32 requests (8 and 128 tokens) from fresh processes, the client"
        f" and the dispatcher created inside the timed block; medians of {runs} runs:",
        "",
        *table(head, rows),
        "",
        source(data),
    ]


RENDER: dict[str, Callable[[], list[str]]] = {
    "cure": cure,
    "demo": demo,
    "first_burst": first_burst,
    "matrix_quick": lambda: matrix("quick"),
    "matrix_full": lambda: matrix("full"),
    "detector": detector,
    "replay": replay,
    "overhead": overhead,
    "static_vs_continuous": static_vs_continuous,
}


def render(text: str, cache: dict[str, str]) -> str:
    """``text`` with every report block filled from the results files."""

    def fill(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in RENDER:
            raise SystemExit(f"unknown report block {name!r}: one of {', '.join(RENDER)}")
        if name not in cache:
            cache[name] = "\n".join(RENDER[name]()) + "\n"
        return m.group(1) + cache[name] + m.group(4)

    return BLOCK.sub(fill, text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail when a page is not current")
    args = ap.parse_args()
    cache: dict[str, str] = {}
    stale = []
    for page in PAGES:
        text = page.read_text()
        new = render(text, cache)
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(new)
    if args.check and stale:
        print("not current, run python benchmarks/report.py:", *stale, file=sys.stderr)
        return 1
    done = "every page is current" if args.check else "rewrote: " + ", ".join(map(str, stale))
    print(done if stale or args.check else "every page was current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
