"""Expected output length per label, learned from finished traces (for ordering jobs)."""

from __future__ import annotations

__all__ = ["LengthEstimator"]


class LengthEstimator:
    """Running mean of output tokens per label; ``None`` until a label has been seen."""

    def __init__(self) -> None:
        self._sums: dict[str | None, tuple[float, int]] = {}

    def learn(self, label: str | None, tokens: int) -> None:
        total, n = self._sums.get(label, (0.0, 0))
        self._sums[label] = (total + tokens, n + 1)

    def guess(self, label: str | None) -> float | None:
        total, n = self._sums.get(label, (0.0, 0))
        return total / n if n else None
