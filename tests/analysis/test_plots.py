"""The report's figures: legends, integer counts, axes that show what matters."""

from __future__ import annotations

import numpy as np

from gpautotune.analysis import _plots, mean_band


def _legend(fig) -> list[str]:
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    return [t.get_text() for legend in legends for t in legend.get_texts()]


def test_histograms_have_a_legend_and_integer_counts():
    rng = np.random.default_rng(0)
    fig = _plots.histograms(
        {"A": 1 + rng.exponential(0.1, 7), "B": 1 + rng.exponential(0.2, 5)},
        title="t",
        xlabel="slowdown",
        floor=1.0,
    )
    assert _legend(fig) == ["95% CI of mean", "mean", "median"]
    for ax in fig.axes:
        ticks = ax.get_yticks()
        assert np.allclose(ticks, np.round(ticks))


def test_best_so_far_uses_a_log_axis_of_the_excess_labelled_in_values():
    budgets = 40
    runs = np.minimum.accumulate(1 + np.random.default_rng(1).exponential(0.5, (30, budgets)), 1)
    runs[:, 30:] = 1.0  # every run at the optimum from budget 31
    bands = {"A": mean_band(runs), "B": mean_band(runs + 0.05)}
    expectation = np.linspace(2.0, 1.1, budgets)
    fig = _plots.best_so_far(
        bands,
        title="t",
        ylabel="slowdown",
        runs={"A": 30, "B": 30},
        random_expectation=expectation,
        floor=1.0,
    )
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = _legend(fig)
    assert labels[0] == "A (n = 30), all at the optimum from 31"
    assert "random search, expectation" in labels and "B (n = 30)" in labels
    shown = [t.get_text() for t in ax.get_yticklabels()]
    assert "1.1" in shown and "2" in shown  # values, not excesses
    # the expectation is drawn after (over) the strategies' curves
    assert ax.get_lines()[-1].get_label() == "random search, expectation"
    low, _ = ax.get_ylim()
    assert low > 0  # the band's zeros (runs at the optimum) are masked, not drawn as blocks


def test_best_so_far_without_an_optimum_is_linear():
    runs = np.minimum.accumulate(np.random.default_rng(2).normal(5, 1, (5, 10)), 1)
    fig = _plots.best_so_far({"A": mean_band(runs)}, title="t", ylabel="value")
    assert fig.axes[0].get_yscale() == "linear"


def test_score_curves_label_the_last_score_and_clip_far_negatives():
    s = np.array([-8.0, -1.0, 0.2, 0.4])
    fig = _plots.score_curves({"A": s, "B": np.full(4, 0.1)}, title="t", note="Random: exact.")
    labels = _legend(fig)
    assert labels[:2] == ["A: 0.400 at 4", "B: 0.100 at 4"]
    assert fig.axes[0].get_ylim()[0] == _plots.SCORE_FLOOR
    assert "off the axis" in " ".join(t.get_text() for t in fig.texts)


def test_styles_differ_between_neighbours_and_are_stable():
    labels = ["RS", "Sobol", "GA", "GS", "GSR", "LHS", "GPR", "DLMT"]
    st = _plots.styles(labels)
    assert all(st[a] != st[b] for a, b in zip(labels, labels[1:], strict=False))
    assert _plots.styles(labels) == st


def test_figures_are_saved_as_palette_pngs_of_the_same_picture(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(1)
    fig = _plots.histograms({"A": 1 + rng.exponential(0.1, 30)}, title="t", xlabel="x")
    small = _plots.save(fig, tmp_path / "sub" / "small.png")
    full = tmp_path / "full.png"
    fig.savefig(full, dpi=100, bbox_inches="tight")
    with Image.open(small) as a, Image.open(full) as b:
        assert a.mode == "P" and a.size == b.size
        diff = np.abs(np.asarray(a.convert("RGB"), float) - np.asarray(b.convert("RGB"), float))
    assert diff.mean() < 2.0  # the same picture, to a palette's rounding
    assert small.stat().st_size < full.stat().st_size
