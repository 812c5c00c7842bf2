"""How a GPR model step scores the pool's rows and takes its first pick.

A regular step scores every row by the run's acquisition (log-EI by default) weighed by
the failure model's probability of success and picks the best; an escape step scores the
poll's moves by a bold LCB. The options that change this are decided here from the step
alone (:class:`StepPlan`): a Thompson draw or the random forest's expected improvement for
the first pick (``thompson_every``, ``forest_every``), and the pool's best rows rescored
over length-scale draws (``lengthscale_draws``). These are functions of the fitted model,
the rows and their scores; the strategy keeps the trials, the pool and the forest (fitted
to the trials).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scipy.special import logsumexp

from gpautotune.acquisition import (
    Acquisition,
    make_acquisition,
    score_many,
    thompson_pick,
    thompson_subset,
)
from gpautotune.strategies._gpr_feasibility import likely_to_run, weigh
from gpautotune.strategies._gpr_records import ModelPick
from gpautotune.surrogate import lengthscale_draws, lengthscales, torch_threads

__all__ = [
    "DRAWN_ROWS",
    "AcquisitionScorer",
    "StepPicks",
    "StepPlan",
    "integrated",
    "scheduled",
    "thompson_row",
]

#: How many of the pool's best rows (by the fitted GP's acquisition) ``lengthscale_draws``
#: rescores: 16 draws then score about twice the rows of one scoring of a 17,956-row pool
#: (0.264 s per ask against 0.171 s on gemm/RTX_3090, docs/benchmarks/gpr-spaces.md).
DRAWN_ROWS = 2_000


@dataclass(frozen=True)
class StepPlan:
    """Which way a model step scores its rows and takes its first pick.

    Attributes:
        kind: the acquisition that scores the rows (LCB on a polling escape).
        kappa: its LCB weight.
        far: an alternate escape (``escape="far"`` or ``"coverage"``): the pool's rows far
            from the best, or in the least measured cell, scored by the run's acquisition.
        thompson: the first pick is a Thompson draw (``thompson_every``).
        forest: the first pick is the random forest's (``forest_every``).
        integrate: the pool's best rows are rescored over length-scale draws
            (``lengthscale_draws``).
    """

    kind: Acquisition
    kappa: float
    far: bool = False
    thompson: bool = False
    forest: bool = False
    integrate: bool = False

    def first_source(self, source: str) -> str:
        """The source the first pick records: ``thompson``, ``forest``, else the row's."""
        return "thompson" if self.thompson else "forest" if self.forest else source


class StepPicks(NamedTuple):
    """What a model step's scoring left: the ``rows`` it scored (index rows), their
    ``scores`` and ``sources`` (pool, poll, ...), the ``picked`` positions among them and
    their ``picks`` in order, and on a GP-Hedge step each portfolio acquisition's best
    row of the first scoring (its ``nominees``; none otherwise)."""

    rows: np.ndarray
    scores: np.ndarray
    sources: np.ndarray
    picked: np.ndarray
    picks: list[ModelPick]
    nominees: np.ndarray

    def source_counts(self) -> dict[str, int]:
        """How many of the scored rows came from each source."""
        if not len(self.rows):
            return {}
        kinds, counts = np.unique(self.sources, return_counts=True)
        return {str(k): int(v) for k, v in zip(kinds, counts, strict=True)}


def scheduled(step: int, every: int | None, after: float, n_init: int, budget: int | None) -> bool:
    """Whether ``step`` is one of every ``every`` steps from the ``after`` share of the
    ``budget`` (at least the initial design's ``n_init``) on; never when ``every`` is
    None."""
    if every is None:
        return False
    start = n_init
    if budget is not None:
        start = max(start, round(after * budget))
    return step >= start and (step - start) % every == 0


class AcquisitionScorer:
    """Scores of index rows by one acquisition of a fitted ``model``, each weighed by the
    failure model's probability of success (``success_of``); the pool calls it on its
    rows in order.

    With a ``record`` (a GP-Hedge step's first scoring), every acquisition of
    ``acquisitions`` scores each call from one posterior, its weighed scores appended to
    ``record`` as one column each, and the ``arm``-th is returned; without, only the first.
    """

    def __init__(
        self,
        acquisitions: Sequence[tuple[Acquisition, float]],
        model: Any,
        best_f: float,
        features: Callable[[np.ndarray], np.ndarray],
        success_of: Callable[[np.ndarray], np.ndarray | None],
        threads: int,
        record: list[np.ndarray] | None = None,
        arm: int = 0,
    ) -> None:
        self.acqfs = [make_acquisition(k, model, best_f, c) for k, c in acquisitions]
        self.kinds = [k for k, _ in acquisitions]
        self.features, self.success_of, self.threads = features, success_of, threads
        self.record, self.arm = record, arm

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        p = self.success_of(rows)
        with torch_threads(self.threads):
            values = score_many(self.acqfs, self.features(rows))
        weighted = [weigh(v, p, k) for v, k in zip(values, self.kinds, strict=True)]
        if self.record is None:
            return weighted[0]
        self.record.append(np.column_stack(weighted))
        return weighted[self.arm]


def integrated(
    model: Any,
    rows: np.ndarray,
    scores: np.ndarray,
    acquisition: tuple[Acquisition, float],
    best_f: float,
    draws: int,
    rng: np.random.Generator,
    features: Callable[[np.ndarray], np.ndarray],
    success_of: Callable[[np.ndarray], np.ndarray | None],
    threads: int,
) -> np.ndarray:
    """The :data:`DRAWN_ROWS` best of ``rows`` by ``scores``, rescored by their
    ``acquisition`` (times the probability of success) averaged over ``draws``
    length-scale vectors drawn by ``rng`` from the Laplace approximation at ``model``'s
    fit: the mean of the improvement, not of its log; -inf for the rest."""
    order = np.argsort(-scores, kind="stable")[:DRAWN_ROWS]
    top = order[np.isfinite(scores[order])]
    if not len(top):
        return scores
    kind, kappa = acquisition
    x, p = features(rows[top]), success_of(rows[top])
    drawn = []
    for values in lengthscale_draws(model, draws, rng):
        with lengthscales(model, values):
            acqf = make_acquisition(kind, model, best_f, kappa)
            with torch_threads(threads):
                drawn.append(weigh(score_many([acqf], x)[0], p, kind))
    values = np.vstack(drawn)
    if kind in ("logei", "pi"):  # logs: the log of the mean
        mean = logsumexp(values, axis=0) - np.log(len(values))
    else:
        mean = values.mean(axis=0)
    out = np.full(len(scores), -np.inf)
    out[top] = mean
    return out


def thompson_row(
    model: Any,
    rows: np.ndarray,
    scores: np.ndarray,
    rng: np.random.Generator,
    features: Callable[[np.ndarray], np.ndarray],
    success_of: Callable[[np.ndarray], np.ndarray | None],
) -> int:
    """The position among ``rows`` (some of whose ``scores`` are finite) of the Thompson
    pick: one joint posterior draw of ``model`` by ``rng`` over the best and a spread of
    the other scored rows, those more likely to fail than not left out."""
    subset = thompson_subset(scores, rng)
    keep = likely_to_run(success_of(rows[subset]))
    subset = subset if keep is None else subset[keep]
    return int(subset[thompson_pick(model, features(rows[subset]), rng)])
