"""``--html PATH`` and ``--lang`` for the commands that judge a server: one page to forward."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .._errors import FairstreamError, ReplayRefused

if TYPE_CHECKING:
    from .._detect import BatchingReport
    from .._replay import Replay
    from .._trace import StreamTrace

__all__ = ["HTML", "LANG", "input_lang", "replay_for_page", "write_page"]

F = TypeVar("F", bound=Callable[..., Any])

HTML = click.option(
    "--html",
    "html",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a self-contained HTML report to forward (extra 'report').",
)
LANG = click.option(
    "--lang",
    type=click.Choice(["en", "zh"]),
    default=None,
    help="The HTML report's language [default: the input's: Chinese log lines, Chinese page].",
)


def input_lang(paths: Sequence[Path]) -> str | None:
    """'zh' when the input files speak Chinese, else None (the page then follows the traces)."""
    from .._html import guess_lang

    texts = []
    for p in paths:
        with p.open(encoding="utf-8", errors="replace") as f:
            texts.append(f.read(65536))
    return "zh" if guess_lang(texts) == "zh" else None


def replay_for_page(
    traces: Sequence[StreamTrace], resolution: float
) -> Replay | ReplayRefused | None:
    """What ``auto`` would gain on these requests, or why replay will not say (for the page)."""
    from .._replay import replay

    try:
        return replay(list(traces), "auto", resolution)
    except ReplayRefused as exc:
        return exc
    except ValueError:
        return None


def write_page(
    path: Path,
    report: BatchingReport | Replay,
    *,
    traces: Sequence[StreamTrace],
    replay: Replay | ReplayRefused | None = None,
    arms: Sequence[tuple[str, Mapping[str, Any]]] = (),
    lang: str | None = None,
    resolution: float = 0.0,
) -> None:
    """Write the page, or fail with the reason (a missing extra names its install command)."""
    from .._html import write_html

    try:
        write_html(
            report,
            path,
            traces=traces,
            replay=replay,
            arms=arms,
            lang=lang,  # type: ignore[arg-type]
            resolution=resolution,
        )
    except (FairstreamError, OSError) as exc:
        raise click.ClickException(f"cannot write the HTML report: {exc}") from None
    click.echo(f"HTML report written to {path}", err=True)
