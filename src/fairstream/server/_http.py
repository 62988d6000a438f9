"""HTTP/1.1 connections on asyncio, parsed by h11; handlers write through :class:`Exchange`.

Rule 1: h11 does all parsing and framing; this module only moves bytes and enforces
        limits (header and body size, idle time, connection count, write buffer).
Rule 2: one request at a time per connection (h11 pauses pipelined ones); when the
        response ends the connection is reused or closed as h11 says.
Rule 3: a handler learns that its client vanished through ``on_close`` and never
        touches a closed transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import h11

from ._wire import error_json

__all__ = ["Exchange", "Handler", "HttpLimits", "HttpProtocol", "Request"]

log = logging.getLogger("fairstream.server")


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """Per-connection limits; beyond them the peer gets 4xx and a closed socket."""

    max_header_bytes: int = 16 << 10
    max_body_bytes: int = 1 << 20
    idle_timeout_s: float = 30.0
    write_buffer_limit: int = 4 << 20
    max_connections: int = 8192


@dataclass(frozen=True, slots=True)
class Request:
    """A complete request: method, target path, lower-cased headers, body bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Exchange:
    """One request's response channel; handlers write the response through it."""

    __slots__ = ("_proto", "closed", "on_close", "started")

    def __init__(self, proto: HttpProtocol) -> None:
        self._proto = proto
        self.closed = False
        self.started = False
        self.on_close: Callable[[], None] | None = None

    def respond(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        """Send a complete response with a Content-Length."""
        self.start(status, [*headers, ("content-length", str(len(body)))])
        self.write(body)
        self.end()

    def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        if self.closed:
            return
        self.started = True
        self._proto.send(h11.Response(status_code=status, headers=headers))

    def write(self, data: bytes) -> None:
        if self.closed or not data:
            return
        self._proto.send(h11.Data(data=data))
        if self._proto.buffered() > self._proto.limits.write_buffer_limit:
            log.warning("client is not reading; closing its connection")
            self._proto.abort()

    def start_unframed(self, status: int, headers: list[tuple[str, str]]) -> None:
        """Start a response whose body ends when the connection closes (``connection:
        close`` framing, no length, not chunked), bypassing h11: what a proxy may send.
        Everything after goes through :meth:`write_raw`, and ends with :meth:`hangup`."""
        if self.closed:
            return
        self.started = True
        head = [f"HTTP/1.1 {status} OK"] + [
            f"{k}: {v}"
            for k, v in headers
            if k.lower() not in ("content-length", "transfer-encoding")
        ]
        self.write_raw(("\r\n".join([*head, "connection: close"]) + "\r\n\r\n").encode())

    def write_raw(self, data: bytes) -> None:
        """Bytes straight onto the socket (no HTTP framing)."""
        transport = self._proto.transport
        if not self.closed and transport is not None and not transport.is_closing():
            transport.write(data)

    def hangup(self) -> None:
        """Close the connection cleanly (FIN after what is buffered), mid-response."""
        if self.closed:
            return
        self.closed = True
        if self._proto.transport is not None:
            self._proto.transport.close()

    def abort(self) -> None:
        """Drop the connection with no (further) response: a server that vanished."""
        if self.closed:
            return
        self.closed = True
        self._proto.abort()

    def end(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._proto.send(h11.EndOfMessage())
        self._proto.response_done()


Handler = Callable[[Request, Exchange], None]


class HttpProtocol(asyncio.Protocol):
    """Serves one TCP connection: h11 in, handler out."""

    def __init__(self, handler: Handler, limits: HttpLimits, registry: set[HttpProtocol]) -> None:
        self.handler = handler
        self.limits = limits
        self.registry = registry
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
        self.transport: asyncio.Transport | None = None
        self.exchange: Exchange | None = None
        self._head: h11.Request | None = None
        self._body = bytearray()
        self._timer: asyncio.TimerHandle | None = None
        self._draining = False

    # -- asyncio callbacks --------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if len(self.registry) >= self.limits.max_connections:
            self._fail(503, "too many connections")
            return
        self.registry.add(self)
        self._arm_timer()

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return  # the answer is sent; read and drop what the peer still sends
        try:
            self.conn.receive_data(data)
        except h11.RemoteProtocolError:
            self._fail(400, "malformed HTTP")
            return
        self._pump()

    def eof_received(self) -> bool | None:
        if self._draining:
            if self.transport is not None:
                self.transport.close()
            return None
        with contextlib.suppress(h11.RemoteProtocolError):
            self.conn.receive_data(b"")
        self._pump()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.registry.discard(self)
        self._cancel_timer()
        ex, self.exchange = self.exchange, None
        self.transport = None
        if ex is not None and not ex.closed:
            ex.closed = True
            if ex.on_close is not None:
                ex.on_close()

    # -- used by Exchange -----------------------------------------------------------
    def send(self, event: h11.Event) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        try:
            data = self.conn.send(event)
        except h11.LocalProtocolError:
            log.exception("protocol error while responding")
            self.abort()
            return
        if data:
            self.transport.write(data)

    def buffered(self) -> int:
        return 0 if self.transport is None else self.transport.get_write_buffer_size()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def response_done(self) -> None:
        self.exchange = None
        if self.transport is None:
            return
        if self.conn.our_state is h11.MUST_CLOSE or self.conn.their_state is not h11.DONE:
            self.transport.close()
            return
        try:
            self.conn.start_next_cycle()
        except h11.LocalProtocolError:
            self.transport.close()
            return
        self._arm_timer()
        self._pump()

    def close(self) -> None:
        """Server shutdown: drop the connection."""
        if self.transport is not None:
            self.transport.abort()

    # -- internals ----------------------------------------------------------------------
    def _pump(self) -> None:
        while self.transport is not None and self.exchange is None:
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError as exc:
                self._fail(exc.error_status_hint, str(exc) or "malformed HTTP")
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                # h11 bounds only *incomplete* heads; a head that arrives whole is ours to cap.
                size = len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers)
                if size > self.limits.max_header_bytes:
                    self._fail(
                        431, f"request head larger than {self.limits.max_header_bytes} bytes"
                    )
                    return
                self._head = event
                self._body.clear()
                length = _header(event.headers, b"content-length")
                if (
                    length is not None
                    and length.isdigit()
                    and int(length) > self.limits.max_body_bytes
                ):
                    self._fail(413, f"request body larger than {self.limits.max_body_bytes} bytes")
                    return
            elif isinstance(event, h11.Data):
                self._body += event.data
                if len(self._body) > self.limits.max_body_bytes:
                    self._fail(413, f"request body larger than {self.limits.max_body_bytes} bytes")
                    return
            elif isinstance(event, h11.EndOfMessage):
                self._dispatch()
            elif isinstance(event, h11.ConnectionClosed):
                if self.transport is not None:
                    self.transport.close()
                return

    def _dispatch(self) -> None:
        head = self._head
        assert head is not None
        self._cancel_timer()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in head.headers}
        req = Request(
            head.method.decode("ascii", "replace"),
            head.target.decode("ascii", "replace").split("?", 1)[0],
            headers,
            bytes(self._body),
        )
        self._body.clear()
        ex = self.exchange = Exchange(self)
        try:
            self.handler(req, ex)
        except Exception:
            log.exception("handler failed on %s %s", req.method, req.path)
            if not ex.started:
                ex.respond(500, [("content-type", "application/json")], _INTERNAL)
            else:
                self.abort()

    def _fail(self, status: int, message: str) -> None:
        """Answer a broken request, if we still can, and close the connection."""
        if self.transport is None:
            return
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE) and self.exchange is None:
            body = error_json(message, code=status)
            headers = [
                ("content-type", "application/json"),
                ("content-length", str(len(body))),
                ("connection", "close"),
            ]
            with contextlib.suppress(h11.LocalProtocolError):
                out = self.conn.send(h11.Response(status_code=status, headers=headers)) or b""
                out += self.conn.send(h11.Data(data=body)) or b""
                out += self.conn.send(h11.EndOfMessage()) or b""
                self.transport.write(out)
        self._linger()

    def _linger(self) -> None:
        """Close gently: stop writing, drain what the peer still sends, then close.

        Closing with unread request bytes makes the kernel send RST, and the peer
        would see a reset instead of our 4xx answer.
        """
        if self.transport is None:
            return
        self._draining = True
        self._cancel_timer()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(2.0, self.close)

    def _arm_timer(self) -> None:
        self._cancel_timer()
        if self.limits.idle_timeout_s > 0:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.limits.idle_timeout_s, self._on_idle)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_idle(self) -> None:
        self._timer = None
        if self.exchange is None and self.transport is not None:
            if self.conn.their_state is h11.IDLE:
                self.transport.close()
            else:
                self._fail(408, "request not completed in time")


def _header(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k == name:
            return v.decode("latin-1")
    return None


_INTERNAL = error_json("internal server error", "internal_error", code=500)
