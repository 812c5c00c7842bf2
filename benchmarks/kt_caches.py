"""The brute-forced Kernel Tuner caches: their spaces, and random search against its
exact expectation.

Usage::

    python benchmarks/kt_caches.py spaces       # raw size, rows, failed rows, build time
    gpautotune compare configs/kt-caches-random.yaml --workers 2
    python benchmarks/kt_caches.py check        # measured means vs the exact expectation

``check`` reads the comparison's journal (``results/kt-caches-random.db``). For each
file and checkpoint ``b`` it computes the exact mean and standard deviation ``sd`` of
random search's best after ``b`` evaluations (rows drawn without replacement, failed
rows costing a draw; :func:`gpautotune.analysis.random_best_moments`) and tests whether
the mean of the ``n`` stored runs lies in ``E ± 1.96 sd / sqrt(n)``, the 95% interval of
a mean of ``n`` independent runs (``z``: the deviation in standard errors), and compares
the mean number of failed trials with its expectation ``b F / N`` (``F`` failed of ``N``
rows). Outputs go to ``benchmarks/results/kt_caches/``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from gpautotune.analysis import analyse, random_best_moments
from gpautotune.analysis._report import _md_table
from gpautotune.problems import find_data
from gpautotune.problems.kt_cache import KtCacheProblem, kt_cache_problem
from gpautotune.storage import Journal

OUT = Path(__file__).parent / "results" / "kt_caches"
FOLDER = "kt-caches"


def _files() -> list[Path]:
    return sorted(find_data(f"{FOLDER}/README.md").parent.glob("*/*.json.gz"))


def spaces() -> pd.DataFrame:
    """One row per file: parameters, raw size, rows (valid), failed rows, build time."""
    rows = []
    for path in _files():
        start = time.perf_counter()
        problem = kt_cache_problem(path)
        seconds = time.perf_counter() - start
        rows.append(
            {
                "file": f"{path.parent.name}/{path.name}",
                "parameters": problem.space.dims,
                "constants": len(problem.constants),
                "raw size": int(problem.space.size),
                "valid (rows)": problem.rows,
                "failed": problem.failed_rows,
                "failed kinds": ", ".join(f"{s.value} {n}" for s, n in problem.failures.items()),
                "optimum": f"{problem.optimum:.5g}",
                "build s": round(seconds, 2),
            }
        )
    return pd.DataFrame(rows)


def _failed_draws(db: Path, problem: str, budget: int) -> float:
    """Mean number of failed trials among the first ``budget`` of the problem's runs."""
    with Journal(db) as journal:
        counts = [
            sum(not t.ok for t in journal.trials(r.id)[:budget])
            for r in journal.runs()
            if r.problem == problem
        ]
    return float(np.mean(counts))


def check(db: Path, checkpoints: list[int], free_failures: bool = False) -> pd.DataFrame:
    """Measured mean best slowdown of the journal's random runs vs the exact expectation,
    and the mean number of failed trials vs its expectation ``b F / N``
    (``free_failures``: the expectation as if failed rows cost no draw, for contrast)."""
    summary = analyse(db, checkpoints=checkpoints).summary
    rows = []
    for path in _files():
        if path.parent.name == "t4":
            continue
        problem: KtCacheProblem = kt_cache_problem(path)
        mean, sd = random_best_moments(
            problem.measured_values(),
            checkpoints,
            failures=0 if free_failures else problem.failed_rows,
        )
        for b, m, s in zip(checkpoints, mean, sd, strict=True):
            found = summary[(summary.problem == problem.name) & (summary.budget == b)]
            if found.empty:  # a comparison of some of the files
                continue
            row = found.iloc[0]
            se = s / np.sqrt(row.n)
            low, high = (m - 1.96 * se) / problem.optimum, (m + 1.96 * se) / problem.optimum
            rows.append(
                {
                    "file": problem.name,
                    "budget": b,
                    "runs": int(row.n),
                    "exact E[slowdown]": m / problem.optimum,
                    "95% interval of a mean of n runs": f"[{low:.4f}, {high:.4f}]",
                    "measured mean [95% CI]": f"{row.slowdown_mean:.4f} "
                    f"[{row.slowdown_ci_low:.4f}, {row.slowdown_ci_high:.4f}]",
                    "z": (row.slowdown_mean * problem.optimum - m) / se,
                    "within": "yes" if low <= row.slowdown_mean <= high else "no",
                    "failed trials per run (expected)": f"{_failed_draws(db, problem.name, b):.2f} "
                    f"({b * problem.failed_rows / problem.rows:.2f})",
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["spaces", "check"])
    parser.add_argument("--db", type=Path, default=Path("results/kt-caches-random.db"))
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[60, 120])
    parser.add_argument(
        "--free-failures", action="store_true", help="expect as if failed rows cost no draw"
    )
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.what == "spaces":
        table, name = spaces(), "spaces"
    else:
        table = check(args.db, args.checkpoints, args.free_failures)
        name = "check-free-failures" if args.free_failures else "check"
    text = _md_table(
        list(table.columns),
        [[f"{v:.4f}" if isinstance(v, float) else str(v) for v in r] for r in table.values],
    )
    (OUT / f"{name}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
