"""fairstream: see how your LLM server batches concurrent streams, and stream fairly through it.

Public API, re-exported here; everything in ``_``-prefixed modules is internal.
Integrations with optional dependencies (LangChain, OpenTelemetry) import lazily.
"""

from typing import Any as _Any

from ._builder import TraceBuilder, tag
from ._detect import (
    REPORT_SCHEMA,
    BatchingReport,
    Evidence,
    Recommendation,
    RequestFinding,
    TraceFile,
    analyze,
    ascii_timeline,
    parse_summaries,
    plot_timeline,
    print_report,
    probe,
    read_traces,
)
from ._dispatch._auto import Auto
from ._dispatch._dispatcher import Dispatcher
from ._dispatch._gradient import Gradient
from ._dispatch._job import Job
from ._dispatch._policies import AIMD, Fixed, Policy, Serial, Waves
from ._dispatch._vtime import VJob, VRun, simulate_dispatch
from ._errors import (
    FairstreamError,
    MissingExtraError,
    ServerError,
    StreamError,
    StreamProtocolError,
    TransportError,
)
from ._instrument import default_recorder, instrument
from ._instrument._http import ChatStream, StreamClient
from ._logline import LOG_DATEFMT, LOG_FORMAT, LogSink, format_line
from ._recorder import JsonlSink, Recorder, Sink, load_jsonl
from ._stats import Percentiles, Summary, summarize
from ._trace import SCHEMA, StreamTrace, Usage
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

_LAZY = {
    "FairstreamCallbackHandler": ("fairstream._instrument._langchain", "FairstreamCallbackHandler"),
    "OtelSink": ("fairstream._otel", "OtelSink"),
}


def __getattr__(name: str) -> _Any:
    """Import optional integrations on first use (they need their extras)."""
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'fairstream' has no attribute {name!r}")


__all__ = [
    "AIMD",
    "Auto",
    "BatchingReport",
    "ChatStream",
    "CostModel",
    "Dispatcher",
    "Evidence",
    "FairstreamCallbackHandler",
    "FairstreamError",
    "Fixed",
    "Gradient",
    "Job",
    "JsonlSink",
    "LOG_DATEFMT",
    "LOG_FORMAT",
    "LogSink",
    "MissingExtraError",
    "OtelSink",
    "PRESETS",
    "Percentiles",
    "Policy",
    "REPORT_SCHEMA",
    "Recommendation",
    "Recorder",
    "ReferenceServer",
    "RequestFinding",
    "SCHEMA",
    "Serial",
    "ServerConfig",
    "ServerError",
    "ServerHandle",
    "SimRequest",
    "SimResult",
    "SimRun",
    "Sink",
    "StreamClient",
    "StreamError",
    "StreamProtocolError",
    "StreamTrace",
    "Summary",
    "TraceBuilder",
    "TraceFile",
    "TransportError",
    "Usage",
    "VJob",
    "VRun",
    "Waves",
    "__version__",
    "analyze",
    "ascii_timeline",
    "default_recorder",
    "format_line",
    "instrument",
    "load_jsonl",
    "parse_summaries",
    "plot_timeline",
    "print_report",
    "probe",
    "read_traces",
    "simulate",
    "simulate_dispatch",
    "summarize",
    "tag",
]
