"""The GPs a GPR run chooses among (``model_choice``, ``variants``) and how it chooses.

With ``model_choice: loo`` (the default) a run holds its own GP and the ``variants``'
GPs. Every fresh fit (every ``fresh_every``-th) from ``loo_after`` training rows on fits
each of them and keeps the one whose leave-one-out means rank the values best (ties: the
earlier); the fits between are warm fits of the GP the last fit kept. With one GP
(``model_choice: fixed``, the kriging model, or variants equal to it) every fit is that
GP's. The fit records (:class:`ModelFit`)
name the variant each step used, so a resumed run restores the same GP.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpautotune.strategies._gpr_records import ModelFit
from gpautotune.surrogate import FitReport, GPSurrogate, KrigingSurrogate

__all__ = ["GPChoice"]

Surrogate = GPSurrogate | KrigingSurrogate


class GPChoice:
    """The run's GPs, the run's own first.

    Args:
        gps: the GPs, the run's own (``variants``' first entry, index 0) first.
        fresh_every: a fit from fresh starts every this many fits (the rest are warm).
        loo_after: the fewest training rows a fresh fit chooses on.
    """

    def __init__(self, gps: Sequence[Surrogate], fresh_every: int, loo_after: int) -> None:
        self.gps = list(gps)
        self.fresh_every, self.loo_after = fresh_every, loo_after

    def of(self, fit: ModelFit | None) -> Surrogate:
        """The GP a stored fit used (its variant; the run's own GP when it records none)."""
        variant = fit.variant if fit is not None and fit.variant is not None else 0
        return self.gps[variant]

    def fit(
        self, X: np.ndarray, y: np.ndarray, seed: int, past: Sequence[ModelFit], number: int
    ) -> tuple[Surrogate, FitReport, int | None, list[float] | None]:
        """Fit the step numbered ``number`` (warm from the last of the ``past`` fits; from
        fresh starts too on every ``fresh_every``-th): with several GPs, each on a fresh
        fit from ``loo_after`` rows on, the one whose leave-one-out means rank the values
        best kept (the run's own on fewer rows), and the last fit's variant otherwise.
        Returns the GP fitted, its report, its variant (None with one GP) and, on a
        choice, every variant's score."""
        fresh = number % self.fresh_every == 0 or not past
        warm = past[-1].hyperparameters if past else None
        if len(self.gps) == 1:
            gp = self.gps[0]
            return gp, gp.fit(X, y, seed=seed, warm=warm, fresh=fresh), None, None
        if not fresh:  # a later fit (number > 0): past holds the last one
            gp = self.of(past[-1])
            report = gp.fit(X, y, seed=seed, warm=warm, fresh=False)
            return gp, report, self.gps.index(gp), None
        if len(y) < self.loo_after:  # too few rows to choose on
            gp = self.gps[0]
            return gp, gp.fit(X, y, seed=seed, warm=warm, fresh=True), 0, None
        reports, scores = [], []
        for gp in self.gps:
            reports.append(gp.fit(X, y, seed=seed, warm=warm, fresh=True))
            scores.append(round(gp.loo_rank(), 6))
        variant = int(np.argmax(scores))
        return self.gps[variant], reports[variant], variant, scores
