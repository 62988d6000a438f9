"""How long an answer is and what its tokens say: seeded, deterministic, cheap.

A request's output length is drawn from a distribution keyed by the server seed
and the request's own key, so the same workload gives the same lengths every run.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "Answer",
    "Distribution",
    "JsonAnswer",
    "OutputLengths",
    "TokenText",
    "WordAnswer",
    "chunk_text",
    "count_prompt_tokens",
]

Distribution = Literal["exponential", "uniform", "fixed"]

_VOCAB = (
    "the",
    "batch",
    "waits",
    "for",
    "its",
    "slowest",
    "member",
    "while",
    "fast",
    "answers",
    "sit",
    "idle",
    "and",
    "the",
    "scheduler",
    "decides",
    "which",
    "sequence",
    "steps",
    "next",
    "so",
    "tokens",
    "stream",
    "back",
    "to",
    "every",
    "client",
    "in",
    "rounds",
    "one",
    "step",
    "apart",
    "until",
    "each",
    "request",
    "reaches",
    "its",
    "end",
)


@dataclass(frozen=True, slots=True)
class OutputLengths:
    """Seeded output-length sampler (default: exponential with mean 128, at least 1)."""

    seed: int = 0
    mean: float = 128.0
    distribution: Distribution = "exponential"

    def draw(self, key: str) -> int:
        """The length for the request identified by ``key`` (deterministic)."""
        digest = hashlib.blake2b(f"{self.seed}\x00{key}".encode(), digest_size=8).digest()
        rng = random.Random(int.from_bytes(digest, "big"))
        if self.distribution == "fixed":
            value = self.mean
        elif self.distribution == "uniform":
            value = rng.uniform(1.0, 2.0 * self.mean)
        else:
            value = rng.expovariate(1.0 / self.mean)
        return max(1, math.ceil(value))


class TokenText:
    """Deterministic token strings; their JSON forms are cached for the hot path."""

    def __init__(self) -> None:
        self.words = [" " + w for w in _VOCAB]
        self.json_words = [json.dumps(w).encode() for w in self.words]

    def offset(self, key: str) -> int:
        """Where in the vocabulary a request starts, so answers differ between prompts."""
        return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big")

    def word(self, offset: int, index: int) -> str:
        return self.words[(offset + index) % len(self.words)]

    def json_word(self, offset: int, index: int) -> bytes:
        return self.json_words[(offset + index) % len(self.json_words)]

    def answer(self, key: str) -> WordAnswer:
        return WordAnswer(self, self.offset(key))


class Answer(Protocol):
    """The text of one answer, token by token."""

    length: int | None  # a fixed length (JSON answers), or None: as long as asked

    def word(self, index: int) -> str: ...

    def json_word(self, index: int) -> bytes: ...


def chunk_text(answer: Answer, start: int, k: int) -> bytes:
    """Tokens ``start`` .. ``start + k`` of ``answer`` as one JSON string literal (a chunk)."""
    if k == 1:
        return answer.json_word(start)
    return json.dumps("".join(answer.word(start + i) for i in range(k))).encode()


class WordAnswer:
    """Prose: vocabulary words from a per-request offset, as long as the length asked."""

    __slots__ = ("length", "offset", "vocab")
    length: int | None

    def __init__(self, vocab: TokenText, offset: int) -> None:
        self.vocab, self.offset, self.length = vocab, offset, None

    def word(self, index: int) -> str:
        return self.vocab.word(self.offset, index)

    def json_word(self, index: int) -> bytes:
        return self.vocab.json_word(self.offset, index)


class JsonAnswer:
    """A JSON object for ``response_format`` requests, cut into 4-character tokens."""

    __slots__ = ("length", "pieces")
    length: int | None

    def __init__(self, response_format: dict[str, Any], vocab: TokenText, offset: int) -> None:
        schema: Any = None
        if response_format.get("type") == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema")
        obj = _fill(schema, vocab, offset)
        if not isinstance(obj, dict):
            obj = {"answer": obj}
        text = json.dumps(obj)
        self.pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
        self.length = len(self.pieces)

    def word(self, index: int) -> str:
        return self.pieces[index] if index < len(self.pieces) else " "

    def json_word(self, index: int) -> bytes:
        return json.dumps(self.word(index)).encode()


def _fill(schema: Any, vocab: TokenText, offset: int) -> Any:
    """A value that satisfies a (simple) JSON schema, made of vocabulary words."""
    if not isinstance(schema, dict):
        return " ".join(vocab.word(offset, i).strip() for i in range(3))
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {name: _fill(sub, vocab, offset + i) for i, (name, sub) in enumerate(props.items())}
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [_fill(schema.get("items"), vocab, offset)]
    if schema.get("enum"):
        return schema["enum"][0]
    return " ".join(vocab.word(offset, i).strip() for i in range(3))


def count_prompt_tokens(text: str, extra_parts: int = 0) -> int:
    """A tokenizer stand-in: about four UTF-8 bytes a token, 256 per non-text part."""
    return max(1, math.ceil(len(text.encode()) / 4)) + 256 * extra_parts
