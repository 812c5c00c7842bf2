"""The report's accounting columns (failed, refused, duplicates, wall time) and the
comparison of ours against the best peer, paired by seed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gpautotune.analysis import analyse, load_runs
from gpautotune.analysis._peers import peer_comparison
from gpautotune.analysis._runs import Group
from gpautotune.problems import Measurement, Problem, Status
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal
from gpautotune.tuner import tune


def _hidden(cols: Any) -> np.ndarray:
    return np.asarray(cols["a"]) % 3 != 0


class Hidden(Problem):
    """A predicate no peer sees (so Optuna's proposals get refused) and failures."""

    name = "hidden"

    def __init__(self) -> None:
        self.space = Space([IntRange("a", 0, 59)], constraints=[_hidden], name="hidden")

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        if config["a"] % 4 == 1:
            return Measurement.failure(Status.RUN_ERROR, "crash")
        return Measurement.success(1.0 + abs(config["a"] - 31))


def test_journal_counters_reach_the_summary(tmp_path) -> None:
    pytest.importorskip("optuna")
    path = tmp_path / "runs.db"
    with Journal(path) as journal:
        results = [
            tune(Hidden(), "optuna-random", 12, seed=s, storage=journal, label="OR") for s in (1, 2)
        ]
        tune(Hidden(), "random", 12, seed=1, storage=journal, label="RS")
    group = next(g for g in load_runs(path).groups if g.label == "OR")
    for r, result in enumerate(results):
        failed = np.cumsum([not t.ok for t in result.trials])
        assert np.array_equal(group.failed[r], failed)
        assert group.refused[r, -1] == result.trials[-1].info["invalid_refused"] > 0
        assert group.refused[r, 5] == result.trials[5].info["invalid_refused"]
    assert (group.wall_s > 0).all()
    summary = analyse(path, checkpoints=[6, 12]).summary
    row = summary[(summary["strategy"] == "OR") & (summary["budget"] == 12)].iloc[0]
    assert row["failed_mean"] == pytest.approx(np.mean([g[-1] for g in group.failed]))
    assert row["refused_mean"] == pytest.approx(group.refused[:, -1].mean())
    rs = summary[(summary["strategy"] == "RS") & (summary["budget"] == 12)].iloc[0]
    assert np.isnan(rs["refused_mean"]) and rs["failed_mean"] >= 0


def _group(label: str, strategy: str, values: list[float], seeds: list[int]) -> Group:
    curves = np.array(values, dtype=float)[:, None].repeat(4, axis=1)
    n = len(values)
    return Group(
        "p", label, strategy, curves, np.full(n, 4), np.ones(n), np.array(seeds), np.full(n, 4)
    )


def test_best_peer_is_paired_with_ours_by_seed() -> None:
    rng = np.random.default_rng(0)
    peer_a = rng.uniform(1.2, 1.4, 12)
    groups = [
        _group("GPR", "gpr", list(peer_a - 0.1), list(range(12))),
        _group("A", "kt-pso", list(peer_a), list(range(12))),
        _group("B", "optuna-tpe", list(peer_a + 0.3), list(range(12))),
        _group("RS", "random", [1.0] * 12, list(range(12))),  # not a peer
    ]
    table = peer_comparison(groups, [2, 4], scale=1.0)
    assert list(table["peer"]) == ["A", "A"] and list(table["budget"]) == [2, 4]
    row = table.iloc[0]
    assert row["pairs"] == 12 and row["diff"] == pytest.approx(-0.1)
    assert row["test"] == "wilcoxon" and row["p_value"] < 0.01 and row["verdict"] == "GPR better"
    assert row["diff_ci_low"] <= row["diff_ci_high"] < 0
    shuffled = [groups[0], _group("A", "kt-pso", list(peer_a[::-1]), list(range(11, -1, -1)))]
    again = peer_comparison(shuffled, [4], scale=1.0).iloc[0]
    assert again["diff"] == pytest.approx(-0.1)  # paired by seed, not by position


def test_no_peer_no_rows() -> None:
    groups = [_group("GPR", "gpr", [1.0, 1.1], [0, 1]), _group("RS", "random", [1, 1], [0, 1])]
    assert peer_comparison(groups, [4], scale=None).empty
