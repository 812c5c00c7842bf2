"""Our strategy against the best peer of each problem, paired over the shared seeds.

On each problem and checkpoint ``b``, the best peer is the peer strategy (Optuna, Kernel
Tuner, SMAC3 adapters; :func:`gpautotune.strategies.peers.is_peer`) with the lowest mean
best value at ``b``. Repetition ``r`` of every strategy of a comparison uses the seed
``seed + r``, so our runs and the peer's pair up by seed; the comparison is the report's
paired one (:meth:`Group.against`): the mean per-seed difference ``ours - peer``
(slowdowns when the optimum is known) with its bootstrap 95% interval and the two-sided
Wilcoxon signed-rank test (Mann-Whitney when fewer than two seeds are shared). Each
problem and checkpoint is one test (no adjustment across problems); the verdict names
the better one when the test rejects at 5% and the interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpautotune.analysis._runs import Group
from gpautotune.analysis._stats import verdict
from gpautotune.strategies.peers import is_peer

__all__ = ["peer_comparison"]


def _best_peer(peers: Sequence[Group], b: int) -> Group | None:
    scored = [(float(np.mean(g.at(b))), g.label, g) for g in peers if len(g.at(b))]
    return min(scored, key=lambda t: (t[0], t[1]))[2] if scored else None


def _row(ours: Group, peer: Group, b: int, scale: float) -> dict[str, Any]:
    d = ours.against(peer, b, scale)
    said = verdict(d)
    if said.startswith("better"):
        said = f"{ours.label} {said}"
    elif said.startswith("worse"):
        said = f"{peer.label} {said.replace('worse', 'better', 1)}"
    return {
        "strategy": ours.label,
        "peer": peer.label,
        "budget": b,
        "mean": d.mean,
        "peer_mean": d.mean_ref,
        "pairs": len(set(ours.by_seed(b)) & set(peer.by_seed(b))),
        "diff": d.diff,
        "diff_ci_low": d.ci_low,
        "diff_ci_high": d.ci_high,
        "test": d.test,
        "p_value": d.p_value,
        "verdict": said,
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
        diff_ci_high, test, p_value, verdict)`` (means over the compared runs: the
        shared seeds when paired); empty without peers or without ours.
    """
    peers = [g for g in groups if is_peer(g.strategy)]
    mine = [g for g in groups if g.strategy == ours]
    rows = []
    for b in checkpoints:
        best = _best_peer(peers, b)
        if best is None:
            continue
        rows += [_row(g, best, b, scale or 1.0) for g in mine if len(g.at(b))]
    return pd.DataFrame(rows) if rows else pd.DataFrame()
