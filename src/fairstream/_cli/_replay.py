"""``fairstream replay``: what would the dispatcher have saved on this traffic?

Contract: with ``--json`` stdout is exactly one ``fairstream.replay/1`` object; anything else
goes to stderr. Exit codes: 0 answered, 1 bad input (a policy name, a file), 3 refused (the
traces are too thin, or the fitted model fails its self-check: see ``ReplayRefused``).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from .._detect import plot_timelines, read_traces
from .._errors import FairstreamError, ReplayRefused
from .._replay import Replay, Side, replay
from .._trace import StreamTrace
from ._html import HTML, LANG, input_lang, write_page

__all__ = ["REFUSED_EXIT", "replay_cmd"]

REFUSED_EXIT = 3


@click.command("replay")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--policy",
    default="auto",
    show_default=True,
    help="The dispatcher policy to replay through: auto, waves:B, fixed:N, gradient, serial.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one fairstream.replay/1 object.")
@click.option(
    "--png",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also draw both timelines (as sent, through the policy) in a PNG (extra 'plot').",
)
@click.option(
    "--force",
    is_flag=True,
    help="Answer even when the fitted model fails its self-check (the answer says so).",
)
@HTML
@LANG
def replay_cmd(
    files: tuple[Path, ...],
    policy: str,
    as_json: bool,
    png: Path | None,
    force: bool,
    html: Path | None,
    lang: str | None,
) -> None:
    """Replay the requests in FILES (JSONL traces, or summary log lines, or the seed's table)
    on a server model fitted to them: as they were sent, then through a dispatcher policy."""
    traces: list[StreamTrace] = []
    resolution = 0.0
    for path in files:
        tf = read_traces(path)
        traces.extend(tf.traces)
        resolution = max(resolution, tf.resolution)
        if tf.skipped:
            click.echo(f"{path}: skipped {tf.skipped} lines that are not traces", err=True)
    try:
        result = replay(traces, policy, resolution, check=not force)
    except ReplayRefused as exc:
        if html is not None:
            from .._detect import analyze

            report = analyze(traces, resolution=resolution)
            page_lang = lang or input_lang(files)
            write_page(
                html, report, traces=traces, replay=exc, lang=page_lang, resolution=resolution
            )
        if as_json:
            refusal = {"schema": "fairstream.replay/1", "refused": True, "reasons": exc.reasons,
                       "self_check": exc.check, "suggestion": exc.suggestion}  # fmt: skip
            sys.stdout.write(json.dumps(refusal, ensure_ascii=False) + "\n")
        click.echo(f"Error: {exc}", err=True)
        sys.exit(REFUSED_EXIT)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print(result, Console())
    if png is not None:
        panels = [
            ("replayed as sent (the fitted model)", result.before_run.traces),
            (f"replayed through {policy}", result.after_run.traces),
        ]
        try:
            plot_timelines(panels, png)
        except FairstreamError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"timelines written to {png}", err=True)
    if html is not None:
        page_lang = lang or input_lang(files)
        write_page(html, result, traces=traces, lang=page_lang, resolution=resolution)


def _print(r: Replay, console: Console) -> None:
    fit = r.fit
    n = len(fit.requests)
    console.print(f"Server model fitted to {n} requests: {fit.describe()}.")
    err = r.check.errors
    console.print(
        f"Self-check, replayed as they were sent: makespan {err['makespan']:+.0%}, short p50"
        f" {err['short_p50']:+.0%}, long p50 {err['long_p50']:+.0%} of what was observed;"
        f" each request's E2E within {fit.e2e_error:.0%} (median)"
        + ("." if fit.ttft_error is None else f", first tokens within {fit.ttft_error:.0%}.")
    )
    lengths = {q.output_tokens for q in fit.requests}
    cut = statistics.median(q.output_tokens for q in fit.requests)
    table = Table(title=f"before / after (seconds from submission; policy {r.policy})")
    for col in ("", "short p50", "short p99", "long p50", "long p99", "makespan", "held open"):
        table.add_column(col, justify="right" if col else "left")
    for name, side in (("as sent", r.before), (f"through {r.policy}", r.after)):
        table.add_row(name, *(f"{getattr(side, k):.3g}" for k in _COLUMNS))
    console.print(table)
    if len(lengths) == 1:
        console.print(
            f"All {n} requests are the same length ({next(iter(lengths))} tokens): there is no"
            " short or long to reorder, so a dispatcher can only change how many go at once."
        )
    else:
        console.print(f"short: {cut:g} output tokens or fewer; long: more.")
    console.print(_verdict(r.before, r.after, r.policy))
    span, short = r.intervals["makespan_ratio"], r.intervals["short_p50_ratio"]
    console.print(
        f"Uncertainty: the makespan would be {span[0]:.2f}-{span[1]:.2f}x and short p50"
        f" {short[0]:.2f}-{short[1]:.2f}x of what was observed (the model's step 15% either"
        f" way, without its prefill cost{_batch_note(r)}, bursts read two ways, the requests"
        " resampled, widened by the self-check's error)."
    )
    if not r.check.ok:
        for reason in r.check.reasons():
            console.print(f"[red]self-check failed (--force):[/] {reason}.")
    for note in fit.notes:
        console.print(f"[yellow]uncertain:[/] {note}.")


_COLUMNS = ("short_p50", "short_p99", "long_p50", "long_p99", "makespan", "hostage")


def _verdict(before: Side, after: Side, policy: str) -> str:
    span = after.makespan / before.makespan if before.makespan else 1.0
    short = after.short_p50 / before.short_p50 if before.short_p50 else 1.0
    return (
        f"Through {policy}: makespan {span:.2f}x, short requests' p50 {short:.2f}x of sending"
        f" them as they were sent (below 1 is a saving)."
    )


def _batch_note(r: Replay) -> str:
    if r.fit.kind == "static" and not r.fit.report.batch_size_exact:
        return ", and twice the batch size"
    return ""
