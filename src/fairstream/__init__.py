"""fairstream: see how your LLM server batches concurrent streams, and stream fairly through it.

Public API, re-exported here; everything in ``_``-prefixed modules is internal. Public
sub-packages: :mod:`fairstream.server` (the reference server) and :mod:`fairstream.sim`
(virtual time). Those, the integrations with optional dependencies (LangChain,
OpenTelemetry) and the rich terminal report are imported on first use, so
``import fairstream`` stays light.
"""

from typing import Any as _Any

from ._builder import tag
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
from ._dispatch._dispatcher import Dispatcher
from ._dispatch._job import Job
from ._dispatch._policy import Policy
from ._dispatch.policies._fixed import AIMD, Fixed, Serial
from ._dispatch.policies._gradient import Gradient
from ._dispatch.policies._waves import Waves
from ._dispatch.policies.auto._auto import Auto
from ._errors import (
    ClosedByCaller,
    ConnectError,
    FairstreamError,
    IncompleteStreamError,
    LifecycleError,
    MissingExtraError,
    ReplayRefused,
    ServerError,
    StreamAbandoned,
    StreamEnded,
    StreamError,
    StreamProtocolError,
    TransportError,
)
from ._instrument import instrument
from ._instrument._http import ChatStream, StreamClient
from ._logline import LOG_DATEFMT, LOG_FORMAT, LogSink, format_line
from ._recorder import JsonlSink, Recorder, Sink, default_recorder, load_jsonl
from ._stats import Percentiles, Summary, summarize
from ._trace import SCHEMA, StreamTrace, Usage
from ._version import __version__

_LAZY = {
    "FairstreamCallbackHandler": ("fairstream._instrument._langchain", "FairstreamCallbackHandler"),
    "OtelSink": ("fairstream._otel", "OtelSink"),
    "ReferenceServer": ("fairstream.server", "ReferenceServer"),
    "ServerConfig": ("fairstream.server", "ServerConfig"),
    "SimRequest": ("fairstream.sim", "SimRequest"),
    "SimResult": ("fairstream.sim", "SimResult"),
    "SimRun": ("fairstream.sim", "SimRun"),
    "Replay": ("fairstream._replay", "Replay"),
    "replay": ("fairstream._replay", "replay"),
    "render_html": ("fairstream._html", "render_html"),
    "write_html": ("fairstream._html", "write_html"),
    "simulate": ("fairstream.sim", "simulate"),
}


def __getattr__(name: str) -> _Any:
    """Import optional integrations and the server on first use."""
    import importlib

    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    if name in ("server", "sim"):
        return importlib.import_module(f"fairstream.{name}")
    raise AttributeError(f"module 'fairstream' has no attribute {name!r}")


__all__ = [
    "AIMD",
    "Auto",
    "BatchingReport",
    "ChatStream",
    "ClosedByCaller",
    "ConnectError",
    "Dispatcher",
    "Evidence",
    "FairstreamCallbackHandler",
    "FairstreamError",
    "Fixed",
    "Gradient",
    "IncompleteStreamError",
    "Job",
    "JsonlSink",
    "LOG_DATEFMT",
    "LOG_FORMAT",
    "LifecycleError",
    "LogSink",
    "MissingExtraError",
    "OtelSink",
    "Percentiles",
    "Policy",
    "REPORT_SCHEMA",
    "Recommendation",
    "Recorder",
    "ReferenceServer",
    "Replay",
    "ReplayRefused",
    "RequestFinding",
    "SCHEMA",
    "Serial",
    "ServerConfig",
    "ServerError",
    "SimRequest",
    "SimResult",
    "SimRun",
    "Sink",
    "StreamAbandoned",
    "StreamClient",
    "StreamEnded",
    "StreamError",
    "StreamProtocolError",
    "StreamTrace",
    "Summary",
    "TraceFile",
    "TransportError",
    "Usage",
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
    "render_html",
    "replay",
    "simulate",
    "summarize",
    "tag",
    "write_html",
]
