"""The embedded reference server: sans-IO scheduling engines and the real-time HTTP driver.

Public sub-package (``from fairstream.server import ...``); the virtual-time driver is
:mod:`fairstream.sim`. Nothing in the client library imports it.
"""

from ._config import Mode, ServerConfig
from ._continuous import ContinuousEngine
from ._costmodel import PRESETS, CostModel, Preset
from ._server import ReferenceServer, ServerHandle
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
    "StaticEngine",
    "StepStarted",
    "Tokens",
]
