"""search_policy end to end: apply, history, resume, round-robin, plots."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization import PolicySpace, Quantizer, evaluate_accuracy, find_layers
from gpautotune.quantization import (
    mean_ci,
    plot_best_so_far,
    plot_policy_trace,
    round_robin_policy,
    search_policy,
)
from gpautotune.strategies.round_robin import round_robin_walk

CPU = torch.device("cpu")


def test_apply_gives_the_accuracy_the_search_recorded(model: nn.Module, loaders) -> None:
    result = search_policy(
        model, loaders[1], size_limit=0.12, budget=10, strategy="sobol", seed=1, device="cpu"
    )
    assert len(result.history) == 10 and (result.history["status"] == "ok").all()
    assert result.accuracy_loss == pytest.approx(result.history["value"].min())
    quantized = result.apply(model)
    assert evaluate_accuracy(quantized, loaders[1], CPU).top1 == result.accuracy
    _, weights = Quantizer().quantize(model, result.policy)
    assert (
        sum(w.nbytes for w in weights.values())
        == result.size_bytes
        <= result.problem.policies.size_limit
    )
    assert not torch.equal(quantized[0].weight, model[0].weight)  # a copy; the model is unchanged
    best_row = result.history.loc[result.history["value"].idxmin()]
    assert {k: int(best_row[k]) for k in result.policy} == result.policy


def test_apply_repeats_the_finetune(model: nn.Module, loaders) -> None:
    result = search_policy(
        model,
        loaders[1],
        size_limit=0.12,
        budget=3,
        strategy="random",
        seed=2,
        train_loader=loaders[0],
        finetune_steps=3,
        device="cpu",
    )
    assert evaluate_accuracy(result.apply(model), loaders[1], CPU).top1 == result.accuracy


def test_resume_from_storage_measures_nothing_again(model: nn.Module, loaders, tmp_path) -> None:
    db = tmp_path / "q.db"
    first = search_policy(
        model,
        loaders[1],
        size_limit=0.12,
        budget=6,
        strategy="sobol",
        seed=4,
        storage=db,
        device="cpu",
    )
    again = search_policy(
        model,
        loaders[1],
        size_limit=0.12,
        budget=6,
        strategy="sobol",
        seed=4,
        storage=db,
        device="cpu",
    )
    assert again.problem.evaluations == 0
    pd.testing.assert_frame_equal(
        first.history.drop(columns="duration_s"), again.history.drop(columns="duration_s")
    )
    with pytest.raises(ConfigError):
        search_policy(
            model, loaders[1], size_limit=0.12, budget=2, strategy="no-such", device="cpu"
        )


def test_round_robin_lowers_layers_in_turn_until_the_size_fits(model: nn.Module, loaders) -> None:
    policy = round_robin_policy(model, size_limit=0.12)
    space = PolicySpace.build(find_layers(model), size_limit=0.12)
    walk = round_robin_walk(space.space)
    assert (
        walk[0].tolist() == [7, 7, 7]
        and walk[1].tolist() == [6, 7, 7]
        and walk[3].tolist() == [6, 6, 6]
    )
    sizes = space.sizes(walk)
    first = int(np.argmax(sizes <= space.size_limit))
    assert space.bytes_of(space.to_config(policy)) <= space.size_limit < sizes[first - 1]
    assert space.to_config(policy) == space.space.to_configs(walk[first])[0]
    result = search_policy(
        model, loaders[1], size_limit=0.12, budget=20, strategy="round-robin", device="cpu"
    )
    assert len(result.history) == 1 and result.policy == policy


def test_plots(model: nn.Module, loaders) -> None:
    matplotlib.use("Agg")
    result = search_policy(
        model, loaders[1], size_limit=0.12, budget=5, strategy="random", seed=0, device="cpu"
    )
    fig = plot_policy_trace(
        result.history,
        list(result.policy),
        size_limit=result.problem.policies.size_limit,
        reference=result.reference_accuracy,
    )
    assert fig.axes[0].images[0].get_array().shape == (3, 5)
    long = pd.concat([result.history.assign(strategy="random", seed=s) for s in range(3)])
    assert len(plot_best_so_far(long).axes[0].lines) == 1


def test_mean_ci_is_the_student_t_interval() -> None:
    mean, low, high = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and high - mean == pytest.approx(
        3.182446305 * np.std([1, 2, 3, 4], ddof=1) / 2
    )
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0)


def test_size_in_the_objective_trades_accuracy_for_size(model: nn.Module, loaders) -> None:
    """The same ten Sobol policies (no limit): a heavier size weight picks one no larger."""
    runs = {
        w: search_policy(
            model,
            loaders[1],
            size_limit=None,
            size_weight=w,
            budget=10,
            strategy="sobol",
            seed=1,
            device="cpu",
        )
        for w in (1e-6, 1.0)
    }
    heavy = runs[1.0].history
    assert heavy["value"].to_numpy() == pytest.approx(
        (heavy["accuracy_loss"] + heavy["size_fraction"]).to_numpy()
    )
    best = heavy.loc[heavy["value"].idxmin()]
    assert runs[1.0].size_bytes == best["size_bytes"]
    assert runs[1.0].accuracy_loss == pytest.approx(best["accuracy_loss"])
    assert runs[1.0].size_bytes <= runs[1e-6].size_bytes
    assert (heavy["size_fraction"] > 0.3).any()  # policies over any tight limit were measured
