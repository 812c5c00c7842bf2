"""``gpr-seeds``: GPR as seed 003 ran it on the Laplacian (Table 11.3's GPR row).

The seeds' script (``phrb/dopt_anova_experiments``, ``src/gpr.r``) did, per repetition:

1. measure 24 uniformly random valid configurations;
2. fit DiceKriging's ``km`` — the trend of seed 003 eq. 11.2, Matérn 5/2, a known nugget
   of ``1e-3``, maximum likelihood from the best of 400 random starts — to the run times
   themselves (no log, in seconds);
3. rank every unmeasured configuration by ``mean - 0.3 sd`` (the "UK" prediction) and
   measure the 6 lowest; refit; repeat until 120 measurements.

The script changed over its history (13 initial points, ``nugget = 1e-12 * var(y)``, a
growing LCB weight in its last version); the archived runs that are the thesis' row
(``data/gpr_03sd_nugget_best_points.csv``) came from the version above: their best
points are spread evenly over the first 24 measurements and rarely among the next 6 (one
batch), and their endpoints (``elements_number = y_component_number`` in {5, 6},
``vector_length`` 1, ``lws_y`` in {1, 8, 16}) are those of a nugget that swamps the
response — ``1e-3`` s² is ~1e14 times the run times' variance, so the kriging part of
the model vanishes and LCB ranks the configurations by the trend's prediction variance.
With ``nugget = 1e-12 * var(y)`` the row is not reproduced (docs/benchmarks/baselines.md).

This strategy is :class:`~gpautotune.strategies.gpr.GPRStrategy` with those options as
its defaults (``model="kriging"``, ``refit_every=6``, LCB with ``kappa=0.3``, 24 random
initial points, ``noise=1e-3`` with ``noise_units="objective"``, no log transform, the
parameters' values as the kernel's inputs, no escapes, no ``extra_inputs``). As in
GPR, ``derived_inputs="auto"`` then adds the products and quotients the space's
predicates name (``a * b <= 256`` gives the input ``a*b``): give
``derived_inputs="none"`` for the parameters alone. The trend
defaults to ``linear`` (every parameter: the script's first version, ``~ .``); give the
Laplacian's eq. 11.2 as ``trend`` to reproduce the thesis' row
(``configs/table-11-3.yaml``). The nugget is in the objective's units, so on another
problem it means another thing: give ``noise`` (and ``noise_units="variance"`` for a
fraction of the variance) to suit it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, NonNegativeFloat, PositiveInt

from gpautotune.acquisition import Acquisition
from gpautotune.strategies._gpr_settings import GPRSettings, _noise
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import strategy_settings
from gpautotune.strategies.gpr import GPRStrategy

__all__ = ["GPRSeeds", "GPRSeedsSettings"]


@strategy_settings
class GPRSeedsSettings(GPRSettings):
    """The options of :class:`GPRSeeds`: those of GPR (but for ``acquisition``),
    defaulting to the seeds' values.

    Attributes:
        n_init: initial design size (default 24, the seeds'); warm-start trials count
            towards it.
        init_method: ``random`` (default, the seeds' uniformly random valid
            configurations), ``sobol`` or ``lhs``.
        acquisition: ``lcb`` (default, the seeds' ``mean - kappa * sd``), ``logei``,
            ``ei`` or ``pi``; GPR's ``hedge`` is not offered here.
        model_choice: ``fixed`` (default): the model these options describe, always;
            ``loo`` chooses among GPs as in GPR (with ``model: gp``; the default kriging
            model has none to choose among).
        extra_inputs: derived quantities fed to the kernel besides the parameters
            (default none; with ``derived_inputs: auto`` the space's predicates may
            still add some).
        stall: after this many measurements without a new best, one step escapes as in
            GPR; ``None`` (default, the seeds'): never.
    """

    KEY_OMITS_DEFAULTS = ()  # no stored gpr-seeds run predates an option

    n_init: PositiveInt | None = 24
    init_method: Literal["sobol", "random", "lhs"] = "random"
    acquisition: Acquisition = "lcb"
    kappa: NonNegativeFloat = 0.3
    noise: Annotated[Literal["learned"] | float, BeforeValidator(_noise)] = 1e-3
    log_transform: bool = False
    feasibility: bool = False
    extra_inputs: tuple[str, ...] | None = ()
    stall: PositiveInt | None = None
    model: Literal["gp", "kriging"] = "kriging"
    model_choice: Literal["fixed", "loo"] = "fixed"
    refit_every: PositiveInt = 6
    inputs: Literal["encoded", "values"] = "values"
    noise_units: Literal["variance", "objective"] = "objective"


@register("gpr-seeds")
class GPRSeeds(GPRStrategy):
    """GPR with the seeds' Laplacian options as defaults (see the module docstring)."""

    Settings = GPRSeedsSettings
    options: GPRSeedsSettings
