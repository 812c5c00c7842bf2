"""The options of the GPR strategy (:class:`GPRSettings`), kept apart from its algorithm."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self, TypeVar

from pydantic import (
    BeforeValidator,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    model_validator,
)

from gpautotune.acquisition import PORTFOLIO, Acquisition, PoolSettings
from gpautotune.exceptions import ConfigError
from gpautotune.strategies._gpr_lineage import LineageRule
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.surrogate import GPSettings, Kernel, KrigingSettings

T = TypeVar("T")

__all__ = ["GPRSettings"]

#: A GP that ``model_choice: loo`` may choose: the run's own with one setting changed.
Variant = Literal["unit", "copula", "gamma", "matern32", "rbf"]
VARIANTS: dict[str, dict[str, str]] = {
    "unit": {"lengthscale_prior": "unit"},
    "copula": {"output_warp": "copula"},
    "gamma": {"lengthscale_prior": "gamma"},
    "matern32": {"kernel": "matern32"},
    "rbf": {"kernel": "rbf"},
}

#: The options that shape the escape steps, which only ``stall`` begins.
ESCAPE_OPTIONS = ("escape", "stall_kappa", "poll_pairs", "poll_adjacent", "poll_levels", "polish")


def _noise(value: Any) -> str | float:
    """``"learned"`` or a finite variance >= 0 (numbers in strings too, as YAML writes
    ``1e-4``)."""
    if value == "learned":
        return value
    try:
        variance = float(value) if not isinstance(value, bool) else -1.0
    except (TypeError, ValueError):
        variance = -1.0
    if not 0 <= variance < math.inf:
        raise ValueError("must be 'learned' or a fixed noise variance >= 0")
    return variance


@strategy_settings
class GPRSettings(StrategySettings):
    """Options of :class:`GPRStrategy`.

    Attributes:
        n_init: initial design size (default ``max(10, 2 * dims)``); warm-start trials
            count towards it.
        init_method: ``sobol`` (constrained, FILTER_SOBOL), ``random`` or ``lhs``.
        trend: ``constant``, ``linear``, ``quadratic`` or a formula over parameter names.
        kernel: ``matern52``, ``matern32``, ``matern12`` or ``rbf``.
        lengthscale_prior: ``gamma`` (local), ``dim_scaled`` (smooth) or ``unit`` (near the
            unit range, as Optuna's GP sampler); see
            :class:`~gpautotune.surrogate.GPSettings`.
        acquisition: ``logei``, ``ei``, ``pi`` or ``lcb``; or ``hedge``, GP-Hedge: each
            step draws one of log-EI, log-PI and LCB (kappa 1.96) by how fast the model
            predicts the configurations each nominated before, each keeping at least a
            tenth of the draws (:mod:`gpautotune.acquisition._hedge`; off by default:
            docs/benchmarks/gpr-spaces.md).
        portfolio: the acquisitions ``hedge`` draws among (two or more of ``logei``,
            ``ei``, ``pi``, ``lcb``; LCB with kappa 1.96).
        kappa: the LCB's ``mean - kappa * sd`` weight.
        noise: ``"learned"`` or a fixed nugget variance (standardised units, that is a
            fraction of the modelled values' variance; see ``noise_units``).
        log_transform: model log(y) for positive objectives.
        output_warp: ``none`` or ``copula`` (normal scores of the ranks; see
            :class:`~gpautotune.surrogate.GPSettings`).
        input_warp: ``none`` or ``kumaraswamy`` (a learned Kumaraswamy CDF per kernel
            input; see :class:`~gpautotune.surrogate.GPSettings`).
        gradient: ``autograd`` (default) or ``closed_form``: the fit's likelihood
            gradient by hand for the default kernel, cheaper per evaluation, other floats
            and so other runs (:class:`~gpautotune.surrogate.GPSettings`).
        model_choice: ``loo`` (default): on every fresh fit (the first, then every
            ``fresh_every``-th) from ``loo_after`` training rows on, also fit the GPs of
            ``variants`` (by default the same GP with ``lengthscale_prior: unit`` and
            with ``output_warp: copula``), and keep
            until the next fresh fit the one whose leave-one-out means rank the measured
            values best (Spearman; failed configurations left out), since each of those
            variants removes trapped runs on some tables and makes others
            (docs/benchmarks/gpr-spaces.md). The choice and every variant's score are
            recorded in the step's info (``loo``). ``fixed``: the GP these options
            describe, always. With ``model="kriging"`` there is no GP to choose among, and
            the model is fixed.
        variants: the GPs ``model_choice: loo`` chooses among besides the run's own, each
            the same GP with one setting changed: ``unit`` (``lengthscale_prior:
            unit``), ``copula`` (``output_warp: copula``), ``gamma`` (``lengthscale_prior:
            gamma``), ``matern32`` and ``rbf`` (``kernel``). Default ``[unit, copula]``;
            ties go to the earlier, the run's own GP first.
        loo_after: the fewest training rows a fresh fit chooses on (default 40); the
            fresh fits on fewer keep the run's own GP (a Spearman correlation over an
            initial design's 10 to 20 points has a standard error near 0.2, more than the
            differences it would choose by).
        restarts: extra maximum-likelihood starts drawn from the priors.
        fresh_every: refit from fresh starts (defaults and prior draws) every this many
            steps; in between, the fit starts from the previous step's hyperparameters.
        max_iter: L-BFGS iterations of each fresh start (default 200).
        max_iter_warm: L-BFGS iterations of the fit from the previous step's
            hyperparameters (default 50; that fit sets most of a step's cost).
        lengthscale_max: upper bound of the length-scales (unit-box units, above 0.05),
            or ``None``.
        exhaustive_limit: score every valid configuration when there are at most this many.
        sample_size: constrained Sobol candidates per step (default ``60 * dims``).
        n_best: best points whose neighbourhoods join the pool.
        radius: discrete neighbourhood radius in levels.
        perturbations: Sobol perturbations per best point.
        backlog: unpicked high-score candidates carried to the next step.
        feasibility: once some configurations have failed (unknown constraints: build
            errors, out-of-resources launches), multiply EI by a GP classifier's
            probability that a configuration runs.
        failed_value: ``worst`` (default): failed configurations join the regression at
            the worst value measured so far, so that the GP itself learns where the
            failing region lies and stops proposing its neighbours (on the four pnpoly
            caches, failures at 120 evaluations fall from 40-84 to about 5 per run);
            ``median``: they join it at the median value measured, a milder step where
            the optimum borders a failing region; ``none``: they are left out of the
            regression (the classifier alone steers away from them).
        extra_inputs: derived quantities fed to the kernel besides the parameters
            (default: the space's ``model_inputs``).
        derived_inputs: ``predicates``: the kernel also sees, on a log scale, each
            product and quotient of positive numeric parameters that the space's
            predicates name (``MWG % (MDIMC * VWM) == 0`` gives ``MDIMC*VWM`` and
            ``MWG/(MDIMC*VWM)``; :mod:`gpautotune.surrogate._monomials`), besides
            ``extra_inputs``, so that a quantity the kernel's author restricted gets a
            length-scale of its own; ``none``: it does not; ``auto`` (default):
            ``predicates`` where the model has no ``extra_inputs`` (the space declares
            no model inputs), ``none`` where it has some, since declared inputs are
            the user's own account of what acts together (docs/benchmarks/gpr-spaces.md).
        infer_relations: where a predicate is opaque (a set of rows, such as a Kernel
            Tuner cache replayed without its script's restrictions, or a function) and the
            valid configurations are enumerated, the derived inputs (when
            ``derived_inputs`` gives any) also come from the divisibility relations and
            the bounds on products and quotients that every valid configuration obeys
            (:func:`gpautotune.space.valid_set_relations`: on the GEMM and convolution
            caches, their scripts' restrictions). Off by default: over 40 seeds it is
            level with the default on the gemm caches, ahead at 60 evaluations on
            convolution, and adds about 0.05 s to an ask on the largest cache
            (docs/benchmarks/gpr-spaces.md, "Relations read from the valid set").
        screen: "screen, then tune": after the initial design, fix the parameters whose
            total Sobol index has an upper bound below this threshold (in (0, 1)) to their
            level in the best initial configuration (see
            :mod:`gpautotune.strategies._screening`).
        stall: after this many measurements without a new best (counted from the best,
            or from the last escape), one step (all of its ``q`` picks) is an *escape*: it
            picks by LCB with ``stall_kappa`` instead of the acquisition, as Kernel Tuner's
            ``multi`` acquisition switches functions when one stops improving. ``None``:
            never. The default 7 was measured on the Laplacian replay (docs/benchmarks/gpr.md).
        stall_kappa: the escape step's ``mean - stall_kappa * sd`` weight (a bold 10 left
            the Laplacian's 1.21 basin where 3 led into it; docs/benchmarks/gpr.md).
        escape: where the escape step looks: ``rotate`` (default), the unmeasured valid
            configurations that differ from the best one in a single parameter (any
            level: a pattern-search poll), restricted to the parameters polled least
            often since the best was found, so that successive escapes take the
            parameters in turn; the whole pool when no move is left. ``cycle``, the same
            moves, with the polls counted over the whole run (each against the best
            configuration before it), so that a new best does not restart the rotation
            and parameters whose effect the model misses are still polled. ``poll``, every
            one-parameter move at once (LCB keeps returning to the parameter with the most
            uncertain levels); ``lcb``, the whole pool (it tends to pick corners).
            ``far``, every second escape picks by the acquisition (not LCB) among the
            configurations that differ from the best one in at least half of the
            parameters (another basin), the others poll as ``rotate``. ``coverage``,
            every second escape picks by the acquisition among the pool's
            configurations in the *cell* (two discrete parameters, one level each)
            whose measurements fall furthest short of its share of the space (read
            from the pool's space-filling sample), the others poll as ``rotate``.
        poll_pairs: when every one-parameter move of the best configuration is measured
            or none is valid (the poll is complete: it is a local minimum of those
            moves), the polling escapes look at its unmeasured valid two-parameter moves
            (any two discrete parameters, any levels; at most 20,000, a seeded sample of
            them beyond; :meth:`Space.pair_index`) instead of the whole pool, as a
            variable-neighbourhood search widens its neighbourhood. Default off.
        poll_adjacent: when the poll is complete (as for ``poll_pairs``, which looks
            first), the polling escapes look at the best configuration's unmeasured valid
            *adjacent* moves instead of the whole pool: every discrete parameter within
            one level of its own, any number of them moved at once (Kernel Tuner's
            ``adjacent`` neighbours; at most 20,000, a seeded sample of them beyond;
            :meth:`Space.adjacent_index`). Default off.
        poll_levels: which levels of an ordered parameter a polling escape looks at:
            ``any`` (default), every unmeasured level; ``nearest``, on each side of the
            best configuration's level the nearest unmeasured one (a compass poll's
            step: LCB with a bold ``stall_kappa`` otherwise tends to pick the level the
            model knows least, often the farthest); ``alternate``, ``nearest`` on the
            first, third, ... escape since the best was found and ``any`` on the others;
            ``alternate_any``, ``any`` on the first, third, ... and ``nearest`` on the
            others.
            Categorical parameters (no order) and real ones keep every move.
        polish: the share of the run's budget (the last evaluations; only when the run
            gives the strategy its budget) in which the escapes follow one another: from
            ``stall`` measurements after the best on, every step polls a one-parameter
            move of the best configuration (as ``escape`` chooses them) until none is left
            unmeasured, as a pattern search completes its poll before it stops. Default 0
            (none): one escape per ``stall`` measurements to the end. In a trapped run
            the fastest one-parameter move of the best configuration can be ranked last
            among its moves by every acquisition (docs/benchmarks/gpr-spaces.md,
            "The default's trapped runs, traced").
        restart_after: begin a new *lineage* after this many measurements without a new
            best in the current one (its initial design measured): a fresh constrained
            Sobol design of ``n_init`` unmeasured configurations, then model steps whose GP
            is fitted to the lineage's own trials only, as TuRBO starts again with a fresh
            design when its trust region collapses. Measured configurations are never
            proposed again, the run's best is the best of every lineage, and the
            feasibility classifier keeps every trial. Default none (off).
        restart_init: the size of a later lineage's initial design (default ``n_init``).
        restart_length: with ``restart_after``, a later lineage lasts this many trials,
            after which the first lineage resumes, its GP fitted to every trial (the later
            lineage's too) and ``restart_after`` counted again from there: an excursion
            rather than a new start. Default none: a lineage lasts until the next.
        restart_from: the share of the run's budget in which no new lineage begins
            (without a budget: none). Default 0.
        restart_count: the most later lineages a run begins (default none: no limit).
        restart_rule: when ``restart_after`` counts: ``stall`` (default), the lineage's
            measurements since its best; ``local_minimum``, its measurements after its
            initial design since its best, and only once every one-parameter move of the
            best is measured (a pattern search's local minimum).
        restart_share: with ``restart_rule="local_minimum"``, the share of the best's
            one-parameter moves that must be measured (default 1: every one). Below 1 a
            lineage ends once its pattern-search poll is that far along: where the best
            has many moves (a parameter of many levels) it rarely is.
        trust_region: restrict the model steps' candidates to a TuRBO-style box around
            the best configuration (side 0.8 of the unit box at first, doubled after 3
            improving measurements in a row, halved after ``max(4, dims)`` without one,
            started again below 0.5**7; :mod:`gpautotune.acquisition._trust`); the whole
            pool where the box holds no unmeasured configuration. Escape steps are not
            restricted. Default off (docs/benchmarks/gpr-spaces.md).
        thompson_every: from the ``thompson_after`` share of the run's budget on, every
            this many steps (counted by trials, so a resumed run draws where the first
            did) the first pick is the minimiser of one joint draw of the GP's posterior
            (Thompson sampling; :mod:`gpautotune.acquisition._thompson`) over the 500
            best candidates by the acquisition and 500 others, those more likely to fail
            than not left out. Escape steps take precedence. Default none (off).
        thompson_after: the share of the budget before the first Thompson step (without
            a budget: from the initial design on). Default 0.5.
        forest_every: from the ``forest_after`` share of the run's budget on, every this
            many steps (counted by trials) the first pick is the candidate of the GP's
            pool with the highest expected improvement by a random forest fitted to the
            same inputs and log values (SMAC's model;
            :class:`~gpautotune.surrogate.ForestSurrogate`), times the probability of
            success; among equal forest scores, the GP's acquisition decides. A second
            model whose errors are not the GP's. Escape and Thompson steps take
            precedence. Default none (off).
        forest_after: the share of the budget before the first forest step (without a
            budget: from the initial design on). Default 0.5.
        lengthscale_draws: with N > 0, a regular model step (not an escape, Thompson or
            forest step, nor a portfolio draw; no configuration in flight) rescores the
            pool's ``DRAWN_ROWS`` (2,000) best rows by the mean of their acquisition (expected
            improvement, not its log, times the probability of success) over N
            length-scale vectors drawn from the Laplace approximation of the
            length-scales' posterior at the fit (:mod:`gpautotune.surrogate._laplace`)
            and picks the best of them: the integrated acquisition of Spearmint, so
            that a region one length-scale writes off keeps the improvement another
            gives it. Needs unbounded length-scales, no input warp and the GP model.
            Default 0 (off).
        codes: how the model reads an ordinal whose levels are the codes 0, 1, ..., k-1
            (k >= 3), as tuning scripts number alternatives (``between_method: [0, 1, 2,
            3]``): ``ordinal`` (default), by level index like any ordinal;
            ``categorical``, one-hot for the kernel and one dummy per level in a named
            trend, so that no order between the choices is assumed (on the four pnpoly
            caches it moved trapped runs between tables rather than removing them:
            docs/benchmarks/gpr-spaces.md). The run's settings hold it only when it
            changes the model (``categorical`` on a space with such a parameter).
        model: ``gp`` (the GP of :class:`~gpautotune.surrogate.GPSettings`) or
            ``kriging``, universal kriging fitted as DiceKriging's ``km`` fitted it for
            the seeds (:mod:`gpautotune.surrogate._kriging`): tensor-product Matérn 5/2,
            GLS trend, maximum likelihood without priors, the nugget ``noise`` (a number:
            a fraction of the variance). The GP's kernel, prior, warp and restart options
            do not apply to it.
        refit_every: fit the model once per this many measurements and measure its best
            ``refit_every`` configurations of one scoring, in order, without conditioning
            on the picks (the seeds' Laplacian GPR: 6); 1 refits before every pick (and
            ``ask(q)`` conditions each pick on the previous ones).
        inputs: what the kernel sees of the parameters: ``encoded`` (the space's
            encoding: log2 for powers of two, level index for ordinals) or ``values`` (their
            values scaled linearly to [0, 1]; the seeds' R models saw the raw values). In
            both, a categorical of more than two levels is one-hot (unordered: every two of
            its levels equally far apart).
        noise_units: how a fixed ``noise`` is read with ``model="kriging"``:
            ``variance`` (a fraction of the modelled values' variance) or ``objective``
            (a variance in the modelled values' own units, as R's ``km(nugget = ...)``
            took it: the seeds' ``1e-3`` on Laplacian run times of ~1e-10 s is ~1e14
            times their variance, so that LCB ranks by the trend's prediction variance;
            docs/benchmarks/baselines.md).
    """

    KEY_OMITS_DEFAULTS = (
        "model",
        "refit_every",
        "inputs",
        "noise_units",
        "input_warp",
        "portfolio",
        "polish",
        "trust_region",
        "thompson_every",
        "variants",
        "thompson_after",
        "forest_every",
        "forest_after",
        "lengthscale_draws",
        "infer_relations",
        "gradient",
        "max_iter",
        "max_iter_warm",
        "poll_pairs",
        "poll_adjacent",
        "poll_levels",
        "restart_after",
        "restart_init",
        "restart_rule",
        "restart_length",
        "restart_from",
        "restart_count",
        "restart_share",
    )

    n_init: PositiveInt | None = None
    init_method: Literal["sobol", "random", "lhs"] = "sobol"
    trend: str = "linear"
    kernel: Kernel = "matern52"
    lengthscale_prior: Literal["gamma", "dim_scaled", "unit"] = "dim_scaled"
    acquisition: Literal[Acquisition, "hedge"] = "logei"
    portfolio: tuple[Acquisition, ...] = PORTFOLIO
    kappa: NonNegativeFloat = 0.3
    noise: Annotated[Literal["learned"] | float, BeforeValidator(_noise)] = "learned"
    log_transform: bool = True
    output_warp: Literal["none", "copula"] = "none"
    input_warp: Literal["none", "kumaraswamy"] = "none"
    gradient: Literal["autograd", "closed_form"] = "autograd"
    model_choice: Literal["fixed", "loo"] = "loo"
    loo_after: NonNegativeInt = 40
    variants: tuple[Variant, ...] = ("unit", "copula")
    restarts: NonNegativeInt = 1
    fresh_every: PositiveInt = 10
    max_iter: PositiveInt = 200
    max_iter_warm: PositiveInt = 50
    lengthscale_max: Annotated[float, Field(gt=0.05)] | None = None
    exhaustive_limit: NonNegativeInt = 100_000
    sample_size: PositiveInt | None = None
    n_best: NonNegativeInt = 3
    radius: NonNegativeInt = 2
    perturbations: NonNegativeInt = 64
    backlog: NonNegativeInt = 200
    feasibility: bool = True
    failed_value: Literal["median", "none", "worst"] = "worst"
    extra_inputs: tuple[str, ...] | None = None
    derived_inputs: Literal["auto", "none", "predicates"] = "auto"
    infer_relations: bool = False
    screen: Annotated[float, Field(gt=0, lt=1)] | None = None
    stall: PositiveInt | None = 7
    stall_kappa: PositiveFloat = 10.0
    escape: Literal["coverage", "cycle", "far", "lcb", "poll", "rotate"] = "rotate"
    poll_pairs: bool = False
    poll_adjacent: bool = False
    poll_levels: Literal["alternate", "alternate_any", "any", "nearest"] = "any"
    polish: Annotated[float, Field(ge=0, lt=1)] = 0.0
    restart_after: PositiveInt | None = None
    restart_init: PositiveInt | None = None
    restart_rule: Literal["local_minimum", "stall"] = "stall"
    restart_length: PositiveInt | None = None
    restart_from: Annotated[float, Field(ge=0, lt=1)] = 0.0
    restart_count: PositiveInt | None = None
    restart_share: Annotated[float, Field(gt=0, le=1)] = 1.0
    trust_region: bool = False
    thompson_every: PositiveInt | None = None
    thompson_after: Annotated[float, Field(ge=0, lt=1)] = 0.5
    forest_every: PositiveInt | None = None
    forest_after: Annotated[float, Field(ge=0, lt=1)] = 0.5
    lengthscale_draws: NonNegativeInt = 0
    codes: Literal["categorical", "ordinal"] = "ordinal"
    model: Literal["gp", "kriging"] = "gp"
    refit_every: PositiveInt = 1
    inputs: Literal["encoded", "values"] = "encoded"
    noise_units: Literal["variance", "objective"] = "variance"

    @model_validator(mode="after")
    def _kriging_nugget(self) -> GPRSettings:
        if self.model == "kriging" and self.noise == "learned":
            raise ValueError(
                "model 'kriging' needs a fixed nugget: give noise as a fraction of the "
                "variance (the seeds: 1e-12)"
            )
        if self.noise_units == "objective" and self.model != "kriging":
            raise ValueError("noise_units 'objective' needs model 'kriging'")
        if len(set(self.portfolio)) < 2 or len(set(self.portfolio)) < len(self.portfolio):
            raise ValueError(
                f"portfolio needs two or more distinct acquisitions, got {list(self.portfolio)}"
            )
        if self.portfolio != PORTFOLIO and self.acquisition != "hedge":
            raise ValueError("portfolio is drawn among only with acquisition 'hedge'")
        if self.restart_after is None and (
            self.restart_init is not None
            or self.restart_rule != "stall"
            or self.restart_length is not None
            or self.restart_from
            or self.restart_count is not None
        ):
            raise ValueError(
                "restart_init, restart_rule, restart_length, restart_from and "
                "restart_count shape the lineages of restart_after: give restart_after "
                "or leave them out"
            )
        if self.lengthscale_draws and (
            self.model != "gp" or self.lengthscale_max is not None or self.input_warp != "none"
        ):
            raise ValueError(
                "lengthscale_draws needs model 'gp' with unbounded length-scales and no "
                "input warp: leave out lengthscale_max and input_warp, or lengthscale_draws"
            )
        if self.restart_share != 1 and self.restart_rule != "local_minimum":
            raise ValueError(
                "restart_share is the share of the poll restart_rule 'local_minimum' "
                "waits for: give restart_rule: local_minimum or leave it out"
            )
        return self

    @classmethod
    def build(cls, options: Mapping[str, Any], where: str) -> Self:
        """As :meth:`StrategySettings.build`, and refuses a model choice asked of the
        kriging model, a ``loo_after`` other than the default with ``model_choice:
        fixed``, a ``thompson_after`` (``forest_after``) other than the default without
        ``thompson_every`` (``forest_every``), or an escape option (:data:`ESCAPE_OPTIONS`)
        other than its default with ``stall: None``."""
        settings = super().build(options, where)
        if settings.model == "kriging" and options.get("model_choice") == "loo":
            raise ConfigError(
                f"{where}: model_choice 'loo' chooses among GPs and model 'kriging' has "
                "none; give model_choice: fixed or model: gp"
            )
        for name, what in (("loo_after", "when"), ("variants", "among what")):
            default = cls.parameters()[name].default
            if options.get(name, default) != default and settings.model_choice != "loo":
                raise ConfigError(
                    f"{where}: {name} sets {what} model_choice 'loo' chooses; "
                    f"give model_choice: loo or leave {name} out"
                )
        for name, every in (("thompson_after", "thompson_every"), ("forest_after", "forest_every")):
            if cls._given(settings, options, name) and getattr(settings, every) is None:
                raise ConfigError(
                    f"{where}: {name} sets when the steps of {every} begin; "
                    f"give {every} or leave {name} out"
                )
        escapes = [n for n in ESCAPE_OPTIONS if cls._given(settings, options, n)]
        if escapes and settings.stall is None:
            raise ConfigError(
                f"{where}: {', '.join(escapes)} shape{'s' if len(escapes) == 1 else ''} the "
                "escape steps of stall, and stall is None (no escapes): give stall or leave "
                f"{'it' if len(escapes) == 1 else 'them'} out"
            )
        return settings

    @classmethod
    def _given(cls, settings: GPRSettings, options: Mapping[str, Any], name: str) -> bool:
        """Whether option ``name`` was given, at a value other than its default."""
        return name in options and getattr(settings, name) != cls.parameters()[name].default

    def kriging(self) -> KrigingSettings:
        """The kriging model's settings (``model="kriging"``): nugget and log transform."""
        return KrigingSettings(
            nugget=float(self.noise),
            nugget_units=self.noise_units,
            log_transform=self.log_transform,
        )

    def gp(self) -> GPSettings:
        """The GP's settings: the options of the same names (the rest at their defaults)."""
        return self._shared(GPSettings)

    def gp_variants(self) -> tuple[GPSettings, ...]:
        """The GPs ``model_choice`` chooses among, the run's own first (one only with
        ``fixed`` or the kriging model; a variant equal to an earlier one is left out)."""
        own = self.gp()
        if self.model_choice == "fixed" or self.model == "kriging":
            return (own,)
        variants = [own, *(dataclasses.replace(own, **VARIANTS[v]) for v in self.variants)]
        return tuple(v for i, v in enumerate(variants) if v not in variants[:i])

    def lineage(self) -> LineageRule:
        """When lineages begin and end: the ``restart_*`` options."""
        return self._shared(LineageRule)

    def pool(self) -> PoolSettings:
        """The candidate pool's sizes: the options of the same names."""
        return self._shared(PoolSettings)

    def _shared(self, cls: type[T]) -> T:
        names = set(self.names())
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        return cls(**{f.name: getattr(self, f.name) for f in fields if f.name in names})
