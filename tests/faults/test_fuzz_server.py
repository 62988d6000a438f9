"""Property-based fuzzing of the reference server: whatever a client sends, it survives.

Random request bodies (JSON of any shape, and OpenAI-shaped bodies with wrong types and
values), random headers and raw byte garbage. After each kind, the server still answers
a well-formed request; no handler raised an unhandled exception (ERROR log records from
the server or asyncio are collected and must be none); no answer is a 5xx. Each test checks
its own examples ran and the server answers after them, so no test depends on another's order.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairstream import ReferenceServer, ServerConfig
from fairstream.server import ServerHandle

EXAMPLES = int(os.environ.get("FAIRSTREAM_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
weird = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
header_names = st.text(
    st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=":"),
    min_size=1,
    max_size=20,
)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    config = ServerConfig(time_scale=0.05, idle_timeout_s=0.5, max_tokens_cap=64)
    with ReferenceServer.in_thread(config) as handle:
        yield handle


@pytest.fixture
def errors(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.ERROR)
    yield caplog
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad[:5]]


def _post(server: ServerHandle, body: bytes, headers: dict[str, str] | None = None) -> int:
    url = server.base_url + "/chat/completions"
    with (
        httpx.Client(timeout=5.0) as client,
        client.stream(
            "POST",
            url,
            content=body,
            headers={"content-type": "application/json", **(headers or {})},
        ) as response,
    ):
        for _ in response.iter_bytes():
            pass
        return response.status_code


def _healthy(server: ServerHandle) -> None:
    body = {
        "model": "fairstream-ref",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 3,
    }
    assert _post(server, json.dumps(body).encode()) == 200


def _fuzzed(server: ServerHandle, ran: int) -> None:
    """After a test's examples: they all ran, and the server still answers a good request."""
    assert ran >= EXAMPLES
    _healthy(server)


def test_any_json_body(server: ServerHandle, errors: object) -> None:
    ran = 0

    @FUZZ
    @given(body=json_values)
    def one(body: object) -> None:
        nonlocal ran
        ran += 1
        assert _post(server, json.dumps(body).encode()) < 500

    one()
    _fuzzed(server, ran)


def test_openai_shaped_bodies(server: ServerHandle, errors: object) -> None:
    ran = 0

    @FUZZ
    @given(
        messages=weird
        | st.lists(st.dictionaries(st.sampled_from(["role", "content", "name"]), weird)),
        max_tokens=weird, stream=weird, stream_options=weird, response_format=weird,
        ignore_eos=weird, temperature=weird, n=weird,
    )  # fmt: skip
    def one(**fields: object) -> None:
        nonlocal ran
        ran += 1
        body = {"model": "fairstream-ref", **fields}
        assert _post(server, json.dumps(body).encode()) < 500

    one()
    _fuzzed(server, ran)


def test_random_headers(server: ServerHandle, errors: object) -> None:
    ran = 0

    @FUZZ
    @given(
        headers=st.dictionaries(
            header_names,
            st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
            max_size=5,
        )
    )
    def one(headers: dict[str, str]) -> None:
        nonlocal ran
        ran += 1
        headers = {
            k: v.strip()
            for k, v in headers.items()
            if k.lower() not in {"content-length", "transfer-encoding", "host", "connection"}
        }
        body = {
            "model": "fairstream-ref",
            "messages": [{"role": "user", "content": "x"}],
            "max_tokens": 2,
        }
        try:
            status = _post(server, json.dumps(body).encode(), headers)
        except (httpx.LocalProtocolError, UnicodeEncodeError):
            return  # httpx itself refused to send it
        assert status < 500

    one()
    _fuzzed(server, ran)


def test_raw_garbage(server: ServerHandle, errors: object) -> None:
    ran = 0
    host, port = server.base_url.split("//")[1].split("/")[0].rsplit(":", 1)

    @FUZZ
    @given(data=st.binary(max_size=2048))
    def one(data: bytes) -> None:
        nonlocal ran
        ran += 1
        with socket.create_connection((host, int(port)), timeout=2.0) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)  # end of request: the server answers or closes
            sock.settimeout(2.0)
            try:
                while sock.recv(65536):
                    pass
            except (TimeoutError, ConnectionResetError):
                pass

    one()
    _fuzzed(server, ran)
