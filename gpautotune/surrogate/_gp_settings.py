"""How the GP surrogate is built and fitted (:class:`GPSettings`), checked when made: a
value the fit would read as another (a misspelt kernel, a negative noise) is refused."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gpautotune.exceptions import ConfigError

__all__ = ["LENGTHSCALE_MIN", "GPSettings", "Kernel"]

Kernel = Literal["matern52", "matern32", "matern12", "rbf"]


@dataclass(frozen=True)
class GPSettings:
    """How the GP is built and fitted.

    Attributes:
        kernel: Matérn ν=5/2 (default), ν=3/2, ν=1/2 (``matern12``, the exponential
            kernel), or RBF; one length-scale per dimension.
        lengthscale_prior: ``gamma`` — Gamma(3, 6) on each length-scale (mode 0.33 of
            the unit range: local structure, more uncertainty between measurements) — or
            ``dim_scaled`` — LogNormal(√2 + log(d)/2, √3) (Hvarfner et al. 2024, BoTorch's
            current default, which favours long length-scales, i.e. smooth functions) — or
            ``unit`` — LogNormal(0, 1): length-scales near the unit range, as Optuna's
            ``GPSampler`` prior (mode 1 of its inverse squared length-scales) keeps them,
            so that no parameter is fitted as irrelevant.
        noise: ``"learned"`` (homoscedastic, with ``noise_floor``) or a fixed nugget
            variance (in standardised output units).
        noise_floor: lower bound of the learned noise variance.
        log_transform: model log(y) (only applied when every y > 0).
        restarts: extra fits from hyperparameters drawn from their priors.
        trend_prior_scale: standard deviation of the Normal prior on trend coefficients.
        max_iter: L-BFGS iterations per fresh start.
        max_iter_warm: L-BFGS iterations from the previous step's hyperparameters.
        fresh_every: besides the warm start from the previous fit, also start from the
            defaults and ``restarts`` prior draws on every ``fresh_every``-th fit (the
            caller counts the fits: :meth:`GPSurrogate.fit`'s ``fresh``).
        threads: torch threads while fitting and predicting (small GPs are fastest, and
            not slowed by other processes, on one thread). GPR scores its candidate pool
            on the threads torch has outside its step instead (the process's cores, or
            ``OMP_NUM_THREADS``), with the same floats.
        output_warp: ``copula`` replaces the (log) outputs by the normal scores of their
            ranks before standardising (as HEBO's and SMAC's output warpings do): a few
            very slow configurations then no longer dominate the fit, and the model spends
            its flexibility on the good region. ``none`` keeps log(y).
        lengthscale_max: upper bound of every length-scale (unit-box units), or ``None``.
            Maximum likelihood on few points in many dimensions tends to pick very long
            length-scales, i.e. a near-linear model that is confidently wrong far from the
            data; a bound keeps posterior uncertainty there.
        input_warp: ``kumaraswamy`` passes each kernel input (the first ``n_dims``
            columns, all in [0, 1]) through a Kumaraswamy CDF whose two concentrations
            are fitted with the other hyperparameters (BoTorch's ``Warp``, Snoek et al.
            2014; LogNormal(0, √0.75) priors, centred on the identity), so that a parameter
            can matter more at one end of its levels than at the other. ``none`` keeps
            the inputs as encoded.
        gradient: how the fit gets the marginal likelihood's gradient: ``autograd``
            (GPyTorch's floats, bit for bit) or ``closed_form`` (written by hand for the
            default kernel, about half the cost per evaluation, floats within ~1e-14, so
            other L-BFGS steps; other kernels keep autograd). See ``surrogate/_mll.py``.
    """

    kernel: Kernel = "matern52"
    lengthscale_prior: Literal["gamma", "dim_scaled", "unit"] = "dim_scaled"
    noise: Literal["learned"] | float = "learned"
    noise_floor: float = 1e-6
    log_transform: bool = True
    restarts: int = 1
    trend_prior_scale: float = 1.0
    max_iter: int = 200
    max_iter_warm: int = 50
    threads: int = 1
    fresh_every: int = 10
    lengthscale_max: float | None = None
    output_warp: Literal["none", "copula"] = "none"
    input_warp: Literal["none", "kumaraswamy"] = "none"
    gradient: Literal["autograd", "closed_form"] = "autograd"

    def __post_init__(self) -> None:
        """Refuse settings the fit would silently read as others (a misspelt kernel was
        fitted as Matérn 3/2, a negative noise as 1e-6).

        Raises:
            ConfigError: naming the setting and what it takes.
        """
        for name in ("kernel", "lengthscale_prior", "output_warp", "input_warp", "gradient"):
            allowed = _CHOICES[name]
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"GPSettings.{name}: {getattr(self, name)!r} is none of {allowed}"
                )
        noise = self.noise
        if noise != "learned" and not (
            isinstance(noise, int | float) and not isinstance(noise, bool) and 0 <= noise < math.inf
        ):
            raise ConfigError(f"GPSettings.noise: 'learned' or a variance >= 0, not {noise!r}")
        counts = {"restarts": 0, "max_iter": 1, "max_iter_warm": 1, "threads": 1, "fresh_every": 1}
        for name, least in counts.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"GPSettings.{name}: a whole number >= {least}, not {value!r}")
        if (
            self.lengthscale_max is not None
            and not LENGTHSCALE_MIN < self.lengthscale_max < math.inf
        ):
            raise ConfigError(
                f"GPSettings.lengthscale_max: above the length-scales' lower bound "
                f"{LENGTHSCALE_MIN}, or None; not {self.lengthscale_max!r}"
            )


#: The Matérn smoothness of each Matérn ``kernel``.
MATERN_NU = {"matern52": 2.5, "matern32": 1.5, "matern12": 0.5}
#: Lower bound of every fitted length-scale (unit-box units).
LENGTHSCALE_MIN = 2.5e-2
#: The values each choice of :class:`GPSettings` takes.
_CHOICES: dict[str, tuple[str, ...]] = {
    "kernel": ("matern52", "matern32", "matern12", "rbf"),
    "lengthscale_prior": ("gamma", "dim_scaled", "unit"),
    "output_warp": ("none", "copula"),
    "input_warp": ("none", "kumaraswamy"),
    "gradient": ("autograd", "closed_form"),
}
