"""GPR: Gaussian-process regression with trend terms and expected improvement.

The seeds' method (seed 003 §4.2, figure 13.4), on BoTorch/GPyTorch:

1. a constrained Sobol initial design (``n_init`` points, default ``max(10, 2d)``);
2. at each step, an exact GP — Matérn 5/2 with one length-scale per dimension and a
   trend ``h(x)ᵀβ`` as prior mean — fitted to the log of the measured values;
3. log-EI (or EI, PI, LCB) over the candidate pool: every unmeasured valid configuration
   when the space can be enumerated, otherwise a constrained Sobol sample, the
   neighbourhoods of the 3 best points and a backlog of earlier high-EI candidates;
4. ``ask(q)`` picks ``q`` distinct configurations greedily, each after conditioning the
   GP on the previous picks at their posterior mean (the "kriging believer");
5. after ``stall`` (7) measurements without a new best, one step *escapes*: LCB with a
   large kappa over the one-parameter moves of the best configuration (a pattern-search
   poll), the parameters taken in turn. With it (and the Laplacian space's model inputs),
   all 200 Laplacian replay runs end within 0.6% of the optimum at 120 evaluations
   (docs/benchmarks/gpr.md).

Failed configurations are never proposed again; they join the regression at the worst
value measured (``failed_value``), and a feasibility classifier multiplies EI by the
probability of success.

The strategy's state is a function of the trials told: each model step records its fit
(:class:`ModelFit`, with the exact hyperparameters) in its picks' info, the next fit
warm-starts from the last recorded one, and the pool's backlog is rebuilt by replaying
the recorded steps when it does not match them (a resumed run, an ask whose trials were
never stored).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from gpautotune.acquisition import (
    POOL_MAX_RAW,
    Acquisition,
    CandidatePool,
    make_acquisition,
    score_candidates,
)
from gpautotune.exceptions import ConfigError
from gpautotune.space import Space, sample_index
from gpautotune.strategies._base import Proposal, Strategy
from gpautotune.strategies._gpr_records import ModelFit, ModelPick, model_fits
from gpautotune.strategies._gpr_settings import GPRSettings
from gpautotune.strategies._registry import register
from gpautotune.strategies._screening import Screening
from gpautotune.surrogate import (
    GPSurrogate,
    SurrogateError,
    build_basis,
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
        self.basis = build_basis(o.trend, space, inputs=self.extra_inputs)
        self.gp_settings, self.pool_settings = o.gp(), o.pool()
        self.gp = GPSurrogate(
            self.gp_settings, space.dims + len(self.extra_inputs), len(self.basis)
        )
        self.pool = CandidatePool(space, self.pool_settings, seed)
        #: The fit whose step left the pool's backlog as it is (None: an empty backlog).
        self._backlog_fit: int | None = None
        self._design: np.ndarray | None = None
        #: Positions (in :attr:`trials`) of the trials that opened an escape step.
        self.escapes: list[int] = []
        self._scale_inputs()
        self.screening = Screening(o.screen) if o.screen is not None else None

    def _scale_inputs(self) -> None:
        """Centre and scale of the trend features and extra inputs, from the pool's valid
        configurations or a sample of 1,024."""
        reference = (
            self.pool.enumerated
            if self.pool.exhaustive
            else sample_index(self.space, 1024, seed=self.seed, max_raw=POOL_MAX_RAW, strict=False)
        )
        cols = self.space.columns(reference)
        h = self.basis(cols)
        self._h_mean = h.mean(axis=0) if len(h) else np.zeros(len(self.basis))
        self._h_scale = (
            np.where(h.std(axis=0) > 0, h.std(axis=0), 1.0) if len(h) else np.ones(len(self.basis))
        )
        e = (
            np.column_stack([cols[n] for n in self.extra_inputs])
            if self.extra_inputs
            else np.zeros((1, 0))
        )
        self._e_low = e.min(axis=0)
        self._e_span = np.where(np.ptp(e, axis=0) > 0, np.ptp(e, axis=0), 1.0)

    def settings(self) -> dict[str, Any]:
        """The options, with ``n_init`` and ``extra_inputs`` resolved; ``screen`` only when
        set and the stall options only with ``stall`` (so earlier run keys still hold)."""
        out = {**self.options.as_dict(), "n_init": self.n_init}
        out["extra_inputs"] = list(self.extra_inputs)
        if out["screen"] is None:
            del out["screen"]
        if out["stall"] is None:
            for key in ("stall", "stall_kappa", "escape"):
                del out[key]
        return out

    # ------------------------------------------------------------ features
    def features(self, index: np.ndarray) -> np.ndarray:
        """GP inputs: encoded parameters, extra inputs scaled to [0, 1], then standardised
        trend features (the kernel sees the first two groups, the trend the last)."""
        parts = [self.space.encode(index)]
        if self.extra_inputs or len(self.basis):
            cols = self.space.columns(index)
            if self.extra_inputs:
                e = np.column_stack([np.asarray(cols[n], dtype=float) for n in self.extra_inputs])
                parts.append((e - self._e_low) / self._e_span)
            if len(self.basis):
                parts.append((self.basis(cols) - self._h_mean) / self._h_scale)
        return np.hstack(parts)

    # ------------------------------------------------------------- propose
    def _propose(self, n: int) -> list[Proposal]:
        if len(self.trials) < self.n_init:
            initial = self._initial(min(n, self.n_init - len(self.trials)))
            if len(initial):
                return self.proposals(initial, source="initial")
        if len(self.measured) < 2:
            return self._space_filling(n, reason="fewer than 2 successful measurements")
        try:
            return self._screened_step(n) if self.screening else self._model_step(n)
        except SurrogateError as exc:
            _log.warning("GPR falls back to space filling: %s", exc)
            return self._space_filling(n, reason=str(exc))

    def _initial(self, n: int) -> np.ndarray:
        if self._design is None:
            self._design = sample_index(
                self.space, self.n_init, method=self.options.init_method, seed=self.seed
            )
        fresh = self._design[~self.is_seen(self._design)]
        return fresh[:n]

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
        their failed configurations too, at the worst value measured (at least one of
        ``trials`` must have succeeded)."""
        ok = [t for t in trials if t.ok]
        failed = [t for t in trials if not t.ok] if self.options.failed_value == "worst" else []
        index = self.space.to_index([t.config for t in ok + failed])
        values = np.array([t.value for t in ok], dtype=float)
        values = np.concatenate([values, np.full(len(failed), values.max())])
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
        with torch_threads(self.gp_settings.threads):
            return self._select(n)

    def _select(self, n: int) -> list[Proposal]:
        step = len(self.trials)
        past = model_fits(self.trials)
        self._sync_backlog(past)
        X, y = self._training_data(self.trials)
        number = past[-1].number + 1 if past else 0
        report = self.gp.fit(
            X,
            y,
            seed=(self.seed or 0) * 100_003 + step,
            warm=past[-1].hyperparameters if past else None,
            fresh=number % self.gp_settings.fresh_every == 0,
        )
        t0 = time.perf_counter()
        escape = self._stalled()
        rows, scores, sources, picked, picks = self._pick(
            n, step, y, escape, self.trials, self.is_seen
        )
        if not escape:  # an escape step's LCB scores say nothing of the backlog's EI
            self.pool.keep_backlog(rows, scores, picked)
            self._backlog_fit = number
        acq_s = time.perf_counter() - t0
        fit = ModelFit(number, step, n, escape, dict(self.gp.hyperparameters or {}))
        counts = (
            {str(k): int(v) for k, v in zip(*np.unique(sources, return_counts=True), strict=True)}
            if len(rows)
            else {}
        )
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
            **fit.info(),
        }
        configs = self.space.to_configs(rows[picked]) if len(picked) else []
        return [Proposal(c, {**common, **p.info()}) for c, p in zip(configs, picks, strict=True)]

    def _pick(
        self,
        n: int,
        step: int,
        y: np.ndarray,
        escape: bool,
        trials: Sequence[Trial],
        seen: Callable[[np.ndarray], np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[ModelPick]]:
        """Up to ``n`` picks of the fitted model (kriging believer after the first):
        the scored rows, their scores and sources, the picked positions and the picks."""
        best_f = float(self.gp.transform(y).min())
        feasible = self._feasibility_model(trials)
        model = self.gp.model
        picked: list[int] = []
        picks: list[ModelPick] = []
        rows = scores = sources = np.empty(0)
        o = self.options
        kind, kappa = ("lcb", o.stall_kappa) if escape else (o.acquisition, o.kappa)
        for q in range(n):
            acqf = make_acquisition(kind, model, best_f, kappa)

            def scorer(r: np.ndarray, acqf=acqf) -> np.ndarray:
                return self._weight(score_candidates(acqf, self.features(r)), r, feasible, kind)

            if q == 0:
                poll = (
                    self._poll_set(self.measured)
                    if escape and o.escape != "lcb"
                    else np.empty((0, self.space.dims))
                )
                if len(poll):
                    rows, scores, sources = poll, scorer(poll), np.full(len(poll), "poll")
                else:  # the regular pool, or an escape with every poll move measured
                    rows, scores, sources = self.pool.propose(step, seen, scorer)
            else:
                scores = scorer(rows)
                scores[picked] = -np.inf
            if not len(rows) or not np.isfinite(scores).any():
                break
            best = int(np.argmax(scores))
            picked.append(best)
            picks.append(ModelPick(str(sources[best]), float(scores[best]), escape and q == 0))
            if q + 1 < n:  # kriging believer: condition on the pick at its posterior mean
                x = torch.as_tensor(self.features(rows[best][None, :]), dtype=torch.float64)
                with torch.no_grad():
                    mean = model.posterior(x).mean
                model = model.condition_on_observations(x, mean.reshape(1, 1))
                best_f = min(best_f, float(mean))
        return rows, scores, sources, np.array(picked, dtype=int), picks

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
            trials = self.trials[: fit.step]
            X, y = self._training_data(trials)
            self.gp.restore(X, y, fit.hyperparameters)
            keys = set(
                self.space.row_keys(self.space.to_index([t.config for t in trials])).tolist()
            )

            def seen(rows: np.ndarray, keys: set[Any] = keys) -> np.ndarray:
                k = self.space.row_keys(rows).tolist()
                return np.fromiter((x in keys for x in k), dtype=bool, count=len(k))

            rows, scores, _, picked, _ = self._pick(fit.batch, fit.step, y, False, trials, seen)
            self.pool.keep_backlog(rows, scores, picked)
        self._backlog_fit = target

    def _observe(self, trials: Sequence[Trial]) -> None:
        start = len(self.trials) - len(trials)
        for i, trial in enumerate(trials, start):
            pick = ModelPick.of(trial.info)
            if pick is not None and pick.escape:
                self.escapes.append(i)

    # ---------------------------------------------------------- feasibility
    def _feasibility_model(self, trials: Sequence[Trial]) -> Any:
        """P(success) classifier of the told ``trials`` (None when off or one-sided)."""
        if not self.options.feasibility:
            return None
        labels = np.array([t.ok for t in trials])
        if labels.all() or not labels.any():
            return None
        from sklearn.gaussian_process import GaussianProcessClassifier
        from sklearn.gaussian_process.kernels import Matern

        X = self.space.encode([t.config for t in trials])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return GaussianProcessClassifier(kernel=Matern(nu=2.5), random_state=0).fit(X, labels)

    def _stalled(self) -> bool:
        """Whether ``stall`` measurements went by since the best one and the last escape step."""
        if self.options.stall is None:
            return False
        ok = [(t.value, i) for i, t in enumerate(self.trials) if t.ok]
        if not ok:
            return False
        since = max([min(ok)[1], *self.escapes])
        return len(self.trials) - 1 - since >= self.options.stall

    def _poll_set(self, ok: Sequence[Trial]) -> np.ndarray:
        """Unmeasured valid configurations one parameter away (any level) from the best;
        with ``escape="rotate"`` only along the parameters its escapes polled least often
        since it was found."""
        best = min(ok, key=lambda t: t.value)
        row = self.space.to_index([best.config])[0]
        # every level of a discrete parameter; real ones in 5% steps across the whole range
        radius = max([p.n_levels - 1 for p in self.space.parameters if p.is_discrete] + [20])
        moves = self.space.neighbor_index(row, radius)
        if not len(moves):
            return moves
        _, first = np.unique(self.space.row_keys(moves), return_index=True)
        moves = moves[np.sort(first)]
        moves = moves[~self.is_seen(moves)]
        if self.options.escape != "rotate" or not len(moves):
            return moves
        along = np.argmax(moves != row, axis=1)  # the one parameter each move changes
        since = next((i for i, t in enumerate(self.trials) if t is best), len(self.trials))
        polled = np.zeros(moves.shape[1], dtype=int)
        for i in self.escapes:
            if i > since:
                changed = np.flatnonzero(self.space.to_index([self.trials[i].config])[0] != row)
                polled[changed] += len(changed) == 1
        return moves[polled[along] == polled[along].min()]

    def _weight(
        self, scores: np.ndarray, rows: np.ndarray, feasible: Any, kind: Acquisition
    ) -> np.ndarray:
        """EI x P(success) (in log space for logei and pi); for LCB, which is no
        probability-weighted quantity, candidates more likely to fail than not are dropped."""
        if feasible is None:
            return scores
        p = np.clip(feasible.predict_proba(self.space.encode(rows))[:, 1], 1e-9, 1.0)
        if kind == "lcb":
            return np.where(p >= 0.5, scores, -np.inf) if (p >= 0.5).any() else scores
        return scores + np.log(p) if kind in ("logei", "pi") else scores * p
