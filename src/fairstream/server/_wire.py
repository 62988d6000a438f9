"""OpenAI / vLLM wire formats: error bodies and SSE chunk bytes, templated for speed.

The content chunk is the hot path (one per token per stream), so its bytes are a
precomputed prefix and suffix around a cached JSON string; everything else goes
through ``json.dumps``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = ["ChunkFormat", "error_json"]

DONE = b"data: [DONE]\n\n"


def error_json(
    message: str,
    type_: str = "invalid_request_error",
    *,
    code: str | int | None = None,
    param: str | None = None,
) -> bytes:
    """OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return json.dumps(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}
    ).encode()


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class ChunkFormat:
    """SSE chunks of one streamed response (chat or text completion)."""

    __slots__ = ("_base", "_chat", "_prefix", "_suffix")

    def __init__(self, kind: Literal["chat", "text"], rid: str, created: int, model: str) -> None:
        self._chat = kind == "chat"
        self._base: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion.chunk" if self._chat else "text_completion",
            "created": created,
            "model": model,
        }
        head = json.dumps(self._base, separators=(",", ":"))[:-1]
        if self._chat:
            self._prefix = ("data: " + head + ',"choices":[{"index":0,"delta":{"content":').encode()
            self._suffix = b'},"logprobs":null,"finish_reason":null}]}\n\n'
        else:
            self._prefix = ("data: " + head + ',"choices":[{"index":0,"text":').encode()
            self._suffix = b',"logprobs":null,"finish_reason":null}]}\n\n'

    def role(self) -> bytes:
        """The first chat chunk: ``delta = {"role": "assistant", "content": ""}``."""
        if not self._chat:
            return b""
        delta = {"role": "assistant", "content": ""}
        return _sse({**self._base, "choices": [self._choice(delta, None)]})

    def content(self, json_text: bytes, usage: tuple[int, int] | None = None) -> bytes:
        """A content chunk; ``json_text`` is already a JSON string literal.

        ``usage`` (prompt, completion so far) adds vLLM's ``continuous_usage_stats`` field.
        """
        if usage is None:
            return self._prefix + json_text + self._suffix
        p, c = usage
        tail = f',"usage":{{"prompt_tokens":{p},"completion_tokens":{c},"total_tokens":{p + c}}}}}'
        return self._prefix + json_text + self._suffix[:-3] + tail.encode() + b"\n\n"

    def finish(self, reason: str) -> bytes:
        return _sse({**self._base, "choices": [self._choice({}, reason)]})

    def usage(self, prompt: int, completion: int) -> bytes:
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        return _sse({**self._base, "choices": [], "usage": usage})

    def _choice(self, delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
        if self._chat:
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
        return {"index": 0, "text": "", "logprobs": None, "finish_reason": reason}
