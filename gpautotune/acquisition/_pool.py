"""Candidate pools: where expected improvement is maximised at each step.

When the valid space is small enough to enumerate, the pool is every unmeasured valid
configuration. Otherwise (seed 003, figure 13.4) it is a fresh constrained Sobol sample,
plus the neighbourhoods of the best-scoring points (discrete ±1..r level moves and Sobol
perturbations of ±3/8 of the unit range, snapped to levels and filtered), plus a
*backlog* of the best-scoring configurations not picked at earlier steps, re-scored
with the current model.

A pool built with ``fixed`` (parameter name -> value, as BoTorch's ``fixed_features``)
offers only configurations with those values: every candidate is projected onto the
subspace before the validity and novelty filters.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import qmc

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space, sample_index

#: raw Sobol points drawn at most for one step's pool sample
POOL_MAX_RAW = 1 << 20

__all__ = ["CandidatePool", "PoolSettings", "POOL_MAX_RAW"]

SAMPLE, NEIGHBORS, BACKLOG, ALL = "sample", "neighbors", "backlog", "all"


@dataclass(frozen=True)
class PoolSettings:
    """Sizes of the pool's parts.

    Attributes:
        exhaustive_limit: enumerate the valid space when it has at most this many points.
        sample_size: constrained Sobol points per step (default 60 x dimensions).
        n_best: how many best-scoring points get a neighbourhood.
        radius: discrete neighbourhood radius in levels.
        perturbations: Sobol perturbations per best point.
        perturbation_width: half-width of the perturbations in the unit cube.
        backlog: how many unpicked best-scoring candidates are carried over.
    """

    exhaustive_limit: int = 100_000
    sample_size: int | None = None
    n_best: int = 3
    radius: int = 2
    perturbations: int = 64
    perturbation_width: float = 3 / 8
    backlog: int = 200

    def __post_init__(self) -> None:
        """Refuse sizes the pool would read as others (``n_best=-1`` took every row but
        the last, ``sample_size=0`` the default).

        Raises:
            ConfigError: naming the setting.
        """
        least = {"exhaustive_limit": 0, "n_best": 0, "radius": 0, "perturbations": 0, "backlog": 0}
        wrong = [n for n, low in least.items() if not _whole_at_least(getattr(self, n), low)]
        if self.sample_size is not None and not _whole_at_least(self.sample_size, 1):
            wrong.append("sample_size")
        if not 0 < self.perturbation_width <= 1:
            wrong.append("perturbation_width")
        if wrong:
            shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in wrong)
            raise ConfigError(
                f"PoolSettings: {shown}: sizes are whole numbers >= 0 (sample_size >= 1 or "
                "None), perturbation_width in (0, 1]"
            )


def _whole_at_least(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


class CandidatePool:
    """Builds the pool of each step and keeps the backlog between steps.

    Args:
        space: the search space.
        settings: sizes of the pool's parts.
        seed: seeds the samples and perturbations (0 when None).
        fixed: parameter values every candidate has (None: the whole space).
    """

    def __init__(
        self,
        space: Space,
        settings: PoolSettings,
        seed: int | None,
        *,
        fixed: Mapping[str, Any] | None = None,
    ) -> None:
        self.space, self.settings, self.seed = space, settings, 0 if seed is None else seed
        self.fixed = dict(fixed or {})
        unknown = sorted(set(self.fixed) - set(space.names))
        if unknown:
            raise ConfigError(f"fixed: {unknown} are not parameters; the space has {space.names}")
        self._columns = [space.names.index(k) for k in self.fixed]
        self._levels = [float(space[k].index_of([v])[0]) for k, v in self.fixed.items()]
        self._all: np.ndarray | None = None
        if space.is_enumerable() and space.size <= 50 * settings.exhaustive_limit:
            valid = space.enumerate_index()
            if len(valid) <= settings.exhaustive_limit:
                self._all = valid
        if self._all is not None and self._columns:
            rows = space.unique_rows(self.project(self._all))
            self._all = rows[space.valid_mask(rows)]
        self.clear_backlog()

    @property
    def exhaustive(self) -> bool:
        return self._all is not None

    @property
    def enumerated(self) -> np.ndarray | None:
        """Every valid configuration of the pool (index rows) when it is exhaustive."""
        return self._all

    @property
    def sample_size(self) -> int:
        return self.settings.sample_size or 60 * self.space.dims

    def propose(
        self,
        step: int,
        seen: Callable[[np.ndarray], np.ndarray],
        scorer: Callable[[np.ndarray], np.ndarray],
        around: Callable[[], np.ndarray | None] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Score the pool of ``step``: returns rows, their scores and their sources.

        ``seen(rows)`` masks measured or pending configurations; ``scorer(rows)`` returns
        acquisition values (higher is better). ``around()`` (measured rows, best first) are
        the neighbourhoods' centres where the sample and backlog hold nothing fresh: a space
        whose few valid configurations the sample no longer finds.
        """
        if self._all is not None:
            rows = self._all[~seen(self._all)]
            return rows, scorer(rows), np.full(len(rows), ALL)
        # Sparse spaces (SPAPT's dgemv3: ~2e-4 valid) are sampled per constraint group
        # (space/_plan.py) and fill the sample; only a space whose constraints tie every
        # factor together, with a tiny valid fraction, gets what 2^20 raw points hold.
        sample = sample_index(
            self.space,
            self.sample_size,
            method="sobol",
            seed=self.seed * 7919 + step,
            max_raw=POOL_MAX_RAW,
            strict=False,
        )
        base = [sample, self._backlog]
        sources = [SAMPLE] * len(base[0]) + [BACKLOG] * len(base[1])
        rows, sources = self._fresh(np.concatenate(base), np.array(sources, dtype=object), seen)
        scores = scorer(rows)
        top = rows[np.argsort(-scores)[: self.settings.n_best]]
        centres = around() if not len(rows) and around is not None else None
        if centres is not None:  # nothing fresh sampled (a tiny valid share): the measured
            top = centres[: self.settings.n_best]
        extra = self._neighbourhoods(top, step)
        extra, _ = self._fresh(
            extra, np.full(len(extra), NEIGHBORS, dtype=object), seen, exclude=rows
        )
        if len(extra):
            rows = np.concatenate([rows, extra])
            scores = np.concatenate([scores, scorer(extra)])
            sources = np.concatenate([sources, np.full(len(extra), NEIGHBORS, dtype=object)])
        return rows, scores, sources

    def project(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` with the fixed parameters set to their levels (a copy)."""
        rows = np.array(rows, dtype=float, copy=True)
        if len(rows) and self._columns:
            rows[:, self._columns] = self._levels
        return rows

    def clear_backlog(self) -> None:
        """Forget the backlog (before replaying the steps that made it)."""
        self._backlog = np.empty((0, self.space.dims))

    def keep_backlog(self, rows: np.ndarray, scores: np.ndarray, picked: np.ndarray) -> None:
        """Carry the best-scoring unpicked rows over to the next step."""
        if self._all is not None or not len(rows):
            return
        mask = np.ones(len(rows), dtype=bool)
        mask[picked] = False
        order = np.argsort(-scores[mask])[: self.settings.backlog]
        self._backlog = rows[mask][order]

    def _fresh(
        self,
        rows: np.ndarray,
        sources: np.ndarray,
        seen: Callable[[np.ndarray], np.ndarray],
        exclude: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Distinct, valid, unseen rows (and not in ``exclude``), first occurrence kept,
        projected onto the fixed parameters' levels."""
        if self._columns:
            rows = self.project(rows)
        if not len(rows):
            return rows, sources
        keys = self.space.row_keys(rows)
        _, first = np.unique(keys, return_index=True)
        keep = np.zeros(len(rows), dtype=bool)
        keep[first] = True
        keep &= self.space.valid_mask(rows) & ~seen(rows)
        if exclude is not None and len(exclude):
            keep &= ~np.isin(keys, self.space.row_keys(exclude))
        return rows[keep], sources[keep]

    def _neighbourhoods(self, top: np.ndarray, step: int) -> np.ndarray:
        s = self.settings
        parts = [self.space.neighbor_index(row, s.radius) for row in top]
        if s.perturbations and len(top):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                unit = qmc.Sobol(
                    self.space.dims, scramble=True, seed=self.seed * 104729 + step
                ).random(s.perturbations)
            offsets = (2 * unit - 1) * s.perturbation_width
            for row in top:
                centre = self.space.encode(row[None, :])
                parts.append(self.space.snap(np.clip(centre + offsets, 0.0, 1.0)))
        parts = [p for p in parts if len(p)]
        return np.concatenate(parts) if parts else np.empty((0, self.space.dims))
