"""The ``fairstream`` command line: ``demo``, ``serve``, ``analyze``, ``probe``, ``bench``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

import click

from .server import PRESETS, ServerConfig
from .server._server import ReferenceServer

__all__ = ["main"]

_HELP = {
    "mode": "How the server batches.",
    "release": "Static mode: when a finished member's stream ends (batch_end = with the batch).",
    "batch_size": "Static mode: requests per batch.",
    "batch_timeout_ms": "Static mode: wait this long for a batch to fill.",
    "max_num_seqs": "Continuous mode: most sequences running at once.",
    "max_num_batched_tokens": "Continuous mode: token budget of one step.",
    "chunked_prefill": "Continuous mode: split long prompts over steps.",
    "prefill_priority": "Continuous mode: prefill-only steps while requests wait (stalls decodes).",
    "kv_tokens": "Continuous mode: KV-cache size in tokens (preemption by recompute beyond it).",
    "preset": f"Cost model preset: {', '.join(PRESETS)}.",
    "step_ms": "Cost model: fixed milliseconds per step (a).",
    "per_seq_ms": "Cost model: milliseconds per decoding sequence (b).",
    "prefill_ms_per_token": "Cost model: milliseconds per prefill token (c).",
    "time_scale": "Multiply every model time by this (0.05 runs 20x faster).",
    "seed": "Seed of the output-length distribution.",
    "output_mean": "Mean output length when the request does not force one.",
    "output_distribution": "Output-length distribution.",
    "max_tokens_cap": "Largest max_tokens accepted (400 above).",
    "max_model_len": "Context length: prompt plus max_tokens.",
    "tokens_per_chunk": "Tokens coalesced into one SSE chunk.",
    "record_emissions": "Keep each chunk's write time (CLOCK_MONOTONIC) at /debug/emissions.",
    "role_chunk_on_admission": "Send the role chunk when prefill starts, not with the first token.",
    "model": "Model name the server answers to.",
    "api_key": "Require this bearer key on /v1 routes.",
    "host": "Address to bind (loopback by default; others need --allow-public).",
    "allow_public": "Allow binding a non-loopback address (the server has no real security).",
    "port": "Port to bind (0 picks a free one).",
    "max_waiting": "Waiting-queue cap (429 beyond).",
    "retry_after_s": "Retry-After seconds sent with a 429.",
    "faults": "Failure injection, e.g. 'disconnect_mid:at=3,after=5;status_429:rate=0.1'.",
    "max_connections": "Open-connection cap (503 beyond).",
    "max_body_bytes": "Request body cap (413 beyond).",
    "max_header_bytes": "Request header cap.",
    "idle_timeout_s": "Close connections idle (or half-sent) this long.",
    "write_buffer_limit": "Drop a client that leaves this many bytes unread.",
    "done_delay_ms": "Hold [DONE] this long after the finish chunk (a slow-to-close server).",
    "honor_ignore_eos": "Obey vLLM's ignore_eos (off: act like servers that ignore it).",
}


def _option(field: dataclasses.Field[Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A click option for one ``ServerConfig`` field, typed from its annotation."""
    hints = typing.get_type_hints(ServerConfig)
    tp = hints[field.name]
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    optional = isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union
    base = args[0] if optional and args else tp
    name = "--" + field.name.replace("_", "-")
    help_ = _HELP.get(field.name, "")
    if base is bool:
        return click.option(f"{name}/--no-{name[2:]}", field.name, default=None, help=help_)
    click_type: Any
    if typing.get_origin(base) is typing.Literal:
        click_type = click.Choice(typing.get_args(base))
    else:
        click_type = base
    return click.option(name, field.name, type=click_type, default=None, help=help_)


def _config_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for field in reversed(dataclasses.fields(ServerConfig)):
        fn = _option(field)(fn)
    return fn


@click.group()
@click.version_option(package_name="fairstream")
def cli() -> None:
    """fairstream: see how your LLM server batches, and stream fairly through it."""


@cli.command()
@_config_options
def serve(**options: Any) -> None:
    """Run the embedded OpenAI-compatible reference server until interrupted."""
    given = {k: v for k, v in options.items() if v is not None}
    try:
        config = ServerConfig(**given)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    _run_server(config)


def _register() -> None:
    from ._cli_detect import analyze_cmd, probe_cmd
    from ._cli_tools import bench_cmd, demo_cmd

    for command in (analyze_cmd, probe_cmd, demo_cmd, bench_cmd):
        cli.add_command(command)


_register()


def _run_server(config: ServerConfig) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config))


async def _serve(config: ServerConfig) -> None:
    server = ReferenceServer(config)
    await server.start()
    click.echo(f"listening on {server.base_url}")
    sys.stdout.flush()
    await server.serve_forever()


def main() -> None:
    """Console-script entry point."""
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
