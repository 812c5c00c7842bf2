"""GP-Hedge: a portfolio of acquisition functions chosen among by their past nominees.

Hoffman, Brochu & de Freitas (2011), as scikit-optimize's ``acq_func="gp_hedge"`` runs
it: at each step every acquisition of the portfolio nominates its best candidate, one
nominee is measured, drawn with probabilities ``softmax(eta * gains)``, and once the
model has been refitted on that measurement each acquisition's gain grows by the
negated posterior mean (minimisation, model units) at the candidate it nominated. An
acquisition whose nominees the model keeps predicting fast is drawn more often. Those
gains grow with every step, and after a few tens of steps the draw is all but certain
(on Booth, log-PI's lead of 7 after 20 steps gives it 99.7% of the draws), so the draw
mixes in a uniform one as the bandit algorithm Exp3 does: each acquisition keeps at
least ``MIX / 3`` of the draws (LCB's exploration included).
No library here implements it over a finite candidate set (BoTorch has no portfolio;
scikit-optimize's runs inside its own optimiser), hence this small module: the
strategy scores its pool with each function and keeps the record below in its picks'
info, so a resumed run draws what the uninterrupted one drew.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpautotune.acquisition._functions import Acquisition

__all__ = ["ETA", "KAPPA", "MIX", "PORTFOLIO", "HedgeStep", "draw", "portfolio", "probabilities"]

#: The LCB's kappa in a portfolio (scikit-optimize's; unused by the other functions).
KAPPA = 1.96
#: The default portfolio, scikit-optimize's three.
PORTFOLIO: tuple[Acquisition, ...] = ("logei", "pi", "lcb")
#: The draw's inverse temperature (scikit-optimize's default).
ETA = 1.0
#: The weight of the uniform draw mixed in (Exp3's gamma).
MIX = 0.3


@dataclass(frozen=True)
class HedgeStep:
    """A step's draw (kept in its fit record, under ``hedge``).

    Attributes:
        arm: the position in the run's portfolio of the acquisition that picked.
        gains: the portfolio's gains the draw used (updated with the step's model).
        nominees: index rows, each acquisition's best candidate of the step, in
            portfolio order (the next step's model adds its gains from them).
    """

    arm: int
    gains: list[float]
    nominees: list[list[float]]

    def info(self) -> dict[str, Any]:
        """The record as the fit's info keeps it (JSON)."""
        return {"arm": self.arm, "gains": self.gains, "nominees": self.nominees}

    @classmethod
    def of(cls, record: Mapping[str, Any] | None) -> HedgeStep | None:
        """The draw a fit's ``hedge`` entry records; None where there is none."""
        if not isinstance(record, Mapping):
            return None
        return cls(
            int(record["arm"]),
            [float(g) for g in record["gains"]],
            [[float(v) for v in row] for row in record["nominees"]],
        )


def portfolio(kinds: Sequence[Acquisition] = PORTFOLIO) -> tuple[tuple[Acquisition, float], ...]:
    """The (acquisition, kappa) pairs of a portfolio of ``kinds``, in their order."""
    return tuple((k, KAPPA if k == "lcb" else 0.0) for k in kinds)


def probabilities(gains: np.ndarray, eta: float = ETA, mix: float = MIX) -> np.ndarray:
    """``(1 - mix) * softmax(eta * gains) + mix / len(gains)``."""
    p = np.exp(eta * (np.asarray(gains, dtype=float) - np.max(gains)))
    return (1 - mix) * p / p.sum() + mix / len(p)


def draw(gains: np.ndarray, rng: np.random.Generator) -> int:
    """The portfolio position drawn with :func:`probabilities`."""
    p = probabilities(gains)
    return int(rng.choice(len(p), p=p))
