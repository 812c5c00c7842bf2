"""GPR: Gaussian-process regression with trend terms and expected improvement.

The seeds' method (seed 003 §4.2, figure 13.4), on BoTorch/GPyTorch:

1. a constrained Sobol initial design (``n_init`` points, default ``max(10, 2d)``);
2. at each step, an exact GP — Matérn 5/2 with one length-scale per dimension and a
   trend ``h(x)ᵀβ`` as prior mean — fitted to the log of the measured values; from 40
   training rows on (``loo_after``), the GP among that one and two variants (the ``unit``
   length-scale prior, the copula output warp) whose closed-form leave-one-out means rank
   the measured values best, chosen on every fresh fit (``model_choice="loo"``, the
   default; ``"fixed"``: that one GP always); where the model has no declared inputs
   (``derived_inputs="auto"``, the default) the kernel also sees the products and
   quotients of parameters that the space's predicates name
   (:mod:`gpautotune.surrogate._monomials`; with ``infer_relations``, where a predicate
   is opaque, those of the relations the valid set obeys);
3. log-EI (or EI, PI, LCB, or GP-Hedge's draw among log-EI, log-PI and LCB by the gains
   of their earlier nominees) over the candidate pool: every unmeasured valid configuration
   when the space can be enumerated, otherwise a constrained Sobol sample, the
   neighbourhoods of the 3 best points and a backlog of earlier high-EI candidates; with
   ``lengthscale_draws`` (default off), the pool's best rows rescored by the improvement
   averaged over length-scale vectors drawn from the Laplace approximation at the fit;
4. ``ask(q)`` picks ``q`` distinct configurations greedily, each after conditioning the
   GP on the previous picks at their posterior mean (the "kriging believer"); the
   configurations still in flight (``ask(q, pending=...)``: asynchronous workers) are
   conditioned on the same way before the first pick;
5. after ``stall`` (7) measurements without a new best, one step *escapes* (one at a
   time: not while an escape pick is pending): LCB with a
   large kappa over the one-parameter moves of the best configuration (a pattern-search
   poll), the parameters taken in turn. With it (and the Laplacian space's model inputs),
   all 200 Laplacian replay runs end within 0.6% of the optimum at 120 evaluations
   (docs/benchmarks/gpr.md). With ``polish`` (default 0), in the budget's last share the
   escapes follow one another until the best configuration's moves are all measured.
   With ``poll_levels="nearest"`` (default ``any``) a poll looks only at the nearest
   unmeasured level on each side of an ordered parameter's.
   With ``restart_after`` (default off), a run whose best has not moved for that many
   measurements begins a new lineage: a fresh design, then GPs fitted to its trials only.

Failed configurations are never proposed again; they join the regression at the worst
value measured (``failed_value``), and a feasibility classifier multiplies EI by the
probability of success.

The strategy's state is a function of the trials told and the proposals pending: each
model step records its fit (:class:`ModelFit`, with the exact hyperparameters and the
configurations pending then) in its picks' info, the next fit warm-starts from the last
recorded one (among the trials and the pending proposals), and the pool's backlog is
rebuilt by replaying the recorded steps when it does not match them (a resumed run, an
ask whose trials were never stored).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from gpautotune.acquisition import (
    POOL_MAX_RAW,
    CandidatePool,
    HedgeStep,
    TrustRegion,
    draw,
    expected_improvement,
    portfolio,
)
from gpautotune.exceptions import ConfigError
from gpautotune.space import (
    Space,
    sample_index,
    valid_set_relations,
)
from gpautotune.strategies._base import Proposal, Strategy
from gpautotune.strategies._gpr_choice import GPChoice
from gpautotune.strategies._gpr_escape import EscapePolls, best_of, one_parameter_moves
from gpautotune.strategies._gpr_feasibility import (
    feasibility_model,
    success,
    weigh,
)
from gpautotune.strategies._gpr_inputs import ModelInputs, model_space
from gpautotune.strategies._gpr_lineage import Lineages
from gpautotune.strategies._gpr_picks import (
    AcquisitionScorer,
    StepPicks,
    StepPlan,
    integrated,
    scheduled,
    thompson_row,
)
from gpautotune.strategies._gpr_records import ModelFit, ModelPick, model_fits
from gpautotune.strategies._gpr_settings import GPRSettings
from gpautotune.strategies._registry import register
from gpautotune.strategies._screening import Screening
from gpautotune.surrogate import (
    SHORTCUTS,
    ForestSurrogate,
    GPSettings,
    GPSurrogate,
    KrigingSurrogate,
    SurrogateError,
    build_basis,
    predicate_monomials,
    torch_threads,
)
from gpautotune.trial import Trial

__all__ = ["GPRSettings", "GPRStrategy", "ModelFit", "ModelPick"]

_log = logging.getLogger(__name__)


@register("gpr")
class GPRStrategy(Strategy):
    """Bayesian optimisation with a GP surrogate over a constrained discrete space.

    Args:
        space: the search space.
        seed: seeds the initial design, the pools and the fits.
        **options: the fields of :class:`GPRSettings`.

    Raises:
        ConfigError: a bad option, a trend formula or extra input the space does not have.
    """

    Settings = GPRSettings
    options: GPRSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        o = self.options
        self.n_init = o.n_init if o.n_init is not None else max(10, 2 * space.dims)
        self.extra_inputs = tuple(space.model_inputs if o.extra_inputs is None else o.extra_inputs)
        unknown = [e for e in self.extra_inputs if e not in space.describe()["derived"]]
        if unknown:
            raise ConfigError(
                f"extra_inputs {unknown} are not derived quantities of the space; "
                f"derived: {sorted(space.describe()['derived'])}"
            )
        self.gp_settings, self.pool_settings = o.gp(), o.pool()
        self.pool = CandidatePool(space, self.pool_settings, seed)
        #: torch threads for scoring the pool: the process's, read at each model step
        self._score_threads = 1
        derive = o.derived_inputs == "predicates" or (
            o.derived_inputs == "auto" and not self.extra_inputs
        )
        #: Relations the valid set obeys, read where a predicate is opaque (``infer_relations``).
        self.relations = self._valid_set_relations() if derive and o.infer_relations else ()
        #: Products and quotients of parameters the predicates (and :attr:`relations`) name
        #: (``derived_inputs``).
        self.monomials = (
            predicate_monomials(space, exclude=self.extra_inputs, relations=self.relations)
            if derive
            else ()
        )
        #: The space as the model sees it: with ``codes="categorical"``, ordinals whose
        #: levels are codes (0, 1, ..., k-1, k >= 3) are categorical there.
        self.model_space = model_space(space, o.codes)
        # a trend formula is the user's: it reads the parameters as the space declares them
        trend_space = self.model_space if o.trend in SHORTCUTS else space
        try:
            self.basis = build_basis(o.trend, trend_space, inputs=self.extra_inputs)
        except ConfigError as exc:  # named like the other options' errors
            raise ConfigError(f"strategy {self.name!r}: trend: {exc}") from None
        reference = (  # the valid configurations, or a sample of 1,024, scale the inputs
            self.pool.enumerated
            if self.pool.exhaustive
            else sample_index(space, 1024, seed=self.seed, max_raw=POOL_MAX_RAW, strict=False)
        )
        #: The GP's inputs of index rows (:meth:`features`).
        self.gp_inputs = ModelInputs(
            space,
            model_space=self.model_space,
            basis=self.basis,
            extra_inputs=self.extra_inputs,
            monomials=self.monomials,
            inputs=o.inputs,
            reference=reference,
        )
        self._portfolio = portfolio(o.portfolio)  # (acquisition, kappa) pairs of hedge
        #: The GPs ``model_choice`` chooses among (one with ``fixed``); :attr:`gp` is the
        #: one the last fit (or restored fit) used.
        self.choice = GPChoice(
            [self._surrogate(v) for v in o.gp_variants()],
            self.gp_settings.fresh_every,
            o.loo_after,
        )
        self.gp = self.choice.gps[0]
        #: The fit whose step left the pool's backlog as it is (None: an empty backlog).
        self._backlog_fit: int | None = None
        #: The initial design of each lineage, by the position where it begins.
        self._designs: dict[int, np.ndarray] = {}
        #: The run's escape steps and the moves each polls.
        self.polls = EscapePolls(
            space,
            seed,
            escape=o.escape,
            levels=o.poll_levels,
            pairs=o.poll_pairs,
            adjacent=o.poll_adjacent,
        )
        #: The run's lineages (``restart_after``; one by default).
        self.lineages = Lineages(o.lineage(), self.n_init)
        #: The run's budget (:meth:`plan`; None when the caller gives none).
        self.budget: int | None = None
        self.screening = Screening(o.screen) if o.screen is not None else None
        #: The batch being measured with ``refit_every``: its first trial and its picks.
        self._batch: tuple[int, list[Proposal]] | None = None
        #: The rules of the candidates' trust region (``trust_region``), else None.
        self.trust = TrustRegion.for_dims(space.dims) if o.trust_region else None

    def _valid_set_relations(self) -> tuple[str, ...]:
        """The relations every valid configuration obeys, when a predicate is opaque (its
        arithmetic cannot be read) and the pool enumerates the valid set; else none."""
        opaque = any(c.names is None for c in self.space.constraints)
        if not opaque or not self.pool.exhaustive:
            return ()
        return valid_set_relations(self.space, self.pool.enumerated)

    def _surrogate(self, settings: GPSettings) -> GPSurrogate | KrigingSurrogate:
        """The model the ``model`` option names (a GP of ``settings``), over the
        parameters and extra inputs."""
        dims = self.gp_inputs.kernel_dims
        if self.options.model == "kriging":
            return KrigingSurrogate(self.options.kriging(), dims, len(self.basis))
        return GPSurrogate(settings, dims, len(self.basis))

    #: Keys :meth:`settings` adds that describe what the options resolved to (the
    #: derived inputs and inferred relations), not options a run can be given.
    RESOLVED = ("derived", "relations")

    def settings(self) -> dict[str, Any]:
        """The options, with ``n_init`` and ``extra_inputs`` resolved; ``screen`` only when
        set and the stall options only with ``stall`` (so earlier run keys still hold)."""
        out = {**self.options.key(), "n_init": self.n_init}
        out["extra_inputs"] = list(self.extra_inputs)
        if self.monomials:
            out["derived"] = [m.label for m in self.monomials]
        if self.relations:
            out["relations"] = list(self.relations)
        if self.model_space is self.space:  # the option changes nothing here
            del out["codes"]
        if out["screen"] is None:
            del out["screen"]
        if out["stall"] is None:
            for key in ("stall", "stall_kappa", "escape"):
                del out[key]
        return out

    # ------------------------------------------------------------ features
    def features(self, index: np.ndarray) -> np.ndarray:
        """GP inputs of the index rows ``index`` (:class:`ModelInputs`): the kernel's
        columns (parameters, extra inputs, predicate monomials), then the trend's."""
        return self.gp_inputs(index)

    # ------------------------------------------------------------- propose
    def _propose(self, n: int) -> list[Proposal]:
        start = self.lineages.start(len(self.trials))
        done, size = len(self.trials) - start, self.lineages.design_size(start)
        if done < size:
            initial = self._initial(min(n, size - done), start)
            if len(initial):
                return self.proposals(initial, source="initial", **self.lineages.info(start))
        if sum(t.ok for t in self.trials[start:]) < 2:
            return self._space_filling(n, reason="fewer than 2 successful measurements")
        try:
            return self._screened_step(n) if self.screening else self._model_step(n)
        except SurrogateError as exc:
            _log.warning("GPR falls back to space filling: %s", exc)
            return self._space_filling(n, reason=str(exc))

    def _initial(self, n: int, start: int = 0) -> np.ndarray:
        """Up to ``n`` unmeasured configurations of the initial design of the lineage that
        begins at ``start``: the run's first ``n_init`` of the constrained sample, or, for a
        later lineage, the first ``restart_init`` of another sample (seeded by the run's
        seed and ``start``) that the trials before it did not measure."""
        design = self._designs.get(start)
        if design is None and start == 0:  # all there are, where fewer than ``n_init``
            design = sample_index(
                self.space,
                self.n_init,
                method=self.options.init_method,
                seed=self.seed,
                strict=False,
            )
        elif design is None:
            size = self.lineages.design_size(start)
            drawn = sample_index(
                self.space,
                size + start,
                method=self.options.init_method,
                seed=(self.seed or 0) * 1_000_003 + start,
                max_raw=POOL_MAX_RAW,
                strict=False,
            )
            design = drawn[~self._seen_among(self.trials[:start])(drawn)][:size]
        self._designs[start] = design
        fresh = design[~self.is_seen(design)]
        return fresh[:n]

    def _best_rows(self, trials: Sequence[Trial]) -> np.ndarray | None:
        """The measured rows of ``trials`` that succeeded, best first."""
        ok = sorted((t for t in trials if t.ok), key=lambda t: t.value)
        return self.space.to_index([t.config for t in ok]) if ok else None

    def _polled_share(self, best: Trial, trials: Sequence[Trial]) -> float:
        """The share of ``best``'s one-parameter moves that ``trials`` measured (1 where it
        has none): how far along a pattern-search poll of it is."""
        moves = one_parameter_moves(self.space, self.space.to_index([best.config])[0])
        return float(self._seen_among(trials)(moves).mean()) if len(moves) else 1.0

    def _space_filling(self, n: int, reason: str) -> list[Proposal]:
        step = len(self.trials)
        rows = sample_index(
            self.space,
            min(4 * n + len(self.trials) + 16, 1 << 16),
            seed=(self.seed or 0) + step,
            max_raw=POOL_MAX_RAW,
            strict=False,
        )
        rows = rows[~self.is_seen(rows)][:n]
        return self.proposals(rows, source="fallback", fallback=reason)

    def _training_data(self, trials: Sequence[Trial]) -> tuple[np.ndarray, np.ndarray]:
        """Model inputs and values of the measured ``trials``; with ``failed_value="worst"``
        (``"median"``) their failed configurations too, at the worst (median) value
        measured (at least one of ``trials`` must have succeeded)."""
        ok = [t for t in trials if t.ok]
        impute = self.options.failed_value
        failed = [t for t in trials if not t.ok] if impute != "none" else []
        index = self.space.to_index([t.config for t in ok + failed])
        values = np.array([t.value for t in ok], dtype=float)
        fill = values.max() if impute == "worst" else np.median(values)
        values = np.concatenate([values, np.full(len(failed), fill)])
        keys = self.space.row_keys(index)
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        if len(uniq) < len(keys):  # repeated measurements (warm starts): average them
            values = np.bincount(inverse, weights=values) / np.bincount(inverse)
            index = index[first]
        return self.features(index), values

    def _screened_step(self, n: int) -> list[Proposal]:
        """Screen once when the initial design is told (restricting the pool to the
        parameters that matter), then propose as usual, recording the decision."""
        assert self.screening is not None
        if self.screening.decision is None and len(self.trials) >= self.n_init:
            gp = GPSurrogate(self.gp_settings, self.gp.d, len(self.basis))
            initial = self.trials[: self.n_init]
            decision = self.screening.screen(initial, gp, self.features, self.space, self.seed or 0)
            if decision.fixed:
                self.pool = CandidatePool(
                    self.space, self.pool_settings, self.seed, fixed=decision.fixed
                )
                self._backlog_fit = None
        reported = any("screen_st_high" in t.info for t in self.trials)
        return self.screening.annotate(self._model_step(n), reported=reported)

    def _model_step(self, n: int) -> list[Proposal]:
        # The fit's small matrices run fastest on one thread (GPSettings.threads); scoring
        # the pool (up to 100,000 rows) runs on the threads torch has outside the step: the
        # process's cores, or OMP_NUM_THREADS (1 in a comparison's workers). Its values are
        # the same floats on any number (tests/acquisition/test_functions.py).
        self._score_threads = torch.get_num_threads()
        with torch_threads(self.gp_settings.threads):
            if self.options.refit_every > 1:
                return self._batched(n)
            return self._select(n)

    def _batched(self, n: int) -> list[Proposal]:
        """``refit_every`` picks per fit: the model fitted on the trials before the batch
        ranks the pool once and the batch is its best configurations, in order (the seeds'
        Laplacian GPR measured the 6 lowest LCB values of each fit). The batch boundaries
        depend only on the number of trials, so a resumed run refits where the first did;
        a batch depends on those trials alone (pending configurations are only skipped)."""
        k = self.options.refit_every
        start = self.n_init + (len(self.trials) - self.n_init) // k * k
        if self._batch is None or self._batch[0] != start:
            enough = sum(t.ok for t in self.trials[:start]) >= 2
            self._batch = (start, self._select(k, start) if enough else [])
        picks = self._batch[1]
        seen = self.is_seen(self.space.to_index([p.config for p in picks])) if picks else []
        fresh = [p for p, s in zip(picks, seen, strict=True) if not s]
        return fresh[:n] or self._select(n)

    def _select(self, n: int, step: int | None = None) -> list[Proposal]:
        """Fit the model to the first ``step`` trials (a ``refit_every`` batch) and pick
        ``n``; by default to all the trials, conditioned on the pending configurations.
        With ``restart_after``, only the trials of the step's lineage are fitted."""
        batch = step is not None
        step = len(self.trials) if step is None else step
        start = self.lineages.start(step)
        trials = self.trials[start:step]  # the lineage's (``restart_after``): all by default
        # the steps of the picks still being evaluated count too (asynchronous workers)
        pending = [] if batch else self.pending_proposals
        rows_pending = np.empty((0, self.space.dims)) if batch else self.pending
        past = model_fits([*self.trials[:step], *pending])
        self._sync_backlog(past)
        X, y = self._training_data(trials)
        number = past[-1].number + 1 if past else 0
        own = [f for f in past if f.step >= start]  # a new lineage's first fit is fresh
        seed = (self.seed or 0) * 100_003 + step
        self.gp, report, variant, loo = self.choice.fit(X, y, seed, own, number)
        t0 = time.perf_counter()
        escape = self._stalled(step, pending)
        hedge = self.options.acquisition == "hedge" and not escape
        arm, gains = self._hedge_draw(step, past) if hedge else (None, None)
        # a batch fitted to earlier trials scores what they left unmeasured, as it did then
        seen = self._seen_among(self.trials[:step]) if batch else self.is_seen
        side = None if escape else self._trust_side(trials)
        scored = self._pick(n, step, y, escape, trials, seen, rows_pending, arm, side)
        if not escape:  # an escape step's LCB scores say nothing of the backlog's EI
            self.pool.keep_backlog(scored.rows, scored.scores, scored.picked)
            self._backlog_fit = number
        acq_s = time.perf_counter() - t0
        hyperparameters = dict(self.gp.hyperparameters or {})
        drawn = (
            HedgeStep(arm, gains.tolist(), scored.nominees.tolist())
            if arm is not None and gains is not None and len(scored.nominees)
            else None
        )
        fit = ModelFit(
            number, step, n, escape, hyperparameters, rows_pending.tolist(), drawn, variant
        )
        counts = scored.source_counts()
        common = {
            "source": "model",
            "fit_s": round(report.seconds, 4),
            "acq_s": round(acq_s, 4),
            "fit_fallback": report.fallback,
            "lengthscales": report.lengthscales,
            "trend": report.trend,
            "noise": report.noise,
            "pool": counts,
            "n_train": len(y),
            **self.lineages.info(start),
            **({"trust": side} if side is not None else {}),
            **({"loo": loo} if loo is not None else {}),
            **fit.info(),
        }
        picked = scored.picked
        configs = self.space.to_configs(scored.rows[picked]) if len(picked) else []
        return [
            Proposal(c, {**common, **p.info()}) for c, p in zip(configs, scored.picks, strict=True)
        ]

    def _plan(self, step: int, escape: bool, arm: int | None, pending: np.ndarray) -> StepPlan:
        """How the model step at ``step`` trials scores and picks (:class:`StepPlan`): a
        polling escape by LCB with ``stall_kappa``, an alternate one (``escape="far"``,
        ``"coverage"``) and a regular step by the run's acquisition (the portfolio's
        ``arm`` on a GP-Hedge step); a regular step's first pick as ``thompson_every`` or
        ``forest_every`` schedule it, its rows rescored over ``lengthscale_draws`` where
        nothing else changes the step (no ``pending`` row, no portfolio draw)."""
        o = self.options
        far = escape and self.polls.far(step)
        regular = self._portfolio[arm] if arm is not None else (o.acquisition, o.kappa)
        kind, kappa = ("lcb", o.stall_kappa) if escape and not far else regular
        if escape:
            return StepPlan(kind, kappa, far=far)
        thompson = scheduled(step, o.thompson_every, o.thompson_after, self.n_init, self.budget)
        forest = not thompson and scheduled(
            step, o.forest_every, o.forest_after, self.n_init, self.budget
        )
        integrate = bool(o.lengthscale_draws) and not (
            thompson or forest or arm is not None or len(pending)
        )
        return StepPlan(kind, kappa, thompson=thompson, forest=forest, integrate=integrate)

    def _pick(
        self,
        n: int,
        step: int,
        y: np.ndarray,
        escape: bool,
        trials: Sequence[Trial],
        seen: Callable[[np.ndarray], np.ndarray],
        pending: np.ndarray,
        arm: int | None = None,
        side: float | None = None,
    ) -> StepPicks:
        """Up to ``n`` picks of the fitted model, conditioned on the ``pending`` rows (in
        flight elsewhere) and on each pick after the first (the kriging believer; with
        ``refit_every`` > 1, the best ``n`` of one scoring), with the rows scored
        (:class:`StepPicks`). With a portfolio ``arm`` (``acquisition="hedge"``), that
        acquisition picks, and every portfolio acquisition's best row of the first scoring
        is its nominee. With a trust region's ``side``, only the pool's rows in its box are
        kept, if any."""
        best_f = float(self.gp.transform(y).min())
        feasible = (  # every lineage's failures
            feasibility_model(self.space, self.trials[:step]) if self.options.feasibility else None
        )
        model = self.gp.model
        if len(pending):
            model, best_f = self._believe(model, pending, best_f)
        picked: list[int] = []
        picks: list[ModelPick] = []
        rows = scores = sources = np.empty(0)
        ranked = self.options.refit_every > 1
        plan = self._plan(step, escape, arm, pending)
        nominees = np.empty((0, self.space.dims))

        def success_of(r: np.ndarray) -> np.ndarray | None:
            return success(self.space, r, feasible)

        def scoring(model: Any, record: list[np.ndarray] | None = None) -> AcquisitionScorer:
            if record is None:
                acquisitions, position = ((plan.kind, plan.kappa),), 0
            else:  # a portfolio step's first scoring: every acquisition's, the arm's picks
                acquisitions, position = self._portfolio, int(arm or 0)
            return AcquisitionScorer(
                acquisitions,
                model,
                best_f,
                self.features,
                success_of,
                self._score_threads,
                record,
                position,
            )

        poll, polled = (
            self._poll_moves([t for t in self.trials[self.lineages.start(step) :] if t.ok])
            if escape and not plan.far and self.options.escape != "lcb"
            else (np.empty((0, self.space.dims)), "")
        )
        record: list[np.ndarray] = []
        for q in range(n):
            scorer = scoring(model, record if arm is not None and q == 0 else None)
            if q == 0:
                if len(poll):
                    rows, scores, sources = poll, scorer(poll), np.full(len(poll), polled)
                else:  # the regular pool, or an escape with every poll move measured
                    rows, scores, sources = self.pool.propose(
                        step, seen, scorer, around=lambda: self._best_rows(trials)
                    )
                if plan.far or side is not None:  # another basin, or the trust region, if any
                    keep = (
                        self.polls.alternate_rows(rows, sources, trials)
                        if plan.far
                        else self._in_trust(rows, trials, side)
                    )
                    if keep.any():
                        rows, scores, sources = rows[keep], scores[keep], sources[keep]
                if plan.integrate:
                    scores = self._integrated(model, rows, scores, best_f, success_of, step)
                if record:  # the calls scored the pool's rows in order
                    nominees = rows[np.argmax(np.vstack(record), axis=0)]
            else:
                scores = scores if ranked else scorer(rows)
                scores[picked] = -np.inf
            if not len(rows) or not np.isfinite(scores).any():
                break
            if q == 0 and plan.thompson:
                rng = np.random.default_rng([self.seed or 0, step, 0x7505])
                best = thompson_row(model, rows, scores, rng, self.features, success_of)
            elif q == 0 and plan.forest:
                best = self._forest_row(rows, scores, trials, feasible, step)
            else:
                best = int(np.argmax(scores))
            picked.append(best)
            source = plan.first_source(str(sources[best])) if q == 0 else str(sources[best])
            picks.append(ModelPick(source, float(scores[best]), escape and q == 0))
            if q + 1 < n and not ranked:
                model, best_f = self._believe(model, rows[best][None, :], best_f)
        return StepPicks(rows, scores, sources, np.array(picked, dtype=int), picks, nominees)

    def _integrated(
        self,
        model: Any,
        rows: np.ndarray,
        scores: np.ndarray,
        best_f: float,
        success_of: Callable[[np.ndarray], np.ndarray | None],
        step: int,
    ) -> np.ndarray:
        """``scores`` of the pool's best ``rows`` averaged over ``lengthscale_draws``
        length-scale draws (:func:`integrated`), seeded by the run's seed and ``step``."""
        o = self.options
        rng = np.random.default_rng([self.seed or 0, step, 0x1A9])
        acquisition = (o.acquisition, o.kappa)
        return integrated(
            model,
            rows,
            scores,
            acquisition,
            best_f,
            o.lengthscale_draws,
            rng,
            self.features,
            success_of,
            self._score_threads,
        )

    def _hedge_draw(self, step: int, past: Sequence[ModelFit]) -> tuple[int, np.ndarray]:
        """GP-Hedge's draw for the step at ``step`` trials: the gains of the last recorded
        draw, each grown by the fitted model's negated mean at its acquisition's nominee
        then, and the portfolio position drawn with them (seeded by the step)."""
        last = next((f.hedge for f in reversed(past) if f.hedge is not None), None)
        gains = np.zeros(len(self._portfolio))
        if last is not None:
            x = torch.as_tensor(self.features(np.asarray(last.nominees)), dtype=torch.float64)
            with torch.no_grad():
                mean = self.gp.model.posterior(x).mean.reshape(-1).numpy()
            gains = np.asarray(last.gains) - mean
        rng = np.random.default_rng([self.seed or 0, step, 0x4EDE])
        return draw(gains, rng), gains

    # ------------------------------------------------------------- backlog
    def _sync_backlog(self, past: Sequence[ModelFit]) -> None:
        """Make the pool's backlog the one the recorded steps left, replaying them (their
        models restored, not refitted) when the backlog in memory is another one."""
        if self.pool.exhaustive:
            return
        screened = self.screening is not None and bool(
            self.screening.decision and self.screening.decision.fixed
        )
        first = self.n_init if screened else 0  # the screened pool starts afresh there
        steps = [f for f in past if not f.escape and f.step >= first]
        target = steps[-1].number if steps else None
        if target == self._backlog_fit:
            return
        _log.info("GPR: replaying %d model steps to rebuild the pool's backlog", len(steps))
        self.pool.clear_backlog()
        for fit in steps:
            trials = self.trials[self.lineages.start(fit.step) : fit.step]
            self.gp, _, y = self.restored(fit)
            pending = np.asarray(fit.pending, dtype=float).reshape(-1, self.space.dims)
            seen = self._seen_among(self.trials[: fit.step], pending)
            arm = fit.hedge.arm if fit.hedge is not None else None
            scored = self._pick(fit.batch, fit.step, y, False, trials, seen, pending, arm)
            self.pool.keep_backlog(scored.rows, scored.scores, scored.picked)
        self._backlog_fit = target

    def restored(
        self, fit: ModelFit
    ) -> tuple[GPSurrogate | KrigingSurrogate, np.ndarray, np.ndarray]:
        """The model the step ``fit`` used, restored from the hyperparameters it recorded
        on the trials of its lineage before it (no refit), with its training inputs and
        values."""
        X, y = self._training_data(self.trials[self.lineages.start(fit.step) : fit.step])
        gp = self.choice.of(fit)
        gp.restore(X, y, fit.hyperparameters)
        return gp, X, y

    def _seen_among(
        self, trials: Sequence[Trial], pending: np.ndarray | None = None
    ) -> Callable[[np.ndarray], np.ndarray]:
        """A mask of the rows whose configurations ``trials`` (or the ``pending`` index
        rows) hold."""
        index = self.space.to_index([t.config for t in trials])
        if pending is not None and len(pending):
            index = np.vstack([index, pending])
        keys = set(self.space.row_keys(index).tolist())

        def seen(rows: np.ndarray) -> np.ndarray:
            k = self.space.row_keys(rows).tolist()
            return np.fromiter((x in keys for x in k), dtype=bool, count=len(k))

        return seen

    def _believe(self, model: Any, rows: np.ndarray, best_f: float) -> tuple[Any, float]:
        """The kriging believer: ``model`` conditioned on ``rows`` (index rows not measured:
        earlier picks of the batch, configurations in flight) at its posterior mean there,
        and the incumbent lowered to the lowest of those means."""
        x = torch.as_tensor(self.features(rows), dtype=torch.float64)
        with torch.no_grad():
            mean = model.posterior(x).mean
        return model.condition_on_observations(x, mean.reshape(-1, 1)), min(
            best_f, float(mean.min())
        )

    def _observe(self, trials: Sequence[Trial]) -> None:
        start = len(self.trials) - len(trials)
        for i, trial in enumerate(trials, start):
            pick = ModelPick.of(trial.info)
            if pick is not None and pick.escape:
                self.polls.positions.append(i)
            self.lineages.observe(self.trials, i, self.budget, self._polled_share)

    def _stalled(self, step: int | None = None, pending: Sequence[Proposal] = ()) -> bool:
        """Whether ``stall`` measurements went by since the best one of the lineage
        (``restart_after``) and the last escape step (in the ``polish`` share of the
        budget, since the best one alone while a one-parameter move of it is unmeasured),
        among the first ``step`` trials (default: all), and no escape step is
        ``pending`` (being evaluated by asynchronous workers: one escape at a time)."""
        trials = self.trials[:step]
        if self.options.stall is None:
            return False
        start = self.lineages.start(len(trials))
        ok = [(t.value, i) for i, t in enumerate(trials) if t.ok and i >= start]
        escaping = (ModelPick.of(p.info) for p in pending)
        if not ok or any(pick is not None and pick.escape for pick in escaping):
            return False
        found = min(ok)[1]
        polling = self._polishing(len(trials)) and len(self._poll_moves([trials[found]])[0]) > 0
        since = max([found, *(i for i in self.polls.positions if i < len(trials) and not polling)])
        return len(trials) - 1 - since >= self.options.stall

    def plan(self, budget: int | None) -> None:
        self.budget = budget

    def _poll_moves(self, ok: Sequence[Trial]) -> tuple[np.ndarray, str]:
        """The unmeasured moves an escape from the best of ``ok`` polls, and their source
        (:meth:`EscapePolls.moves`)."""
        return self.polls.moves(ok, self.trials, self.is_seen)

    def _polishing(self, step: int) -> bool:
        """Whether the step at ``step`` trials is in the budget's last ``polish`` share."""
        if self.budget is None or not self.options.polish:
            return False
        return step >= self.budget - round(self.options.polish * self.budget)

    def _forest_row(
        self,
        rows: np.ndarray,
        scores: np.ndarray,
        trials: Sequence[Trial],
        feasible: Any,
        step: int,
    ) -> int:
        """The position among ``rows`` (some of whose ``scores`` are finite) of the
        forest's pick: a random forest, seeded by the run's seed and ``step``, fitted to
        the kernel's inputs and the (log) values of ``trials`` (failures imputed as for
        the GP), ranks the rows the GP scored by its expected improvement times the
        probability of success; the GP's ``scores`` break its ties."""
        seed = int(np.random.SeedSequence([self.seed or 0, step, 0xF02E]).generate_state(1)[0])
        finite = np.flatnonzero(np.isfinite(scores))
        ei = self.forest_scores(trials, rows[finite], feasible, seed)
        return int(finite[np.lexsort((-scores[finite], -ei))[0]])

    def forest_scores(
        self, trials: Sequence[Trial], rows: np.ndarray, feasible: Any, seed: int
    ) -> np.ndarray:
        """The expected improvement at ``rows`` of a random forest (seeded by ``seed``)
        fitted to the kernel's inputs and the (log) values of ``trials``, failures imputed
        as for the GP, times the ``feasible`` classifier's probability of success."""
        X, y = self._training_data(trials)
        d = self.gp.d
        z = np.log(y) if self.gp_settings.log_transform and bool(np.all(y > 0)) else y
        mean, sd = ForestSurrogate(seed).fit(X[:, :d], z).predict(self.features(rows)[:, :d])
        p = success(self.space, rows, feasible)
        return weigh(expected_improvement(mean, sd, float(z.min())), p, "ei")

    def _trust_side(self, trials: Sequence[Trial]) -> float | None:
        """The trust region's side after ``trials`` (replayed from the design's best);
        None without ``trust_region``."""
        if self.trust is None:
            return None
        values = [t.value if t.ok else None for t in trials]
        return self.trust.length(values, min(self.n_init, len(values)))

    def _in_trust(self, rows: np.ndarray, trials: Sequence[Trial], side: float) -> np.ndarray:
        """A mask of the ``rows`` in the box of ``side`` around the best of ``trials``."""
        best = best_of(trials)
        if best is None:
            return np.ones(len(rows), dtype=bool)
        center = self.gp_inputs.numeric(self.space.to_index([best.config]))[0]
        return TrustRegion.inside(self.gp_inputs.numeric(rows), center, side)
