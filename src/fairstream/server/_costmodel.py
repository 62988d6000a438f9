"""Step-time cost model: step = a + b * decoding sequences + c * prefill tokens.

All numbers are in milliseconds of *model* time; the real-time driver multiplies
by ``time_scale`` so tests can run a 7B-shaped server at a twentieth of the speed.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PRESETS", "CostModel", "NoisyCost", "Preset"]


@dataclass(frozen=True, slots=True)
class CostModel:
    """Step duration of a batched forward pass, in milliseconds of model time."""

    step_ms: float = 15.0
    per_seq_ms: float = 0.3
    prefill_ms_per_token: float = 0.08

    def __post_init__(self) -> None:
        if self.step_ms <= 0 or self.per_seq_ms < 0 or self.prefill_ms_per_token < 0:
            raise ValueError(
                "cost model needs step_ms > 0 and non-negative per-sequence and per-token costs"
            )

    def step_seconds(self, decoding_seqs: int, prefill_tokens: int) -> float:
        """Duration in model seconds of one step with this much work."""
        ms = (
            self.step_ms
            + self.per_seq_ms * decoding_seqs
            + self.prefill_ms_per_token * prefill_tokens
        )
        return ms / 1000.0


class NoisyCost:
    """A cost model whose every step is off by up to ``noise`` (relative, uniform, seeded):
    a real accelerator's steps are not all alike."""

    def __init__(self, base: CostModel, noise: float, seed: int) -> None:
        import random

        self.base, self.noise, self._rng = base, noise, random.Random(seed)

    def step_seconds(self, decoding_seqs: int, prefill_tokens: int) -> float:
        d = self.base.step_seconds(decoding_seqs, prefill_tokens)
        return d * (1.0 + self._rng.uniform(-self.noise, self.noise))


@dataclass(frozen=True, slots=True)
class Preset:
    """A named cost model plus the scheduling habit that goes with it."""

    name: str
    cost: CostModel
    prefill_priority: bool
    description: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "default-7b",
            CostModel(15.0, 0.3, 0.08),
            prefill_priority=False,
            description="7B model on one accelerator, vLLM V1 style mixed steps",
        ),
        Preset(
            "ascend-7b",
            CostModel(30.0, 0.6, 0.15),
            prefill_priority=True,
            description="7B on an Ascend card, MindIE 'Standard' prefill-first scheduling",
        ),
    )
}
