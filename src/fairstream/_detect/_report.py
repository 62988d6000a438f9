"""What the detector concludes: ``BatchingReport`` and its JSON form ``fairstream.report/1``.

Rule: the JSON keys are a stable contract (the CLI's ``--json``); add evidence signals
freely, never rename or drop a key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "REPORT_SCHEMA",
    "BatchingReport",
    "Evidence",
    "Recommendation",
    "Release",
    "RequestFinding",
    "Verdict",
]

REPORT_SCHEMA = "fairstream.report/1"

Verdict = Literal["static", "continuous", "sequential", "unknown"]
Release = Literal["batch_end", "stream"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One signal: its value and a sentence a user understands."""

    signal: str
    value: float | int | bool | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "value": self.value, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Recommendation:
    """Which dispatcher policy fits the server, and at what concurrency (None: find online)."""

    policy: str
    concurrency: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "concurrency": self.concurrency}


@dataclass(frozen=True, slots=True)
class RequestFinding:
    """How long one request was held hostage, and why (seconds)."""

    request_id: str
    label: str | None
    tokens: int | None
    ttft: float
    e2e: float
    held: float  # content done, stream kept open
    held_back: float  # waited although continuous batching had a free slot for it
    stalled: float  # decode paused while others prefilled

    @property
    def hostage(self) -> float:
        return self.held + self.held_back + self.stalled


@dataclass(frozen=True, slots=True)
class BatchingReport:
    """How the server schedules, how sure we are, and what to do about it."""

    verdict: Verdict
    confidence: float
    release: Release | None = None
    synchronized_completion: bool = False
    prefill_stalls: bool | None = None
    batch_size: int | None = None
    batch_size_exact: bool = False  # False: a lower bound (no full batch was seen)
    step_ms: float | None = None
    requests: int = 0
    evidence: tuple[Evidence, ...] = ()
    recommendation: Recommendation = field(default_factory=lambda: Recommendation("auto"))
    findings: tuple[RequestFinding, ...] = ()

    @property
    def summary(self) -> str:
        """One sentence: the verdict with its numbers and the cost to short requests."""
        if self.verdict == "unknown":
            return "Not enough evidence to tell how the server batches."
        parts = [
            {
                "static": "The server batches statically",
                "continuous": "The server batches continuously",
                "sequential": "The server serves one request at a time",
            }[self.verdict]
        ]
        if self.batch_size and self.verdict == "static":
            parts.append(f"in groups of {self.batch_size}")
        if self.step_ms:
            parts.append(f"with a {self.step_ms:.3g} ms step")
        text = " ".join(parts)
        if self.release == "batch_end":
            text += ", holding finished streams open until the batch ends"
        if self.prefill_stalls:
            text += ", pausing running decodes while new requests prefill"
        short = self.short_request_hostage
        if short is not None and short > 0:
            text += f"; short requests were held up {short:.3g} s on average"
        return text + f" (confidence {self.confidence:.2f})."

    @property
    def short_request_hostage(self) -> float | None:
        """Mean hostage time of the shorter half of the requests (by output tokens)."""
        known = [f for f in self.findings if f.tokens is not None]
        if not known:
            return None
        known.sort(key=lambda f: f.tokens or 0)
        half = known[: max(1, len(known) // 2)]
        return sum(f.hostage for f in half) / len(half)

    def to_dict(self) -> dict[str, Any]:
        """The ``fairstream.report/1`` object (the CLI's ``--json`` output)."""
        return {
            "schema": REPORT_SCHEMA,
            "verdict": self.verdict,
            "release": self.release,
            "synchronized_completion": self.synchronized_completion,
            "prefill_stalls": self.prefill_stalls,
            "batch_size": self.batch_size,
            "step_ms": None if self.step_ms is None else round(self.step_ms, 3),
            "confidence": round(self.confidence, 3),
            "requests": self.requests,
            "evidence": [e.to_dict() for e in self.evidence],
            "recommendation": self.recommendation.to_dict(),
        }
