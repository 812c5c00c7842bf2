"""The one ask/tell protocol every strategy follows.

A strategy proposes configurations (:meth:`Strategy.ask`) and learns from measured
trials (:meth:`Strategy.tell`). It does no I/O, no timing and knows nothing of storage;
the tuner loop enforces the budget. Given the same seed, the same trials told in the
same order and the same proposals pending (in flight on other workers), a strategy
proposes the same configurations, which is what makes a resumed run continue where it
stopped.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.space import Config, Space
from gpautotune.strategies._settings import StrategySettings
from gpautotune.trial import Trial

__all__ = ["Proposal", "Strategy"]


@dataclass(frozen=True)
class Proposal:
    """A configuration to evaluate and the strategy's diagnostics about it."""

    config: Config
    info: Mapping[str, Any] = field(default_factory=dict)


class Strategy(ABC):
    """Base class of all strategies.

    Subclasses implement :meth:`_propose` (returning index-matrix rows) and may override
    :meth:`_observe`; a strategy with options declares them as its :attr:`Settings`
    dataclass (see :mod:`gpautotune.strategies._settings`). The base class checks the
    options into :attr:`options`, and keeps the trials told so far, the keys of every
    configuration already measured or proposed (never proposed twice), the configurations
    still being evaluated (:attr:`pending`, given to :meth:`ask`) and a seeded
    :class:`numpy.random.Generator`.

    Args:
        space: the search space.
        seed: the seed of every random choice the strategy makes.
        **options: the strategy's options (the fields of its :attr:`Settings`).

    Raises:
        ConfigError: an unknown option or a bad value (one line naming it), or a seed
            that is not a non-negative integer.
    """

    name: ClassVar[str] = "strategy"
    #: The dataclass of the strategy's options.
    Settings: ClassVar[type[StrategySettings]] = StrategySettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        #: The checked options (an instance of :attr:`Settings`).
        self.options = self.Settings.build(options, f"strategy {self.name!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ConfigError(f"the seed must be a non-negative integer, got {seed!r}")
        self.space = space
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.trials: list[Trial] = []
        self._seen: set[Any] = set()
        #: The proposals in flight at the last :meth:`ask` (asked, not yet told), and
        #: their index rows; strategies with a model condition on them in :meth:`_propose`.
        self.pending_proposals: list[Proposal] = []
        self.pending: np.ndarray = np.empty((0, space.dims))

    # ------------------------------------------------------------ protocol
    def ask(
        self, n: int = 1, *, pending: Sequence[Proposal | Mapping[str, Any]] = ()
    ) -> list[Proposal]:
        """Up to ``n`` new, distinct, valid configurations; fewer (or none) when the
        strategy has nothing more to propose (exhausted space, converged search), and
        fewer where a phase ends inside the ask (GPR's initial design, a ``refit_every``
        batch): asking again gives the rest. Only an empty list means the
        strategy has nothing more.

        Args:
            n: how many configurations.
            pending: proposals (or bare configurations) being evaluated: asked earlier,
                not told yet, e.g. on other workers, or in flight when a run was stopped.
                They are never proposed; strategies with a model condition on them
                (:attr:`pending`), and read what their own proposals' info recorded
                (GPR's model steps). Given the same trials told and the same pending
                proposals, a strategy proposes the same configurations.
        """
        if n < 1:
            return []
        self.pending_proposals = [p if isinstance(p, Proposal) else Proposal(p) for p in pending]
        configs = [p.config for p in self.pending_proposals]
        self.pending = self.space.to_index(configs) if configs else np.empty((0, self.space.dims))
        self.mark_seen(self.pending)
        proposals = self._propose(n)[:n]
        for p in proposals:
            self._seen.add(self._key(p.config))
        return proposals

    def tell(self, trials: Sequence[Trial]) -> None:
        """Learn from measured trials (in order); trials may include warm starts."""
        trials = list(trials)
        for t in trials:
            self._seen.add(self._key(t.config))
        self.trials.extend(trials)
        self._observe(trials)

    def settings(self) -> dict[str, Any]:
        """The strategy's options (stored with the run; part of its identity)."""
        return self.options.key()

    def plan(self, budget: int | None) -> None:
        """Hook: the run's budget, given once before the first :meth:`ask` (strategies
        that size their own loop by it, such as the peers, override it)."""

    def close(self) -> None:
        """Hook: release what the strategy holds (threads, files) when its run ends."""

    # ---------------------------------------------------------- subclasses
    @abstractmethod
    def _propose(self, n: int) -> list[Proposal]:
        """Return up to ``n`` proposals not in :attr:`_seen`."""

    def _observe(self, trials: Sequence[Trial]) -> None:
        """Hook called by :meth:`tell` with the new trials."""

    # -------------------------------------------------------------- helpers
    def _key(self, config: Mapping[str, Any]) -> Any:
        return self.space.row_keys(self.space.to_index([config]))[0].item()

    def is_seen(self, index: np.ndarray) -> np.ndarray:
        """Mask of rows already measured or proposed."""
        keys = self.space.row_keys(index)
        if keys.dtype == np.int64:  # one sorted search instead of a set lookup per row
            seen = np.fromiter(self._seen, dtype=np.int64, count=len(self._seen))
            return np.isin(keys, seen)
        return np.fromiter((k in self._seen for k in keys.tolist()), dtype=bool, count=len(keys))

    def mark_seen(self, index: np.ndarray) -> None:
        self._seen.update(self.space.row_keys(index).tolist())

    def proposals(self, index: np.ndarray, **info: Any) -> list[Proposal]:
        """Proposals for index rows, sharing ``info``."""
        return [Proposal(c, dict(info)) for c in self.space.to_configs(index)] if len(index) else []

    @property
    def measured(self) -> list[Trial]:
        """Trials with an ok measurement."""
        return [t for t in self.trials if t.ok]
