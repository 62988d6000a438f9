"""Inputs for the HTML report's tests: the seed's lines, static and continuous bursts."""

from __future__ import annotations

from fairstream import ServerConfig, StreamTrace, parse_summaries
from tests.detect._simtraces import Workload, sim_traces

SEED_LINES = [
    "2025-10-10 11:04:08 [INFO] LLM图像分析455成功响应，用时 86.08秒 | 首字延迟: 63.554秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
    "2025-10-10 11:04:08 [INFO] LLM图像分析471成功响应，用时 85.91秒 | 首字延迟: 26.541秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
    "2025-10-10 11:04:08 [INFO] LLM图像分析263成功响应，用时 88.34秒 | 首字延迟: 7.496秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
    "2025-10-10 11:04:08 [INFO] LLM图像分析375成功响应，用时 87.13秒 | 首字延迟: 45.048秒 | 输入tokens: 872 | 输出tokens: 8 | 总tokens: 880 | tokens/秒: 0.09",
]

STATIC = ServerConfig(mode="static", batch_size=8, release="batch_end")
CONTINUOUS = ServerConfig(mode="continuous", max_num_seqs=8)


def seed() -> tuple[list[StreamTrace], float]:
    parsed = parse_summaries(SEED_LINES)
    return parsed.traces, parsed.resolution


def burst(config: ServerConfig, n: int = 32, seed: int = 0) -> list[StreamTrace]:
    """``n`` requests at once (half short, half long) on ``config``, in virtual time."""
    return sim_traces(config, Workload(n=n, window=0.0, seed=seed), seed=seed)
