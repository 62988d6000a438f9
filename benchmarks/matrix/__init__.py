"""The dispatcher's judge: ``auto`` beside naive, sorted, fixed limits and the oracle, cell by
cell (a server and a workload), over real HTTP.

    python -m benchmarks.matrix run --quick            # at most 20 minutes on 2 cores
    python -m benchmarks.matrix run --full             # at most 2 hours
    python -m benchmarks.matrix show FILE [--markdown]
    python -m benchmarks.matrix compare A B            # exit 1: a judged target regressed

A target is judged in a cell only where an arm that really ran meets it; elsewhere the cell
is marked infeasible, with the best arm's figure (``_judge.py``).
"""
