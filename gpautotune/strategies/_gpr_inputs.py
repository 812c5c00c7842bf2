"""What a GPR model sees of a configuration: its inputs, one row per index row.

The GP's kernel sees the parameters (the space's encoding, or with ``inputs="values"``
their values scaled to [0, 1]; a categorical of more than two levels one-hot), the
space's declared model inputs and the predicate monomials (``derived_inputs``), both
scaled to [0, 1] over the valid configurations; its trend sees standardised formula
features (:func:`gpautotune.surrogate.build_basis`). :class:`ModelInputs` computes all
of them from index rows (:meth:`Space.to_index`), so that the strategy, the sensitivity
indices (:mod:`gpautotune.analysis.explain`) and the studies' scripts read one encoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gpautotune.space import Categorical, Ordinal, Parameter, Space

__all__ = ["ModelInputs", "model_space"]


def _is_code(p: Parameter) -> bool:
    """Whether an ordinal's levels are the codes 0, 1, ..., k-1 of k >= 3 choices (how a
    tuning script numbers alternatives: methods, layouts), not quantities."""
    return isinstance(p, Ordinal) and p.n_levels >= 3 and list(p.levels) == list(range(p.n_levels))


def model_space(space: Space, codes: str) -> Space:
    """``space`` with its code ordinals categorical (``codes="categorical"``); ``space``
    itself when there is none to change."""
    coded = [p for p in space.parameters if _is_code(p)] if codes == "categorical" else []
    if not coded:
        return space
    return space.retyped({p.name: Categorical(p.name, p.levels) for p in coded})


class ModelInputs:
    """The GP's inputs of index rows.

    Args:
        space: the search space (index rows are its).
        model_space: the space as the model sees it (:func:`model_space`).
        basis: the trend's features (``len(basis)`` columns of ``basis(columns)``).
        extra_inputs: the names of derived quantities the kernel also sees.
        monomials: the predicate monomials the kernel also sees (``log_values(columns)``).
        inputs: ``encoded`` (the space's encoding) or ``values`` (the levels' values).
        reference: index rows whose spread scales the extra inputs, monomials and trend
            features (the valid configurations, or a sample of them).
    """

    def __init__(
        self,
        space: Space,
        *,
        model_space: Space,
        basis: Any,
        extra_inputs: Sequence[str],
        monomials: Sequence[Any],
        inputs: str,
        reference: np.ndarray,
    ) -> None:
        self.space, self.basis, self.inputs = space, basis, inputs
        self.extra_inputs, self.monomials = tuple(extra_inputs), tuple(monomials)
        #: Categorical parameters of more than two levels and their level counts: the
        #: kernel sees them one-hot (unordered), not by their level index.
        self.onehot = {
            j: p.n_levels
            for j, p in enumerate(model_space.parameters)
            if isinstance(p, Categorical) and p.n_levels > 2
        }
        cols = space.columns(reference)
        h = basis(cols)
        self._h_mean = h.mean(axis=0) if len(h) else np.zeros(len(basis))
        self._h_scale = (
            np.where(h.std(axis=0) > 0, h.std(axis=0), 1.0) if len(h) else np.ones(len(basis))
        )
        e = self._input_columns(cols, len(reference))
        self._e_low = e.min(axis=0)
        self._e_span = np.where(np.ptp(e, axis=0) > 0, np.ptp(e, axis=0), 1.0)

    @property
    def kernel_dims(self) -> int:
        """How many columns the kernel sees (the trend's features follow them)."""
        onehot = sum(k - 1 for k in self.onehot.values())
        return self.space.dims + onehot + len(self.extra_inputs) + len(self.monomials)

    def __call__(self, index: np.ndarray) -> np.ndarray:
        """GP inputs: encoded parameters, extra inputs and predicate monomials scaled to
        [0, 1], then standardised trend features (the kernel sees the first three groups,
        the trend the last)."""
        parts = [self.positions(index)]
        if self.extra_inputs or self.monomials or len(self.basis):
            cols = self.space.columns(index)
            if self.extra_inputs or self.monomials:
                e = self._input_columns(cols, len(index))
                parts.append((e - self._e_low) / self._e_span)
            if len(self.basis):
                parts.append((self.basis(cols) - self._h_mean) / self._h_scale)
        return np.hstack(parts)

    def _input_columns(self, cols: Any, rows: int) -> np.ndarray:
        """The kernel's inputs besides the parameters, unscaled, one column each: the extra
        inputs' values, then the log of each predicate monomial (``derived_inputs``)."""
        columns = [np.asarray(cols[n], dtype=float) for n in self.extra_inputs]
        columns += [m.log_values(cols) for m in self.monomials]
        return np.column_stack(columns) if columns else np.zeros((rows, 0))

    def positions(self, index: np.ndarray) -> np.ndarray:
        """The kernel's view of the parameters: the space's encoding, or (``inputs="values"``)
        the parameters' values scaled linearly to [0, 1] over their levels (the seeds' R
        models saw the values themselves); non-numeric levels keep their encoding. A
        categorical of more than two levels is one-hot in both: one 0/1 column per level,
        so that every two of its levels are equally far apart."""
        encoded = self.numeric(index)
        if not self.onehot:
            return encoded
        columns = []
        for j in range(self.space.dims):
            if j in self.onehot:
                levels = np.asarray(index[:, j], dtype=np.int64)
                columns.append(np.eye(self.onehot[j])[levels])
            else:
                columns.append(encoded[:, j : j + 1])
        return np.hstack(columns)

    def numeric(self, index: np.ndarray) -> np.ndarray:
        """One column per parameter: the space's encoding, or the values scaled to [0, 1]."""
        encoded = self.space.encode(index)
        if self.inputs == "encoded":
            return encoded
        for j, p in enumerate(self.space.parameters):
            levels = np.asarray(getattr(p, "levels", ()))
            if levels.dtype.kind in "biuf" and len(levels) > 1:
                values = levels.astype(float)
                span = np.ptp(values)
                scaled = (values - values.min()) / span if span > 0 else values * 0
                encoded[:, j] = scaled[index[:, j].astype(np.int64)]
        return encoded
