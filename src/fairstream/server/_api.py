"""The OpenAI-compatible endpoints: validate a request, queue it, stream its tokens.

Rule 1: every rejection is OpenAI's error shape with the status a client expects
        (400 bad request, 401 key, 404 model or path, 413 size, 429 queue full).
Rule 2: sinks run inside the step loop, so they only format bytes and write; they
        never await.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import itertools
import json
import re
import secrets
import time
from typing import Any, Literal

from ._config import ServerConfig
from ._driver import Driver
from ._faults import FaultPlan, FaultyExchange, parse_faults
from ._http import Exchange, Request
from ._lengths import Answer, JsonAnswer, TokenText, chunk_text
from ._request import ApiError, Kind, Parsed, parse
from ._responses import ResponseEvents, ResponsesStreamSink, ResponsesWholeSink
from ._types import QueueFull, SeqRequest
from ._wire import DONE, ChunkFormat

__all__ = ["OpenAIApp"]

_JSON = [("content-type", "application/json")]
_SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


_PREFIX = {"chat": "chatcmpl-", "text": "cmpl-", "responses": "resp_"}
# the Responses API's in-band error event (where chat streams get an ``error`` data line)
RESPONSES_ERROR = (
    b'event: error\ndata: {"type":"error","code":"server_error","message":"injected fault",'
    b'"param":null,"sequence_number":0}\n\n'
)

# ``AsyncAzureOpenAI`` posts to ``{endpoint}/openai/deployments/{name}/chat/completions`` (or,
# given a ``base_url``, ``{base_url}/deployments/{name}/...``)
_AZURE = re.compile(r"^(?:/openai|/v1)?/deployments/[^/]+/")


class OpenAIApp:
    """Routes requests to the engine through the driver and formats the answers."""

    def __init__(self, config: ServerConfig, driver: Driver) -> None:
        self.config = config
        self.driver = driver
        self.lengths = config.output_lengths()
        self.text = TokenText()
        self.created = int(time.time())
        self._ids = itertools.count(1)
        self.faults = FaultPlan(parse_faults(config.faults), config.seed)
        self._tag = secrets.token_hex(4)
        self.rejected: dict[int, int] = {}
        # response id -> perf_counter() of each content chunk written (tests measure offsets)
        self.emissions: dict[str, list[float]] | None = None

    def __call__(self, req: Request, ex: Exchange) -> None:
        try:
            self._route(req, ex)
        except ApiError as err:
            self.rejected[err.status] = self.rejected.get(err.status, 0) + 1
            ex.respond(err.status, [*_JSON, *err.headers], err.body)

    # -- routing ------------------------------------------------------------------------
    def _route(self, req: Request, ex: Exchange) -> None:
        path = req.path.rstrip("/") or "/"
        if path == "/debug/emissions" and self.emissions is not None:
            ex.respond(200, _JSON, json.dumps(self.emissions).encode())
            return
        if path in ("/health", "/metrics", "/v1/models"):
            if req.method not in ("GET", "HEAD"):
                raise ApiError(405, f"{req.method} not allowed on {path}")
            if path == "/health":
                ex.respond(200, _JSON, b'{"status":"ok"}')
            elif path == "/metrics":
                ex.respond(200, [("content-type", "text/plain; version=0.0.4")], self._metrics())
            else:
                self._check_key(req)
                ex.respond(200, _JSON, self._models())
            return
        kind: Kind
        route = _AZURE.sub("/v1/", path)  # Azure's deployment routes: the model is the body's
        if route == "/v1/chat/completions":
            kind = "chat"
        elif route == "/v1/completions":
            kind = "text"
        elif route == "/v1/responses":
            kind = "responses"
        else:
            raise ApiError(404, f"no route for {path}", "not_found_error", code="not_found")
        if req.method != "POST":
            raise ApiError(405, f"{req.method} not allowed on {path}")
        self._check_key(req)
        self._generate(kind, parse(kind, req.body, self.config), ex)

    def _check_key(self, req: Request) -> None:
        key = self.config.api_key
        if key is None:
            return
        auth = req.headers.get("authorization", "")
        given = auth[7:] if auth[:7].lower() == "bearer " else ""
        if not hmac.compare_digest(given.encode(), key.encode()):
            raise ApiError(401, "Incorrect API key provided", code="invalid_api_key")

    # -- generation ---------------------------------------------------------------------
    def _generate(self, kind: Kind, p: Parsed, ex: Exchange, delayed: bool = False) -> None:
        cfg = self.config
        n = next(self._ids)
        rid = f"{_PREFIX[kind]}{self._tag}{n:x}"
        fault = None if delayed else self.faults.pick(n)
        if fault is not None:
            if fault.kind in ("status_429", "status_503"):
                raise ApiError(
                    int(fault.kind[-3:]),
                    "injected fault",
                    "server_error",
                    headers=[("retry-after", f"{cfg.retry_after_s:g}")],
                )
            if fault.kind == "disconnect_before_headers":
                ex.abort()
                return
            if fault.kind == "slow_headers":
                later = functools.partial(self._later, kind, p, ex)
                asyncio.get_running_loop().call_later(fault.seconds, later)
                return
            if p.stream:  # a mid-stream fault
                error = RESPONSES_ERROR if kind == "responses" else None
                ex = FaultyExchange(ex, fault, lambda: self.driver.cancel(rid), error)  # type: ignore[assignment]
        limit = min(p.max_tokens or cfg.max_tokens_cap, cfg.max_tokens_cap)
        key = f"{p.seed}:{p.prompt}" if p.seed is not None else str(n)
        answer: Answer = (
            JsonAnswer(p.response_format, self.text, self.text.offset(key))
            if p.response_format is not None
            else self.text.answer(key)
        )
        natural = answer.length if answer.length is not None else self.lengths.draw(key)
        out = limit if p.ignore_eos and cfg.honor_ignore_eos else min(limit, natural)
        reason: Literal["stop", "length"] = "length" if out >= limit else "stop"
        seq = SeqRequest(rid, p.prompt_tokens, out, reason)
        sink: _StreamSink | _WholeSink | ResponsesStreamSink | ResponsesWholeSink
        if kind == "responses":
            emissions = None
            if p.stream and self.emissions is not None:
                emissions = self.emissions[rid] = []
            events = ResponseEvents(rid, self.created, cfg.model, p)
            sink = (
                ResponsesStreamSink(ex, events, answer, cfg.tokens_per_chunk, p, emissions)
                if p.stream
                else ResponsesWholeSink(ex, rid, self.created, cfg.model, answer, p)
            )
        elif p.stream:
            fmt = ChunkFormat(kind, rid, self.created, cfg.model)
            emissions = None
            if self.emissions is not None:
                emissions = self.emissions[rid] = []
            sink = _StreamSink(
                ex,
                fmt,
                answer,
                cfg.tokens_per_chunk,
                p,
                cfg.role_chunk_on_admission,
                emissions,
            )
            sink.done_delay = cfg.done_delay_ms / 1000.0 * cfg.time_scale
        else:
            sink = _WholeSink(ex, kind, rid, self.created, cfg.model, answer, p)
        try:
            self.driver.submit(seq, sink)
        except QueueFull as exc:
            raise ApiError(
                429,
                f"server queue is full ({exc})",
                "rate_limit_error",
                code="rate_limit_exceeded",
                headers=[("retry-after", f"{cfg.retry_after_s:g}")],
            ) from None
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        ex.on_close = lambda: self.driver.cancel(rid)
        if p.stream:
            ex.start(200, _SSE)

    def _later(self, kind: Kind, p: Parsed, ex: Exchange) -> None:
        """A request whose answer was held back by ``slow_headers``."""
        if ex.closed:
            return
        try:
            self._generate(kind, p, ex, delayed=True)
        except ApiError as err:
            ex.respond(err.status, [*_JSON, *err.headers], err.body)

    # -- read-only endpoints --------------------------------------------------------------
    def _models(self) -> bytes:
        model = {
            "id": self.config.model,
            "object": "model",
            "created": self.created,
            "owned_by": "fairstream",
        }
        return json.dumps({"object": "list", "data": [model]}).encode()

    def _metrics(self) -> bytes:
        s = self.driver.engine.stats
        d = self.driver
        rows = [
            ("requests_running", "gauge", s.running),
            ("requests_waiting", "gauge", s.waiting),
            ("steps_total", "counter", s.steps),
            ("generation_tokens_total", "counter", s.generated_tokens),
            ("prompt_tokens_total", "counter", s.prefill_tokens),
            ("preemptions_total", "counter", s.preemptions),
            ("requests_finished_total", "counter", s.finished),
            ("requests_aborted_total", "counter", s.aborted),
            ("step_lateness_seconds_sum", "counter", round(d.step_late_sum, 6)),
            ("step_lateness_seconds_max", "gauge", round(d.step_late_max, 6)),
            ("requests_rejected_total", "counter", sum(self.rejected.values())),
            ("requests_peak", "gauge", d.active_peak),  # most in the engine at once
            ("requests_stretched_total", "counter", s.stretched),  # static: see EngineStats
        ]
        lines = []
        for name, typ, value in rows:
            lines.append(f"# TYPE fairstream_server_{name} {typ}")
            lines.append(f"fairstream_server_{name} {value}")
        return ("\n".join(lines) + "\n").encode()


class _StreamSink:
    """Writes SSE chunks as tokens come; coalesces ``tokens_per_chunk`` tokens a chunk."""

    __slots__ = (
        "done_delay",
        "emissions",
        "ex",
        "fmt",
        "p",
        "pending",
        "role_early",
        "role_sent",
        "sent",
        "text",
        "tpc",
    )

    def __init__(
        self,
        ex: Exchange,
        fmt: ChunkFormat,
        text: Answer,
        tpc: int,
        p: Parsed,
        role_early: bool,
        emissions: list[float] | None,
    ) -> None:
        self.ex, self.fmt, self.text, self.tpc, self.p = ex, fmt, text, tpc, p
        self.role_early = role_early
        self.emissions = emissions
        self.pending = 0
        self.sent = 0
        self.role_sent = False
        self.done_delay = 0.0

    def on_admitted(self) -> None:
        if self.role_early and not self.role_sent:
            self.role_sent = True
            self.ex.write(self.fmt.role())

    def on_tokens(self, n: int, total: int) -> None:
        head = b""
        if not self.role_sent:
            self.role_sent = True
            head = self.fmt.role()
        self.pending += n
        if self.pending >= self.tpc:
            self.ex.write(head + self._flush())
        elif head:
            self.ex.write(head)

    def _flush(self) -> bytes:
        k, self.pending = self.pending, 0
        start, self.sent = self.sent, self.sent + k
        text = chunk_text(self.text, start, k)
        if self.emissions is not None:
            self.emissions.append(time.perf_counter())
        if self.p.continuous_usage:
            return self.fmt.content(text, (self.p.prompt_tokens, self.sent))
        return self.fmt.content(text)

    def on_finish(self, reason: str, completion_tokens: int) -> None:
        out = b"" if self.role_sent else self.fmt.role()
        out += self._flush() if self.pending else b""
        out += self.fmt.finish(reason)
        if self.p.include_usage:
            out += self.fmt.usage(self.p.prompt_tokens, completion_tokens)
        if self.done_delay > 0:  # a server that is slow to close finished streams
            self.ex.write(out)
            asyncio.get_running_loop().call_later(self.done_delay, self._done)
            return
        self.ex.write(out + DONE)
        self.ex.end()

    def _done(self) -> None:
        self.ex.write(DONE)
        self.ex.end()


class _WholeSink:
    """Collects a non-streamed answer and sends it in one response."""

    __slots__ = ("created", "ex", "kind", "model", "p", "rid", "text")

    def __init__(
        self,
        ex: Exchange,
        kind: str,
        rid: str,
        created: int,
        model: str,
        text: Answer,
        p: Parsed,
    ) -> None:
        self.ex, self.kind, self.rid, self.created, self.model = ex, kind, rid, created, model
        self.text, self.p = text, p

    def on_admitted(self) -> None:
        pass

    def on_tokens(self, n: int, total: int) -> None:
        pass

    def on_finish(self, reason: str, completion_tokens: int) -> None:
        content = "".join(self.text.word(i) for i in range(completion_tokens))
        usage = {
            "prompt_tokens": self.p.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": self.p.prompt_tokens + completion_tokens,
        }
        choice: dict[str, Any]
        if self.kind == "chat":
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": reason,
            }
            obj = "chat.completion"
        else:
            choice = {"index": 0, "text": content, "logprobs": None, "finish_reason": reason}
            obj = "text_completion"
        body = {
            "id": self.rid,
            "object": obj,
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": usage,
        }
        self.ex.respond(200, _JSON, json.dumps(body).encode())
