"""fairstream: see how your LLM server batches concurrent streams, and stream fairly through it.

Public API, re-exported here; everything in ``_``-prefixed modules is internal.
"""

from ._version import __version__
from .server import (
    PRESETS,
    CostModel,
    ReferenceServer,
    ServerConfig,
    ServerHandle,
    SimRequest,
    SimResult,
    SimRun,
    simulate,
)

__all__ = [
    "CostModel",
    "PRESETS",
    "ReferenceServer",
    "ServerConfig",
    "ServerHandle",
    "SimRequest",
    "SimResult",
    "SimRun",
    "__version__",
    "simulate",
]
