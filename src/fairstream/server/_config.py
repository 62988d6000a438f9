"""Reference server configuration: one frozen object, validated once, turned into an engine."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from ._continuous import ContinuousEngine
from ._costmodel import PRESETS, CostModel
from ._lengths import Distribution, OutputLengths
from ._static import StaticEngine
from ._types import Engine

__all__ = ["Mode", "ServerConfig"]

Mode = Literal["static", "continuous", "sequential"]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything the reference server can be told; defaults are a vLLM-like 7B server."""

    mode: Mode = "continuous"
    release: Literal["batch_end", "stream"] = "batch_end"
    batch_size: int = 8
    batch_timeout_ms: float = 50.0
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    chunked_prefill: bool = True
    prefill_priority: bool | None = None  # None: what the preset says
    kv_tokens: int | None = None
    preset: str = "default-7b"
    step_ms: float | None = None
    per_seq_ms: float | None = None
    prefill_ms_per_token: float | None = None
    time_scale: float = 1.0
    seed: int = 0
    output_mean: float = 128.0
    output_distribution: Distribution = "exponential"
    max_tokens_cap: int = 4096
    max_model_len: int = 32768
    tokens_per_chunk: int = 1
    faults: str = ""  # failure injection, e.g. "disconnect_mid:at=3,after=5" (see _faults.py)
    done_delay_ms: float = 0.0  # hold [DONE] this long after the finish chunk (model ms)
    honor_ignore_eos: bool = True  # False: behave like servers that ignore vLLM's ignore_eos
    role_chunk_on_admission: bool = False  # OpenAI's habit; vLLM sends it with the first token
    record_emissions: bool = False  # keep chunk write times, served on GET /debug/emissions
    model: str = "fairstream-ref"
    api_key: str | None = None
    host: str = "127.0.0.1"
    allow_public: bool = False  # binding anything but loopback must be asked for explicitly
    port: int = 0
    max_waiting: int = 4096
    retry_after_s: float = 1.0  # the Retry-After of a 429 (queue full)
    max_connections: int = 8192
    max_body_bytes: int = 1 << 20
    max_header_bytes: int = 16 << 10
    idle_timeout_s: float = 30.0
    write_buffer_limit: int = 4 << 20

    def __post_init__(self) -> None:
        if self.mode not in ("static", "continuous", "sequential"):
            raise ValueError(f"mode must be static, continuous or sequential, not {self.mode!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")
        if self.time_scale <= 0:
            raise ValueError("time_scale must be > 0")
        if self.tokens_per_chunk < 1:
            raise ValueError("tokens_per_chunk must be >= 1")
        if self.max_tokens_cap < 1 or self.output_mean <= 0:
            raise ValueError("max_tokens_cap and output_mean must be positive")
        if not self.allow_public and not _loopback(self.host):
            raise ValueError(
                f"host {self.host!r} is not loopback: the reference server has no real"
                " security; pass allow_public=True (--allow-public) to bind it anyway"
            )
        self.cost_model()  # validates the numbers
        from ._faults import parse_faults

        parse_faults(self.faults)  # a bad fault spec fails here, not on the first request

    def with_(self, **changes: Any) -> ServerConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def cost_model(self) -> CostModel:
        base = PRESETS[self.preset].cost
        return CostModel(
            base.step_ms if self.step_ms is None else self.step_ms,
            base.per_seq_ms if self.per_seq_ms is None else self.per_seq_ms,
            base.prefill_ms_per_token
            if self.prefill_ms_per_token is None
            else self.prefill_ms_per_token,
        )

    @property
    def effective_prefill_priority(self) -> bool:
        if self.prefill_priority is not None:
            return self.prefill_priority
        return PRESETS[self.preset].prefill_priority

    def output_lengths(self) -> OutputLengths:
        return OutputLengths(self.seed, self.output_mean, self.output_distribution)

    def build_engine(self) -> Engine:
        """A fresh scheduling engine for this configuration."""
        cost = self.cost_model()
        if self.mode == "static":
            return StaticEngine(
                cost,
                batch_size=self.batch_size,
                batch_timeout=self.batch_timeout_ms / 1000.0,
                release=self.release,
                max_waiting=self.max_waiting,
            )
        return ContinuousEngine(
            cost,
            max_num_seqs=1 if self.mode == "sequential" else self.max_num_seqs,
            max_num_batched_tokens=self.max_num_batched_tokens,
            chunked_prefill=self.chunked_prefill,
            prefill_priority=self.effective_prefill_priority,
            kv_tokens=self.kv_tokens,
            max_waiting=self.max_waiting,
        )


def _loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
