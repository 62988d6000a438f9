"""The trace of one streamed request, and every metric derived from it (one definition each).

Rule 1: all times are seconds on the recorder's monotonic clock (``perf_counter``), measured
        from the recorder's origin; ``wall_anchor`` is the Unix time of that origin.
Rule 2: a finished trace is immutable; metrics are computed from it, never stored twice.
Rule 3: definitions (DESIGN.md section 3): TTFC sent -> first chunk of any kind; TTFT sent ->
        first non-empty content; E2E sent -> stream end; hold = end - last content;
        TPOT = (last content - first content) / (tokens - 1); ITL = gaps between content
        chunks; tokens/s = output tokens / E2E; queue time = enqueued -> sent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from itertools import pairwise
from typing import Any, Literal

from ._redact import redact_text, redact_url

__all__ = ["SCHEMA", "Outcome", "StreamTrace", "Usage"]
_TIMES = ("enqueued", "sent", "headers", "first_chunk", "first_content", "last_content",
          "finish_chunk", "end")  # fmt: skip

SCHEMA = "fairstream.trace/1"
Outcome = Literal["ok", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts; ``estimated`` when counted from chunks because the server sent none."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class StreamTrace:
    """What happened to one request, as the client saw it."""

    request_id: str
    label: str | None = None
    model: str | None = None
    base_url: str | None = None
    max_tokens: int | None = None
    client: str = "unknown"  # openai | langchain | httpx
    response_id: str | None = None
    response_model: str | None = None  # the model the server says answered
    enqueued: float | None = None
    sent: float | None = None
    headers: float | None = None
    first_chunk: float | None = None
    first_content: float | None = None
    last_content: float | None = None
    finish_chunk: float | None = None
    end: float | None = None
    # one entry per chunk received: arrival time, tokens it carried, characters of content
    chunk_times: tuple[float, ...] = ()
    chunk_tokens: tuple[int, ...] = ()
    chunk_chars: tuple[int, ...] = ()
    chunk_tokens_estimated: bool = True
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    retries: int = 0
    outcome: Outcome = "ok"
    error_type: str | None = None
    error_message: str | None = None
    status_code: int | None = None
    wall_anchor: float = 0.0
    content: str | None = None  # only when the user opted in to keeping text

    def __post_init__(self) -> None:
        # no credentials in anything a trace carries out of the process (_redact.py)
        if self.base_url is not None:
            object.__setattr__(self, "base_url", redact_url(self.base_url))
        if self.error_message is not None:
            object.__setattr__(self, "error_message", redact_text(self.error_message))

    # -- derived metrics (seconds) -------------------------------------------------------
    @property
    def queue_time(self) -> float | None:
        return _diff(self.enqueued, self.sent)

    @property
    def ttfc(self) -> float | None:
        return _diff(self.sent, self.first_chunk)

    @property
    def ttft(self) -> float | None:
        return _diff(self.sent, self.first_content)

    @property
    def e2e(self) -> float | None:
        return _diff(self.sent, self.end)

    @property
    def hold(self) -> float | None:
        return _diff(self.last_content, self.end)

    @property
    def output_tokens(self) -> int:
        return self.usage.completion_tokens or 0

    @property
    def tpot(self) -> float | None:
        if self.first_content is None or self.last_content is None or self.output_tokens < 2:
            return None
        return (self.last_content - self.first_content) / (self.output_tokens - 1)

    @property
    def content_chunk_times(self) -> list[float]:
        return [t for t, c in zip(self.chunk_times, self.chunk_chars, strict=True) if c > 0]

    @property
    def itl(self) -> list[float]:
        """Gaps between consecutive content chunks (a multi-token chunk counts once)."""
        times = self.content_chunk_times
        return [b - a for a, b in pairwise(times)]

    @property
    def tokens_per_second(self) -> float | None:
        e2e = self.e2e
        return self.output_tokens / e2e if e2e else None

    @property
    def wall_end(self) -> float | None:
        """Unix time the stream ended."""
        return None if self.end is None else self.wall_anchor + self.end

    def shifted(self, offset: float) -> StreamTrace:
        """This trace with every time moved by ``offset`` seconds (onto another clock: the
        recorder's origin onto ``perf_counter``, or one host's clock onto Redis's)."""
        moved: dict[str, Any] = {
            name: getattr(self, name) + offset for name in _TIMES if getattr(self, name) is not None
        }
        moved["chunk_times"] = tuple(t + offset for t in self.chunk_times)
        return replace(self, **moved)

    # -- (de)serialization ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """One JSON object of schema ``fairstream.trace/1``."""
        # field by field, not dataclasses.asdict: that deep-copies every chunk tuple item by
        # item (about 0.6 ms for a 128-chunk trace), all to be encoded once
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["usage"] = asdict(self.usage)
        if self.content is None:
            del data["content"]
        return {"schema": SCHEMA, **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StreamTrace:
        """Load a trace written by :meth:`to_dict`; rejects other schemas."""
        schema = data.get("schema")
        if schema != SCHEMA:
            raise ValueError(f"not a {SCHEMA} record (schema={schema!r})")
        fields = {k: v for k, v in data.items() if k != "schema"}
        unknown = set(fields) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown trace fields: {sorted(unknown)}")
        fields["usage"] = Usage(**fields.get("usage", {}))
        for name in ("chunk_times", "chunk_tokens", "chunk_chars"):
            fields[name] = tuple(fields.get(name, ()))
        return cls(**fields)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a
