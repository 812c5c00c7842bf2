"""Tiny models and data for the quantization tests (trained in well under a second)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    """Tiny models run fastest on one thread (and do not fight other jobs for the cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _data(n: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    teacher = torch.randn(8, 6, generator=torch.Generator().manual_seed(99))
    x = torch.randn(n, 1, 8, generator=g)
    return TensorDataset(x, (x[:, 0, :] @ teacher).argmax(dim=1))


@pytest.fixture(scope="session")
def loaders() -> tuple[DataLoader, DataLoader]:
    train = DataLoader(
        _data(256, 1), batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    return train, DataLoader(_data(200, 2), batch_size=64)


@pytest.fixture(scope="session")
def trained(loaders: tuple[DataLoader, DataLoader]) -> nn.Module:
    """Conv1d(1->8) -> Conv1d(8->8) -> Linear(64->6): three quantizable layers."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv1d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv1d(8, 8, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(64, 6),
    )
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(8):
        for x, y in loaders[0]:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


@pytest.fixture
def model(trained: nn.Module) -> nn.Module:
    """A fresh copy per test (tests must not see each other's changes)."""
    import copy

    return copy.deepcopy(trained)
