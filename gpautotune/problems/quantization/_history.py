"""The trials of a policy search as a table: fixed columns, then one column of bits per layer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpautotune.problems.quantization._policy import PolicySpace

if TYPE_CHECKING:
    import pandas as pd

    from gpautotune.trial import Trial

__all__ = ["BITS_PREFIX", "HISTORY_COLUMNS", "bits_column", "history_frame"]

#: The measurement metrics of :func:`history_frame`'s fixed columns.
_METRICS = ("top1", "top5", "size_bytes", "mean_bits", "accuracy_loss", "size_fraction")
#: The fixed columns of :func:`history_frame`, in order.
HISTORY_COLUMNS = ("number", "origin", "status", "value", *_METRICS, "duration_s", "source")
#: Prefix of a layer's bits column where the layer's name would clash.
BITS_PREFIX = "bits."


def bits_column(layer: str) -> str:
    """The :func:`history_frame` column of ``layer``'s bits: the layer's name, or
    ``bits.NAME`` where a fixed column has that name (a layer called ``value`` or
    ``status``) or the name starts with ``bits.`` itself, so no two columns clash."""
    if layer in HISTORY_COLUMNS or layer.startswith(BITS_PREFIX):
        return BITS_PREFIX + layer
    return layer


def history_frame(trials: Sequence[Trial], policies: PolicySpace) -> pd.DataFrame:
    """One row per trial: number, origin, status, value (the objective: the accuracy loss,
    plus the size term with a size weight), top1, top5, size_bytes, mean_bits,
    accuracy_loss, size_fraction (of the 8-bit size), duration_s, source, then one column
    of bits per layer, named by the layer (module name; :func:`bits_column`: a layer
    named like a fixed column, say ``value``, is in ``bits.value``)."""
    import pandas as pd

    columns = [bits_column(layer.name) for layer in policies.layers]
    rows = []
    for t in trials:
        m = t.measurement.metrics
        row = [t.number, t.origin.value, t.status.value, t.value]
        row += [m.get(k) for k in _METRICS]
        row += [t.duration_s, t.source, *policies.to_policy(t.config).values()]
        rows.append(row)
    return pd.DataFrame(rows, columns=[*HISTORY_COLUMNS, *columns])
