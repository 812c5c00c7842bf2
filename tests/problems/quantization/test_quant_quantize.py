"""Weight quantizers: 1-bit binarisation, symmetric uniform, k-means sharing."""

from __future__ import annotations

import pytest
import torch

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization import quantize_weight


def test_one_bit_is_sign_times_channel_mean_abs() -> None:
    w = torch.randn(5, 3, 3, 3, generator=torch.Generator().manual_seed(0))
    w[2, 0, 0, 0] = 0.0
    q = quantize_weight(w, 1).dequantize()
    rows = w.reshape(5, -1)
    sign = torch.where(rows >= 0, 1.0, -1.0)
    expected = (sign * rows.abs().mean(dim=1, keepdim=True)).reshape(w.shape)
    assert torch.allclose(q, expected)
    assert q[2, 0, 0, 0] == rows[2].abs().mean()


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
def test_uniform_is_symmetric_per_channel_with_half_step_error(bits: int) -> None:
    w = (
        torch.randn(6, 40, generator=torch.Generator().manual_seed(bits))
        * torch.arange(1, 7)[:, None]
    )
    qw = quantize_weight(w, bits)
    q = qw.dequantize()
    qmax = 2 ** (bits - 1) - 1
    step = w.abs().amax(dim=1) / qmax
    assert torch.allclose(qw.scales, step)
    assert torch.all((q - w).abs() <= step[:, None] / 2 + 1e-6)
    assert torch.allclose(q.abs().amax(dim=1), w.abs().amax(dim=1))
    for c in range(6):
        levels = torch.round(q[c] / step[c])
        assert levels.abs().max() <= qmax and len(levels.unique()) <= 2**bits - 1
    assert int(qw.codes.min()) >= 0 and int(qw.codes.max()) < 2**bits


def test_all_zero_channel_stays_zero() -> None:
    w = torch.zeros(2, 4)
    w[1] = torch.tensor([1.0, -2.0, 0.5, 0.0])
    for bits in (1, 4):
        q = quantize_weight(w, bits).dequantize()
        assert torch.all(q[0] == 0) and torch.all(torch.isfinite(q))


def test_kmeans_shares_at_most_2_to_the_b_values_and_finds_clear_clusters() -> None:
    g = torch.Generator().manual_seed(1)
    centres = torch.tensor([-1.0, -0.2, 0.3, 1.5])
    w = centres[torch.randint(0, 4, (64, 8), generator=g)] + 0.01 * torch.randn(64, 8, generator=g)
    qw = quantize_weight(w, 2, method="kmeans")
    assert len(qw.dequantize().unique()) <= 4
    assert torch.allclose(torch.sort(qw.scales).values, centres, atol=0.01)
    assert (qw.dequantize() - w).abs().max() < 0.05
    wide = quantize_weight(torch.randn(3, 4, generator=g), 8, method="kmeans")
    assert wide.scales.numel() == 12  # the codebook is capped at the number of weights


def test_bad_method_or_bits_raise() -> None:
    with pytest.raises(ConfigError):
        quantize_weight(torch.ones(2, 2), 0)
    with pytest.raises(ConfigError):
        quantize_weight(torch.ones(2, 2), 4, method="lloyd")
