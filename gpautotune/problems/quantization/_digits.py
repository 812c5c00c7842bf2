"""The built-in demo: a small residual CNN on scikit-learn's handwritten digits.

scikit-learn ships the UCI digits (1,797 grey 8x8 images, 10 classes), so nothing is
downloaded. :class:`DigitsResNet` has a stem convolution, three stages of two residual
blocks (widths ``w, 2w, 4w``; 1x1 projection shortcuts where the shape changes) and a
linear classifier: 16 quantizable layers. It is trained at first use (seeded) and cached
under ``$GPAUTOTUNE_CACHE`` (default ``~/.cache/gpautotune``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization._accuracy import resolve_device

__all__ = [
    "DigitsResNet",
    "DigitsTraining",
    "digits_data",
    "digits_loaders",
    "digits_model",
    "cache_dir",
]

_log = logging.getLogger(__name__)
CACHE_ENV = "GPAUTOTUNE_CACHE"
SPLIT_SEED = 0
VAL_FRACTION = 0.2


def cache_dir() -> Path:
    """``$GPAUTOTUNE_CACHE`` or ``~/.cache/gpautotune``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "gpautotune")


def digits_data() -> tuple[TensorDataset, TensorDataset]:
    """Train and validation sets (80/20, stratified, fixed split); pixels scaled to [0, 1]."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:  # pragma: no cover - a broken environment
        raise ConfigError(
            "the digits demo needs scikit-learn, a dependency of gpautotune: "
            "pip install scikit-learn"
        ) from None
    data = load_digits()
    x = (data.images / 16.0).astype(np.float32)[:, None, :, :]
    y = data.target.astype(np.int64)
    xt, xv, yt, yv = train_test_split(
        x, y, test_size=VAL_FRACTION, random_state=SPLIT_SEED, stratify=y
    )
    return (
        TensorDataset(torch.from_numpy(xt), torch.from_numpy(yt)),
        TensorDataset(torch.from_numpy(xv), torch.from_numpy(yv)),
    )


def digits_loaders(batch_size: int = 128, seed: int = 0) -> tuple[DataLoader, DataLoader]:
    """``(train_loader, val_loader)``: the training loader shuffles (seeded), validation
    does not."""
    train, val = digits_data()
    generator = torch.Generator().manual_seed(seed)
    return (
        DataLoader(train, batch_size=batch_size, shuffle=True, generator=generator),
        DataLoader(val, batch_size=len(val)),
    )


def _require_positive(name: str, value: object) -> None:
    """Refuse a size of the network or its training that is not an int >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be an int >= 1, got {value!r}")


class _Block(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class DigitsResNet(nn.Module):
    """A residual CNN for 1x8x8 inputs: stem, 3 stages x ``blocks`` blocks, linear head.

    Args:
        width: channels of the first stage (the others have ``2w`` and ``4w``).
        blocks: residual blocks per stage.
        classes: output classes.
    """

    def __init__(self, width: int = 16, blocks: int = 2, classes: int = 10) -> None:
        super().__init__()
        for name, value in (("width", width), ("blocks", blocks), ("classes", classes)):
            _require_positive(name, value)
        self.stem = nn.Sequential(
            nn.Conv2d(1, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()
        )
        stages, cin = [], width
        for k, stride in enumerate((1, 2, 2)):
            cout = width * 2**k
            stages.append(
                nn.Sequential(
                    *[
                        _Block(cin if i == 0 else cout, cout, stride if i == 0 else 1)
                        for i in range(blocks)
                    ]
                )
            )
            cin = cout
        self.layer1, self.layer2, self.layer3 = stages
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.layer3(self.layer2(self.layer1(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(out, 1), 1))


@dataclass(frozen=True)
class DigitsTraining:
    """How the demo model is trained (part of its cache key)."""

    width: int = 16
    blocks: int = 2
    epochs: int = 15
    lr: float = 0.01
    batch_size: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("width", "blocks", "epochs", "batch_size"):
            _require_positive(name, getattr(self, name))
        if not self.lr > 0:
            raise ConfigError(f"lr must be > 0, got {self.lr!r}")

    def key(self, device: torch.device) -> str:
        text = json.dumps({**asdict(self), "device": device.type, "version": 1}, sort_keys=True)
        return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def _train(settings: DigitsTraining, device: torch.device) -> DigitsResNet:
    """Adam with a one-cycle schedule; deterministic for a seed on the CPU."""
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        torch.manual_seed(settings.seed)
        model = DigitsResNet(settings.width, settings.blocks).to(device)
        train, _ = digits_loaders(settings.batch_size, settings.seed)
        optimiser = torch.optim.Adam(model.parameters(), lr=settings.lr, weight_decay=1e-4)
        schedule = torch.optim.lr_scheduler.OneCycleLR(
            optimiser, settings.lr, epochs=settings.epochs, steps_per_epoch=len(train)
        )
        model.train()
        for _ in range(settings.epochs):
            for x, y in train:
                loss = F.cross_entropy(model(x.to(device)), y.to(device))
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                optimiser.step()
                schedule.step()
    return model.eval()


def digits_model(
    settings: DigitsTraining | None = None,
    *,
    device: str | torch.device | None = None,
    cache: Path | None = None,
) -> DigitsResNet:
    """The trained demo model: loaded from the cache, or trained (seconds) and cached.

    Args:
        settings: architecture and training settings (default :class:`DigitsTraining`).
        device: where to train and return it (default CUDA when available).
        cache: the cache folder (default :func:`cache_dir`).
    """
    settings = settings or DigitsTraining()
    device = resolve_device(device)
    path = (
        cache or cache_dir()
    ) / f"digits-resnet-w{settings.width}-s{settings.seed}-{settings.key(device)}.pt"
    model = DigitsResNet(settings.width, settings.blocks)
    if path.is_file():
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        return model.to(device).eval()
    _log.info("training the digits demo model (%s) on %s; cached at %s", settings, device, path)
    model = _train(settings, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(model.state_dict(), tmp)
    tmp.replace(path)
    return model
