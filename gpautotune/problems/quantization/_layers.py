"""The quantizable layers of a PyTorch model and their search-space parameter names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpautotune.exceptions import ConfigError

if TYPE_CHECKING:
    from torch import nn

__all__ = ["LayerInfo", "find_layers", "parameter_names"]

#: Module types quantized by default (``Conv1d/2d/3d`` and ``Linear``).
DEFAULT_TYPES = ("Conv1d", "Conv2d", "Conv3d", "Linear")


@dataclass(frozen=True)
class LayerInfo:
    """One quantizable layer.

    Attributes:
        name: the module's path in the model (``"layer1.0.conv1"``).
        kind: the module's class name (``"Conv2d"``).
        shape: the weight tensor's shape, output channels first.
    """

    name: str
    kind: str
    shape: tuple[int, ...]

    @property
    def n_weights(self) -> int:
        """Number of weights ``prod(shape)``."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def out_channels(self) -> int:
        """Output channels (rows of the weight), one scale each."""
        return self.shape[0]


def find_layers(model: nn.Module, layers: Sequence[str] | None = None) -> tuple[LayerInfo, ...]:
    """The quantizable layers of ``model``, in module order.

    Args:
        model: any ``nn.Module``.
        layers: module names to quantize; default every ``Conv*d`` and ``Linear``.

    Raises:
        ConfigError: ``model`` is not an ``nn.Module``; ``layers`` is not a list of names,
            or is empty; a named layer does not exist or has no weight; selected layers share one
            weight tensor (tied weights); no layer found.
    """
    from torch import nn

    if not isinstance(model, nn.Module):
        raise ConfigError(f"model must be a torch.nn.Module, got {_kind(model)}")
    modules = dict(model.named_modules())
    if layers is None:
        names = [n for n, m in modules.items() if type(m).__name__ in DEFAULT_TYPES]
    else:
        names = _layer_names(layers)
        if not names:
            raise ConfigError(
                "layers is empty: name at least one layer, or leave it out to quantize every "
                "Conv*d and Linear layer"
            )
        unknown = [n for n in names if n not in modules]
        if unknown:
            raise ConfigError(
                f"layers {unknown} are not modules of the model; some modules: {list(modules)[:12]}"
            )
        if len(set(names)) != len(names):
            raise ConfigError(
                f"layers are listed twice: {sorted({n for n in names if names.count(n) > 1})}"
            )
    out = []
    for name in names:
        weight = getattr(modules[name], "weight", None)
        if weight is None or weight.dim() < 1:
            raise ConfigError(f"layer {name!r} has no weight tensor to quantize")
        out.append(
            LayerInfo(name, type(modules[name]).__name__, tuple(int(s) for s in weight.shape))
        )
    if not out:
        raise ConfigError(
            "the model has no quantizable layer (Conv*d or Linear); name them with `layers`"
        )
    _refuse_tied(modules, names)
    return tuple(out)


def _kind(value: object) -> str:
    """What ``value`` is, for the message refusing it as a model."""
    if isinstance(value, Mapping):
        return (
            f"{type(value).__name__} (a state_dict? load it into its model with "
            "model.load_state_dict(...) and pass the model)"
        )
    return type(value).__name__


def _layer_names(layers: object) -> list[str]:
    """``layers`` as a list of module names; a string or non-string items are refused."""
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise ConfigError(
            f"layers must be a list of module names, got {layers!r}; for one layer write "
            f"[{layers!r}]"
        )
    names = list(layers)
    odd = [n for n in names if not isinstance(n, str)]
    if odd:
        raise ConfigError(
            f"layers must be module names (strings such as '0' or 'layer1.0.conv1'), got {odd}"
        )
    return names


def _refuse_tied(modules: dict[str, nn.Module], names: Sequence[str]) -> None:
    """Raise if two of ``names`` hold one weight tensor: their bit widths would clash."""
    owners: dict[int, list[str]] = {}
    for name in names:
        weight = modules[name].weight
        if weight.numel():
            owners.setdefault(weight.data_ptr(), []).append(name)
    tied = [" and ".join(map(repr, group)) for group in owners.values() if len(group) > 1]
    if tied:
        raise ConfigError(
            f"layers {'; '.join(tied)} share one weight tensor (tied weights), so they "
            "cannot get different bit widths; list only one layer of each group in `layers` "
            "(its bit width then applies to the shared weight)"
        )


def parameter_names(layer_names: Sequence[str]) -> tuple[str, ...]:
    """Search-space parameter names (identifiers) for module names, unique and in order.

    Dots become underscores (``layer1.0.conv1`` -> ``layer1_0_conv1``); a name that is
    still not an identifier gets a ``layer_`` prefix; clashes get ``_2``, ``_3``...
    """
    out: list[str] = []
    taken: set[str] = set()
    for name in layer_names:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "layer"
        if not base.isidentifier():
            base = f"layer_{base}"
        candidate, k = base, 2
        while candidate in taken:
            candidate, k = f"{base}_{k}", k + 1
        taken.add(candidate)
        out.append(candidate)
    return tuple(out)
