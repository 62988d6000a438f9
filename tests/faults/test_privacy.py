"""Prompts, answers and API keys never reach logs, JSONL, metrics or errors by default."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import openai
import pytest
from openai import AsyncOpenAI
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import fairstream
from fairstream import (
    JsonlSink,
    LogSink,
    OtelSink,
    Recorder,
    ReferenceServer,
    ServerConfig,
    StreamClient,
)

PROMPT = "SECRET-PROMPT-7f3a"
KEY = "sk-SECRET-KEY-91c2"
WRONG = "sk-WRONG-KEY-55d0"


async def test_no_prompt_answer_or_key_anywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # everything, the server's logs included
    reader = InMemoryMetricReader()
    jsonl = tmp_path / "traces.jsonl"
    recorder = Recorder(
        [
            LogSink("en"),
            LogSink("zh"),
            JsonlSink(jsonl),
            OtelSink(MeterProvider(metric_readers=[reader])),
        ],
        chunk_debug=True,
    )
    answers: list[str] = []
    config = ServerConfig(api_key=KEY, time_scale=0.2)
    async with ReferenceServer(config) as server:
        msgs = [{"role": "user", "content": PROMPT}]
        async with (
            StreamClient(server.base_url, api_key=KEY, recorder=recorder) as client,
            client.chat(model=config.model, messages=msgs, max_tokens=6) as s,
        ):
            async for chunk in s:
                for choice in chunk.get("choices") or ():
                    answers.append(choice["delta"].get("content") or "")
        async with AsyncOpenAI(base_url=server.base_url, api_key=KEY) as raw:
            sdk = fairstream.instrument(raw, recorder=recorder)
            stream = await sdk.chat.completions.create(
                model=config.model,
                messages=msgs,
                max_tokens=6,
                stream=True,  # type: ignore[arg-type]
            )
            async for c in stream:
                if c.choices:
                    answers.append(c.choices[0].delta.content or "")
        async with AsyncOpenAI(base_url=server.base_url, api_key=WRONG, max_retries=0) as raw:
            bad = fairstream.instrument(raw, recorder=recorder)
            with pytest.raises(openai.AuthenticationError):  # 401
                await bad.chat.completions.create(
                    model=config.model,
                    messages=msgs,
                    max_tokens=6,
                    stream=True,  # type: ignore[arg-type]
                )
    recorder.close()
    answer = "".join(answers)
    assert len(answer) > 10
    data = reader.get_metrics_data()
    exported = {
        "logs": caplog.text,
        "jsonl": jsonl.read_text(),
        "metrics": data.to_json() if data else "",
        "traces": "\n".join(repr(t) for t in recorder.traces),
    }
    assert any(t.status_code == 401 for t in recorder.traces)
    for where, text in exported.items():
        for secret in (PROMPT, KEY, WRONG):
            assert secret not in text, f"{secret} leaked into {where}"
        assert answer not in text, f"the answer leaked into {where}"
    assert all("content" not in json.loads(line) for line in exported["jsonl"].splitlines())


async def test_text_is_kept_only_when_asked(tmp_path: Path) -> None:
    jsonl = tmp_path / "t.jsonl"
    recorder = Recorder([JsonlSink(jsonl)], keep_content=True)
    async with (
        ReferenceServer(ServerConfig(time_scale=0.2)) as server,
        StreamClient(server.base_url, recorder=recorder) as client,
    ):
        trace = await client.complete(
            model="fairstream-ref", messages=[{"role": "user", "content": "x"}], max_tokens=4
        )
    recorder.close()
    assert trace.content and trace.content in jsonl.read_text()


def test_binding_beyond_loopback_needs_an_explicit_flag() -> None:
    with pytest.raises(ValueError, match="allow_public"):
        ServerConfig(host="0.0.0.0")
    assert ServerConfig(host="0.0.0.0", allow_public=True).host == "0.0.0.0"
    assert ServerConfig(host="::1").host == "::1"
