"""Sobol sensitivity indices of a function or of a fitted GP, with honest intervals.

For each parameter ``i``, the first-order index ``S1_i = Var(E[f | X_i]) / Var(f)`` is
the share of the variance of ``f`` that ``X_i`` explains alone; the total index
``ST_i = E[Var(f | X_~i)] / Var(f)`` is the share left when every other factor is
known, interactions included (seed 003 §4.2.3). Two input distributions are offered:

* ``domain="box"`` — the parameters independent and uniform over their levels, the
  constraints **ignored** (the classical definition; see :mod:`._box`). This is what
  the function depends on, and what screening uses. A GP trained on valid
  configurations extrapolates outside the valid set; its posterior paths say how
  little it knows there, and the intervals grow accordingly.
* ``domain="valid"`` — uniform over the valid configurations (dependent inputs;
  Kucherenko's definitions, see :mod:`._valid`): how the objective varies where it can
  be measured.

The function is either deterministic (a Python function of an index matrix: the
intervals are the Monte-Carlo error alone) or a fitted :class:`GPSurrogate`: the
indices are computed on ``paths`` posterior sample functions of the GP (Matheron's
rule, :mod:`._paths`) and on ``bootstrap`` resamples of the design, and the interval
pools both (Le Gratiet et al. 2014; :mod:`._estimates`). A GP's indices describe its
output scale: ``log`` of the objective by default.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import pandas as pd

from gpautotune.exceptions import ConfigError
from gpautotune.sensitivity._box import box_estimates
from gpautotune.sensitivity._estimates import summarise, summarise_pairs
from gpautotune.sensitivity._paths import FunctionPaths, PathSampler, PosteriorMean, PosteriorPaths
from gpautotune.sensitivity._valid import valid_estimates
from gpautotune.space import Space
from gpautotune.surrogate import GPSurrogate

__all__ = [
    "DOMAINS",
    "Domain",
    "SobolResult",
    "check_domain",
    "check_paths",
    "sobol_indices",
    "surrogate_indices",
]

_log = logging.getLogger(__name__)
Domain = Literal["box", "valid"]
#: The input distributions ``domain`` names (``Domain``'s values), in the order shown.
DOMAINS: tuple[Domain, ...] = get_args(Domain)
#: Fitted noise variance (standardised output units) above which a warning is logged.
NOISE_WARNING = 0.1


@dataclass(frozen=True, eq=False)
class SobolResult:
    """Indices of every parameter and how they were computed.

    Attributes:
        table: one row per parameter: ``parameter, S1, S1_low, S1_high, ST, ST_low,
            ST_high, rank`` (1 = largest ST), then ``S1_sd_model, S1_sd_mc, ST_sd_model,
            ST_sd_mc`` (the standard deviations due to the surrogate and to the Monte-Carlo
            sample) and, for a GP, ``S1_mean_fn, ST_mean_fn`` (the indices of the posterior
            mean function alone, what a plug-in analysis would report).
        second_order: ``parameter_1, parameter_2, S2, S2_low, S2_high, ...`` or None.
        domain: ``box`` or ``valid``.
        method: a sentence saying how the indices were computed.
        evaluations: function (or path) evaluations used.
    """

    table: pd.DataFrame
    second_order: pd.DataFrame | None
    domain: Domain
    method: str
    evaluations: int
    confidence: float

    def screened(self, threshold: float) -> list[str]:
        """Parameters whose whole ST interval lies below ``threshold``: candidates to fix."""
        return self.table.loc[self.table["ST_high"] < threshold, "parameter"].tolist()


def check_domain(domain: object) -> None:
    """Refuse a ``domain`` that is none of :data:`DOMAINS` (checked before anything is
    read or fitted, by the library and by ``gpautotune explain``).

    Raises:
        ConfigError: ``domain`` is not ``box`` or ``valid``.
    """
    if domain not in DOMAINS:
        allowed = " or ".join(map(repr, DOMAINS))
        raise ConfigError(f"domain must be {allowed}, not {domain!r}")


def check_paths(paths: object) -> None:
    """Refuse a number of GP posterior sample paths that is not a whole number >= 1.

    Raises:
        ConfigError: ``paths`` is not an int >= 1.
    """
    if isinstance(paths, bool) or not isinstance(paths, int) or paths < 1:
        raise ConfigError(f"paths (GP posterior sample paths) must be >= 1, got {paths!r}")


def _check(
    space: Space, domain: str, n: int, bootstrap: int, confidence: float, second_order: bool
) -> int:
    check_domain(domain)
    if n < 8 or bootstrap < 0 or not 0.0 < confidence < 1.0:
        raise ConfigError(
            "need n >= 8, bootstrap >= 0 and 0 < confidence < 1; "
            f"got {n}, {bootstrap}, {confidence}"
        )
    if second_order and domain != "box":
        raise ConfigError("second-order indices are only defined here over the box (domain='box')")
    if domain == "box" and n & (n - 1):
        rounded = 1 << math.ceil(math.log2(n))
        _log.info("Saltelli base sample %d rounded up to the power of two %d", n, rounded)
        return rounded
    return n


def sobol_indices(
    function: Callable[[np.ndarray], np.ndarray] | PathSampler,
    space: Space,
    *,
    domain: Domain = "box",
    n: int = 1024,
    bootstrap: int = 100,
    confidence: float = 0.95,
    second_order: bool = False,
    seed: int = 0,
    real_levels: int = 32,
) -> SobolResult:
    """First-order and total Sobol indices of ``function`` over ``space``.

    Args:
        function: ``f(index) -> (M,)`` on an index matrix (see :class:`Space`), or a path
            sampler returning ``(P, M)`` (e.g. :class:`PosteriorPaths`).
        space: the search space (its parameters are the factors).
        domain: ``box`` (independent uniform levels, constraints ignored) or ``valid``.
        n: box: Saltelli base rows (a power of two; ``n (d + 2)`` evaluations per path,
            ``n (2d + 2)`` with second order); valid: sampled valid configurations.
        bootstrap: resamples of the base rows for the Monte-Carlo error (0: none).
        confidence: level of the intervals.
        second_order: also estimate S_ij (box only).
        seed: seeds the design and the bootstrap.
        real_levels: cells of a real factor for the valid-set estimators.

    Returns:
        a :class:`SobolResult`.

    Raises:
        ConfigError: an argument is out of range, or ``function`` did not return one
            finite value per row of the index matrix (``(P, M)`` for a path sampler).
    """
    n = _check(space, domain, n, bootstrap, confidence, second_order)
    sampler = function if hasattr(function, "n_paths") else FunctionPaths(function)
    if domain == "box":
        est = box_estimates(
            sampler, space, n, bootstrap=bootstrap, second_order=second_order, seed=seed
        )
        per_function = n * (space.dims + 2 + space.dims * second_order)
        how = (
            f"box (constraints ignored): Saltelli design, N={n} ({per_function}"
            " points per function), SALib's Saltelli-2010 S1 and Jansen ST estimators"
        )
    else:
        est = valid_estimates(
            sampler, space, n, bootstrap=bootstrap, seed=seed, real_levels=real_levels
        )
        points = (
            f"all {est.base} valid configurations"
            if est.population
            else f"{est.base} uniform valid points"
        )
        how = (
            f"valid set (dependent inputs, Kucherenko 2012): {points}, "
            "grouped-variance S1, conditional-variance ST"
        )
    resamples = est.s1.shape[1] - 1
    how += (
        f"; {sampler.n_paths} {sampler.label} x {resamples} bootstrap resamples, "
        f"{confidence:.0%} percentile intervals"
    )
    return SobolResult(
        summarise(space.names, est, confidence),
        summarise_pairs(space.names, est, confidence),
        domain,
        how,
        est.evaluations,
        confidence,
    )


def surrogate_indices(
    gp: GPSurrogate,
    features: Callable[[np.ndarray], np.ndarray],
    space: Space,
    *,
    paths: int = 32,
    rff_features: int = 256,
    bayesian_trend: bool = True,
    hyperparameters: Literal["laplace", "fitted"] = "laplace",
    mean_function: bool = True,
    domain: Domain = "box",
    n: int = 1024,
    bootstrap: int = 100,
    confidence: float = 0.95,
    second_order: bool = False,
    seed: int = 0,
    real_levels: int = 32,
) -> SobolResult:
    """Sobol indices of a fitted GP, with intervals over ``paths`` posterior functions.

    ``domain``, ``n``, ``bootstrap``, ``confidence``, ``second_order``, ``seed`` and
    ``real_levels`` are as in :func:`sobol_indices`.

    Args:
        gp: a fitted :class:`GPSurrogate`.
        features: index matrix -> GP inputs (``GPRStrategy.features``).
        space: the search space.
        paths: posterior sample functions (the surrogate's uncertainty).
        rff_features: random Fourier features per path.
        bayesian_trend: draw the trend coefficients from their posterior in every path
            (see :class:`PosteriorPaths`); False keeps them at their fitted values.
        hyperparameters: ``laplace`` draws every path's kernel hyperparameters from a
            Laplace approximation of their posterior; ``fitted`` keeps the fitted ones.
        mean_function: also report the indices of the posterior mean (``*_mean_fn``).

    Raises:
        ConfigError: an argument is out of range (checked before any path is drawn).
    """
    check_paths(paths)
    check_domain(domain)
    if rff_features < 1:
        raise ConfigError(f"rff_features must be >= 1, got {rff_features!r}")
    common = dict(domain=domain, n=n, confidence=confidence, seed=seed, real_levels=real_levels)
    sampler = PosteriorPaths(
        gp,
        features,
        paths,
        seed=seed,
        rff_features=rff_features,
        bayesian_trend=bayesian_trend,
        hyperparameters=hyperparameters,
    )
    result = sobol_indices(sampler, space, bootstrap=bootstrap, second_order=second_order, **common)
    noise = float(gp.model.likelihood.noise.detach().mean())
    if noise > NOISE_WARNING:
        _log.warning(
            "the GP attributes %.0f%% of the output variance to noise: "
            "if the objective is deterministic, "
            "effects may have been mistaken for noise and the intervals may miss them",
            100 * noise,
        )
    table, evaluations = result.table, result.evaluations
    if mean_function:
        plug_in = sobol_indices(PosteriorMean(gp, features), space, bootstrap=0, **common)
        table = table.assign(
            S1_mean_fn=plug_in.table["S1"].to_numpy(), ST_mean_fn=plug_in.table["ST"].to_numpy()
        )
        evaluations += plug_in.evaluations
    method = f"{result.method}; fitted noise variance {noise:.3g} of the standardised output"
    return SobolResult(
        table, result.second_order, result.domain, method, evaluations, result.confidence
    )
