"""Index estimates per path and per bootstrap replicate, and their summary.

Every estimator returns arrays of shape ``(P, B + 1, d)``: ``P`` functions (posterior
paths, or 1), replicate 0 computed on the whole sample and replicates ``1..B`` on
bootstrap resamples of its base rows. :func:`summarise` turns them into one table.

Interval (Le Gratiet, Cannamela & Iooss 2014, "A Bayesian approach for global
sensitivity analysis of (multifidelity) computer codes", SIAM/ASA JUQ 2:336-363): the
``P x B`` replicates are pooled and the interval is their ``(α/2, 1 - α/2)`` quantiles,
so it covers both the surrogate's uncertainty (which function) and the Monte-Carlo
error (which sample). The point estimate is the mean over paths of the whole-sample
estimates. The variance of the pooled replicates splits as

    Var = Var_p(mean_b S_pb)   [surrogate, "sd_model"]
        + mean_p(Var_b S_pb)   [Monte Carlo, "sd_mc"],

both reported, so a user can see whether more data or more samples would narrow it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Estimates", "summarise", "summarise_pairs"]


@dataclass(frozen=True)
class Estimates:
    """Raw replicates: ``s1``/``st`` are ``(P, B + 1, d)``; ``s2`` is ``(P, B + 1, d, d)``;
    ``base`` is the number of base rows (box) or valid points (valid set) resampled;
    ``population`` says the valid points were the whole valid set (no bootstrap)."""

    s1: np.ndarray
    st: np.ndarray
    s2: np.ndarray | None
    evaluations: int
    base: int
    population: bool = False


def _describe(values: np.ndarray, confidence: float) -> dict[str, np.ndarray]:
    """Point estimate, interval and variance split of ``(P, B + 1, ...)`` replicates."""
    full, boot = values[:, 0], values[:, 1:]
    pooled = (boot if boot.shape[1] else values[:, :1]).reshape(-1, *values.shape[2:])
    alpha = 1.0 - confidence
    low, high = np.quantile(pooled, [alpha / 2, 1 - alpha / 2], axis=0)
    per_path = boot.mean(axis=1) if boot.shape[1] else full
    sd_model = per_path.std(axis=0, ddof=1) if len(full) > 1 else np.zeros(full.shape[1:])
    sd_mc = (
        np.sqrt(boot.var(axis=1, ddof=1).mean(axis=0))
        if boot.shape[1] > 1
        else np.zeros(full.shape[1:])
    )
    point = full.mean(axis=0)
    return {
        "": point,
        "_low": np.minimum(low, point),
        "_high": np.maximum(high, point),
        "_sd_model": sd_model,
        "_sd_mc": sd_mc,
    }


def summarise(names: list[str], est: Estimates, confidence: float) -> pd.DataFrame:
    """One row per parameter: S1, ST with intervals and variance split, rank by ST."""
    columns: dict[str, np.ndarray | list[str]] = {"parameter": names}
    for key, values in (("S1", est.s1), ("ST", est.st)):
        for suffix, column in _describe(values, confidence).items():
            columns[key + suffix] = column
    frame = pd.DataFrame(columns)
    order = ["parameter", "S1", "S1_low", "S1_high", "ST", "ST_low", "ST_high"]
    frame["rank"] = frame["ST"].rank(ascending=False, method="min").astype(int)
    rest = [c for c in frame.columns if c not in order and c != "rank"]
    return frame[order + ["rank"] + rest]


def summarise_pairs(names: list[str], est: Estimates, confidence: float) -> pd.DataFrame | None:
    """Second-order indices S_ij (i < j) with intervals, or None when not computed."""
    if est.s2 is None:
        return None
    stats = _describe(est.s2, confidence)
    rows = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            rows.append(
                {
                    "parameter_1": names[i],
                    "parameter_2": names[j],
                    **{"S2" + k: float(v[i, j]) for k, v in stats.items()},
                }
            )
    return pd.DataFrame(rows)
