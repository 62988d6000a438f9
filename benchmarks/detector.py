"""What the detector costs and how often it is right: the probe per mode, and the corpus.

Part 1 runs ``fairstream.probe`` against the reference server in each behaviour (two cost
presets x tokens per chunk 1 and 3) and prints, per case: the verdict, the batch size and
step it found against the truth, the requests it spent and its wall time.
Part 2 runs ``fairstream.analyze`` on N simulated random configurations and prints the
confusion matrix (rows: truth).

Run:  python benchmarks/detector.py [--corpus 200] [--presets default-7b,ascend-7b]
The model step is 15 ms (default-7b) or 30 ms (ascend-7b); time scale 1.0 / 0.5 so the
real step is 15 ms in both (at 7.5 ms a busy 2-core host faked prefill stalls). Exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import record
from tests.detect._corpus import corpus
from tests.detect._modes import MODES, answer, config
from tests.detect._simtraces import sim_traces

from fairstream import Recorder, ReferenceServer, analyze, probe


async def probe_table(presets: list[str], tpcs: list[int]) -> None:
    probes = record.current().figures.setdefault("probes", [])
    print(f"{'preset':<11}{'tpc':>4} {'truth':<18}{'answer':<18}{'conf':>5}"
          f"{'batch':>7}{'step ms':>9}{'model':>7}{'reqs':>6}{'wall s':>8}")  # fmt: skip
    for preset in presets:
        for tpc in tpcs:
            for mode in MODES:
                cfg = config(mode, preset, tpc)
                rec = Recorder()
                async with ReferenceServer(cfg) as server:
                    t0 = time.perf_counter()
                    rep = await probe(server.base_url, cfg.model, recorder=rec)
                    wall = time.perf_counter() - t0
                got = answer(rep.verdict, rep.release, rep.prefill_stalls)
                truth_b = cfg.batch_size if cfg.mode == "static" else None
                batch = f"{rep.batch_size}" if rep.batch_size else "-"
                step = rep.step_ms / cfg.time_scale if rep.step_ms else float("nan")
                model = cfg.cost_model().step_ms
                mark = "" if got == mode else "  <- WRONG"
                probes.append(
                    {"preset": preset, "tpc": tpc, "truth": mode, "answer": got,
                     "confidence": rep.confidence, "requests": len(rec.traces), "wall_s": wall}
                )  # fmt: skip
                print(
                    f"{preset:<11}{tpc:>4} {mode:<18}{got:<18}{rep.confidence:>5.2f}"
                    f"{batch:>4}/{truth_b or '-':<2}{step:>9.1f}{model:>7.1f}"
                    f"{len(rec.traces):>6}{wall:>8.2f}{mark}"
                )


def corpus_table(n: int) -> None:
    matrix: collections.Counter[tuple[str, str]] = collections.Counter()
    confident_wrong = 0
    t0 = time.perf_counter()
    for case in corpus(n):
        rep = analyze(sim_traces(case.config, case.workload, noise=case.noise, seed=case.seed))
        got = answer(rep.verdict, rep.release, rep.prefill_stalls)
        matrix[(case.truth, got)] += 1
        if got != case.truth and rep.confidence >= 0.8 and not got.endswith("?"):
            confident_wrong += 1
    cols = list(MODES) + sorted({g for _, g in matrix} - set(MODES))
    w = max(map(len, cols)) + 1
    print(f"\nconfusion matrix, {n} random configurations (rows: truth)")
    print(" " * w + "".join(f"{c:>{w}}" for c in cols))
    for truth in MODES:
        print(f"{truth:<{w}}" + "".join(f"{matrix[(truth, c)]:>{w}}" for c in cols))
    right = sum(v for (t, g), v in matrix.items() if t == g)
    per = 1e3 * (time.perf_counter() - t0) / n
    print(f"right {right}/{n} ({right / n:.1%}); confidently wrong (>= 0.8): {confident_wrong};")
    print(f"analysis time {per:.1f} ms per configuration")
    record.current().figures["corpus"] = {
        "configurations": n, "right": right, "confidently_wrong": confident_wrong, "ms_each": per
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=int, default=200)
    ap.add_argument("--presets", default="default-7b,ascend-7b")
    ap.add_argument("--tpc", default="1,3")
    args = ap.parse_args()
    presets = [p for p in args.presets.split(",") if p]
    tpcs = [int(x) for x in args.tpc.split(",") if x]
    if presets:
        asyncio.run(probe_table(presets, tpcs))
    if args.corpus:
        corpus_table(args.corpus)


if __name__ == "__main__":
    record.main("detector", main)
