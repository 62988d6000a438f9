"""A seeded corpus of random server configurations with known truth, for the detector."""

from __future__ import annotations

import random
from dataclasses import dataclass

from fairstream import ServerConfig

from ._modes import MODES as _MODES
from ._simtraces import Workload

MODES = tuple(_MODES)


@dataclass(frozen=True)
class Case:
    """One configuration, its workload and what the detector must say."""

    truth: str  # one of MODES
    config: ServerConfig
    workload: Workload
    noise: float
    seed: int


def corpus(n: int, seed: int = 7) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        truth = MODES[i % len(MODES)]
        a = rng.uniform(5.0, 50.0)
        common = dict(
            step_ms=a,
            per_seq_ms=rng.uniform(0.0, 0.05) * a,
            prefill_ms_per_token=rng.uniform(0.0, 0.004) * a,
            tokens_per_chunk=rng.choice((1, 1, 2, 3, 4)),
        )
        if truth.startswith("static"):
            cfg = ServerConfig(
                mode="static",
                release=truth.split("/")[1],  # type: ignore[arg-type]
                batch_size=rng.randint(2, 12),
                batch_timeout_ms=rng.uniform(0.0, 3.0) * a,
                **common,
            )
            slots = cfg.batch_size
        elif truth.startswith("continuous"):
            cfg = ServerConfig(
                mode="continuous",
                max_num_seqs=rng.choice((4, 8, 16, 32, 256)),
                prefill_priority=truth.endswith("stalls"),
                **common,
            )
            slots = min(cfg.max_num_seqs, 16)
        else:
            cfg = ServerConfig(mode="sequential", **common)
            slots = 1
        n_req = rng.randint(24, 40)
        mean_out = 40
        # arrivals spread so that the offered load is 0.7 to 3 times what the slots serve
        work = n_req * mean_out * a / 1000.0 / max(slots, 1)
        window = work / rng.uniform(0.7, 3.0)
        workload = Workload(n=n_req, window=window, seed=rng.randrange(1 << 30))
        cases.append(Case(truth, cfg, workload, rng.uniform(0.0, 0.2), rng.randrange(1 << 30)))
    return cases
