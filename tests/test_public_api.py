"""The public API is exactly the intended list, sorted, and every name resolves; removed
names renamed before the first release are gone."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fairstream
import fairstream.server
import fairstream.sim

INTENDED = {
    # tracing: the trace model, recorder, sinks, log line, summaries
    *("SCHEMA", "StreamTrace", "Usage", "Recorder", "Sink", "JsonlSink", "LogSink", "OtelSink"),
    *("LOG_FORMAT", "LOG_DATEFMT", "format_line", "load_jsonl", "default_recorder", "tag"),
    *("summarize", "Summary", "Percentiles"),
    # instrumentation
    *("instrument", "FairstreamCallbackHandler", "StreamClient", "ChatStream"),
    # detection
    *("analyze", "probe", "read_traces", "parse_summaries", "TraceFile", "print_report"),
    *("ascii_timeline", "plot_timeline", "BatchingReport", "Evidence", "Recommendation"),
    *("RequestFinding", "REPORT_SCHEMA"),
    # dispatch
    *("Dispatcher", "Job", "Policy", "Fixed", "Serial", "AIMD", "Waves", "Gradient", "Auto"),
    # the reference server and virtual time (imported on first use)
    *("ReferenceServer", "ServerConfig", "simulate", "SimRequest", "SimResult", "SimRun"),
    # what-if replay (imported on first use: it needs the simulator)
    *("replay", "Replay", "ReplayRefused"),
    # the HTML report (imported on first use: extra 'report')
    *("write_html", "render_html"),
    # the exception tree
    *("FairstreamError", "MissingExtraError", "LifecycleError", "StreamError"),
    *("TransportError", "ConnectError"),
    *("ServerError", "StreamProtocolError", "IncompleteStreamError", "StreamEnded"),
    *("ClosedByCaller", "StreamAbandoned"),
    "__version__",
}


def test_all_is_the_intended_list_sorted_and_resolving() -> None:
    assert set(fairstream.__all__) == INTENDED
    for module in (fairstream, fairstream.server, fairstream.sim):
        names = list(module.__all__)
        assert names == sorted(names)
        assert len(set(names)) == len(names)
        for name in names:
            assert getattr(module, name) is not None


def test_every_public_name_is_exported() -> None:
    exported = set(fairstream.__all__)
    modules = {"server", "sim"}
    public = {n for n in dir(fairstream) if not n.startswith("_")} - modules
    assert public <= exported, public - exported


def test_internals_are_not_exported() -> None:
    for name in ("TraceBuilder", "CostModel", "PRESETS", "ServerHandle", "Admission"):
        assert not hasattr(fairstream, name), name
    assert not hasattr(fairstream.Dispatcher, "acquire_for_trace")
    assert not hasattr(fairstream.Dispatcher(), "admission")


@pytest.mark.parametrize("name", ["simulate_dispatch", "VJob", "VRun"])
def test_removed_old_names_are_gone(name: str) -> None:
    """Renamed before the first release (CHANGELOG.md says to what): no shim keeps them."""
    with pytest.raises(AttributeError, match=name):
        getattr(fairstream, name)


def test_policy_is_abstract() -> None:
    with pytest.raises(TypeError, match="abstract"):
        fairstream.Policy()  # type: ignore[abstract]


def test_importing_fairstream_loads_no_optional_integration() -> None:
    code = (
        "import sys, fairstream; "
        "print(sorted(m for m in ('openai', 'langchain_core', 'langchain_openai', "
        "'opentelemetry', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
