"""The ``fairstream`` command line: ``demo``, ``serve``, ``analyze``, ``probe``, ``replay``,
``bench``.

Each command lives in its own module; none of them is imported by ``import fairstream``.
"""

from __future__ import annotations

import sys

import click

from ._bench._command import bench_cmd
from ._demo import demo_cmd
from ._detect import analyze_cmd, probe_cmd
from ._replay import replay_cmd
from ._serve import serve_cmd

__all__ = ["cli", "main"]


@click.group()
@click.version_option(package_name="fairstream")
def cli() -> None:
    """fairstream: see how your LLM server batches, and stream fairly through it."""


for _command in (serve_cmd, analyze_cmd, probe_cmd, replay_cmd, demo_cmd, bench_cmd):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
