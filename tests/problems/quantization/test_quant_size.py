"""Exact size accounting and the vectorised size predicate."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization import (
    LayerInfo,
    PolicySpace,
    Quantizer,
    find_layers,
    pack_codes,
    parameter_names,
    resolve_size_limit,
    unpack_codes,
    weight_bytes,
)


def _hand_net() -> nn.Module:
    # conv: 4 x 3 x 3 x 3 = 108 weights, 4 channels; fc: 5 x 10 = 50 weights, 5 channels.
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(10, 5))


def test_size_is_exact_on_a_hand_computed_network() -> None:
    net = _hand_net()
    policy = {"0": 3, "2": 5}
    # uniform: ceil(108*3/8)=41 + 4*4 scales; ceil(50*5/8)=32 + 5*4 scales
    expected_uniform = 41 + 16 + 32 + 20
    # k-means: same codes + codebooks of min(2^b, n) float32 centroids: 8 and 32
    expected_kmeans = 41 + 4 * 8 + 32 + 4 * 32
    for method, expected in (("uniform", expected_uniform), ("kmeans", expected_kmeans)):
        space = PolicySpace.build(find_layers(net), size_limit=10_000, method=method)
        config = space.to_config(policy)
        assert space.bytes_of(config) == expected
        assert int(space.sizes(space.space.to_index([config]))[0]) == expected
        _, weights = Quantizer(method=method).quantize(net, policy)
        assert sum(w.nbytes for w in weights.values()) == expected
    assert PolicySpace.build(find_layers(net), size_limit=10_000).float32_bytes == 4 * 158


def test_size_predicate_agrees_with_the_measured_quantized_model(model: nn.Module) -> None:
    for method in ("uniform", "kmeans"):
        space = PolicySpace.build(find_layers(model), size_limit=0.15, method=method)
        raw = space.space.from_unit(np.random.default_rng(3).random((40, space.space.dims)))
        predicted = space.sizes(raw)
        valid = space.space.valid_mask(raw)
        assert valid.any() and not valid.all()
        for row, size, ok in zip(raw, predicted, valid, strict=True):
            policy = space.to_policy(space.space.to_configs(row)[0])
            _, weights = Quantizer(method=method).quantize(model, policy)
            measured = sum(w.nbytes for w in weights.values())
            assert measured == size
            assert ok == (measured <= space.size_limit)


def test_packing_round_trips_and_takes_ceil_n_b_over_8_bytes() -> None:
    rng = np.random.default_rng(0)
    for bits in (1, 2, 3, 5, 8):
        codes = torch.from_numpy(rng.integers(0, 2**bits, size=37))
        packed = pack_codes(codes, bits)
        assert len(packed) == -(-37 * bits // 8)
        assert torch.equal(unpack_codes(packed, bits, 37), codes)
    with pytest.raises(ValueError):
        pack_codes(torch.tensor([4]), 2)


def test_size_limit_as_fraction_or_bytes() -> None:
    assert resolve_size_limit(0.25, 1000) == 250
    assert resolve_size_limit(300, 1000) == 300
    for bad in (1.5, 0.0, -3, "big", True):
        with pytest.raises(ConfigError):
            resolve_size_limit(bad, 1000)
    with pytest.raises(ConfigError, match="below the smallest policy"):
        PolicySpace.build(find_layers(_hand_net()), size_limit=50)


def test_per_layer_bits_and_parameter_names() -> None:
    net = _hand_net()
    space = PolicySpace.build(find_layers(net), size_limit=10_000, bits={"0": (2, 4, 8)})
    assert space.names == ("layer_0", "layer_2")
    assert space.space["layer_0"].levels == (2, 4, 8)
    assert space.space["layer_2"].levels == tuple(range(1, 9))
    assert parameter_names(["a.b", "a_b", "1x"]) == ("a_b", "a_b_2", "layer_1x")
    with pytest.raises(ConfigError):
        PolicySpace.build(find_layers(net), size_limit=10_000, bits={"nope": (2,)})


def test_vectorised_predicate_on_a_54_layer_network_matches_a_row_by_row_sum() -> None:
    rng = np.random.default_rng(0)
    layers = [
        LayerInfo(f"l{i}", "Conv2d", (int(c), int(c), 3, 3))
        for i, c in enumerate(rng.choice([64, 256, 512], 54))
    ]
    space = PolicySpace.build(layers, size_limit=0.1)
    raw = space.space.from_unit(rng.random((2_000, 54)))
    sizes = space.sizes(raw)
    bits = raw + 1  # level index 0..7 is 1..8 bits
    by_hand = [
        sum(
            weight_bytes(ly.n_weights, ly.out_channels, int(b))
            for ly, b in zip(layers, row, strict=True)
        )
        for row in bits[:50]
    ]
    assert sizes[:50].tolist() == by_hand
    assert np.array_equal(space.space.valid_mask(raw), sizes <= space.size_limit)
    sample = space.space.sample(64, method="sobol", seed=0)
    assert len(sample) == 64 and all(space.bytes_of(c) <= space.size_limit for c in sample)
