"""The server behaviours the detector must tell apart, as reference-server configurations."""

from __future__ import annotations

from typing import Any

from fairstream import ServerConfig

# real decode step about 15 ms for both presets (15 ms x 1.0, 30 ms x 0.5): at 7.5 ms a
# busy 2-core host (CI runs two test workers) stretched admissions into false prefill stalls
SCALE = {"default-7b": 1.0, "ascend-7b": 0.5}

MODES: dict[str, dict[str, Any]] = {
    "static/batch_end": {"mode": "static", "release": "batch_end", "batch_size": 4},
    "static/stream": {"mode": "static", "release": "stream", "batch_size": 6},
    "continuous": {"mode": "continuous", "prefill_priority": False},
    "continuous/stalls": {"mode": "continuous", "prefill_priority": True},
    "sequential": {"mode": "sequential"},
}


def config(mode: str, preset: str, tpc: int, **extra: Any) -> ServerConfig:
    return ServerConfig(
        preset=preset, time_scale=SCALE[preset], tokens_per_chunk=tpc, **MODES[mode], **extra
    )


def decode_step_range(cfg: ServerConfig) -> tuple[float, float]:
    """Real seconds of a decode step, from one running sequence to a full batch."""
    cost = cfg.cost_model()
    most = cfg.batch_size if cfg.mode == "static" else 6
    return (
        cost.step_seconds(1, 0) * cfg.time_scale,
        cost.step_seconds(most, 0) * cfg.time_scale,
    )


def answer(verdict: str, release: str | None, stalls: bool | None) -> str:
    """A report's verdict in the terms of :data:`MODES`."""
    if verdict == "static":
        return f"static/{release}"
    if verdict == "continuous":
        return {True: "continuous/stalls", False: "continuous", None: "continuous/?"}[stalls]
    return verdict
