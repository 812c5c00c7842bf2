"""Analysis: statistics of repeated runs, the Willemsen score, figures and reports, and
Sobol sensitivity indices with honest uncertainty."""

from gpautotune.analysis._paths import FunctionPaths, PathSampler, PosteriorMean, PosteriorPaths
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
from gpautotune.analysis._willemsen import (
    expected_random_best,
    random_search_expectation,
    willemsen_score,
)
from gpautotune.analysis.sensitivity import (
    Domain,
    SobolResult,
    sobol_indices,
    strategy_indices,
    surrogate_indices,
)

__all__ = [
    "ComparisonReport",
    "Difference",
    "Domain",
    "FunctionPaths",
    "Group",
    "PathSampler",
    "PosteriorMean",
    "PosteriorPaths",
    "RandomBaseline",
    "RunTable",
    "SobolResult",
    "Summary",
    "analyse",
    "compare_samples",
    "describe",
    "expected_random_best",
    "load_runs",
    "markdown",
    "mean_ci",
    "random_baseline",
    "random_search_expectation",
    "sobol_indices",
    "strategy_indices",
    "summary_table",
    "surrogate_indices",
    "verdict",
    "willemsen_score",
    "write_report",
]
