"""One request body, parsed and validated: what to generate, or a clear 4xx why not."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from ._config import ServerConfig
from ._lengths import count_prompt_tokens
from ._wire import error_json

__all__ = ["ApiError", "Parsed", "parse"]


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        *,
        code: str | None = None,
        param: str | None = None,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = error_json(message, type_, code=code, param=param)
        self.headers = headers or []


Kind = Literal["chat", "text", "responses"]


@dataclass(frozen=True, slots=True)
class Parsed:
    kind: Kind
    prompt: str
    prompt_tokens: int
    max_tokens: int | None
    stream: bool
    include_usage: bool
    continuous_usage: bool
    ignore_eos: bool
    seed: int | None
    response_format: dict[str, Any] | None


def parse(kind: Kind, raw: bytes, cfg: ServerConfig) -> Parsed:
    """Validate a request body the way OpenAI and vLLM do; raise ``ApiError`` otherwise."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "'model' is required", param="model")
    if model != cfg.model:
        raise ApiError(
            404,
            f"The model `{model}` does not exist.",
            "not_found_error",
            code="model_not_found",
            param="model",
        )
    if kind == "chat":
        prompt, extra = _chat_prompt(body.get("messages"))
    elif kind == "responses":
        prompt, extra = _responses_prompt(body.get("input"), body.get("instructions"))
    else:
        prompt, extra = _text_prompt(body.get("prompt"))
    prompt_tokens = count_prompt_tokens(prompt, extra)
    if kind == "responses":
        max_tokens = body.get("max_output_tokens")
    else:
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise ApiError(400, "'max_tokens' must be an integer", param="max_tokens")
        if max_tokens <= 0:
            raise ApiError(400, "'max_tokens' must be at least 1", param="max_tokens")
        if max_tokens > cfg.max_tokens_cap:
            raise ApiError(
                400,
                f"'max_tokens' is {max_tokens}; this server allows at most {cfg.max_tokens_cap}",
                param="max_tokens",
            )
    if prompt_tokens + (max_tokens or 1) > cfg.max_model_len:
        raise ApiError(
            400,
            f"prompt ({prompt_tokens} tokens) plus max_tokens exceeds the context "
            f"length {cfg.max_model_len}",
            param="messages",
        )
    if body.get("n", 1) != 1:
        raise ApiError(400, "only n=1 is supported", param="n")
    stream = _flag(body, "stream")
    opts = body.get("stream_options")
    if opts is not None and not isinstance(opts, dict):
        raise ApiError(400, "'stream_options' must be an object", param="stream_options")
    include_usage = kind == "responses" or bool(opts and opts.get("include_usage"))
    continuous_usage = bool(opts and opts.get("continuous_usage_stats"))
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ApiError(400, "'seed' must be an integer", param="seed")
    return Parsed(
        kind,
        prompt,
        prompt_tokens,
        max_tokens,
        stream,
        include_usage,
        continuous_usage,
        _flag(body, "ignore_eos"),
        seed,
        _response_format(
            _text_format(body.get("text")) if kind == "responses" else body.get("response_format")
        ),
    )


def _text_format(text: Any) -> dict[str, Any] | None:
    """The Responses API's ``text.format`` in ``response_format``'s shape."""
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return fmt if isinstance(fmt, dict) else None
    return {"type": "json_schema", "json_schema": {k: v for k, v in fmt.items() if k != "type"}}


def _responses_prompt(items: Any, instructions: Any) -> tuple[str, int]:
    """``input``: a string, or a list of messages (``content`` a string or typed parts)."""
    head = [instructions] if isinstance(instructions, str) else []
    if isinstance(items, str):
        return "\n".join([*head, items]), 0
    if not isinstance(items, list) or not items:
        raise ApiError(400, "'input' must be a string or a non-empty list", param="input")
    messages = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ApiError(400, f"input[{i}] must be an object", param="input")
        content = item.get("content")
        if isinstance(content, list):  # input_text / output_text parts
            content = [
                {"type": "text", "text": part.get("text", "")}
                if isinstance(part, dict) and str(part.get("type", "")).endswith("_text")
                else part
                for part in content
            ]
        messages.append({"role": item.get("role", "user"), "content": content})
    prompt, extra = _chat_prompt(messages)
    return "\n".join([*head, prompt]), extra


def _response_format(value: Any) -> dict[str, Any] | None:
    """``json_object`` / ``json_schema`` formats get a JSON answer; ``text`` or none, prose."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise ApiError(
            400, "'response_format' must be an object with a 'type'", param="response_format"
        )
    if value["type"] not in ("text", "json_object", "json_schema"):
        raise ApiError(
            400, f"unknown response_format type {value['type']!r}", param="response_format"
        )
    return None if value["type"] == "text" else value


def _flag(body: dict[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ApiError(400, f"'{name}' must be a boolean", param=name)
    return value


def _chat_prompt(messages: Any) -> tuple[str, int]:
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty list", param="messages")
    parts: list[str] = []
    extra = 0
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ApiError(400, f"messages[{i}] must be an object with a 'role'", param="messages")
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    parts.append(str(part.get("text", "")))
                else:
                    extra += 1
        elif content is not None:
            raise ApiError(
                400, f"messages[{i}].content must be a string or a list", param="messages"
            )
    return "\n".join(parts), extra


def _text_prompt(prompt: Any) -> tuple[str, int]:
    if isinstance(prompt, str):
        return prompt, 0
    if isinstance(prompt, list) and all(isinstance(x, str) for x in prompt) and len(prompt) == 1:
        return prompt[0], 0
    raise ApiError(400, "'prompt' must be a string", param="prompt")
