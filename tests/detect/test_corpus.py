"""The detector on a corpus of random server configurations (simulated, exact engines).

Each case runs the real scheduling engine in virtual time, chunks its tokens as the HTTP
server would, adds client-side arrival jitter and step noise, and asks ``analyze``.
"""

from __future__ import annotations

import collections

import pytest

from fairstream import analyze

from ._corpus import MODES, corpus
from ._modes import answer
from ._simtraces import sim_traces

N_CASES = 100


def test_random_configurations_are_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    matrix: collections.Counter[tuple[str, str]] = collections.Counter()
    confident_wrong = []
    for i, case in enumerate(corpus(N_CASES)):
        report = analyze(sim_traces(case.config, case.workload, noise=case.noise, seed=case.seed))
        got = answer(report.verdict, report.release, report.prefill_stalls)
        matrix[(case.truth, got)] += 1
        wrong_verdict = got.split("/")[0] != case.truth.split("/")[0]
        wrong_claim = got != case.truth and not got.endswith("?") and got != "unknown"
        if report.confidence >= 0.8 and (wrong_verdict or wrong_claim):
            confident_wrong.append((i, case.truth, got, report.confidence))
    right = sum(n for (truth, got), n in matrix.items() if truth == got)
    with capsys.disabled():
        print(f"\ndetector confusion matrix ({N_CASES} random configurations, rows = truth):")
        print(_table(matrix))
        print(f"right: {right}/{N_CASES}; confidently wrong: {len(confident_wrong)}")
    assert right >= 0.95 * N_CASES
    assert confident_wrong == []


def _table(matrix: collections.Counter[tuple[str, str]]) -> str:
    cols = list(MODES) + sorted({g for _, g in matrix} - set(MODES))
    width = max(len(c) for c in cols) + 1
    lines = [" " * width + "".join(f"{c:>{width}}" for c in cols)]
    for truth in MODES:
        lines.append(f"{truth:<{width}}" + "".join(f"{matrix[(truth, c)]:>{width}}" for c in cols))
    return "\n".join(lines)


def test_hostage_time_falls_on_short_requests_under_static_batching() -> None:
    static = corpus(5)[0]  # static/batch_end
    assert static.truth == "static/batch_end"
    report = analyze(sim_traces(static.config, static.workload, seed=1))
    cont_case = corpus(5)[2]
    assert cont_case.truth == "continuous"
    cont = analyze(sim_traces(cont_case.config, cont_case.workload, seed=1))
    assert report.short_request_hostage is not None and cont.short_request_hostage is not None
    # short requests wait on long ones under static batching, hardly at all otherwise
    assert report.short_request_hostage > 5 * max(cont.short_request_hostage, 1e-6)
    held = [f for f in report.findings if f.held > 0]
    assert held and all(f.hostage >= f.held for f in held)
