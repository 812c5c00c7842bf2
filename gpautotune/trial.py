"""Trials: one measured configuration, as stored and as told to strategies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from gpautotune.measurement import Measurement, Status
from gpautotune.space import Config

__all__ = ["Trial", "Origin"]


class Origin(str, Enum):
    """Where a trial came from: measured by this run, or imported as a warm start."""

    TUNER = "tuner"
    WARM_START = "warm_start"


@dataclass(frozen=True)
class Trial:
    """A configuration and its measurement.

    Attributes:
        number: position in the run (0-based; warm-start trials come first).
        config: the configuration measured.
        measurement: what the evaluation returned.
        info: the strategy's diagnostics for this proposal (fit time, best EI, ...).
        started_at: UNIX time when the evaluation started.
        duration_s: wall time of the evaluation.
        origin: measured by this run or imported (warm start, not counted in the budget).
    """

    number: int
    config: Config
    measurement: Measurement
    info: Mapping[str, Any] = field(default_factory=dict)
    started_at: float = 0.0
    duration_s: float = 0.0
    origin: Origin = Origin.TUNER

    @property
    def status(self) -> Status:
        return self.measurement.status

    @property
    def value(self) -> float | None:
        return self.measurement.value

    @property
    def ok(self) -> bool:
        return self.measurement.ok

    @property
    def source(self) -> str | None:
        """Which part of the strategy proposed it (``initial``, ``model``, the strategy's
        name, ``user`` for a configuration told without being asked); None if unknown."""
        source = self.info.get("source")
        return None if source is None else str(source)

    @property
    def counts_in_budget(self) -> bool:
        return self.origin is Origin.TUNER
