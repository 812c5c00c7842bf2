"""The built-in digits demo: cached training, registered problem, YAML config."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpautotune.exceptions import ConfigError
from gpautotune.problems import make_problem
from gpautotune.problems.quantization import (
    DigitsResNet,
    DigitsTraining,
    digits_data,
    digits_model,
    find_layers,
)

ROOT = Path(__file__).resolve().parents[3]


def test_digits_data_and_network_shape() -> None:
    train, val = digits_data()
    assert len(train) + len(val) == 1797 and len(val) == 360
    assert train[0][0].shape == (1, 8, 8) and 0.0 <= float(train[0][0].max()) <= 1.0
    layers = find_layers(DigitsResNet())
    assert 10 <= len(layers) <= 20
    assert layers[0].name == "stem.0" and layers[-1].name == "fc"


def test_registered_problem_rejects_unknown_options() -> None:
    with pytest.raises(ConfigError, match="size_limit"):
        make_problem("quantization-digits", limit=0.1)


def test_config_file_names_a_registered_problem_and_its_options() -> None:
    config = yaml.safe_load((ROOT / "configs" / "quantize-digits.yaml").read_text())
    assert config["problem"]["name"] == "quantization-digits"
    import inspect

    from gpautotune.problems._registry import problem_factory

    factory, _ = problem_factory("quantization-digits")
    options = {k for k in config["problem"] if k != "name"}
    assert options <= set(inspect.signature(factory).parameters)


@pytest.mark.slow
def test_demo_model_is_trained_once_then_loaded(tmp_path, monkeypatch) -> None:
    import torch

    monkeypatch.setenv("GPAUTOTUNE_CACHE", str(tmp_path))
    torch.set_num_threads(1)
    settings = DigitsTraining(epochs=2)
    first = digits_model(settings, device="cpu")
    files = list(tmp_path.glob("digits-resnet-*.pt"))
    assert len(files) == 1
    second = digits_model(settings, device="cpu")
    assert all(
        torch.equal(a, b)
        for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True)
    )
    problem = make_problem("quantization-digits", size_limit=0.07, device="cpu")
    assert problem.reference.top1 > 0.9 and len(problem.layers) == 16
    config = problem.space.sample(1, seed=0)[0]
    assert problem.evaluate(config).ok
