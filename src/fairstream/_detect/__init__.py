"""Detection: how a server batches, from traces, summary lines or an active probe."""

from ._analyze import analyze
from ._logparse import TraceFile, parse_summaries, read_traces
from ._probe import probe
from ._render import print_report
from ._report import REPORT_SCHEMA, BatchingReport, Evidence, Recommendation, RequestFinding
from ._timeline import ascii_timeline, plot_timeline, plot_timelines

__all__ = [
    "REPORT_SCHEMA",
    "BatchingReport",
    "Evidence",
    "Recommendation",
    "RequestFinding",
    "TraceFile",
    "analyze",
    "ascii_timeline",
    "parse_summaries",
    "plot_timeline",
    "plot_timelines",
    "print_report",
    "probe",
    "read_traces",
]
