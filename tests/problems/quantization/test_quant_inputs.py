"""What a search is given: its data's identity, the history's columns, refused inputs."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from gpautotune.exceptions import ConfigError, StorageError
from gpautotune.problems.quantization import (
    DigitsResNet,
    DigitsTraining,
    PolicySpace,
    QuantizationProblem,
    Quantizer,
    bits_column,
    digits_problem,
    evaluate_accuracy,
    find_layers,
    model_fingerprint,
)
from gpautotune.problems.quantization import _factory as factory_module
from gpautotune.problems.quantization import _problem as problem_module
from gpautotune.quantization import plot_policy_trace, search_policy

CPU = torch.device("cpu")
SEARCH = {"size_limit": 0.12, "strategy": "random", "seed": 0, "device": "cpu"}


def _batches(loader: DataLoader, size: int = 64) -> list[tuple[torch.Tensor, torch.Tensor]]:
    x = torch.cat([b[0] for b in loader])
    y = torch.cat([b[1] for b in loader])
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(y), size)]


# ------------------------------------------------------------------ the data's identity
def test_a_run_resumed_on_other_validation_data_is_refused(model, loaders, tmp_path) -> None:
    db = tmp_path / "q.db"
    search_policy(model, loaders[1], budget=3, storage=db, **SEARCH)
    val = _batches(loaders[1])
    other = [(x, (y + 1) % 6) for x, y in val]  # the same inputs, other labels
    with pytest.raises(StorageError, match="other data"):
        search_policy(model, other, budget=5, storage=db, **SEARCH)
    # the same examples, batched and ordered otherwise: the same data, the run resumes
    again = search_policy(model, _batches(loaders[1], 50)[::-1], budget=5, storage=db, **SEARCH)
    assert len(again.history) == 5 and again.problem.evaluations == 2


def test_a_finetune_run_resumed_on_other_training_data_is_refused(model, loaders, tmp_path) -> None:
    db = tmp_path / "q.db"
    train = _batches(loaders[0], 32)
    tune = {"budget": 2, "storage": db, "finetune_steps": 2, **SEARCH}
    search_policy(model, loaders[1], train_loader=train, **tune)
    # batches the fine-tune does not read (past its 2 steps) are not the run's data
    assert search_policy(model, loaders[1], train_loader=train[:2], **tune).problem.evaluations == 0
    other = [(x, (y + 1) % 6) for x, y in train]
    with pytest.raises(StorageError, match="other data"):
        search_policy(model, loaders[1], train_loader=other, **tune)


def test_the_data_digest_reads_the_seeded_training_batches(model, loaders) -> None:
    train, val = loaders
    state = train.generator.get_state()

    def digest(seed: int) -> str:
        quantizer = Quantizer(finetune_steps=2, seed=seed)
        problem = QuantizationProblem(
            model, val, size_limit=0.12, quantizer=quantizer, train_loader=train, device="cpu"
        )
        return problem.data_digest()

    assert digest(0) == digest(0) != digest(1)  # a shuffling loader, seeded by the fine-tune
    assert torch.equal(train.generator.get_state(), state)  # and left as it was
    plain = QuantizationProblem(model, val, size_limit=0.12, device="cpu")
    assert plain.data_digest() != digest(0)  # no fine-tune: the validation data alone


# --------------------------------------------------------------------- model identity
def _fixed_net() -> nn.Module:
    net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) / (i + 2))
    return net


def test_fingerprints_of_float32_models_are_those_stored_runs_were_keyed_by() -> None:
    net = _fixed_net()
    assert model_fingerprint(net) == "043b41e0b05dbe5e"  # the value before bfloat16 support
    assert model_fingerprint(copy.deepcopy(net).double()) == "f8da27a530523382"
    half = model_fingerprint(copy.deepcopy(net).to(torch.bfloat16))
    assert half not in ("043b41e0b05dbe5e", model_fingerprint(copy.deepcopy(net).half()))


def test_a_bfloat16_model_is_searched(model, loaders) -> None:
    val = [(x.to(torch.bfloat16), y) for x, y in loaders[1]]
    result = search_policy(model.to(torch.bfloat16), val, budget=2, **SEARCH)
    assert len(result.history) == 2 and (result.history["status"] == "ok").all()


# --------------------------------------------------------------------------- history
class _Named(nn.Module):
    """Layers named like the history's fixed columns (an attention block's ``value``)."""

    def __init__(self) -> None:
        super().__init__()
        self.value = nn.Conv1d(1, 4, 3, padding=1)
        self.status = nn.Flatten()
        self.top1 = nn.Linear(32, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.top1(self.status(torch.relu(self.value(x))))


def test_layers_named_like_history_columns_keep_the_columns(loaders) -> None:
    torch.manual_seed(0)
    result = search_policy(_Named().eval(), loaders[1], budget=3, **SEARCH)
    history = result.history
    assert list(history.columns[-2:]) == ["bits.value", "bits.top1"]
    assert (history["status"] == "ok").all() and history["value"].dtype.kind == "f"
    assert history["top1"].between(0, 1).all()
    best = history.loc[history["value"].idxmin()]
    assert {k: int(best[bits_column(k)]) for k in result.policy} == result.policy
    fig = plot_policy_trace(history, list(result.policy))
    assert fig.axes[0].images[0].get_array().tolist()[0] == history["bits.value"].tolist()
    assert bits_column("conv1") == "conv1" and bits_column("bits.x") == "bits.bits.x"


# -------------------------------------------------------------- targets and logits
@pytest.mark.parametrize(
    ("outputs", "targets", "message"),
    [
        (torch.randn(8, 4), torch.eye(4)[torch.arange(8) % 4], r"targets \(8, 4\)"),  # one-hot
        (torch.randn(8, 4), (torch.arange(8) % 4).float(), "torch.float32"),
        (torch.randn(8), torch.arange(8) % 2, r"logits \(8,\)"),  # a regression output
        (torch.randn(2, 5, 4), torch.zeros(2, 5, dtype=torch.long), r"logits \(2, 5, 4\)"),
        (torch.randn(8, 2), torch.arange(8) % 4, r"in 0\.\.1 .* labels 0\.\.3"),
        (torch.randn(8, 4), -torch.ones(8, dtype=torch.long), "labels -1"),
        (torch.randn(8, 4), torch.zeros(6, dtype=torch.long), "one target per row"),
    ],
)
def test_accuracy_refuses_what_is_not_logits_and_class_indices(
    outputs: torch.Tensor, targets: torch.Tensor, message: str
) -> None:
    class Fixed(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return outputs

    with pytest.raises(ConfigError, match=message):
        evaluate_accuracy(Fixed(), [(torch.zeros(8, 1), targets)], CPU)


def test_targets_are_checked_once_before_any_policy(model, loaders, monkeypatch) -> None:
    val = _batches(loaders[1])
    with pytest.raises(ConfigError, match="integer class indices"):
        QuantizationProblem(model, [(x, y.float()) for x, y in val], size_limit=0.12)
    calls = []
    original = problem_module.evaluate_accuracy
    monkeypatch.setattr(
        problem_module,
        "evaluate_accuracy",
        lambda *a, **k: calls.append(k.get("check", True)) or original(*a, **k),
    )
    problem = QuantizationProblem(model, val, size_limit=0.12, device="cpu")
    problem.evaluate(problem.space.sample(1, seed=0)[0])
    assert calls == [True, False, False]  # the float model checked; 8-bit and the policy not


# ----------------------------------------------------------------- refused arguments
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"model": lambda x: x}, "must be a torch.nn.Module, got function"),
        ({"model": "state_dict"}, "a state_dict"),
        ({"bits": 8}, "must be a list of bit widths"),
        ({"bits": "48"}, "must be a list of bit widths"),
        ({"bits": [2.7, 4]}, r"must be ints, got \[2.7\]"),
        ({"bits": [True, 4]}, "must be ints"),
        ({"bits": {"0": 4}}, r"bits\['0'\] must be a list"),
        ({"layers": "0"}, r"list of module names, got '0'; for one layer write \['0'\]"),
        ({"layers": [0, 2]}, r"strings .*got \[0, 2\]"),
        ({"layers": []}, "layers is empty: name at least one layer, or leave it out"),
        ({"size_limit": 1.0}, r"a fraction in \(0, 1\) .* got 1.0; give bytes as an int"),
        ({"size_limit": 4096.0}, r"a fraction in \(0, 1\)"),
    ],
)
def test_arguments_are_refused_in_one_line(model, loaders, bad: dict, message: str) -> None:
    if bad.get("model") == "state_dict":
        bad = {"model": model.state_dict()}
    args = {"model": model, "size_limit": 0.12, **bad}
    with pytest.raises(ConfigError, match=message):
        QuantizationProblem(args.pop("model"), loaders[1], device="cpu", **args)


def test_bytes_and_fractions_are_told_apart_by_type() -> None:
    layers = find_layers(_fixed_net())
    assert PolicySpace.build(layers, size_limit=20).size_limit == 20
    assert PolicySpace.build(layers, size_limit=0.9).size_limit == int(0.9 * 4 * 6)


def test_the_digits_problem_checks_its_options_before_training(monkeypatch) -> None:
    def never(*args, **kwargs):
        raise AssertionError("the model was trained or loaded before the options were checked")

    monkeypatch.setattr(factory_module, "digits_model", never)
    for bad, message in [
        ({"width": 0}, "width must be an int >= 1, got 0"),
        ({"width": -3}, "width must be"),
        ({"bits_low": 4, "bits_high": 2}, "bits 4..2"),
        ({"bits_high": 17}, "within 1..16"),
        ({"size_limit": 1.0}, "fraction in"),
        ({"finetune_steps": -1}, "finetune_steps"),
        ({"method": "nope"}, "method"),
        ({"size_weight": -1.0}, "size_weight"),
        ({"size_limit": 0.001}, r"size limit 695 bytes is below the smallest policy"),
        ({"size_limit": 100}, r"size limit 100 bytes is below the smallest policy"),
    ]:
        with pytest.raises(ConfigError, match=message):
            digits_problem(device="cpu", **bad)
    with pytest.raises(ConfigError, match="blocks must be"):
        DigitsTraining(blocks=0)
    with pytest.raises(ConfigError, match="width must be"):
        DigitsResNet(width=0)


def test_the_digits_problem_takes_bytes_from_a_config_file_as_an_int() -> None:
    from gpautotune.config import Section, check_problem

    section = Section(name="quantization-digits", size_limit=20000)
    assert check_problem(section)["size_limit"] == 20000
    assert isinstance(check_problem(section)["size_limit"], int)
    with pytest.raises(ConfigError):
        check_problem(Section(name="quantization-digits", width="wide"))


def test_the_command_line_refuses_a_zero_width_in_one_line(tmp_path) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from gpautotune.cli import app

    config = Path(__file__).resolve().parents[3] / "configs" / "quantize-digits.yaml"
    args = ["tune", str(config), "--db", str(tmp_path / "q.db"), "--budget", "2"]
    out = CliRunner().invoke(app, [*args, "--set", "problem.width=0"])
    assert out.exit_code == 2 and "width must be an int >= 1, got 0" in out.output
    assert "Traceback" not in out.output
