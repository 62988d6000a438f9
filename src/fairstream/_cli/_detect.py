"""``fairstream analyze`` and ``fairstream probe``: the detector on the command line.

Contract: with ``--json`` stdout is exactly one ``fairstream.report/1`` object; anything
else (timeline, warnings) goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click
from rich.console import Console

from .._detect import (
    BatchingReport,
    Evidence,
    analyze,
    ascii_timeline,
    plot_timeline,
    print_report,
    probe,
    read_traces,
)
from .._errors import FairstreamError
from .._recorder import JsonlSink, Recorder
from .._trace import StreamTrace
from ._html import HTML, LANG, input_lang, replay_for_page, write_page

__all__ = ["analyze_cmd", "probe_cmd"]


def _emit(
    report: BatchingReport,
    traces: list[StreamTrace],
    *,
    as_json: bool,
    timeline: bool,
    png: Path | None,
    html: Path | None = None,
    lang: str | None = None,
    resolution: float = 0.0,
) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
    else:
        print_report(report, Console())
    if timeline:
        text = ascii_timeline(traces)
        click.echo(text, err=as_json)
    if png is not None:
        try:
            plot_timeline(traces, png, report=report)
        except FairstreamError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"timeline written to {png}", err=True)
    if html is not None:
        replayed = replay_for_page(traces, resolution)
        write_page(html, report, traces=traces, replay=replayed, lang=lang, resolution=resolution)


_JSON = click.option(
    "--json", "as_json", is_flag=True, help="Print one fairstream.report/1 object."
)
_TIMELINE = click.option("--timeline", is_flag=True, help="Draw the requests on a text timeline.")
_PNG = click.option(
    "--png",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the timeline as a PNG (extra 'plot').",
)


@click.command("analyze")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@_JSON
@_TIMELINE
@_PNG
@HTML
@LANG
def analyze_cmd(
    files: tuple[Path, ...],
    as_json: bool,
    timeline: bool,
    png: Path | None,
    html: Path | None,
    lang: str | None,
) -> None:
    """Tell how the server batches from FILES: JSONL traces or summary log lines."""
    traces: list[StreamTrace] = []
    resolution, skipped = 0.0, 0
    for path in files:
        tf = read_traces(path)
        traces.extend(tf.traces)
        resolution = max(resolution, tf.resolution)
        skipped += tf.skipped + tf.torn
        if tf.torn:
            click.echo(f"{path}: skipped 1 torn last line (its writer stopped mid-line)", err=True)
        if tf.skipped:
            click.echo(
                f"{path}: skipped {tf.skipped} lines that are not traces or summary lines"
                + (f" (e.g. {tf.skipped_examples[0]!r})" if tf.skipped_examples else ""),
                err=True,
            )
    report = analyze(traces, resolution=resolution)
    if skipped:
        note = Evidence("skipped_lines", skipped, f"{skipped} input lines could not be read")
        report = _with_evidence(report, note)
    if html is not None and lang is None:
        lang = input_lang(files)
    _emit(
        report,
        traces,
        as_json=as_json,
        timeline=timeline,
        png=png,
        html=html,
        lang=lang,
        resolution=resolution,
    )


@click.command("probe")
@click.option("--base-url", required=True, help="The server's OpenAI base URL (…/v1).")
@click.option("--model", required=True, help="Model name to request.")
@click.option("--api-key", default=None, help="Bearer key, if the server wants one.")
@click.option("--budget", default=32, show_default=True, help="Most requests to send.")
@click.option("--max-tokens", default=64, show_default=True, help="Longest request, in tokens.")
@click.option(
    "--save-traces",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the probe's traces as JSONL.",
)
@_JSON
@_TIMELINE
@_PNG
@HTML
@LANG
def probe_cmd(
    base_url: str,
    model: str,
    api_key: str | None,
    budget: int,
    max_tokens: int,
    save_traces: Path | None,
    as_json: bool,
    timeline: bool,
    png: Path | None,
    html: Path | None,
    lang: str | None,
) -> None:
    """Send a short designed set of requests and tell how the server batches."""
    recorder = Recorder()
    if save_traces is not None:
        recorder.add_sink(JsonlSink(save_traces))
    try:
        report = asyncio.run(
            probe(
                base_url,
                model,
                api_key,
                budget=budget,
                max_tokens=max_tokens,
                recorder=recorder,
            )
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    except FairstreamError as exc:
        raise click.ClickException(f"probe failed: {exc}") from None
    finally:
        recorder.close()
    _emit(
        report, recorder.traces, as_json=as_json, timeline=timeline, png=png, html=html, lang=lang
    )


def _with_evidence(report: BatchingReport, note: Evidence) -> BatchingReport:
    from dataclasses import replace

    return replace(report, evidence=(*report.evidence, note))
