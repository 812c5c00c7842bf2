"""What a GPR model step writes into its trials' info, and reads back on resume.

A GPR strategy's state is a function of the trials it was told (and of the proposals
still being evaluated that it is given as pending: asynchronous workers, whose running
records keep their info), never of asks whose trials were not stored (a run killed after
an ask and before its trial was stored resumes as if the ask never happened). Two
records make that possible:

* :class:`ModelPick` — what the step says of one pick (pool part, acquisition value,
  whether it opened an escape step);
* :class:`ModelFit` — the step itself: its fit number, the trials told when it was
  asked, how many configurations it was asked for, whether it was an escape step, the
  fitted GP hyperparameters, exactly (JSON floats round-trip), and the configurations
  pending at the time (conditioned on, never picked). The next fit starts
  from the last stored fit's hyperparameters and is counted from its number, and the
  candidate pool's backlog is rebuilt by replaying the stored steps with their models
  restored (no refit), so a resumed strategy proposes what the uninterrupted one would.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpautotune.acquisition import HedgeStep
from gpautotune.strategies._base import Proposal
from gpautotune.surrogate import Hyperparameters
from gpautotune.trial import Trial

__all__ = ["ModelFit", "ModelPick", "model_fits"]


@dataclass(frozen=True)
class ModelPick:
    """What a model step says about one of its picks (kept in the trial's info, under the
    same names; an escape as ``stall_escape``, on the first pick of an escape step).

    Attributes:
        picked_from: the pool part: ``all``, ``sample``, ``neighbors``, ``backlog``,
            ``poll``, ``adjacent``; or the pick's rule, ``thompson`` or ``forest``.
        best_acq: its acquisition value.
        escape: whether it opened an escape step.
    """

    picked_from: str
    best_acq: float
    escape: bool = False

    def info(self) -> dict[str, Any]:
        """The trial-info entries of the pick."""
        extra = {"stall_escape": True} if self.escape else {}
        return {"best_acq": self.best_acq, "picked_from": self.picked_from, **extra}

    @classmethod
    def of(cls, info: Mapping[str, Any]) -> ModelPick | None:
        """The pick a trial's (or a proposal's) info records; None if not a model pick."""
        if "picked_from" not in info:
            return None
        best_acq = info.get("best_acq")
        return cls(
            str(info["picked_from"]),
            math.nan if best_acq is None else float(best_acq),
            bool(info.get("stall_escape", False)),
        )


@dataclass(frozen=True)
class ModelFit:
    """One model step (kept in the info of each of its picks, under ``fit``).

    Attributes:
        number: the fit's number in the run (0 for the first model step).
        step: trials told when the step was asked (it seeds the step's pool).
        batch: configurations the step was asked for.
        escape: whether it was an escape step (those leave the backlog alone).
        hyperparameters: the fitted GP's parameters, exactly.
        pending: index rows of the configurations being evaluated when the step was asked
            (asynchronous workers: the step conditioned on them and never picked them).
        hedge: with ``acquisition="hedge"``, the step's draw from the portfolio.
        variant: with ``model_choice="loo"``, the position of the fitted GP among the
            variants (``GPRSettings.gp_variants``); the steps up to the next fresh fit
            keep it.
    """

    number: int
    step: int
    batch: int
    escape: bool
    hyperparameters: Hyperparameters
    pending: list[list[float]] = field(default_factory=list)
    hedge: HedgeStep | None = None
    variant: int | None = None

    def info(self) -> dict[str, Any]:
        """The trial-info entry of the step (``pending``, ``hedge`` and ``variant`` only
        when there are some)."""
        fit: dict[str, Any] = {
            "number": self.number,
            "step": self.step,
            "batch": self.batch,
            "escape": self.escape,
            "hyperparameters": self.hyperparameters,
        }
        if self.pending:
            fit["pending"] = self.pending
        if self.hedge is not None:
            fit["hedge"] = self.hedge.info()
        if self.variant is not None:
            fit["variant"] = self.variant
        return {"fit": fit}

    @classmethod
    def of(cls, info: Mapping[str, Any]) -> ModelFit | None:
        """The step a trial's info records; None for other trials (and for journals
        written before fits were recorded)."""
        fit = info.get("fit")
        if not isinstance(fit, Mapping):
            return None
        return cls(
            int(fit["number"]),
            int(fit["step"]),
            int(fit["batch"]),
            bool(fit["escape"]),
            {str(k): [float(v) for v in vs] for k, vs in fit["hyperparameters"].items()},
            [[float(v) for v in row] for row in fit.get("pending", [])],
            HedgeStep.of(fit.get("hedge")),
            None if fit.get("variant") is None else int(fit["variant"]),
        )


def model_fits(told: Iterable[Trial | Proposal]) -> list[ModelFit]:
    """The model steps that trials (and proposals still being evaluated) record, once
    each, in fit order."""
    fits: dict[int, ModelFit] = {}
    for item in told:
        fit = ModelFit.of(item.info)
        if fit is not None:
            fits.setdefault(fit.number, fit)
    return [fits[k] for k in sorted(fits)]
