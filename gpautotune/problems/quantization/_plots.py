"""Figures of policy searches (matplotlib, Agg backend).

* :func:`plot_policy_trace` — seed figures 13.7/13.8: the layers x iterations heat map of
  the policies tried (red = 1 bit, green = 8 bits), the size and the accuracy of each,
  with the best iteration marked.
* :func:`plot_best_so_far` — seed figure 13.5-style comparison: the best accuracy loss so
  far against the iteration, mean over seeds with a 95% t interval band, per strategy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from gpautotune.problems.quantization._history import bits_column

__all__ = ["plot_policy_trace", "plot_best_so_far", "best_so_far", "mean_ci"]


def _pyplot():  # noqa: ANN202 - matplotlib is imported lazily
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and the ``level`` Student-t interval ``mean +- t s / sqrt(n)`` (half-width 0
    for n < 2)."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return mean, mean - half, mean + half


def best_so_far(history: pd.DataFrame) -> np.ndarray:
    """Running minimum of ``value`` over trials in order (failures carry the previous best)."""
    values = pd.to_numeric(history["value"], errors="coerce").to_numpy(dtype=float)
    values = np.where(np.isnan(values), np.inf, values)
    return np.minimum.accumulate(values)


def plot_policy_trace(
    history: pd.DataFrame,
    layers: Sequence[str],
    *,
    size_limit: float | None = None,
    reference: float | None = None,
    title: str | None = None,
):  # noqa: ANN201 - a Figure
    """Heat map of bits per layer (rows) and trial (columns), trial sizes and accuracies.

    Args:
        history: :func:`gpautotune.quantization.history_frame` of a run (one column of
            bits per layer, :func:`~._history.bits_column`).
        layers: the layer names, top to bottom.
        size_limit: bytes, drawn as a dashed line on the size panel.
        reference: the 8-bit accuracy, drawn on the accuracy panel.
        title: figure title.
    """
    plt = _pyplot()
    ok = history[history["status"] == "ok"].reset_index(drop=True)
    columns = [bits_column(n) if bits_column(n) in history.columns else n for n in layers]
    fig, axes = plt.subplots(1, 3, figsize=(13, 0.22 * len(layers) + 2.2), width_ratios=[3, 1, 1])
    image = axes[0].imshow(
        ok[columns].to_numpy(dtype=float).T,
        aspect="auto",
        cmap="RdYlGn",
        vmin=1,
        vmax=8,
        interpolation="nearest",
    )
    axes[0].set_yticks(range(len(layers)), layers, fontsize=7)
    axes[0].set_xlabel("iteration")
    fig.colorbar(image, ax=axes[0], label="bits", fraction=0.04)
    best = int(np.nanargmin(pd.to_numeric(ok["value"]).to_numpy())) if len(ok) else None
    axes[1].plot(ok["size_bytes"] / 1024, ".", ms=3)
    axes[1].set_ylabel("size (KiB)")
    axes[2].plot(100 * ok["top1"], ".", ms=3)
    axes[2].set_ylabel("Top-1 (%)")
    if size_limit is not None:
        axes[1].axhline(size_limit / 1024, ls="--", c="k", lw=0.8)
    if reference is not None:
        axes[2].axhline(100 * reference, ls="--", c="k", lw=0.8)
    for ax in axes:
        if best is not None:
            ax.axvline(best, c="tab:blue", lw=0.8)
        if ax is not axes[0]:
            ax.set_xlabel("iteration")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_best_so_far(frame: pd.DataFrame, *, level: float = 0.95, title: str | None = None):  # noqa: ANN201
    """Mean best-so-far accuracy loss (percentage points) per strategy, with a t band.

    Args:
        frame: long table with columns ``strategy``, ``seed``, ``number``, ``value``.
        level: confidence level of the band across seeds.
        title: figure title.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, group in frame.groupby("strategy", sort=True):
        curves = [best_so_far(g.sort_values("number")) for _, g in group.groupby("seed")]
        length = min(len(c) for c in curves)
        matrix = 100 * np.vstack([c[:length] for c in curves])
        bands = np.array(
            [
                mean_ci(matrix[:, i][np.isfinite(matrix[:, i])], level)
                if np.isfinite(matrix[:, i]).any()
                else (np.nan,) * 3
                for i in range(length)
            ]
        )
        x = np.arange(1, length + 1)
        ax.plot(x, bands[:, 0], label=f"{name} ({len(curves)} seeds)")
        ax.fill_between(x, bands[:, 1], bands[:, 2], alpha=0.25)
    ax.set_xscale("log")
    ax.set_xlabel("policies evaluated (log scale)")
    ax.set_ylabel("best accuracy loss so far (points)")
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
