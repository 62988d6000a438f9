"""What to send: request specs from length distributions or from a JSONL file.

Length specs: ``N`` (fixed), ``mix:A,B,...`` (equal shares, shuffled), ``uniform:LO,HI``,
``exp:MEAN`` (exponential, at least 1). Prompts are made of N filler words.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RequestSpec", "load_workload", "make_workload", "parse_lengths"]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One request to send."""

    max_tokens: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    label: str | None = None

    @property
    def body(self) -> dict[str, Any]:
        return {"messages": self.messages, "max_tokens": self.max_tokens}


def parse_lengths(spec: str, n: int, rng: random.Random) -> list[int]:
    """``n`` lengths drawn by ``spec`` (see the module docstring); ValueError if malformed."""
    kind, _, arg = spec.partition(":")
    try:
        if not arg:
            return [int(kind)] * n
        nums = [float(x) for x in arg.split(",")]
        if kind == "mix":
            out = [int(nums[i % len(nums)]) for i in range(n)]
            rng.shuffle(out)
            return out
        if kind == "uniform" and len(nums) == 2:
            return [rng.randint(int(nums[0]), int(nums[1])) for _ in range(n)]
        if kind == "exp" and len(nums) == 1:
            return [max(1, int(rng.expovariate(1 / nums[0]))) for _ in range(n)]
    except (ValueError, ZeroDivisionError):
        pass
    raise ValueError(f"bad length spec {spec!r}: use N, mix:A,B, uniform:LO,HI or exp:MEAN")


def make_workload(n: int, output: str, prompt: str = "32", seed: int = 0) -> list[RequestSpec]:
    """``n`` requests with output and prompt lengths drawn from the specs."""
    if n < 1:
        raise ValueError("need at least one request")
    rng = random.Random(seed)
    outs = parse_lengths(output, n, rng)
    prompts = parse_lengths(prompt, n, rng)
    median = sorted(outs)[len(outs) // 2]
    return [
        RequestSpec(
            max(1, o),
            [{"role": "user", "content": " ".join(["word"] * max(1, p))}],
            "short" if o < median else "long",
        )
        for o, p in zip(outs, prompts, strict=True)
    ]


def load_workload(path: str | Path) -> list[RequestSpec]:
    """Requests from JSONL: ``{"messages": [...] | "prompt": str, "max_tokens": int,
    "label": str?}`` per line."""
    out = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            messages = row.get("messages") or [{"role": "user", "content": str(row["prompt"])}]
            out.append(RequestSpec(int(row["max_tokens"]), messages, row.get("label")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}:{i}: not a request ({exc})") from None
    if not out:
        raise ValueError(f"{path}: no requests")
    return out
