"""A secret planted in every place a user can put one never reaches anything fairstream writes.

The places: a base URL's userinfo and query, the API key, a default header, the Redis URL,
the prompt. What is read back: the JSONL file, the log lines (ours and the server's), OTel
spans and metrics, the in-memory traces, the CLI's output and results file, and the error
messages fairstream raises or records.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from openai import AsyncOpenAI
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import fairstream
from fairstream import (
    JsonlSink,
    LogSink,
    OtelSink,
    Recorder,
    ReferenceServer,
    ServerConfig,
    StreamClient,
    StreamTrace,
)
from fairstream._redact import redact_text, redact_url
from tests.conftest import ServerFactory

USERINFO = "PW-USERINFO-4c1e"
QUERY = "QUERY-KEY-8b2d"
API_KEY = "sk-API-KEY-19fa"
HEADER = "HEADER-TOKEN-77e0"
REDIS = "REDIS-PASS-3a9c"
PROMPT = "PROMPT-TEXT-d5b8"
SECRETS = (USERINFO, QUERY, API_KEY, HEADER, REDIS, PROMPT)


def _with_userinfo(base_url: str) -> str:
    return base_url.replace("http://", f"http://alice:{USERINFO}@")


async def test_no_planted_secret_reaches_any_sink(
    serve: ServerFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reader = InMemoryMetricReader()
    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    jsonl = tmp_path / "traces.jsonl"
    recorder = Recorder(
        [
            LogSink("en"),
            LogSink("zh"),
            JsonlSink(jsonl),
            OtelSink(MeterProvider(metric_readers=[reader]), spans=True, tracer_provider=tracer),
        ]
    )
    msgs = [{"role": "user", "content": PROMPT}]
    errors: list[str] = []
    async with serve(time_scale=0.1) as server:
        url = _with_userinfo(server.base_url)
        model = server.config.model
        async with AsyncOpenAI(
            base_url=url,
            api_key=API_KEY,
            default_headers={"X-Token": HEADER},
            default_query={"api-key": QUERY},
        ) as raw:
            sdk = fairstream.instrument(raw, recorder=recorder)
            stream = await sdk.chat.completions.create(
                model=model, messages=msgs, max_tokens=4, stream=True
            )
            async for _ in stream:
                pass
        async with StreamClient(url, api_key=API_KEY, recorder=recorder) as client:
            await client.complete(model=model, messages=msgs, max_tokens=4)
        # a request that fails: its trace keeps an error message
        async with StreamClient(url + "/nowhere", api_key=API_KEY, recorder=recorder) as client:
            with pytest.raises(fairstream.FairstreamError) as failed:
                await client.complete(model=model, messages=msgs, max_tokens=4)
            errors.append(str(failed.value))
    # a shared pool whose Redis is unreachable: the error and the logs name no password
    redis_url = f"redis://:{REDIS}@127.0.0.1:9/0"
    with pytest.raises(Exception) as down:
        async with fairstream.Dispatcher("auto", coordinator=redis_url) as d:
            await d.submit(anyio.sleep, 0)
    errors.append(f"{down.value!s} {down.value!r}")
    recorder.close()
    data = reader.get_metrics_data()
    written = {
        "jsonl": jsonl.read_text(),
        # ours and the reference server's (httpx's own request log quotes the URL as given)
        "logs": "\n".join(
            r.getMessage() for r in caplog.records if r.name.startswith("fairstream")
        ),
        "metrics": data.to_json() if data else "",
        "spans": "\n".join(s.to_json() for s in spans.get_finished_spans()),
        "traces": "\n".join(repr(t) for t in recorder.traces),
        "errors": "\n".join(errors),
        "html": fairstream.render_html(fairstream.analyze(recorder.traces), traces=recorder.traces),
    }
    assert len(recorder.traces) == 3 and spans.get_finished_spans()
    assert any(t.outcome == "error" and t.error_message for t in recorder.traces)
    assert all("REDACTED:REDACTED@" in (t.base_url or "") for t in recorder.traces)
    for where, text in written.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked into {where}"


def test_the_cli_prints_and_writes_no_credential(tmp_path: Path) -> None:
    """``fairstream bench`` against a base URL with userinfo: its output, results file and
    HTML report."""
    with ReferenceServer.in_subprocess(ServerConfig(time_scale=0.1)) as server:
        out = _bench(_with_userinfo(server.base_url), tmp_path)
    assert out.returncode == 0, out.stderr
    files = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()).decode(
        errors="replace"
    )
    assert "REDACTED" in files  # the URL is there, without its credentials
    assert (tmp_path / "report.html").is_file()
    for where, text in {"stdout": out.stdout, "stderr": out.stderr, "files": files}.items():
        for secret in (USERINFO, API_KEY):
            assert secret not in text, f"{secret} leaked into the CLI's {where}"


def _bench(url: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fairstream", "bench", "--base-url", url, "--model",
         "fairstream-ref", "--requests", "4", "--api-key", API_KEY, "--out", str(out),
         "--html", str(out / "report.html")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_every_url_loses_its_credentials_and_keeps_the_rest() -> None:
    assert redact_url("http://a:b@h:1/v1") == "http://REDACTED:REDACTED@h:1/v1"
    assert redact_url("https://tok@h/v1") == "https://REDACTED:REDACTED@h/v1"
    assert redact_url("http://h/v1?key=s&mode=x") == "http://h/v1?key=REDACTED&mode=REDACTED"
    assert redact_url("http://h:8000/v1") == "http://h:8000/v1"
    text = "error for url 'http://a:b@h/v1/chat?k=s' (retry)"
    assert (
        redact_text(text) == "error for url 'http://REDACTED:REDACTED@h/v1/chat?k=REDACTED' (retry)"
    )
    # a trace read back from an older file is redacted as it is loaded
    old = StreamTrace(request_id="x", base_url="http://a:SECRET@h/v1").to_dict()
    assert "SECRET" not in json.dumps(old)
    assert "SECRET" not in (
        StreamTrace.from_dict({**old, "base_url": "http://a:SECRET@h"}).base_url or ""
    )


def test_text_is_kept_when_the_genai_convention_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not Recorder().keep_content
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    assert Recorder().keep_content
    assert not Recorder(keep_content=False).keep_content
