"""``fairstream bench``: the load generator's command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ..._detect import analyze, plot_timeline
from ..._errors import FairstreamError, MissingExtraError
from ..._recorder import JsonlSink, Recorder
from ..._redact import redact_url
from .._html import HTML, LANG, replay_for_page, write_page
from ._plots import plot_sweep
from ._results import compare_table, results_json, summary_table
from ._run import RunResult, run_workload
from ._workload import load_workload, make_workload

__all__ = ["bench_cmd"]


POLICIES = ("naive", "fixed", "auto", "waves", "gradient")


@click.command("bench")
@click.option("--base-url", help="The server's OpenAI base URL (…/v1).")
@click.option("--model", help="Model name to request.")
@click.option("--api-key", default=None, help="Bearer key, if the server wants one.")
@click.option("--requests", "n", default=64, show_default=True, help="Requests to send.")
@click.option("--concurrency", type=int, help="At most N in flight (closed loop).")
@click.option("--rate", type=float, help="Poisson arrivals, requests per second (open loop).")
@click.option("--sweep", is_flag=True, help="Concurrency 1, 2, 4, ... until throughput stalls.")
@click.option("--policy", type=click.Choice(POLICIES), default="naive", show_default=True)
@click.option("--output-tokens", default="mix:8,256", show_default=True, help="Length spec.")
@click.option("--prompt-tokens", default="32", show_default=True, help="Length spec (words).")
@click.option("--workload", type=click.Path(exists=True, dir_okay=False), help="JSONL requests.")
@click.option("--ignore-eos/--no-ignore-eos", default=True, show_default=True)
@click.option("--slo-ttft", type=float, help="Goodput SLO on TTFT, seconds.")
@click.option("--slo-tpot", type=float, help="Goodput SLO on TPOT, seconds.")
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--max-client-cpu",
    default=0.5,
    show_default=True,
    help="Warn when this client uses more than this share of a core (it distorts the figures).",
)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--compare", nargs=2, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@HTML
@LANG
def bench_cmd(**o: Any) -> None:
    """Load your server and measure it: TTFT, TPOT, ITL, E2E, throughput, goodput."""
    console = Console()
    if o["compare"]:
        a, b = (json.loads(Path(p).read_text()) for p in o["compare"])
        names = (str(o["compare"][0]), str(o["compare"][1]))
        console.print(compare_table(a, b, names))
        if o["html"] is not None:
            _compare_page(o["html"], [(names[0], a), (names[1], b)], o["compare"], o["lang"])
        return
    if not o["base_url"] or not o["model"]:
        raise click.UsageError("--base-url and --model are needed (or --compare A.json B.json)")
    try:
        specs = (
            load_workload(o["workload"])
            if o["workload"]
            else make_workload(o["n"], o["output_tokens"], o["prompt_tokens"], o["seed"])
        )
        policy = _policy(o["policy"], o["concurrency"])
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    out_dir: Path | None = o["out_dir"]
    recorder = Recorder()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        recorder.add_sink(JsonlSink(out_dir / "traces.jsonl"))
    try:
        if o["sweep"]:
            levels = asyncio.run(_sweep(o, specs, recorder, console))
            result = levels[-1][1]
        else:
            run = asyncio.run(_once(o, specs, policy, o["concurrency"], recorder, console))
            result, levels = _results(run, o), []
    except FairstreamError as exc:
        raise click.ClickException(f"bench failed: {exc}") from None
    finally:
        recorder.close()
    console.print(summary_table(result, title=f"bench: {result['policy']}"))
    share = result["client_cpu"]["share_of_a_core"]
    if share > o["max_client_cpu"]:
        console.print(
            f"[bold yellow]warning:[/] this client used {share:.0%} of a core during the run"
            f" (over --max-client-cpu {o['max_client_cpu']:.0%}): on a machine it shares with a"
            " CPU-bound server its own work distorts these figures; run it elsewhere or lighter"
        )
    report = analyze(recorder.traces)
    console.print(f"detector: {report.summary}")
    if out_dir is not None:
        result["sweep"] = [{"concurrency": c, **_brief(r)} for c, r in levels]
        (out_dir / "results.json").write_text(json.dumps(result, indent=2))
        (out_dir / "report.json").write_text(json.dumps(report.to_dict(), indent=2))
        _pictures(out_dir, recorder, report, levels, console)
        console.print(f"wrote {out_dir}/: traces.jsonl, results.json, report.json")
    if o["html"] is not None:
        arms = [(f"concurrency {c}", r) for c, r in levels] or [(result["policy"], result)]
        traces = recorder.traces
        # what auto would gain on this run's traffic (one run of at most 512: a sweep's levels
        # are several runs, and a replay of thousands takes longer than the page is worth)
        gain = replay_for_page(traces, 0.0) if not levels and len(traces) <= 512 else None
        write_page(o["html"], report, traces=traces, replay=gain, arms=arms, lang=o["lang"])


def _compare_page(
    path: Path, arms: list[tuple[str, Any]], files: tuple[Path, Path], lang: str | None
) -> None:
    """Two runs side by side; the timeline and verdict from the second run's traces, when its
    directory holds them (``--out`` writes ``traces.jsonl`` beside ``results.json``)."""
    from ..._detect import read_traces

    traces_file = files[1].parent / "traces.jsonl"
    traces = read_traces(traces_file).traces if traces_file.exists() else []
    write_page(path, analyze(traces), traces=traces, arms=arms, lang=lang)


def _policy(name: str, concurrency: int | None) -> Any:
    if name == "naive":
        return None
    if name in ("fixed", "waves"):
        if not concurrency:
            raise ValueError(f"--policy {name} needs --concurrency N (the limit or batch size)")
        return f"{name}:{concurrency}"
    return name


def _results(run: RunResult, o: dict[str, Any]) -> dict[str, Any]:
    config = {k: o[k] for k in ("base_url", "model", "n", "concurrency", "rate", "policy")}
    config["base_url"] = redact_url(config["base_url"])  # no credentials in a results file
    config.update(output_tokens=o["output_tokens"], prompt_tokens=o["prompt_tokens"])
    return results_json(run, slo_ttft=o["slo_ttft"], slo_tpot=o["slo_tpot"], config=config)


async def _once(
    o: dict[str, Any],
    specs: Any,
    policy: Any,
    concurrency: int | None,
    recorder: Recorder,
    console: Console,
) -> RunResult:
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("requests", total=len(specs))
        return await run_workload(
            o["base_url"],
            o["model"],
            specs,
            api_key=o["api_key"],
            policy=policy,
            concurrency=concurrency if policy is None else None,
            rate=o["rate"],
            ignore_eos=o["ignore_eos"],
            seed=o["seed"],
            recorder=recorder,
            progress=lambda: progress.advance(task),
        )


async def _sweep(
    o: dict[str, Any], specs: Any, recorder: Recorder, console: Console
) -> list[tuple[int, dict[str, Any]]]:
    levels: list[tuple[int, dict[str, Any]]] = []
    c = 1
    while c <= 1024:
        run = await _once(o, specs, None, c, recorder, console)
        res = _results(run, o)
        levels.append((c, res))
        console.print(
            f"concurrency {c:>4}: {res['output_tokens_per_second']:,.0f} tok/s, "
            f"E2E p50 {(res['e2e'] or {}).get('p50', 0) * 1e3:,.0f} ms"
        )
        if (
            len(levels) >= 2
            and res["output_tokens_per_second"] < 1.05 * levels[-2][1]["output_tokens_per_second"]
        ):
            break  # throughput stopped growing
        c *= 2
    return levels


def _brief(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "output_tokens_per_second": r["output_tokens_per_second"],
        "ttft_p50": (r["ttft"] or {}).get("p50"),
        "e2e_p50": (r["e2e"] or {}).get("p50"),
        "e2e_p99": (r["e2e"] or {}).get("p99"),
    }


def _pictures(
    out_dir: Path, recorder: Recorder, report: Any, levels: list[Any], console: Console
) -> None:
    try:
        plot_timeline(recorder.traces[-200:], out_dir / "timeline.png", report=report)
        if levels:
            verdict = f"detector: {report.verdict} (confidence {report.confidence:.2f})"
            plot_sweep([(c, _brief(r)) for c, r in levels], out_dir / "sweep.png", verdict=verdict)
        console.print(f"pictures: {out_dir}/timeline.png" + (", sweep.png" if levels else ""))
    except MissingExtraError as exc:
        console.print(f"no pictures: {exc}", markup=False, highlight=False, soft_wrap=True)
