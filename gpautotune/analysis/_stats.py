"""Statistics of repeated runs: location, spread, bootstrap intervals of the mean, and
comparisons with a reference strategy (paired when the runs share seeds).

Intervals are bootstrap percentile intervals (runs resampled with replacement), so they
stay inside the range of the values: a slowdown interval never goes below 1, Booth's
never below 0. Comparisons are paired when the two strategies ran the same seeds
(Wilcoxon signed-rank test over the shared seeds, a bootstrap interval of the mean paired
difference), unpaired otherwise (Mann-Whitney U, a bootstrap interval of the difference
of means); :func:`holm` adjusts the p-values of several strategies tested against one
reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

__all__ = [
    "Summary",
    "Difference",
    "describe",
    "mean_ci",
    "mean_band",
    "compare_samples",
    "compare_paired",
    "holm",
    "verdict",
]

#: Bootstrap resamples of intervals (seeded: reports are reproducible).
RESAMPLES = 2000


@dataclass(frozen=True)
class Summary:
    """Sample statistics of ``n`` values; the interval is that of the mean."""

    n: int
    mean: float
    median: float
    min: float
    max: float
    ci_low: float
    ci_high: float


def mean_band(
    values: np.ndarray, level: float = 0.95, *, n_resamples: int = RESAMPLES, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and bootstrap percentile interval of the mean, per column.

    Rows (runs) are resampled with replacement, the same resamples for every column,
    through multinomial weights ``W`` (``n_resamples x runs``, rows summing to 1): the
    resampled means of column ``j`` are ``W @ x[:, j]`` over the observed entries (NaN
    entries are unobserved and left out of each mean).

    Args:
        values: shape (runs, columns), NaN where unobserved.
        level: the interval's coverage.
        n_resamples: bootstrap resamples.
        seed: the resampling seed.

    Returns:
        ``(mean, low, high)``, each of shape (columns,); NaN where fewer than two runs are
        observed; the point where every observed value is the same.
    """
    x = np.atleast_2d(np.asarray(values, dtype=float))
    observed = np.isfinite(x)
    counts = observed.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(observed, x, 0.0).sum(axis=0) / counts
    low, high = np.full(x.shape[1], np.nan), np.full(x.shape[1], np.nan)
    enough = counts >= 2
    if not enough.any():
        return np.where(counts > 0, mean, np.nan), low, high
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(float)
    cols = np.flatnonzero(enough)
    filled = np.where(observed[:, cols], x[:, cols], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (weights @ filled) / (weights @ observed[:, cols])
    alpha = (1 - level) / 2
    q = np.nanquantile(means, [alpha, 1 - alpha], axis=0)
    lo_obs = np.nanmin(np.where(observed[:, cols], x[:, cols], np.nan), axis=0)
    hi_obs = np.nanmax(np.where(observed[:, cols], x[:, cols], np.nan), axis=0)
    low[cols], high[cols] = np.clip(q[0], lo_obs, hi_obs), np.clip(q[1], lo_obs, hi_obs)
    return np.where(counts > 0, mean, np.nan), low, high


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Bootstrap percentile interval of the mean (inside ``[min, max]`` of the values).

    NaN for fewer than two values; the point ``x̄`` when every value is the same.
    """
    x = np.asarray(values, dtype=float).reshape(-1, 1)
    _, low, high = mean_band(x, level)
    return float(low[0]), float(high[0])


def describe(values: np.ndarray, level: float = 0.95) -> Summary:
    """Mean, median, extremes and the interval of the mean of ``values`` (NaN if empty)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return Summary(0, *(math.nan,) * 6)
    low, high = mean_ci(x, level)
    return Summary(
        len(x), float(x.mean()), float(np.median(x)), float(x.min()), float(x.max()), low, high
    )


@dataclass(frozen=True)
class Difference:
    """A sample ``x`` against a reference sample ``y`` (lower is better).

    Attributes:
        n, n_ref: sample sizes (the shared seeds, for a paired comparison).
        mean, mean_ref: the sample means.
        diff: ``mean - mean_ref``.
        ci_low, ci_high: bootstrap percentile interval of ``diff`` (of the mean paired
            difference when paired).
        relative: ``diff / |mean_ref|``.
        test: ``wilcoxon`` (paired, signed-rank) or ``mann-whitney`` (unpaired).
        statistic: the test's statistic.
        p_value: its two-sided p-value.
        p_adjusted: the p-value adjusted for the strategies tested against the same
            reference (:func:`holm`); ``p_value`` until adjusted.
        p_better: the chance that ``x`` beats the reference, ties counted half: over the
            pairs when paired, over all ``n · n_ref`` couples (``1 - U / (n n_ref)``)
            otherwise.
    """

    n: int
    n_ref: int
    mean: float
    mean_ref: float
    diff: float
    ci_low: float
    ci_high: float
    relative: float
    test: str
    statistic: float
    p_value: float
    p_adjusted: float
    p_better: float


def _too_few(x: np.ndarray, y: np.ndarray, test: str) -> Difference:
    mx = float(x.mean()) if len(x) else math.nan
    my = float(y.mean()) if len(y) else math.nan
    return Difference(len(x), len(y), mx, my, mx - my, *(math.nan,) * 3, test, *(math.nan,) * 4)


def _bootstrap_diff(x: np.ndarray, y: np.ndarray, level: float, seed: int) -> tuple[float, float]:
    """Percentile interval of ``mean(x) - mean(y)``, each sample resampled on its own."""
    rng = np.random.default_rng(seed)
    bx = rng.choice(x, size=(RESAMPLES, len(x))).mean(axis=1)
    by = rng.choice(y, size=(RESAMPLES, len(y))).mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(bx - by, [alpha, 1 - alpha])
    return float(low), float(high)


def compare_samples(
    x: np.ndarray, y: np.ndarray, *, level: float = 0.95, seed: int = 0
) -> Difference:
    """Compare sample ``x`` with the reference ``y`` without pairing: the difference of
    means with a bootstrap percentile interval (seeded) and the Mann-Whitney U test
    (two-sided). Needs at least two values in each sample (else NaN statistics)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or len(y) < 2:
        return _too_few(x, y, "mann-whitney")
    mx, my = float(x.mean()), float(y.mean())
    low, high = _bootstrap_diff(x, y, level, seed)
    test = stats.mannwhitneyu(x, y, alternative="two-sided")
    u = float(test.statistic)
    p = float(test.pvalue)
    relative = (mx - my) / abs(my) if my != 0 else math.nan
    better = 1.0 - u / (len(x) * len(y))
    return Difference(
        len(x), len(y), mx, my, mx - my, low, high, relative, "mann-whitney", u, p, p, better
    )


def compare_paired(
    x: np.ndarray, y: np.ndarray, *, level: float = 0.95, seed: int = 0
) -> Difference:
    """Compare ``x`` with the reference ``y`` pair by pair (``x[i]`` and ``y[i]`` share a
    seed): the mean paired difference with a bootstrap percentile interval and the
    Wilcoxon signed-rank test (two-sided; pairs with equal values are dropped, Wilcoxon's
    convention, and give p = 1 when every pair is equal). Needs two pairs or more."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError(f"paired samples differ in length: {len(x)} and {len(y)}")
    if len(x) < 2:
        return _too_few(x, y, "wilcoxon")
    d = x - y
    mx, my = float(x.mean()), float(y.mean())
    _, low, high = mean_band(d.reshape(-1, 1), level, seed=seed)
    if np.any(d != 0):
        test = stats.wilcoxon(x, y, zero_method="wilcox", alternative="two-sided")
        statistic, p = float(test.statistic), float(test.pvalue)
    else:
        statistic, p = 0.0, 1.0
    relative = (mx - my) / abs(my) if my != 0 else math.nan
    better = float(np.mean(d < 0) + 0.5 * np.mean(d == 0))
    return Difference(
        len(x),
        len(y),
        mx,
        my,
        mx - my,
        float(low[0]),
        float(high[0]),
        relative,
        "wilcoxon",
        statistic,
        p,
        p,
        better,
    )


def holm(differences: Sequence[Difference]) -> list[Difference]:
    """The differences with ``p_adjusted`` by Holm's step-down method (statsmodels), the
    family being every comparison given (those without a p-value are left as they are)."""
    from statsmodels.stats.multitest import multipletests

    tested = [i for i, d in enumerate(differences) if math.isfinite(d.p_value)]
    out = list(differences)
    if not tested:
        return out
    _, adjusted, _, _ = multipletests([differences[i].p_value for i in tested], method="holm")
    for i, p in zip(tested, adjusted, strict=True):
        out[i] = replace(out[i], p_adjusted=float(p))
    return out


def verdict(d: Difference, *, alpha: float = 0.05, practical: float = 0.01) -> str:
    """``better`` / ``worse`` when the test rejects at ``alpha`` (after the adjustment for
    several strategies) AND the interval of the difference excludes 0, qualified by
    whether the mean moved by at least the ``practical`` fraction of the reference's
    mean; otherwise ``no clear difference``."""
    if not (math.isfinite(d.p_adjusted) and math.isfinite(d.ci_low)):
        return "too few repetitions"
    if d.p_adjusted >= alpha or d.ci_low <= 0.0 <= d.ci_high:
        return "no clear difference"
    direction = "better" if d.diff < 0 else "worse"
    if math.isfinite(d.relative) and abs(d.relative) < practical:
        return f"{direction}, not practically (|Δ| < {practical:.0%})"
    return direction
