"""Comparison figures (matplotlib, no display needed), drawn for a paper:

* :func:`histograms` — the final values (slowdowns) of each strategy's repetitions, one
  panel per strategy on a shared axis (seed 003 figure 11.7), integer counts, the mean
  with its 95% interval and the median in a legend;
* :func:`best_so_far` — the mean best-so-far against the budget with 95% bands, a line
  style and colour per strategy, the optimum and the random-search expectation as
  reference lines, the value axis cut where the first budgets would squash the rest;
* :func:`score_curves` — the score of Willemsen et al. against the budget.

Each function returns a :class:`matplotlib.figure.Figure` (made without pyplot, so
nothing global changes); :func:`save` writes it as a PNG.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from itertools import cycle
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter

from gpautotune.analysis._stats import describe

__all__ = ["histograms", "best_so_far", "score_curves", "save", "styles", "STYLE"]

Styles = Mapping[str, Mapping[str, str]]

#: Font sizes and colours shared by the figures.
STYLE = {"title": 10, "label": 9, "tick": 8, "legend": 8}
_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
_LINES = ["-", "--", "-.", ":"]
#: The lowest score shown (curves far below random search leave the axis).
SCORE_FLOOR = -2.0
#: Ticks of a log axis of excesses over the optimum (1, 2, 5 per decade).
_EXCESS_TICKS = [m * 10.0**e for e in range(-6, 7) for m in (1, 2, 5)]


def save(fig: Figure, path: str | Path, *, dpi: int = 100) -> Path:
    """Write ``fig`` as a small PNG: ``dpi`` dots per inch (100: sharp enough for a page),
    cropped to its content, its colours reduced to a 256-colour palette (Pillow, which
    matplotlib uses): about a third of a full-colour PNG's size, the same figure to the
    eye (plots have few colours besides their anti-aliasing)."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    buffer.seek(0)
    with Image.open(buffer) as image:
        image.convert("RGB").quantize(256).save(path, optimize=True)
    return path


def styles(labels: Sequence[str]) -> dict[str, dict[str, str]]:
    """A colour and a line style per label, in label order (colour-blind safe colours;
    neighbours differ in both). Give every figure of a report the same mapping."""
    pairs = cycle(zip(_COLOURS, cycle(_LINES)))  # neighbours differ in colour and style
    return {label: dict(zip(("color", "ls"), next(pairs), strict=True)) for label in labels}


def _axes_style(ax: object) -> None:
    ax.tick_params(labelsize=STYLE["tick"])  # type: ignore[attr-defined]
    ax.grid(alpha=0.25, lw=0.6)  # type: ignore[attr-defined]
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)  # type: ignore[attr-defined]


def _range(pooled: np.ndarray) -> tuple[float, float]:
    """The shown range: the data's, without far outliers (beyond 3x the 99.5% quantile's
    distance from the minimum; seed 003's GS)."""
    lo, q, top = float(pooled.min()), float(np.quantile(pooled, 0.995)), float(pooled.max())
    hi = top if top - lo <= 3 * (q - lo) else q
    return lo, hi if hi > lo else lo + max(abs(lo) * 0.01, 1e-12)


def histograms(
    samples: Mapping[str, np.ndarray], *, title: str, xlabel: str, floor: float | None = None
) -> Figure:
    """One histogram per strategy (shared bins and x-axis, integer counts): the mean (red
    dashed) with its 95% bootstrap interval (grey band), the median (green dotted).

    Args:
        samples: final values (slowdowns) per strategy label, in display order.
        title: figure title.
        xlabel: what the values are.
        floor: the smallest possible value (1 for slowdowns), drawn as a thin line.
    """
    labels = [k for k, v in samples.items() if len(v)]
    fig = Figure(figsize=(6.4, 0.9 + 1.05 * max(len(labels), 1)), layout="constrained")
    if not labels:
        return fig
    lo, hi = _range(np.concatenate([samples[k] for k in labels]))
    bins = np.linspace(lo, hi, 31)
    axes = fig.subplots(len(labels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, label in zip(axes, labels, strict=True):
        x = samples[label]
        s = describe(x)
        outside = int(np.sum(x > hi))
        ax.hist(np.clip(x, lo, hi), bins=bins, color="#8DA0CB", edgecolor="white", lw=0.4)
        if math.isfinite(s.ci_low):
            ax.axvspan(s.ci_low, s.ci_high, color="0.55", alpha=0.35, lw=0, label="95% CI of mean")
        ax.axvline(s.mean, color="#D62728", ls="--", lw=1.2, label="mean")
        ax.axvline(s.median, color="#2CA02C", ls=":", lw=1.6, label="median")
        if floor is not None:
            ax.axvline(floor, color="k", lw=0.6)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=3))
        extra = f", {outside} beyond the axis" if outside else ""
        ax.text(
            0.99,
            0.9,
            f"{label}  (n = {s.n}{extra})\nmean {s.mean:.4g} [{s.ci_low:.4g}, {s.ci_high:.4g}]"
            f"\nmedian {s.median:.4g}, max {s.max:.4g}",
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=STYLE["legend"],
        )
        ax.set_ylabel("runs", fontsize=STYLE["label"])
        _axes_style(ax)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="outside lower center",
        ncol=3,
        frameon=False,
        fontsize=STYLE["legend"],
    )
    axes[-1].set_xlabel(xlabel, fontsize=STYLE["label"])
    fig.suptitle(title, fontsize=STYLE["title"])
    return fig


def _log_limits(arrays: Sequence[np.ndarray]) -> tuple[float, float]:
    """y-limits of a log axis of excesses: around the smallest and largest positive
    values of ``arrays``."""
    positive = [v[v > 0] for v in arrays if np.isfinite(v).any()]
    values = np.concatenate(positive) if positive else np.array([1.0])
    values = values[np.isfinite(values)]
    return float(values.min()) / 1.5, float(values.max()) * 1.3


def best_so_far(
    bands: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    title: str,
    ylabel: str,
    runs: Mapping[str, int] | None = None,
    random_expectation: np.ndarray | None = None,
    random_label: str = "random search, expectation",
    floor: float | None = None,
    checkpoints: Sequence[int] = (),
    style: Styles | None = None,
) -> Figure:
    """Mean best-so-far against the budget, with the 95% band of the mean.

    With a ``floor`` (the optimum: 1 for slowdowns), the value axis is logarithmic in the
    excess over it (``value - floor``, the relative regret for slowdowns) and labelled
    in values: every budget shows, the approach to the optimum is resolved, and a
    strategy whose every run has reached the optimum leaves the plot (marked in the
    legend). Without one, the axis is linear.

    Args:
        bands: per label, ``(mean, low, high)`` at budgets 1..B (see
            :func:`~gpautotune.analysis.mean_band`), in display order.
        title: figure title.
        ylabel: what the values are.
        runs: repetitions per label (shown in the legend).
        random_expectation: random search's expected best per budget (a thin black
            dashed line drawn over the curves, so that a strategy under it shows).
        random_label: its legend entry.
        floor: the best possible value.
        checkpoints: budgets the tables give, marked on the x-axis.
        style: colour and line style per label (default: :func:`styles` of the labels).
    """
    fig = Figure(figsize=(6.4, 3.9))
    ax = fig.subplots()
    style = style or styles(list(bands))
    shift = 0.0 if floor is None else floor
    shifted = {
        k: tuple(np.asarray(v, dtype=float) - shift for v in band) for k, band in bands.items()
    }
    horizon = max(len(mean) for mean, _, _ in bands.values())
    for label, (mean, low, high) in shifted.items():
        b = np.arange(1, len(mean) + 1)
        shown = f"{label} (n = {runs[label]})" if runs and label in runs else label
        at_optimum = np.flatnonzero(np.isfinite(mean) & (mean <= 0))
        if floor is not None and len(at_optimum):
            shown += f", all at the optimum from {int(at_optimum[0]) + 1}"
        ax.fill_between(b, low, high, color=style[label]["color"], alpha=0.15, lw=0)
        ax.plot(b, mean, lw=1.6, label=shown, **style[label])
    if random_expectation is not None:
        b = np.arange(1, len(random_expectation) + 1)
        ax.plot(
            b, random_expectation - shift, color="k", ls=(0, (4, 3)), lw=0.9, label=random_label
        )
    if floor is not None:
        ax.set_yscale("log", nonpositive="mask")
        extra = [] if random_expectation is None else [random_expectation - shift]
        low, high = _log_limits([v for band in shifted.values() for v in band] + extra)
        ax.set_ylim(low, high)
        ticks = [t for t in _EXCESS_TICKS if low <= t <= high]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y + shift:.4g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(1, horizon)
    if checkpoints:
        ax.set_xticks(sorted({1, *checkpoints}))
    ax.set_xlabel("budget (evaluations)", fontsize=STYLE["label"])
    scale = f"\nlog scale of the excess over {floor:g}" if floor is not None else ""
    ax.set_ylabel(ylabel + scale, fontsize=STYLE["label"])
    ax.set_title(title, fontsize=STYLE["title"])
    _axes_style(ax)
    ax.legend(fontsize=STYLE["legend"], frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    return fig


def score_curves(
    scores: Mapping[str, np.ndarray],
    *,
    title: str,
    checkpoints: Sequence[int] = (),
    note: str | None = None,
    style: Styles | None = None,
) -> Figure:
    """The score of Willemsen et al. against the budget per strategy (0: random search,
    1: the optimum); each legend entry gives the score at the last budget (the tables'
    value at that checkpoint).

    Args:
        scores: per label, the score at budgets 1..B.
        title: figure title.
        checkpoints: budgets the tables give, marked on the x-axis.
        note: a line under the plot (where the random baseline comes from, who is left out).
        style: colour and line style per label (default: :func:`styles` of the labels).
    """
    fig = Figure(figsize=(6.4, 3.7))
    ax = fig.subplots()
    style = style or styles(list(scores))
    for label, s in scores.items():
        b = np.arange(1, len(s) + 1)
        last = s[np.isfinite(s)][-1] if np.isfinite(s).any() else math.nan
        at = int(b[np.isfinite(s)][-1]) if np.isfinite(s).any() else len(s)
        ax.plot(b, s, lw=1.6, label=f"{label}: {last:.3f} at {at}", **style[label])
    lowest = min((np.nanmin(v) for v in scores.values() if np.isfinite(v).any()), default=0)
    if lowest < SCORE_FLOOR:  # far below random search: keep the range near [0, 1] legible
        ax.set_ylim(SCORE_FLOOR, 1.1)
        clipped = f"scores below {SCORE_FLOOR:g} are off the axis"
        note = f"{note} {clipped[0].upper()}{clipped[1:]}." if note else f"{clipped}."
    ax.axhline(0, color="k", lw=0.8, ls=(0, (4, 3)), label="random search (0)")
    ax.axhline(1, color="k", lw=0.7, label="optimum (1)")
    if checkpoints:
        ax.set_xticks(sorted({1, *checkpoints}))
    ax.set_xlim(1, max((len(s) for s in scores.values()), default=1))
    ax.set_xlabel("budget (evaluations)", fontsize=STYLE["label"])
    ax.set_ylabel("score", fontsize=STYLE["label"])
    ax.set_title(title, fontsize=STYLE["title"])
    _axes_style(ax)
    ax.legend(fontsize=STYLE["legend"], frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    if note:
        wrapped = textwrap.fill(note, 100)
        fig.text(0.01, -0.02, wrapped, fontsize=STYLE["legend"], ha="left", va="top")
    return fig
