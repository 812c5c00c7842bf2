"""Our strategy against the best peer of each problem, paired over the shared seeds.

On each problem and checkpoint ``b``, the best peer is the peer strategy (Optuna, Kernel
Tuner, SMAC3 adapters; :func:`gpautotune.strategies.peers.is_peer`) with the lowest mean
best value at ``b``. Repetition ``r`` of every strategy of a comparison uses the seed
``seed + r``, so our runs and the peer's pair up by seed; the test is on the per-seed
differences ``d_s = ours_s - peer_s`` (slowdowns when the optimum is known): their mean
with a Student-t 95% interval, and the two-sided Wilcoxon signed-rank test (zero
differences dropped). The verdict says who is better at the 5% level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from gpautotune.analysis._runs import Group
from gpautotune.analysis._stats import mean_ci
from gpautotune.strategies.peers import is_peer

__all__ = ["peer_comparison"]


def _by_seed(g: Group, b: int) -> dict[int, float]:
    if b > g.horizon:
        return {}
    column = g.curves[:, b - 1]
    return {int(s): float(v) for s, v in zip(g.seeds, column, strict=True) if np.isfinite(v)}


def _best_peer(peers: Sequence[Group], b: int) -> Group | None:
    scored = [(float(np.mean(g.at(b))), g.label, g) for g in peers if len(g.at(b))]
    return min(scored, key=lambda t: (t[0], t[1]))[2] if scored else None


def _paired(ours: Group, peer: Group, b: int, scale: float) -> dict[str, float | int | str]:
    x, y = _by_seed(ours, b), _by_seed(peer, b)
    seeds = sorted(set(x) & set(y))
    d = np.array([x[s] - y[s] for s in seeds]) * scale
    low, high = mean_ci(d) if len(d) else (math.nan, math.nan)
    p = 1.0
    if np.count_nonzero(d) >= 1:
        p = float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
    mean = float(d.mean()) if len(d) else math.nan
    verdict = "no significant difference"
    if p < 0.05 and mean < 0:
        verdict = f"{ours.label} better"
    elif p < 0.05 and mean > 0:
        verdict = f"{peer.label} better"
    return {
        "pairs": len(d),
        "diff": mean,
        "diff_ci_low": low,
        "diff_ci_high": high,
        "wilcoxon_p": p,
        "verdict": verdict,
    }


def peer_comparison(
    groups: Sequence[Group], checkpoints: Sequence[int], scale: float | None, ours: str = "gpr"
) -> pd.DataFrame:
    """One problem's best peer against each of our ``ours`` groups, per checkpoint.

    Args:
        groups: the problem's groups (every strategy label).
        checkpoints: the budgets to compare at.
        scale: 1 / optimum when slowdowns are defined, else None (raw values).
        ours: the strategy name of ours (groups of that registered strategy).

    Returns:
        Rows ``(strategy, peer, budget, mean, peer_mean, pairs, diff, diff_ci_low,
        diff_ci_high, wilcoxon_p, verdict)``; empty without peers or without ours.
    """
    peers = [g for g in groups if is_peer(g.strategy)]
    mine = [g for g in groups if g.strategy == ours]
    rows = []
    for b in checkpoints:
        best = _best_peer(peers, b)
        if best is None:
            continue
        for g in mine:
            rows.append(
                {
                    "strategy": g.label,
                    "peer": best.label,
                    "budget": b,
                    "mean": float(np.mean(g.at(b)) * (scale or 1.0)) if len(g.at(b)) else math.nan,
                    "peer_mean": float(np.mean(best.at(b)) * (scale or 1.0)),
                    **_paired(g, best, b, scale or 1.0),
                }
            )
    return pd.DataFrame(rows)
