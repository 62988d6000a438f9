"""``fairstream demo``: the seed's phenomenon on the embedded server, detected and cured.

1. A static-batching server that holds finished streams until the batch ends (the seed's),
   a mixed workload of short and long streamed requests sent at once, naively.
2. The seed-style log lines, the timeline, and the detector's verdict on those traces.
3. The same workload through ``fairstream.Dispatcher()`` (policy ``auto``), before/after:
   cold (knowing nothing of the server) and warm (``Auto(prior=...)`` started from the
   traces of the all-at-once run, as a service that has seen its own traffic).
4. The same runs on a continuous-batching server, for contrast.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .._detect import analyze, ascii_timeline, print_report
from .._dispatch.policies.auto._auto import Auto
from .._logline import LOG_DATEFMT, Lang, format_line
from .._trace import StreamTrace
from ..server import ServerConfig
from ..server._server import ReferenceServer
from ._bench._results import results_json
from ._bench._run import RunResult, run_workload
from ._bench._workload import RequestSpec, make_workload

__all__ = ["DemoRow", "demo_cmd", "makespan", "run_demo"]


@dataclass(frozen=True, slots=True)
class DemoRow:
    """One run's figures for the before/after table (seconds)."""

    server: str
    how: str
    short_p50: float
    short_p99: float
    long_p50: float
    long_p99: float
    makespan: float
    hostage: float  # mean time short requests were held up (detector's findings)


def makespan(traces: list[StreamTrace]) -> float:
    """Last chunk minus first submission (our queue counts): the job's span as the caller sees
    it, without the client's own set-up and close (a share that varies from run to run and is
    not the job's)."""
    start = min(t.enqueued if t.enqueued is not None else t.sent or 0.0 for t in traces)
    return max(t.end or 0.0 for t in traces) - start


def _row(server: str, how: str, run: RunResult) -> DemoRow:
    def waits(label: str) -> list[float]:
        out = [run.submit_e2e(t) for t in run.traces if t.label == label and t.outcome == "ok"]
        return [v for v in out if v is not None]

    def q(values: list[float], p: float) -> float:
        if len(values) < 2:
            return values[0] if values else 0.0
        return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]

    short, long = waits("short"), waits("long")
    hostage = analyze(run.traces).short_request_hostage or 0.0
    span = makespan(run.traces)
    return DemoRow(server, how, q(short, 50), q(short, 99), q(long, 50), q(long, 99), span, hostage)


def _table(rows: list[DemoRow]) -> Table:
    table = Table(title="before / after (seconds, from submission to the last chunk)")
    for col in ("server", "requests sent", "short p50", "short p99", "long p50", "long p99"):
        table.add_column(col, justify="left" if col in ("server", "requests sent") else "right")
    table.add_column("makespan", justify="right")
    table.add_column("short held up", justify="right")
    for r in rows:
        table.add_row(
            r.server,
            r.how,
            *(f"{v:.2f}" for v in (r.short_p50, r.short_p99, r.long_p50, r.long_p99)),
            f"{r.makespan:.2f}",
            f"{r.hostage:.2f}",
        )
    return table


async def run_demo(
    *,
    lang: Lang = "en",
    quick: bool = False,
    scale: float | None = None,
    console: Console | None = None,
    html: Path | None = None,
) -> list[DemoRow]:
    """Run the whole demo, printing as it goes; returns the table's rows. With ``html``, also
    writes the page to forward (the static server's burst, and every run side by side) and
    prints its path on the last line.

    ``scale``: the server's time scale (None: 1.0, a real 7B model's pace; 0.25 quick). The
    client's own costs (opening streams, reading first tokens) do not scale: on a server 4x
    faster than real they weigh 4x more against the makespan than users would see."""
    out = console or Console()
    if out.width < 110 and console is None:
        out = Console(width=110)  # the table and the timeline need the room
    batch = 4 if quick else 8
    n, long_len = (32, 48) if quick else (32, 128)
    specs = make_workload(n, f"mix:8,{long_len}", "16", seed=1)
    if scale is None:
        scale = 0.25 if quick else 1.0
    static = ServerConfig(mode="static", batch_size=batch, release="batch_end", time_scale=scale)
    continuous = ServerConfig(mode="continuous", max_num_seqs=4 * batch, time_scale=scale)
    out.rule("[bold]fairstream demo")
    out.print(
        f"A server that batches statically, {batch} requests a batch, and holds a finished"
        " stream open until its whole batch is done, as in the seed's report. "
        f"{n} streamed requests at once: half want 8 tokens, half {long_len}. {_pace(scale)}"
    )
    rows: list[DemoRow] = []
    with _progress(out) as progress:
        naive = await _run(progress, "static server, sent naively", static, specs, None)
        fair = await _run(progress, "static server, fairstream cold", static, specs, "auto")
        warm = await _run(
            progress, "static server, fairstream warm", static, specs, Auto(prior=naive.traces)
        )
        c_naive = await _run(progress, "continuous server, naively", continuous, specs, None)
        c_fair = await _run(
            progress, "continuous server, fairstream cold", continuous, specs, "auto"
        )
        c_warm = await _run(
            progress,
            "continuous server, fairstream warm",
            continuous,
            specs,
            Auto(prior=c_naive.traces),
        )
    out.rule("1. what the app logs (the seed's log line)")
    for t in sorted(naive.traces, key=lambda t: (t.end or 0, t.request_id)):
        stamp = time.strftime(LOG_DATEFMT, time.localtime(t.wall_end or 0))
        label = {"en": "request", "zh": "LLM请求"}[lang]
        out.print(f"{stamp} [INFO] {format_line(t, lang, label)}", markup=False, highlight=False)
    out.rule("2. the same requests on a timeline")
    out.print(ascii_timeline(naive.traces, width=64), markup=False, highlight=False)
    out.rule("3. what fairstream makes of it")
    print_report(analyze(naive.traces), out)
    out.rule("4. the cure: the same workload through fairstream.Dispatcher()")
    out.print(f"the dispatcher settled on: {fair.policy}", markup=False, highlight=False)
    out.print(ascii_timeline(fair.traces, width=64), markup=False, highlight=False)
    rows = [
        _row("static (seed)", "all at once", naive),
        _row("static (seed)", "fairstream, cold", fair),
        _row("static (seed)", "fairstream, warm", warm),
        _row("continuous", "all at once", c_naive),
        _row("continuous", "fairstream, cold", c_fair),
        _row("continuous", "fairstream, warm", c_warm),
    ]
    out.print(_table(rows))
    speedup = rows[0].short_p50 / rows[1].short_p50 if rows[1].short_p50 else float("inf")
    out.print(
        "cold: a fresh Dispatcher() that knows nothing of the server; warm:"
        " Dispatcher(Auto(prior=traces)), started from the all-at-once run's traces (what step 3"
        " read), as a service that has seen its own traffic.\n"
        f"On the static server short requests came back {speedup:.1f}x sooner (p50) and the"
        f" whole job took {rows[1].makespan / rows[0].makespan:.2f}x the time"
        f" ({rows[2].makespan / rows[0].makespan:.2f}x warm). On the continuous server, which"
        " already ends each request at its own end, there is little to cure: fairstream took"
        f" {rows[4].makespan / rows[3].makespan:.2f}x the time of all at once cold (it sends the"
        " short half at once and the long half a round of first tokens later, the price of not"
        " knowing the server: a static batch with room for both halves would mix them;"
        " benchmarks/demo_rows.py measures both sides) and"
        f" {rows[5].makespan / rows[3].makespan:.2f}x warm; it ended on {c_warm.policy}."
    )
    if html is not None:
        runs = {"static (seed)": (naive, fair, warm), "continuous": (c_naive, c_fair, c_warm)}
        hows = ("all at once", "fairstream, cold", "fairstream, warm")
        arms = [
            (f"{server}, {how}", results_json(run))
            for server, three in runs.items()
            for how, run in zip(hows, three, strict=True)
        ]
        out.print(_page(html, naive.traces, arms, lang), markup=False, highlight=False)
    return rows


def _page(path: Path, traces: list[StreamTrace], arms: list[Any], lang: Lang) -> str:
    """Write the demo's page; the line that says where (or why not: the extra is missing)."""
    from .._errors import MissingExtraError
    from .._html import write_html
    from ._html import replay_for_page

    try:
        write_html(
            analyze(traces), path, traces=traces, replay=replay_for_page(traces, 0.0), arms=arms,
            lang=lang,
        )  # fmt: skip
    except MissingExtraError as exc:
        return f"no HTML report: {exc}"
    return f"HTML report: {path.resolve()}"


def _pace(scale: float) -> str:
    if scale == 1.0:
        return "The server runs at the pace of a real 7B model (15 ms decode steps)."
    return (
        f"The server runs {1 / scale:g}x faster than a real 7B model would (15 ms steps scaled"
        f" to {15 * scale:g} ms)."
    )


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description:<36}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


async def _run(
    progress: Progress,
    title: str,
    config: ServerConfig,
    specs: list[RequestSpec],
    policy: Any,
) -> RunResult:
    task = progress.add_task(title, total=len(specs))
    with ReferenceServer.in_subprocess(config) as server:
        return await run_workload(
            server.base_url,
            config.model,
            specs,
            policy=policy,
            progress=lambda: progress.advance(task),
        )


@click.command("demo")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True)
@click.option("--quick", is_flag=True, help="A smaller workload (for tests and slow machines).")
@click.option(
    "--time-scale",
    type=click.FloatRange(min=0.01, max=10.0),
    default=None,
    help="The server's time scale: 1.0 is a real 7B model's pace, 0.25 four times faster"
    " [default: 1.0; 0.25 with --quick].",
)
@click.option(
    "--html",
    type=click.Path(dir_okay=False, path_type=Path),
    default="fairstream-demo.html",
    show_default=True,
    help="Where to write the HTML report (extra 'report').",
)
def demo_cmd(lang: str, quick: bool, time_scale: float | None, html: Path) -> None:
    """See the seed's phenomenon on the embedded server, detected and cured (no network)."""
    asyncio.run(run_demo(lang=lang, quick=quick, scale=time_scale, html=html))  # type: ignore[arg-type]
