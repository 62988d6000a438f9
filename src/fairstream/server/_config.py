"""Reference server configuration: one frozen object, validated once, turned into an engine."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from ._continuous import ContinuousEngine
from ._costmodel import PRESETS, CostModel, NoisyCost
from ._lengths import Distribution, OutputLengths
from ._static import StaticEngine
from ._types import Engine

__all__ = ["Mode", "ServerConfig", "flag"]

Mode = Literal["static", "continuous", "sequential"]


def _opt(default: Any, help: str) -> Any:
    """A field whose help text is the ``fairstream serve`` option's (written once, here)."""
    return field(default=default, metadata={"help": help})


def flag(name: str) -> str:
    """The ``fairstream serve`` option of a field: ``batch_size`` -> ``--batch-size``."""
    return "--" + name.replace("_", "-")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything the reference server can be told; defaults are a vLLM-like 7B server."""

    mode: Mode = _opt("continuous", "How the server batches.")
    release: Literal["batch_end", "stream"] = _opt(
        "batch_end",
        "Static mode: when a finished member's stream ends (batch_end = with the batch).",
    )
    batch_size: int = _opt(8, "Static mode: requests per batch.")
    batch_timeout_ms: float = _opt(50.0, "Static mode: wait this long for a batch to fill.")
    max_num_seqs: int = _opt(256, "Continuous mode: most sequences running at once.")
    max_num_batched_tokens: int = _opt(8192, "Continuous mode: token budget of one step.")
    chunked_prefill: bool = _opt(True, "Continuous mode: split long prompts over steps.")
    prefill_priority: bool | None = _opt(
        None, "Continuous mode: prefill-only steps while requests wait (stalls decodes)."
    )
    kv_tokens: int | None = _opt(
        None, "Continuous mode: KV-cache size in tokens (preemption by recompute beyond it)."
    )
    preset: str = _opt("default-7b", f"Cost model preset: {', '.join(PRESETS)}.")
    step_ms: float | None = _opt(None, "Cost model: fixed milliseconds per step (a).")
    per_seq_ms: float | None = _opt(None, "Cost model: milliseconds per decoding sequence (b).")
    prefill_ms_per_token: float | None = _opt(
        None, "Cost model: milliseconds per prefill token (c)."
    )
    step_noise: float = _opt(0.0, "Each step off by up to this share, at random (seeded).")
    time_scale: float = _opt(1.0, "Multiply every model time by this (0.05 runs 20x faster).")
    seed: int = _opt(0, "Seed of the output-length distribution.")
    output_mean: float = _opt(128.0, "Mean output length when the request does not force one.")
    output_distribution: Distribution = _opt("exponential", "Output-length distribution.")
    max_tokens_cap: int = _opt(4096, "Largest max_tokens accepted (400 above).")
    max_model_len: int = _opt(32768, "Context length: prompt plus max_tokens.")
    tokens_per_chunk: int = _opt(1, "Tokens coalesced into one SSE chunk.")
    faults: str = _opt(
        "", "Failure injection, e.g. 'disconnect_mid:at=3,after=5;status_429:rate=0.1'."
    )
    done_delay_ms: float = _opt(
        0.0, "Hold [DONE] this long after the finish chunk (a slow-to-close server)."
    )
    honor_ignore_eos: bool = _opt(
        True, "Obey vLLM's ignore_eos (off: act like servers that ignore it)."
    )
    role_chunk_on_admission: bool = _opt(
        False, "Send the role chunk when prefill starts, not with the first token."
    )
    record_emissions: bool = _opt(
        False, "Keep each chunk's write time (CLOCK_MONOTONIC) at /debug/emissions."
    )
    model: str = _opt("fairstream-ref", "Model name the server answers to.")
    api_key: str | None = _opt(None, "Require this bearer key on /v1 routes.")
    host: str = _opt(
        "127.0.0.1", "Address to bind (loopback by default; others need --allow-public)."
    )
    allow_public: bool = _opt(
        False, "Allow binding a non-loopback address (the server has no real security)."
    )
    port: int = _opt(0, "Port to bind (0 picks a free one).")
    max_waiting: int = _opt(4096, "Waiting-queue cap (429 beyond).")
    retry_after_s: float = _opt(1.0, "Retry-After seconds sent with a 429.")
    max_connections: int = _opt(8192, "Open-connection cap (503 beyond).")
    max_body_bytes: int = _opt(1 << 20, "Request body cap (413 beyond).")
    max_header_bytes: int = _opt(16 << 10, "Request header cap.")
    idle_timeout_s: float = _opt(30.0, "Close connections idle (or half-sent) this long.")
    write_buffer_limit: int = _opt(4 << 20, "Drop a client that leaves this many bytes unread.")

    def __post_init__(self) -> None:
        if self.mode not in ("static", "continuous", "sequential"):
            raise ValueError(f"mode must be static, continuous or sequential, not {self.mode!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")
        if self.time_scale <= 0:
            raise ValueError("time_scale must be > 0")
        if not 0.0 <= self.step_noise < 1.0:
            raise ValueError("step_noise must be in [0, 1)")
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

    def to_args(self) -> list[str]:
        """The ``fairstream serve`` options that reproduce this config (defaults left out)."""
        default = ServerConfig()
        args: list[str] = []
        for f in fields(ServerConfig):
            value = getattr(self, f.name)
            if value == getattr(default, f.name):
                continue
            if isinstance(value, bool):
                args.append(flag(f.name) if value else "--no-" + flag(f.name)[2:])
            else:
                args += [flag(f.name), str(value)]
        return args

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
        cost: Any = self.cost_model()
        if self.step_noise:
            cost = NoisyCost(cost, self.step_noise, self.seed + 1)
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
