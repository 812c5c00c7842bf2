"""Comparison figures (matplotlib, no display needed): slowdown histograms in the style of
seed 003 figure 11.7, best-so-far curves with 95% bands, and Willemsen score curves.

Each function draws one problem and returns a :class:`matplotlib.figure.Figure` (made
without pyplot, so nothing global changes); :func:`save` writes it as PNG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from gpautotune.analysis._stats import describe, mean_ci

__all__ = ["histograms", "best_so_far", "score_curves", "save"]


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def histograms(samples: Mapping[str, np.ndarray], *, title: str, xlabel: str) -> Figure:
    """One histogram per strategy (shared bins and x-axis): the mean (red dashed) with its
    95% interval (grey), the median (green dotted), an arrow at the maximum.

    Args:
        samples: final values (slowdowns) per strategy label, in display order.
        title: figure title.
        xlabel: what the values are.
    """
    labels = [k for k, v in samples.items() if len(v)]
    fig = Figure(figsize=(7.5, 1.25 + 1.45 * max(len(labels), 1)))
    if not labels:
        return fig
    pooled = np.concatenate([samples[k] for k in labels])
    lo, q, top = float(pooled.min()), float(np.quantile(pooled, 0.995)), float(pooled.max())
    hi = (
        top if top - lo <= 3 * (q - lo) else q
    )  # far outliers (seed 003's GS) are left out of range
    hi = hi if hi > lo else lo + max(abs(lo) * 0.01, 1e-12)
    bins = np.linspace(lo, hi, 41)
    axes = fig.subplots(len(labels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, label in zip(axes, labels, strict=True):
        x = samples[label]
        s = describe(x)
        ax.hist(np.clip(x, lo, hi), bins=bins, color="#4c72b0", alpha=0.85)
        if np.isfinite(s.ci_low):
            ax.axvspan(s.ci_low, s.ci_high, color="grey", alpha=0.35, lw=0)
        ax.axvline(s.mean, color="red", ls="--", lw=1.2)
        ax.axvline(s.median, color="green", ls=":", lw=1.5)
        top = ax.get_ylim()[1]
        ax.annotate(
            f"max {s.max:.4g}",
            xy=(min(s.max, hi), 0),
            xytext=(min(s.max, hi), top * 0.6),
            ha="right" if s.max >= hi * 0.97 else "center",
            fontsize=7,
            arrowprops={"arrowstyle": "->", "lw": 0.8},
        )
        ax.set_ylabel("count", fontsize=8)
        ax.set_title(
            f"{label}: mean {s.mean:.4g} [{s.ci_low:.4g}, {s.ci_high:.4g}], median {s.median:.4g}, "
            f"n={s.n}",
            fontsize=8,
            loc="left",
        )
    axes[-1].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    return fig


def best_so_far(
    curves: Mapping[str, np.ndarray],
    *,
    title: str,
    ylabel: str,
    random_expectation: np.ndarray | None = None,
    log: bool = True,
) -> Figure:
    """Mean best-so-far against the budget with a 95% band of the mean, per strategy:
    every budget on the left, the last five sixths of the budget enlarged on the right.

    Args:
        curves: per label, an array (repetitions, budget) of best-so-far values (NaN unobserved).
        title: figure title.
        ylabel: what the values are.
        random_expectation: the random-search expectation per budget, drawn dashed.
        log: a logarithmic value axis on the left (for positive values).
    """
    fig = Figure(figsize=(10.5, 4.2))
    left, right = fig.subplots(1, 2)
    horizon = max(c.shape[1] for c in curves.values())
    start = max(1, horizon // 6)
    for ax, first in ((left, 1), (right, start)):
        for label, c in curves.items():
            budgets, mean, low, high = _band(c)
            keep = budgets >= first
            ax.plot(budgets[keep], mean[keep], lw=1.5, label=f"{label} (n={len(c)})")
            ax.fill_between(budgets[keep], low[keep], high[keep], alpha=0.25, lw=0)
        if random_expectation is not None:
            b = np.arange(1, len(random_expectation) + 1)
            ax.plot(
                b[b >= first],
                random_expectation[b >= first],
                "k--",
                lw=1,
                label="random search, expectation",
            )
        ax.set_xlabel("budget (evaluations)")
        ax.grid(alpha=0.3, which="both")
    if log:
        left.set_yscale("log")
    left.set_ylabel(ylabel)
    right.set_title(f"from budget {start}", fontsize=9)
    left.set_title("all budgets", fontsize=9)
    right.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def _band(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    budgets = np.arange(1, c.shape[1] + 1)
    cols = [col[~np.isnan(col)] for col in c.T]
    mean = np.array([col.mean() if len(col) else np.nan for col in cols])
    ci = np.array([mean_ci(col) for col in cols]).reshape(-1, 2)
    return budgets, mean, ci[:, 0], ci[:, 1]


def score_curves(
    scores: Mapping[str, np.ndarray], *, title: str, checkpoints: Sequence[int] = ()
) -> Figure:
    """Willemsen score against the budget per strategy (0 = random search, 1 = optimum)."""
    fig = Figure(figsize=(7.5, 4.0))
    ax = fig.subplots()
    for label, s in scores.items():
        b = np.arange(1, len(s) + 1)
        ax.plot(b, s, lw=1.5, label=f"{label} (mean {np.nanmean(s):.3f})")
    ax.axhline(0, color="k", lw=0.8, ls="--")
    ax.axhline(1, color="k", lw=0.8, ls=":")
    for c in checkpoints:
        ax.axvline(c, color="grey", lw=0.5, alpha=0.5)
    ax.set_xlabel("budget (evaluations)")
    ax.set_ylabel("score  (f - f_random) / (f_opt - f_random)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig
