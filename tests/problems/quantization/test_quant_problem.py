"""The quantization problem: objective, invalid policies, fine-tune, identity."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status
from gpautotune.problems.quantization import QuantizationProblem, Quantizer, evaluate_accuracy
from gpautotune.problems.quantization import _problem as problem_module

CPU = torch.device("cpu")


@pytest.fixture
def problem(model: nn.Module, loaders) -> QuantizationProblem:
    return QuantizationProblem(model, loaders[1], size_limit=0.12, device="cpu")


def test_the_model_is_worth_quantizing(trained: nn.Module, loaders) -> None:
    assert evaluate_accuracy(trained, loaders[1], CPU).top1 > 0.6


def test_objective_is_the_loss_against_the_uniform_8_bit_network(
    problem: QuantizationProblem, model: nn.Module, loaders
) -> None:
    config = problem.policies.space.sample(1, seed=0)[0]
    m = problem.evaluate(config)
    assert m.ok and problem.evaluations == 1
    assert m.value == pytest.approx(problem.reference.top1 - m.metrics["top1"])
    assert (
        m.metrics["size_bytes"] == problem.policies.bytes_of(config) <= problem.policies.size_limit
    )
    assert m.metrics["top5"] is not None  # six classes
    roomy = QuantizationProblem(model, loaders[1], size_limit=0.9, device="cpu")
    assert roomy.evaluate(roomy.policies.to_config(roomy.policies.uniform(8))).value == 0.0


def test_a_policy_over_the_limit_is_never_evaluated(
    problem: QuantizationProblem, monkeypatch
) -> None:
    calls = []
    original = problem_module.evaluate_accuracy
    monkeypatch.setattr(
        problem_module, "evaluate_accuracy", lambda *a: calls.append(1) or original(*a)
    )
    too_big = problem.policies.to_config(problem.policies.uniform(8))
    m = problem.evaluate(too_big)
    assert m.status is Status.INVALID and "exceeds" in m.error
    assert m.metrics["size_bytes"] > problem.policies.size_limit
    assert calls == [] and problem.evaluations == 0
    assert problem.evaluate({"nope": 3}).status is Status.INVALID
    assert problem.evaluate({n: 9 for n in problem.policies.names}).status is Status.INVALID
    assert calls == []


def test_cached_quantization_matches_quantizing_the_original(model: nn.Module, loaders) -> None:
    problem = QuantizationProblem(model, loaders[1], size_limit=0.12, device="cpu")
    configs = problem.policies.space.sample(4, seed=2)
    first = [problem.evaluate(c).metrics["top1"] for c in configs]
    again = [problem.evaluate(c).metrics["top1"] for c in reversed(configs)][::-1]
    assert first == again
    for config, top1 in zip(configs, first, strict=True):
        quantized, _ = Quantizer().quantize(model, problem.policies.to_policy(config))
        assert evaluate_accuracy(quantized, loaders[1], CPU).top1 == top1
    other = copy.deepcopy(model)
    with torch.no_grad():
        other[0].weight[0, 0, 0] += 1.0
    changed = QuantizationProblem(other, loaders[1], size_limit=0.12, device="cpu")
    assert changed.describe() != problem.describe()  # another model is another run


def test_finetune_is_repeatable(model: nn.Module, loaders) -> None:
    q = Quantizer(finetune_steps=4, finetune_lr=0.05, seed=3)
    p = QuantizationProblem(
        model, loaders[1], size_limit=0.12, quantizer=q, train_loader=loaders[0], device="cpu"
    )
    config = p.policies.space.sample(1, seed=5)[0]
    a, b = p.evaluate(config), p.evaluate(config)
    assert a.metrics["top1"] == b.metrics["top1"]
    plain = QuantizationProblem(copy.deepcopy(model), loaders[1], size_limit=0.12, device="cpu")
    assert plain.describe() != p.describe()
    with pytest.raises(ConfigError, match="train_loader"):
        QuantizationProblem(model, loaders[1], size_limit=0.12, quantizer=q, device="cpu")


def test_ste_finetune_recovers_accuracy_lost_to_binarisation(model: nn.Module, loaders) -> None:
    policy = {"0": 1, "2": 1, "5": 1}
    plain, _ = Quantizer().quantize(model, policy)
    tuned, weights = Quantizer(finetune_steps=40, finetune_lr=0.01, seed=0).quantize(
        model, policy, train_loader=loaders[0]
    )
    before = evaluate_accuracy(plain, loaders[1], CPU).top1
    after = evaluate_accuracy(tuned, loaders[1], CPU).top1
    assert after > before + 0.1
    assert all(
        len(torch.unique(tuned.get_submodule(n).weight[0])) <= 2 for n in policy
    )  # still 1 bit
    assert all(w.bits == 1 for w in weights.values())


def test_bad_options_raise(model: nn.Module, loaders) -> None:
    with pytest.raises(ConfigError):
        QuantizationProblem(model, loaders[1], size_limit=0.12, metric="top3", device="cpu")
    with pytest.raises(ConfigError):
        QuantizationProblem(model, loaders[1], size_limit=0.12, layers=["missing"], device="cpu")
    with pytest.raises(ConfigError):
        Quantizer(method="nope")


def test_size_in_the_objective_without_a_limit(model: nn.Module, loaders) -> None:
    """Seed 003 §13.6.3: accuracy loss + w * size / 8-bit size, every policy valid."""
    w = 0.2
    problem = QuantizationProblem(model, loaders[1], size_limit=None, size_weight=w, device="cpu")
    policies = problem.policies
    assert policies.size_limit is None and problem.space.constraints == ()
    eight = problem.evaluate(policies.to_config(policies.uniform(8)))
    assert eight.ok and eight.value == pytest.approx(w)  # no loss, the whole 8-bit size
    assert eight.metrics["size_fraction"] == 1.0 and eight.metrics["accuracy_loss"] == 0.0
    one = problem.evaluate(policies.to_config(policies.uniform(1)))
    assert one.ok and one.metrics["size_bytes"] < eight.metrics["size_bytes"]
    assert one.value == pytest.approx(
        problem.reference.top1 - one.metrics["top1"] + w * one.metrics["size_fraction"]
    )
    config = problem.space.sample(1, seed=3)[0]
    m = problem.evaluate(config)
    assert m.metrics["size_fraction"] == pytest.approx(
        policies.bytes_of(config) / policies.bytes_of(policies.to_config(policies.uniform(8)))
    )
    assert problem.describe()["size_weight"] == w
    plain = QuantizationProblem(model, loaders[1], size_limit=0.12, device="cpu")
    assert "size_weight" not in plain.describe()


def test_size_weight_with_a_limit_and_bad_settings(model: nn.Module, loaders) -> None:
    both = QuantizationProblem(model, loaders[1], size_limit=0.12, size_weight=0.5, device="cpu")
    config = both.space.sample(1, seed=0)[0]
    m = both.evaluate(config)
    assert m.value == pytest.approx(m.metrics["accuracy_loss"] + 0.5 * m.metrics["size_fraction"])
    assert both.evaluate(both.policies.to_config(both.policies.uniform(8))).status is Status.INVALID
    with pytest.raises(ConfigError, match="size_weight"):
        QuantizationProblem(model, loaders[1], size_limit=None, device="cpu")
    with pytest.raises(ConfigError, match="size_weight"):
        QuantizationProblem(model, loaders[1], size_limit=0.12, size_weight=-1.0, device="cpu")


def test_layers_sharing_one_weight_are_refused(loaders) -> None:
    """Tied layers would be charged one size each yet quantized to the last one's bits."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Flatten(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.Linear(8, 6)
    )
    model[3].weight = model[1].weight
    with pytest.raises(ConfigError, match=r"'1' and '3' share one weight tensor.*list only one"):
        QuantizationProblem(model, loaders[1], size_limit=0.5, device="cpu")
    with pytest.raises(ConfigError, match="'3' and '1'"):
        QuantizationProblem(model, loaders[1], size_limit=0.5, layers=["3", "1"], device="cpu")
    one = QuantizationProblem(model, loaders[1], size_limit=0.5, layers=["1", "4"], device="cpu")
    assert one.layers == ["1", "4"]
    untied = copy.deepcopy(model)
    untied[3].weight = nn.Parameter(model[1].weight.detach().clone())  # equal, not shared
    separate = QuantizationProblem(untied, loaders[1], size_limit=0.5, device="cpu")
    assert separate.layers == ["1", "3", "4"]


def test_a_one_pass_loader_is_refused(model: nn.Module, loaders) -> None:
    """Every policy reads the loaders again; an iterator would be empty after the first."""
    batches = list(loaders[1])
    for once in (iter(batches), (b for b in batches)):
        with pytest.raises(ConfigError, match="val_loader .*re-iterable"):
            QuantizationProblem(model, once, size_limit=0.12, device="cpu")
    q = Quantizer(finetune_steps=2)
    with pytest.raises(ConfigError, match="train_loader .*re-iterable"):
        QuantizationProblem(
            model, batches, size_limit=0.12, quantizer=q, train_loader=iter(batches), device="cpu"
        )
