"""D-optimal designs, linear model and transform (DLMT), seed 003 §11.3-11.5."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, NonNegativeInt, PositiveInt

from gpautotune.space import Space
from gpautotune.strategies._doptimal import fedorov
from gpautotune.strategies._fixing import Decision, FactorFixing, FactorFixingSettings
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import strategy_settings
from gpautotune.surrogate import Transform, estimable_columns

__all__ = ["DLMT", "DLMTSettings"]


@strategy_settings
class DLMTSettings(FactorFixingSettings):
    """Options of :class:`DLMT`.

    Attributes:
        formula: the initial model (see ``build_basis``).
        significance: p-value threshold for fixing a factor (0.05 Laplacian, 0.01 SPAPT).
        designs: explicit design sizes per step (later steps use ``design_factor``); each
            at least 2, as the model is fitted on two or more measurements.
        design_factor: design size per model column.
        transform: ``"auto"``, ``"boxcox"`` or ``"none"``.
        max_steps: stop after this many designs (None: no limit).
        fix: per step, a formula whose parameters are fixed at that step whatever their
            p-values (the seeds' automated Laplacian runs fixed ``vector_length + lws_y``,
            then ``y_component_number + threads_number``, ``elements_number`` and
            ``load_overlap + temporary_size``); later steps use ``significance``.
        augment: extra designs tried in a slice where no factor is significant.
        max_fix: fix at most this many factors per step, the most significant first
            (None: every significant one, the seeds' rule). ``"budget"`` (the default):
            as few per step as the run's budget allows, so that the designs of the steps
            left fit in what remains of it (:meth:`DLMT.paced_max_fix`).
        restarts: random starts of the Fedorov exchange.
        confirm: fix a significant factor only when its level in the predicted best
            configuration is also its level in the best configuration measured in the
            slice (the most significant factor when none agrees): a factor whose model is
            wrong over the slice (the Laplacian's ``elements_number`` while
            ``y_component_number`` is free) waits until the data back its level.
        candidates: size of the candidate set for the design (a uniform subset of the
            slice's valid configurations) and of the prediction sample in slices too
            large to enumerate (enumerable slices are scored entirely).
    """

    KEY_OMITS_DEFAULTS = ("confirm",)

    candidates: PositiveInt = 5_000
    significance: Annotated[float, Field(gt=0, lt=1)] = 0.05
    designs: tuple[Annotated[int, Field(ge=2)], ...] = ()
    design_factor: Annotated[float, Field(ge=1)] = 2.0
    transform: Transform = "auto"
    max_steps: PositiveInt | None = None
    fix: tuple[str, ...] = ()
    augment: NonNegativeInt = 1
    max_fix: PositiveInt | Literal["budget"] | None = "budget"
    restarts: PositiveInt = 5
    confirm: bool = False


@register("dlmt")
class DLMT(FactorFixing):
    """The thesis' method: D-optimal design, ANOVA, fix significant factors, repeat.

    Each step builds a D-optimal design (:func:`fedorov` over a candidate set of valid
    configurations of the current slice) for the model's terms whose parameters are
    still free, measures it, fits the model to every measurement in the slice — with a
    Box-Cox transform of the response when a Breusch-Pagan test finds the residuals
    heteroscedastic (``transform="auto"``) — and fixes every factor whose joint F-test
    has ``p < significance`` to its level in the configuration predicted best among the
    slice's valid ones — by default only as many of them, the most significant first, as
    the budget requires (``max_fix="budget"``: with budget to spare, one per step, so that
    a factor whose main-effect model is wrong while others are free waits for a smaller
    slice; the seeds fixed every significant one, ``max_fix=None``). Each design adds new
    points to those already measured in the slice (the exchange maximises the
    information of both). When no factor is
    significant, up to ``augment`` further designs are added to the same slice; if still
    none is, after ``max_steps`` steps, or when no free factor is left, the predicted best
    configuration is measured and the search stops, usually within the budget (54.8 points
    of 125 on the Laplacian in the seeds, 87 at one factor per step).

    The design size of a step is ``designs[k]`` when given, else ``design_factor`` times
    the number of model columns (intercept included, collinear terms left out): with
    the Laplacian model of seed 003 (eq. 11.2) that is 24, 18, 10, 6.

    The options are the fields of :class:`DLMTSettings`.
    """

    Settings = DLMTSettings
    options: DLMTSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._retries = 0
        self.fix_rules = [self._basis(rule, f"fix.{i}") for i, rule in enumerate(self.options.fix)]
        self._measuring = False
        self._budget: int | None = None

    def plan(self, budget: int | None) -> None:
        self._budget = budget

    def _step(self) -> np.ndarray | None:
        if self.phase == "final":
            return None
        if self._measuring:
            self._measuring = False
            final = self._analyse()
            if final is not None:
                self.phase = "final"
                return final
            self.step += 1
        return self._design()

    def _analyse(self) -> np.ndarray | None:
        """Fix the significant factors; the configuration to finish with, or None to go on."""
        model = self.fit(self.free_basis(), transform=self.options.transform)
        if model is None:
            return np.empty((0, self.space.dims))
        if self.step < len(self.fix_rules):
            free = set(self.subspace.free_names)
            significant = [n for n in self.fix_rules[self.step].parameters if n in free]
        else:
            significant = model.significant(self.options.significance)[: self._max_fix(model)]
        last = self.options.max_steps is not None and self.step + 1 >= self.options.max_steps
        best = self.predicted_best(model)
        if best is None:
            return np.empty((0, self.space.dims))
        if self.options.confirm and self.step >= len(self.fix_rules):
            significant = self._confirmed(significant, best)
        if significant:
            self._retries = 0
            self.fix(significant, best, model, len(self.slice_data()[1]))
        else:
            self.decisions.append(
                Decision(
                    self.step,
                    len(self.slice_data()[1]),
                    model.basis.term_names,
                    dict(model.pvalues),
                    {},
                    model.boxcox_lambda,
                )
            )
            if self._retries < self.options.augment and not last and self._unmeasured_left():
                self._retries += 1
                return None
        if not significant or last or not self.subspace.free:
            return best[None, :]
        return None

    def _max_fix(self, model: Any) -> int | None:
        if self.options.max_fix != "budget":
            return self.options.max_fix
        return self.paced_max_fix(len(model.basis.term_names))

    def paced_max_fix(self, columns: int) -> int:
        """The fewest factors to fix at this step such that fixing as many at every later
        step leaves designs that fit in the budget left (one evaluation kept for the
        final configuration).

        A design for ``f`` free factors is planned at ``design_factor`` times its model's
        columns, ``1 + f * columns / free`` (the current model's ``columns`` per free
        factor). More steps fixing fewer factors each decide each factor on a model
        that has fewer wrong terms left; the budget decides how many steps there can be.
        Without a budget (none given) one factor per step.
        """
        free = len(self.subspace.free_names)
        if self._budget is None or free <= 1:
            return 1
        left = self._budget - len(self.history) - 1
        per_factor = columns / free
        for k in range(1, free + 1):
            planned = sum(
                math.ceil(self.options.design_factor * (1 + f * per_factor))
                for f in range(free - k, 0, -k)
            )
            if planned <= left:
                return k
        return free

    def _confirmed(self, significant: list[str], best: np.ndarray) -> list[str]:
        """The significant factors whose predicted-best level is also their level in the
        best configuration measured in the slice; the most significant one if none is."""
        index, values = self.slice_data()
        measured = index[int(np.argmin(values))]
        names = self.space.names
        agree = [n for n in significant if best[names.index(n)] == measured[names.index(n)]]
        return agree or significant[:1]

    def _unmeasured_left(self) -> bool:
        fresh = self.unexplored()
        return fresh is None or len(fresh) > 0

    def _design(self) -> np.ndarray | None:
        """A D-optimal set of new points of the slice, augmenting the slice's measurements."""
        pool = self.subspace.candidates(self.options.candidates, self.rng)
        pool = pool[
            np.fromiter(
                (k not in self.history for k in self.keys(pool)), dtype=bool, count=len(pool)
            )
        ]
        if len(pool) > self.options.candidates:
            pool = pool[self.rng.choice(len(pool), self.options.candidates, replace=False)]
        self._measuring = True
        if len(pool) == 0:  # the slice is fully measured: analyse it as it is
            return pool
        basis = self.free_basis()
        H = basis(self.space.columns(pool))
        kept = estimable_columns(H)
        centre, scale = H[:, kept].mean(axis=0), H[:, kept].std(axis=0)
        measured, _ = self.slice_data()
        prior = (
            (basis(self.space.columns(measured))[:, kept] - centre) / scale
            if len(measured)
            else None
        )
        F = np.column_stack([np.ones(len(pool)), (H[:, kept] - centre) / scale])
        if prior is not None:
            prior = np.column_stack([np.ones(len(prior)), prior])
        size = (
            self.options.designs[self.step]
            if self.step < len(self.options.designs)
            else math.ceil(self.options.design_factor * F.shape[1])
        )
        chosen = fedorov(F, size, self.rng, prior=prior, restarts=self.options.restarts)
        return pool[np.sort(chosen)]
