"""``fairstream serve``: the reference server on its own; its options come from ``ServerConfig``."""

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

from ..server import ReferenceServer, ServerConfig
from ..server._config import flag

__all__ = ["serve_cmd"]


def _option(field: dataclasses.Field[Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A click option for one ``ServerConfig`` field: typed from its annotation, helped by
    its metadata, named by :func:`flag` (the inverse of ``ServerConfig.to_args``)."""
    hints = typing.get_type_hints(ServerConfig)
    tp = hints[field.name]
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    optional = isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union
    base = args[0] if optional and args else tp
    name, help_ = flag(field.name), field.metadata.get("help", "")
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


@click.command("serve")
@_config_options
def serve_cmd(**options: Any) -> None:
    """Run the embedded OpenAI-compatible reference server until interrupted."""
    given = {k: v for k, v in options.items() if v is not None}
    try:
        config = ServerConfig(**given)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    _run_server(config)


def _run_server(config: ServerConfig) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config))


async def _serve(config: ServerConfig) -> None:
    server = ReferenceServer(config)
    await server.start()
    click.echo(f"listening on {server.base_url}")
    sys.stdout.flush()
    await server.serve_forever()
