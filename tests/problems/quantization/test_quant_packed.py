"""The compact form of a quantized model: the bytes the search counted are the bytes saved."""

from __future__ import annotations

import textwrap

import pytest
import torch
from torch import nn

from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.problems.quantization import PackedModel, Quantizer, evaluate_accuracy, load_packed
from gpautotune.problems.quantization import weight_bytes as layer_bytes
from gpautotune.quantization import search_policy

CPU = torch.device("cpu")


def test_the_searched_policy_packs_to_the_promised_size(model, loaders, tmp_path, capsys) -> None:
    result = search_policy(
        model,
        loaders[1],
        size_limit=0.12,
        budget=6,
        strategy="sobol",
        seed=3,
        device="cpu",
        progress=True,
    )
    assert "6/6" in capsys.readouterr().err  # the progress bar
    packed = result.pack(model)
    assert packed.policy == result.policy and packed.weight_bytes == result.size_bytes
    path = packed.save(tmp_path / "m.gpq")
    restored = load_packed(path).unpack(model)
    applied = result.apply(model)
    for (name, a), (_, b) in zip(
        applied.state_dict().items(), restored.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert evaluate_accuracy(restored, loaders[1], CPU).top1 == result.accuracy


@pytest.mark.parametrize(("method", "bits"), [("uniform", 4), ("uniform", 1), ("kmeans", 3)])
def test_the_file_is_the_packed_size_not_the_float_size(tmp_path, method, bits) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 128))
    policy = {"0": bits, "2": bits}
    quantized, weights = Quantizer(method=method).quantize(model, policy)
    packed = PackedModel.of(quantized, weights)
    expected = sum(
        layer_bytes(w.numel(), w.shape[0], bits, method) for w in (model[0].weight, model[2].weight)
    )
    assert packed.weight_bytes == expected
    file = packed.save(tmp_path / "m.gpq").stat().st_size
    floats = tmp_path / "f.pt"
    torch.save(quantized.state_dict(), floats)
    payload = packed.weight_bytes + packed.other_bytes
    assert payload <= file <= payload + 8192  # the archive's header and index only
    assert file < floats.stat().st_size * (bits + 1) / 32
    restored = load_packed(tmp_path / "m.gpq").unpack(model)
    x = torch.randn(4, 256)
    assert torch.equal(restored(x), quantized(x))


def test_a_packed_file_refuses_another_model_and_other_files(tmp_path) -> None:
    model = nn.Sequential(nn.Linear(8, 4))
    quantized, weights = Quantizer().quantize(model, {"0": 2})
    PackedModel.of(quantized, weights).save(tmp_path / "m.gpq")
    with pytest.raises(ConfigError, match="do not fit"):
        load_packed(tmp_path / "m.gpq").unpack(nn.Sequential(nn.Linear(8, 5)))
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(ConfigError, match="not a packed model"):
        load_packed(tmp_path / "other.pt")
    with pytest.raises(DataNotFoundError):
        load_packed(tmp_path / "none.gpq")


def test_the_module_docstring_example_runs(model, loaders, tmp_path, monkeypatch) -> None:
    """The example shown by docs/api/quantization.md, as written (a small budget)."""
    import gpautotune.quantization as gq

    lines = gq.__doc__.split("Example::\n")[1].splitlines()
    end = next(i for i, line in enumerate(lines) if line and not line.startswith(" "))
    search = gq.search_policy
    small = {"budget": 4, "n_init": 2, "size_limit": 0.3, "seed": 0, "device": "cpu"}
    monkeypatch.setattr(gq, "search_policy", lambda *a, **kw: search(*a, **{**kw, **small}))
    monkeypatch.chdir(tmp_path)
    scope = {"model": model, "val_loader": loaders[1]}
    exec(textwrap.dedent("\n".join(lines[:end])), scope)
    assert scope["packed"].weight_bytes == scope["result"].size_bytes
    x = torch.randn(4, 1, 8)
    assert torch.equal(scope["same"](x), scope["small"](x))
