"""The immutable :class:`Space`: parameters, predicates, encoding, enumeration, neighbours.

Internally, a set of configurations is an *index matrix* ``I`` of shape ``(n, d)``
(float64): level indices for discrete parameters, unit positions for real ones. Every
vectorised operation (predicates, deduplication, encoding, neighbourhoods) works on it;
configurations as dicts appear only at the API boundary.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from gpautotune.exceptions import SpaceError
from gpautotune.space._constraints import ColumnFunction, Constraint, Derived, LazyColumns
from gpautotune.space._parameters import Boolean, Parameter

if TYPE_CHECKING:
    from gpautotune.space._plan import SamplingPlan

__all__ = ["Space", "ValidCount", "Config"]

Config = dict[str, Any]
DEFAULT_ENUMERATION_LIMIT = 50_000_000
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ValidCount:
    """How many valid configurations a space has: exact, or estimated with a 95% interval."""

    estimate: float
    low: float
    high: float
    exact: bool
    raw_size: float

    @property
    def fraction(self) -> float:
        return self.estimate / self.raw_size


class Space:
    """A search space of typed parameters constrained by predicates.

    Args:
        parameters: the factors, in a fixed order.
        constraints: predicates (expression strings or column callables) that every valid
            configuration satisfies.
        derived: named quantities computed from parameters (expression or callable),
            usable by name in constraints, e.g. ``{"x_components": "elements / y"}``.
        name: an optional label.
        model_inputs: derived quantities that surrogate models should also see as inputs
            (e.g. a ratio of two parameters that drives the objective).
    """

    def __init__(
        self,
        parameters: Sequence[Parameter],
        constraints: Sequence[str | ColumnFunction] = (),
        derived: Mapping[str, str | ColumnFunction] | None = None,
        name: str | None = None,
        model_inputs: Sequence[str] = (),
    ) -> None:
        params = tuple(parameters)
        # one expression or callable is one constraint (not its characters); likewise inputs
        constraints = (
            (constraints,) if isinstance(constraints, str) or callable(constraints) else constraints
        )
        model_inputs = (model_inputs,) if isinstance(model_inputs, str) else model_inputs
        self._spec = (params, tuple(constraints), dict(derived or {}), name, tuple(model_inputs))
        if not params:
            raise SpaceError("a space needs at least one parameter")
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise SpaceError(f"parameter names must be unique; repeated: {dup}")
        self._params = params
        self._names = names
        self.name = name
        derived = dict(derived or {})
        clash = set(derived) & set(names)
        if clash:
            raise SpaceError(f"derived quantities {sorted(clash)} clash with parameter names")
        known = list(names)
        self._derived: dict[str, Derived] = {}
        for key, spec in derived.items():
            self._derived[key] = Derived.build(key, spec, known)
            known.append(key)
        self._constraints = tuple(Constraint.build(c, known) for c in constraints)
        unknown = [m for m in model_inputs if m not in self._derived]
        if unknown:
            raise SpaceError(
                f"model_inputs {unknown} are not derived quantities; "
                f"derived: {sorted(self._derived)}"
            )
        self.model_inputs = tuple(model_inputs)

    def __getstate__(self) -> tuple:
        """Pickle the constructor's arguments (compiled predicates are rebuilt)."""
        return self._spec

    def __setstate__(self, spec: tuple) -> None:
        self.__init__(*spec)

    # ------------------------------------------------------------------ basics
    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return self._params

    @property
    def names(self) -> list[str]:
        return list(self._names)

    @property
    def dims(self) -> int:
        return len(self._params)

    @property
    def constraints(self) -> tuple[Constraint, ...]:
        return self._constraints

    @property
    def is_discrete(self) -> bool:
        return all(p.is_discrete for p in self._params)

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of levels per parameter (discrete spaces only)."""
        self._require_discrete("shape")
        return tuple(p.n_levels for p in self._params)

    @property
    def size(self) -> float:
        """Raw size: the product of the level counts (``inf`` with a real parameter)."""
        if not self.is_discrete:
            return math.inf
        return float(math.prod(self.shape))

    def __getitem__(self, name: str) -> Parameter:
        try:
            return self._params[self._names.index(name)]
        except ValueError:
            raise SpaceError(f"unknown parameter {name!r}; parameters: {self._names}") from None

    def __repr__(self) -> str:
        name = f"{self.name}, " if self.name else ""
        return f"Space({name}{self.dims} parameters, {len(self._constraints)} constraints)"

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description, stored with each run."""
        return {
            "name": self.name,
            "parameters": [p.describe() for p in self._params],
            "derived": {k: d.text for k, d in self._derived.items()},
            "constraints": [c.text for c in self._constraints],
            "model_inputs": list(self.model_inputs),
        }

    def _require_discrete(self, what: str) -> None:
        if not self.is_discrete:
            raise SpaceError(f"{what} needs a discrete space; this one has real parameters")

    # ---------------------------------------------------------- constraint groups
    @cached_property
    def sampling_plan(self) -> SamplingPlan:
        """How constrained sampling decodes points (built on first use, then kept)."""
        from gpautotune.space._plan import SamplingPlan

        return SamplingPlan.build(self)

    def reads(self, names: frozenset[str] | None) -> frozenset[str]:
        """Parameters behind ``names`` (derived quantities resolved; None: every one)."""
        if names is None:
            return frozenset(self._names)
        out: set[str] = set()
        for n in names:
            out |= self.reads(self._derived[n].names) if n in self._derived else {n}
        return frozenset(out)

    def constraint_groups(self) -> list[tuple[str, ...]]:
        """Parameters connected by constraints, each group in parameter order.

        Two parameters are connected when one constraint reads both (through derived
        quantities too; a callable constraint reads every parameter). A parameter no
        constraint reads is a group of its own. The valid set is the product of the
        groups' valid sets.
        """
        parent = {n: n for n in self._names}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for constraint in self._constraints:
            read = sorted(self.reads(constraint.names))
            for other in read[1:]:
                parent[find(other)] = find(read[0])
        groups: dict[str, list[str]] = {}
        for n in self._names:
            groups.setdefault(find(n), []).append(n)
        return [tuple(g) for g in groups.values()]

    def restricted(self, names: Sequence[str]) -> Space:
        """The space of the parameters ``names`` with the constraints (and derived
        quantities) that read only them."""
        keep = set(names)
        params, specs, derived, _, _ = self._spec
        sub_derived = {
            k: v for k, v in derived.items() if self.reads(self._derived[k].names) <= keep
        }
        sub_constraints = [
            spec
            for spec, c in zip(specs, self._constraints, strict=True)
            if self.reads(c.names) <= keep
        ]
        sub_params = [p for p in params if p.name in keep]
        return Space(sub_params, sub_constraints, sub_derived, name=self.name)

    def retyped(self, parameters: Mapping[str, Parameter]) -> Space:
        """The same space (constraints, derived quantities, model inputs) with some
        parameters replaced by others of the same name and levels, e.g. an ordinal seen as
        a categorical: index matrices and configurations mean the same in both."""
        params, specs, derived, name, inputs = self._spec
        for key, new in parameters.items():
            old = self[key]
            if new.name != key or getattr(new, "levels", None) != getattr(old, "levels", None):
                raise SpaceError(f"parameter {key!r} can only be retyped with its name and levels")
        return Space([parameters.get(p.name, p) for p in params], specs, derived, name, inputs)

    # ------------------------------------------------------- index matrices
    def columns(self, index: np.ndarray) -> LazyColumns:
        """Parameter values (booleans as 0/1) and derived quantities of an index matrix."""
        index = np.atleast_2d(index)
        base = {}
        for j, p in enumerate(self._params):
            values = p.values_at(index[:, j]) if p.is_discrete else p.values_at(index[:, j])
            if isinstance(p, Boolean):
                values = values.astype(np.int64)
            base[p.name] = values
        return LazyColumns(base, self._derived, index.shape[0])

    def valid_mask(self, index: np.ndarray) -> np.ndarray:
        """Boolean mask of the rows of ``index`` that satisfy every constraint."""
        index = np.atleast_2d(index)
        mask = np.ones(index.shape[0], dtype=bool)
        if not self._constraints or index.shape[0] == 0:
            return mask
        cols = self.columns(index)
        for constraint in self._constraints:
            mask &= constraint.mask(cols)
        return mask

    def constraint_inputs(self, constraint: Constraint) -> tuple[str, ...] | None:
        """The parameters a constraint depends on, through derived quantities too, in
        parameter order; None when a callable hides them."""
        pending, seen = [constraint.names], set()
        while pending:
            names = pending.pop()
            if names is None:
                return None
            for name in names - seen:
                seen.add(name)
                if name in self._derived:
                    pending.append(self._derived[name].names)
        return tuple(n for n in self._names if n in seen)

    def violated(self, config: Mapping[str, Any]) -> list[str]:
        """The constraints a configuration violates (empty when valid)."""
        cols = self.columns(self.to_index([config]))
        return [c.text for c in self._constraints if not bool(c.mask(cols)[0])]

    def to_configs(self, index: np.ndarray) -> list[Config]:
        """Configurations (dicts of plain Python values) of an index matrix."""
        index = np.atleast_2d(index)
        columns = [p.values_at(index[:, j]).tolist() for j, p in enumerate(self._params)]
        return [dict(zip(self._names, row, strict=True)) for row in zip(*columns, strict=True)]

    def to_index(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Index matrix of configurations; raises :class:`SpaceError` for unknown keys or values."""
        configs = list(configs)
        for config in configs:
            self._check_keys(config)
        out = np.empty((len(configs), self.dims), dtype=float)
        for j, p in enumerate(self._params):
            out[:, j] = p.index_of([c[p.name] for c in configs])
        return out

    def _check_keys(self, config: Mapping[str, Any]) -> None:
        if not isinstance(config, Mapping):
            raise SpaceError(
                f"a configuration must be a mapping of parameter name to value, got {config!r}"
            )
        missing = [n for n in self._names if n not in config]
        extra = [k for k in config if k not in self._names]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing {missing}")
            if extra:
                parts.append(f"unknown {extra}")
            raise SpaceError(
                f"configuration {dict(config)} has {' and '.join(parts)}; parameters: {self._names}"
            )

    def validate(self, config: Mapping[str, Any]) -> Config:
        """Check a configuration and return it normalised (levels as declared).

        Raises:
            SpaceError: unknown or missing parameters, values that are not levels, or
                violated constraints (all named in the message).
        """
        index = self.to_index([config])
        broken = [c.text for c in self._constraints if not bool(c.mask(self.columns(index))[0])]
        if broken:
            raise SpaceError(f"configuration {dict(config)} violates {broken}")
        return self.to_configs(index)[0]

    def row_keys(self, index: np.ndarray) -> np.ndarray:
        """One hashable, comparable key per row (int64 when the space allows, else bytes)."""
        index = np.atleast_2d(index)
        if self.is_discrete and self.size < 2**62:
            radix = np.cumprod((1,) + self.shape[:0:-1])[::-1].astype(np.int64)
            return index.astype(np.int64) @ radix
        packed = np.ascontiguousarray(np.round(index * 2**20).astype(np.int64))
        return packed.view(np.dtype((np.void, packed.dtype.itemsize * self.dims))).ravel()

    def unique_rows(self, index: np.ndarray) -> np.ndarray:
        """Rows of ``index`` with duplicates removed, first occurrence kept, order kept."""
        if len(index) == 0:
            return index
        _, first = np.unique(self.row_keys(index), return_index=True)
        return index[np.sort(first)]

    # ---------------------------------------------------------------- encoding
    def encode(self, configs: Sequence[Mapping[str, Any]] | np.ndarray) -> np.ndarray:
        """Model encoding in ``[0, 1]^d`` of configurations (or of an index matrix)."""
        index = configs if isinstance(configs, np.ndarray) else self.to_index(configs)
        index = np.atleast_2d(index)
        out = np.empty(index.shape, dtype=float)
        for j, p in enumerate(self._params):
            out[:, j] = p.positions(index[:, j])
        return out

    def decode(self, positions: np.ndarray) -> list[Config]:
        """Configurations nearest (per coordinate) to encoded positions; not filtered."""
        return self.to_configs(self.snap(positions))

    def snap(self, positions: np.ndarray) -> np.ndarray:
        """Index matrix of the levels nearest to encoded positions."""
        positions = np.atleast_2d(positions)
        out = np.empty(positions.shape, dtype=float)
        for j, p in enumerate(self._params):
            out[:, j] = p.snap(positions[:, j])
        return out

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Index matrix of unit-cube points, with equal-width cells per level."""
        u = np.atleast_2d(u)
        out = np.empty(u.shape, dtype=float)
        for j, p in enumerate(self._params):
            out[:, j] = p.from_unit(u[:, j])
        return out

    # ------------------------------------------------------------ enumeration
    def enumerate_index(self, limit: float = DEFAULT_ENUMERATION_LIMIT) -> np.ndarray:
        """Index matrix of every valid configuration (raw size must not exceed ``limit``)."""
        self._require_discrete("enumerate()")
        if self.size > limit:
            raise SpaceError(
                f"the raw space has {self.size:.3g} points, "
                f"above the enumeration limit {limit:.3g}; "
                "use sample() or count_valid() instead, or raise the limit"
            )
        total, shape, parts = int(self.size), self.shape, []
        for start in range(0, total, _CHUNK):
            flat = np.arange(start, min(start + _CHUNK, total))
            index = np.stack(np.unravel_index(flat, shape), axis=1).astype(float)
            parts.append(index[self.valid_mask(index)])
        return np.concatenate(parts) if parts else np.empty((0, self.dims))

    def enumerate(self, limit: float = DEFAULT_ENUMERATION_LIMIT) -> list[Config]:
        """Every valid configuration, refused with a clear error above ``limit`` raw points."""
        return self.to_configs(self.enumerate_index(limit))

    def is_enumerable(self, limit: float = DEFAULT_ENUMERATION_LIMIT) -> bool:
        return self.is_discrete and self.size <= limit

    def count_valid(
        self,
        *,
        limit: float = DEFAULT_ENUMERATION_LIMIT,
        samples: int = 200_000,
        seed: int | None = 0,
    ) -> ValidCount:
        """Exact valid count when enumerable; otherwise an estimate from uniform raw samples
        with a 95% Wilson interval on the valid fraction."""
        if self.is_enumerable(limit):
            n = float(len(self.enumerate_index(limit)))
            return ValidCount(n, n, n, True, self.size)
        rng = np.random.default_rng(seed)
        k = int(self.valid_mask(self.from_unit(rng.random((samples, self.dims)))).sum())
        p, z = k / samples, 1.959963984540054
        centre = (p + z * z / (2 * samples)) / (1 + z * z / samples)
        half = (
            z * math.sqrt(p * (1 - p) / samples + z * z / (4 * samples**2)) / (1 + z * z / samples)
        )
        size = self.size
        return ValidCount(
            p * size, max(centre - half, 0.0) * size, (centre + half) * size, False, size
        )

    # ------------------------------------------------------------- sampling
    def sample(self, n: int, method: str = "sobol", seed: int | None = None) -> list[Config]:
        """``n`` distinct valid configurations (``method``: sobol, random or lhs).

        Constrained Sobol is FILTER_SOBOL: scrambled Sobol points in the unit cube,
        decoded to levels, filtered by the predicates, duplicates dropped in sequence
        order; the raw sample is doubled until ``n`` valid points exist.
        """
        from gpautotune.space._sampling import sample_index

        return self.to_configs(sample_index(self, n, method=method, seed=seed))

    # ---------------------------------------------------------- neighbourhoods
    def neighbor_index(
        self, index_row: np.ndarray, radius: int = 1, *, real_step: float = 0.05
    ) -> np.ndarray:
        """Valid configurations that differ from one row by ±1..radius levels in one factor.

        A radius past a parameter's last level (past the unit range for a real one, where
        the moves only repeat the bounds) adds nothing, and is not walked: a huge radius
        returns at once."""
        row = np.asarray(index_row, dtype=float).ravel()
        moves = []
        real_reach = math.ceil(1 / real_step) + 1  # from here on, the bounds again
        for j, p in enumerate(self._params):
            reach = p.n_levels - 1 if p.is_discrete else real_reach
            for r in range(1, min(radius, reach) + 1):
                for sign in (-1, 1):
                    cand = row.copy()
                    if p.is_discrete:
                        cand[j] += sign * r
                        if not 0 <= cand[j] < p.n_levels:
                            continue
                    else:
                        cand[j] = np.clip(cand[j] + sign * r * real_step, 0.0, 1.0)
                        if cand[j] == row[j]:
                            continue
                    moves.append(cand)
        if not moves:
            return np.empty((0, self.dims))
        moves_arr = np.asarray(moves)
        return moves_arr[self.valid_mask(moves_arr)]

    def pair_index(
        self, index_row: np.ndarray, limit: int | None = None, seed: Sequence[int] = (0,)
    ) -> np.ndarray:
        """Valid configurations that differ from one row in exactly two discrete factors
        (any levels); where there are more than ``limit`` such moves, a sample of
        ``limit`` of them (seeded by ``seed``) is checked instead."""
        row = np.asarray(index_row, dtype=float).ravel()
        levels = [p.n_levels if p.is_discrete else 1 for p in self._params]
        blocks = []
        for j, k in itertools.combinations(range(len(levels)), 2):
            if levels[j] < 2 or levels[k] < 2:
                continue
            a, b = np.meshgrid(
                np.delete(np.arange(levels[j]), int(row[j])),
                np.delete(np.arange(levels[k]), int(row[k])),
                indexing="ij",
            )
            block = np.repeat(row[None, :], a.size, axis=0)
            block[:, j], block[:, k] = a.ravel(), b.ravel()
            blocks.append(block)
        if not blocks:
            return np.empty((0, self.dims))
        moves = np.concatenate(blocks)
        if limit is not None and len(moves) > limit:
            rng = np.random.default_rng(list(seed))
            moves = moves[np.sort(rng.choice(len(moves), limit, replace=False))]
        return moves[self.valid_mask(moves)]

    def adjacent_index(
        self, index_row: np.ndarray, limit: int | None = None, seed: Sequence[int] = (0,)
    ) -> np.ndarray:
        """Valid configurations whose every discrete factor lies within one level of the
        row's (any number of them moved, at least one; real factors kept), Kernel
        Tuner's ``adjacent`` neighbours; where there are more than ``limit`` such
        moves, ``limit`` of them drawn (seeded by ``seed``, repeats removed) instead."""
        row = np.asarray(index_row, dtype=float).ravel()
        steps = []
        for j, p in enumerate(self._params):
            levels = [row[j]]
            if p.is_discrete:
                levels = [v for v in (row[j] - 1, row[j], row[j] + 1) if 0 <= v < p.n_levels]
            steps.append(np.asarray(levels))
        count = math.prod(len(s) for s in steps)
        if limit is not None and count - 1 > limit:
            rng = np.random.default_rng(list(seed))
            moves = np.column_stack([rng.choice(s, limit) for s in steps])
            moves = np.unique(moves, axis=0)
        else:
            moves = np.stack(np.meshgrid(*steps, indexing="ij"), axis=-1).reshape(-1, self.dims)
        moves = moves[(moves != row).any(axis=1)]
        if not len(moves):
            return np.empty((0, self.dims))
        return moves[self.valid_mask(moves)]

    def neighbors(self, config: Mapping[str, Any], radius: int = 1) -> list[Config]:
        """Valid neighbours of ``config``: ±1..radius levels of one factor at a time."""
        if radius < 1:
            raise SpaceError(f"radius must be >= 1, got {radius}")
        return self.to_configs(self.neighbor_index(self.to_index([config])[0], radius))

    def subspace(self, fixed: Mapping[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
        """A row filter keeping configurations whose ``fixed`` parameters have the given values."""
        cols = [(self._names.index(k), self[k].index_of([v])[0]) for k, v in fixed.items()]

        def keep(index: np.ndarray) -> np.ndarray:
            mask = np.ones(len(index), dtype=bool)
            for j, level in cols:
                mask &= index[:, j] == level
            return mask

        return keep
