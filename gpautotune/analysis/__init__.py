"""Analysis: statistics of repeated runs, the Willemsen score, figures and reports, and
explanations of stored runs (Sobol indices from :mod:`gpautotune.sensitivity`, whose
names are re-exported here)."""

from gpautotune.analysis._methodology_reference import reference_methodology_score
from gpautotune.analysis._plots import save as save_figure
from gpautotune.analysis._report import markdown, summary_table, write_report
from gpautotune.analysis._runs import Group, RunTable, load_runs
from gpautotune.analysis._stats import (
    Difference,
    Summary,
    compare_paired,
    compare_samples,
    describe,
    holm,
    mean_band,
    mean_ci,
    verdict,
)
from gpautotune.analysis._summary import (
    ComparisonReport,
    RandomBaseline,
    analyse,
    random_baseline,
    report_dir,
)
from gpautotune.analysis._willemsen import (
    expected_random_best,
    expected_rank_random_best,
    median_run_curve,
    methodology_score,
    random_best_moments,
    willemsen_score,
)
from gpautotune.analysis.explain import strategy_indices
from gpautotune.sensitivity import (
    Domain,
    FunctionPaths,
    PathSampler,
    PosteriorMean,
    PosteriorPaths,
    SobolResult,
    sobol_indices,
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
    "compare_paired",
    "compare_samples",
    "describe",
    "expected_random_best",
    "expected_rank_random_best",
    "load_runs",
    "markdown",
    "holm",
    "mean_band",
    "mean_ci",
    "median_run_curve",
    "methodology_score",
    "random_baseline",
    "random_best_moments",
    "reference_methodology_score",
    "report_dir",
    "save_figure",
    "sobol_indices",
    "strategy_indices",
    "summary_table",
    "surrogate_indices",
    "verdict",
    "willemsen_score",
    "write_report",
]
