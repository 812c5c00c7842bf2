"""Analysis of repeated runs: statistics, the Willemsen score, figures and reports."""

from gpautotune.analysis._report import markdown, summary_table, write_report
from gpautotune.analysis._runs import Group, RunTable, load_runs
from gpautotune.analysis._stats import (
    Difference,
    Summary,
    compare_samples,
    describe,
    mean_ci,
    verdict,
)
from gpautotune.analysis._summary import ComparisonReport, RandomBaseline, analyse, random_baseline
from gpautotune.analysis._willemsen import expected_random_best, willemsen_score

__all__ = [
    "ComparisonReport",
    "Difference",
    "Group",
    "RandomBaseline",
    "RunTable",
    "Summary",
    "analyse",
    "compare_samples",
    "describe",
    "expected_random_best",
    "load_runs",
    "markdown",
    "mean_ci",
    "random_baseline",
    "summary_table",
    "verdict",
    "willemsen_score",
    "write_report",
]
