"""Statistics of repeated runs: location, spread, a t-interval of the mean, and a
two-sample comparison (bootstrap interval of the difference of means, Mann-Whitney U).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["Summary", "Difference", "describe", "mean_ci", "compare_samples", "verdict"]


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


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean: ``x̄ ± t_{(1+level)/2, n-1} · s / √n``.

    NaN for fewer than two values; the point ``x̄`` when every value is the same.
    """
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return math.nan, math.nan
    mean, sem = float(x.mean()), float(stats.sem(x))
    if sem == 0.0:
        return mean, mean
    half = float(stats.t.ppf((1 + level) / 2, len(x) - 1)) * sem
    return mean - half, mean + half


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
        n, n_ref: sample sizes.
        mean, mean_ref: the sample means.
        diff: ``mean - mean_ref``.
        ci_low, ci_high: bootstrap (BCa) interval of ``diff``.
        relative: ``diff / |mean_ref|``.
        u: Mann-Whitney ``U`` of ``x``.
        p_value: its two-sided p-value.
        p_better: ``P(X < Y) + P(X = Y) / 2 = 1 - U / (n · n_ref)``, the chance that a
            repetition of ``x`` beats one of the reference.
    """

    n: int
    n_ref: int
    mean: float
    mean_ref: float
    diff: float
    ci_low: float
    ci_high: float
    relative: float
    u: float
    p_value: float
    p_better: float


def _bootstrap_diff(
    x: np.ndarray, y: np.ndarray, level: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        d = float(x[0] - y[0])
        return d, d

    def diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(a, axis=axis) - np.mean(b, axis=axis)

    for method in ("BCa", "percentile"):
        res = stats.bootstrap(
            (x, y),
            diff,
            n_resamples=n_resamples,
            confidence_level=level,
            method=method,
            vectorized=True,
            batch=max(1, 2_000_000 // (len(x) + len(y))),
            rng=np.random.default_rng(seed),
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high
    return math.nan, math.nan


def compare_samples(
    x: np.ndarray, y: np.ndarray, *, level: float = 0.95, n_resamples: int = 4999, seed: int = 0
) -> Difference:
    """Compare sample ``x`` with the reference ``y``: the difference of means with a
    bootstrap interval (scipy, BCa, seeded) and the Mann-Whitney U test (two-sided).
    Needs at least two values in each sample (else NaN statistics)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or len(y) < 2:
        mx = float(x.mean()) if len(x) else math.nan
        my = float(y.mean()) if len(y) else math.nan
        return Difference(len(x), len(y), mx, my, mx - my, *(math.nan,) * 6)
    mx, my = float(x.mean()), float(y.mean())
    low, high = _bootstrap_diff(x, y, level, n_resamples, seed)
    test = stats.mannwhitneyu(x, y, alternative="two-sided")
    u = float(test.statistic)
    relative = (mx - my) / abs(my) if my != 0 else math.nan
    return Difference(
        len(x),
        len(y),
        mx,
        my,
        mx - my,
        low,
        high,
        relative,
        u,
        float(test.pvalue),
        1.0 - u / (len(x) * len(y)),
    )


def verdict(d: Difference, *, alpha: float = 0.05, practical: float = 0.01) -> str:
    """``better`` / ``worse`` when the Mann-Whitney test rejects at ``alpha`` AND the interval
    of the difference excludes 0, qualified by whether the mean moved by at least the
    ``practical`` fraction of the reference's mean; otherwise ``no clear difference``."""
    if not (math.isfinite(d.p_value) and math.isfinite(d.ci_low)):
        return "too few repetitions"
    if d.p_value >= alpha or d.ci_low <= 0.0 <= d.ci_high:
        return "no clear difference"
    direction = "better" if d.diff < 0 else "worse"
    if math.isfinite(d.relative) and abs(d.relative) < practical:
        return f"{direction}, not practically (|Δ| < {practical:.0%})"
    return direction
