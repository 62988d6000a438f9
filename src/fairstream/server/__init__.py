"""The embedded reference server: sans-IO scheduling engines and their two drivers."""

from ._config import Mode, ServerConfig
from ._continuous import ContinuousEngine
from ._costmodel import PRESETS, CostModel, Preset
from ._server import ReferenceServer, ServerHandle
from ._sim import SimRequest, SimResult, SimRun, simulate
from ._static import StaticEngine
from ._types import (
    Admitted,
    Engine,
    EngineStats,
    Event,
    Finished,
    Preempted,
    QueueFull,
    SeqRequest,
    StepStarted,
    Tokens,
)

__all__ = [
    "Admitted",
    "ContinuousEngine",
    "CostModel",
    "Engine",
    "EngineStats",
    "Event",
    "Finished",
    "Mode",
    "PRESETS",
    "Preempted",
    "Preset",
    "QueueFull",
    "ReferenceServer",
    "SeqRequest",
    "ServerConfig",
    "ServerHandle",
    "SimRequest",
    "SimResult",
    "SimRun",
    "StaticEngine",
    "StepStarted",
    "Tokens",
    "simulate",
]
