"""What a run gives back: its trials and the best of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpautotune.space import Config
from gpautotune.trial import Trial

__all__ = ["TuneResult", "best_trial"]


def best_trial(trials: Sequence[Trial]) -> Trial | None:
    """The ok trial of lowest value (earliest on ties)."""
    ok = [t for t in trials if t.ok]
    return min(ok, key=lambda t: (t.value, t.number)) if ok else None


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune` returns."""

    run_id: int
    trials: list[Trial]
    budget: int
    storage: str

    @property
    def best(self) -> Trial | None:
        return best_trial(self.trials)

    @property
    def best_config(self) -> Config | None:
        return None if self.best is None else dict(self.best.config)

    @property
    def best_value(self) -> float | None:
        return None if self.best is None else self.best.value

    @property
    def used(self) -> int:
        return sum(t.counts_in_budget for t in self.trials)
