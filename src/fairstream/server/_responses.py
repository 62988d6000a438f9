"""The Responses API (``POST /v1/responses``), streamed and whole, after OpenAI's spec.

A streamed response is typed SSE events (``event: <type>`` then ``data: {"type": <type>,
"sequence_number": n, ...}``): ``response.created``, ``response.in_progress``, the message's
``response.output_item.added`` and ``response.content_part.added``, one
``response.output_text.delta`` per chunk of tokens (the hot path: templated bytes), then the
``.done`` events and ``response.completed``, which carries the usage and the status
(``incomplete`` when ``max_output_tokens`` cut the answer; OpenAI itself sends
``response.incomplete`` then, but the SDK's ``get_final_response`` wants
``response.completed``, so that is what this server sends). No ``[DONE]`` line ends it.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from ._lengths import chunk_text

if TYPE_CHECKING:
    from ._http import Exchange
    from ._lengths import Answer
    from ._request import Parsed

__all__ = ["ResponseEvents", "ResponsesStreamSink", "ResponsesWholeSink", "response_object"]

_JSON = [("content-type", "application/json")]


def _compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def response_object(
    rid: str, created: int, model: str, p: Parsed, status: str, text: str | None, usage: Any
) -> dict[str, Any]:
    """The ``Response`` object: in progress (no output yet), completed or incomplete."""
    output = []
    if text is not None:
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        output.append(
            {
                "id": "msg_" + rid[5:],
                "type": "message",
                "status": "completed" if status == "completed" else "incomplete",
                "role": "assistant",
                "content": [part],
            }
        )
    return {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "error": None,
        "instructions": None,
        "max_output_tokens": p.max_tokens,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "metadata": {},
    }


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


class ResponseEvents:
    """The SSE events of one streamed response, numbered in order."""

    __slots__ = ("_delta_head", "_p", "created", "item", "model", "rid", "seq")

    def __init__(self, rid: str, created: int, model: str, p: Parsed) -> None:
        self.rid, self.created, self.model, self._p = rid, created, model, p
        self.item = "msg_" + rid[5:]
        self.seq = 0
        head = {
            "type": "response.output_text.delta",
            "item_id": self.item,
            "output_index": 0,
            "content_index": 0,
            "logprobs": [],
        }
        self._delta_head = (
            b"event: response.output_text.delta\ndata: " + _compact(head)[:-1] + b',"delta":'
        )

    def _event(self, type_: str, **fields: Any) -> bytes:
        data = _compact({"type": type_, "sequence_number": self.seq, **fields})
        self.seq += 1
        return b"event: " + type_.encode() + b"\ndata: " + data + b"\n\n"

    def start(self) -> bytes:
        """Created, in progress, and the (empty) message and text part."""
        snapshot = response_object(self.rid, self.created, self.model, self._p, "in_progress",
                                   None, None)  # fmt: skip
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        item = {"id": self.item, "type": "message", "status": "in_progress",
                "role": "assistant", "content": []}  # fmt: skip
        where = {"item_id": self.item, "output_index": 0, "content_index": 0}
        return (
            self._event("response.created", response=snapshot)
            + self._event("response.in_progress", response=snapshot)
            + self._event("response.output_item.added", output_index=0, item=item)
            + self._event("response.content_part.added", part=part, **where)
        )

    def delta(self, json_text: bytes) -> bytes:
        """One text delta; ``json_text`` is already a JSON string literal."""
        seq, self.seq = self.seq, self.seq + 1
        return self._delta_head + json_text + b',"sequence_number":' + str(seq).encode() + b"}\n\n"

    def finish(self, text: str, reason: str, prompt: int, completion: int) -> bytes:
        """The ``.done`` events and the final ``response.completed``."""
        status = "completed" if reason == "stop" else "incomplete"
        whole = response_object(self.rid, self.created, self.model, self._p, status, text,
                                _usage(prompt, completion))  # fmt: skip
        item = whole["output"][0]
        where = {"item_id": self.item, "output_index": 0, "content_index": 0}
        return (
            self._event("response.output_text.done", text=text, logprobs=[], **where)
            + self._event("response.content_part.done", part=item["content"][0], **where)
            + self._event("response.output_item.done", output_index=0, item=item)
            + self._event("response.completed", response=whole)
        )


class ResponsesStreamSink:
    """Writes a streamed response's events as tokens come (``tokens_per_chunk`` a delta)."""

    __slots__ = ("emissions", "events", "ex", "p", "pending", "sent", "started", "text", "tpc")

    def __init__(
        self,
        ex: Exchange,
        events: ResponseEvents,
        text: Answer,
        tpc: int,
        p: Parsed,
        emissions: list[float] | None,
    ) -> None:
        self.ex, self.events, self.text, self.tpc, self.p = ex, events, text, tpc, p
        self.emissions = emissions
        self.pending = self.sent = 0
        self.started = False

    def on_admitted(self) -> None:
        pass

    def _head(self) -> bytes:
        if self.started:
            return b""
        self.started = True
        return self.events.start()

    def on_tokens(self, n: int, total: int) -> None:
        head = self._head()
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
        return self.events.delta(text)

    def on_finish(self, reason: str, completion_tokens: int) -> None:
        out = self._head() + (self._flush() if self.pending else b"")
        text = "".join(self.text.word(i) for i in range(completion_tokens))
        out += self.events.finish(text, reason, self.p.prompt_tokens, completion_tokens)
        self.ex.write(out)
        self.ex.end()


class ResponsesWholeSink:
    """A response that is not streamed: one ``Response`` object at the end."""

    __slots__ = ("created", "ex", "model", "p", "rid", "text")

    def __init__(
        self, ex: Exchange, rid: str, created: int, model: str, text: Answer, p: Parsed
    ) -> None:
        self.ex, self.rid, self.created, self.model = ex, rid, created, model
        self.text, self.p = text, p

    def on_admitted(self) -> None:
        pass

    def on_tokens(self, n: int, total: int) -> None:
        pass

    def on_finish(self, reason: str, completion_tokens: int) -> None:
        status = "completed" if reason == "stop" else "incomplete"
        text = "".join(self.text.word(i) for i in range(completion_tokens))
        usage = _usage(self.p.prompt_tokens, completion_tokens)
        body = response_object(self.rid, self.created, self.model, self.p, status, text, usage)
        self.ex.respond(200, _JSON, _compact(body))
