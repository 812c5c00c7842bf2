"""Fair accounting: the one place where a peer's proposals meet our budget.

Every peer adapter derives from :class:`PeerStrategy`, which asks the peer for
proposals one at a time and applies the same rules to all of them:

* a proposal that is not a configuration of the space, or that violates one of its
  predicates, is told back to the peer as failed and the peer is asked again: it spends
  no budget (the most favourable choice for the peer);
* a proposal already measured in this run is answered from the run's own trial and the
  peer is asked again: it spends no budget (as Kernel Tuner's cache does);
* after :data:`NO_BUDGET_CAP` such answers in a row the adapter stops proposing (the
  run ends short of its budget and says so in the log): a peer stuck on refused or
  repeated proposals cannot loop for ever;
* a configuration that fails when measured spends one evaluation, like any other, and
  the peer hears of it as a failure in its own terms.

Each proposal's ``info`` carries the run's running totals (``invalid_refused``,
``duplicates``), so the journal stores them with the trials and reports can show them.

A resumed run is replayed: the peer starts afresh from the seed and each of its
proposals that the journal already holds is answered from there without spending
budget, so a peer that is deterministic for a seed continues exactly where it stopped.
Warm-start trials are given to peers that accept a history (:meth:`_peer_history`).
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpautotune.exceptions import SpaceError
from gpautotune.space import Config, Space
from gpautotune.strategies._base import Proposal, Strategy
from gpautotune.trial import Origin, Trial

__all__ = ["NO_BUDGET_CAP", "PeerAsk", "PeerStrategy"]

_log = logging.getLogger(__name__)

#: Most proposals in a row that may be answered without spending budget.
NO_BUDGET_CAP = 1000
#: Largest raw space whose valid configurations are counted, to stop once all are measured.
COUNT_LIMIT = 1 << 17


@dataclass(frozen=True)
class PeerAsk:
    """One proposal of a peer.

    Attributes:
        values: the proposal as parameter values of our space (levels not checked yet).
        handle: the peer's own handle of the proposal (its trial), given back to tell.
    """

    values: Mapping[str, Any]
    handle: Any


class PeerStrategy(Strategy):
    """Base of the peer adapters: the peer proposes, the fair-accounting rules decide.

    Subclasses implement :meth:`_peer_ask`, :meth:`_peer_tell` and
    :meth:`_peer_refuse`, and may override :meth:`_peer_start` (build the peer once the
    budget is known), :meth:`_peer_history` and :meth:`close`.

    Args:
        space: the search space.
        seed: the peer's seed.
        **options: the fields of the adapter's :attr:`Settings`.
    """

    #: The Python package the peer needs (named in the missing-extra message).
    package: str = ""

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self.budget: int | None = None
        self.invalid_refused = 0
        self.duplicates = 0
        self.stopped: str | None = None
        self._known: dict[Any, Trial] = {}
        self._told: set[Any] = set()
        self._pending: tuple[Any, Any] | None = None
        self._history: list[Trial] = []
        self._started = False
        self._valid_count: int | None = None

    def plan(self, budget: int | None) -> None:
        """Size the peer's own loop by the run's budget (before its first proposal)."""
        if not self._started:
            self.budget = budget

    def counters(self) -> dict[str, int]:
        """The run's totals so far: proposals refused as invalid, duplicates answered."""
        return {"invalid_refused": self.invalid_refused, "duplicates": self.duplicates}

    # ------------------------------------------------------------- protocol
    def _propose(self, n: int) -> list[Proposal]:
        if self._pending is not None or self.stopped is not None:
            return []  # peers propose one configuration at a time
        if not self._started:
            self._started = True
            self._peer_start()
            if self._history:
                self._peer_history(self._history)
        proposal = self._next()
        return [] if proposal is None else [proposal]

    def _observe(self, trials: Sequence[Trial]) -> None:
        for trial in trials:
            key = self._key(trial.config)
            self._known[key] = trial
            if self._pending is not None and self._pending[0] == key:
                handle, self._pending = self._pending[1], None
                self._told.add(key)
                self._peer_tell(handle, trial)
            elif trial.origin is Origin.WARM_START:
                self._history.append(trial)
                self._told.add(key)

    def _next(self) -> Proposal | None:
        """Ask the peer until it proposes a new valid configuration (or gives up)."""
        in_row = 0
        while in_row < NO_BUDGET_CAP:
            if in_row and self._exhausted():
                self.stopped = "every valid configuration is measured"
                return None
            ask = self._peer_ask()
            if ask is None:
                self.stopped = "the peer has nothing more to propose"
                return None
            config = self._valid(ask.values)
            if config is None:
                self.invalid_refused += 1
                self._peer_refuse(ask.handle)
                in_row += 1
                continue
            key = self._key(config)
            known = self._known.get(key)
            if known is None:
                self._pending = (key, ask.handle)
                return Proposal(config, {"peer": self.name, **self.counters()})
            fresh = key not in self._told  # else a duplicate; fresh and known: a replay
            if not fresh:
                self.duplicates += 1
                in_row += 1
            self._told.add(key)
            self._peer_tell(ask.handle, known, fresh=fresh)
        self.stopped = f"{NO_BUDGET_CAP} proposals in a row refused or already measured"
        _log.warning("%s stops proposing: %s", self.name, self.stopped)
        return None

    def _exhausted(self) -> bool:
        """Whether every valid configuration of a small space is measured (a peer that
        asks again and again, refitting its model each time, would take minutes to reach
        :data:`NO_BUDGET_CAP`); counted once, where the raw space has at most
        :data:`COUNT_LIMIT` points."""
        if self._valid_count is None:
            small = self.space.is_enumerable(COUNT_LIMIT)
            self._valid_count = len(self.space.enumerate_index(COUNT_LIMIT)) if small else -1
        return 0 <= self._valid_count <= len(self._known)

    def _valid(self, values: Mapping[str, Any]) -> Config | None:
        """The configuration as declared in the space, or None if it is not a valid one."""
        try:
            index = self.space.to_index([values])
        except SpaceError:
            return None
        if not self.space.valid_mask(index)[0]:
            return None
        return self.space.to_configs(index)[0]

    # ------------------------------------------------------------ the peer
    def _peer_start(self) -> None:
        """Build the peer (called once, before its first proposal, after :meth:`plan`)."""

    @abstractmethod
    def _peer_ask(self) -> PeerAsk | None:
        """The peer's next proposal, or None when it has finished."""

    @abstractmethod
    def _peer_tell(self, handle: Any, trial: Trial, *, fresh: bool = True) -> None:
        """Tell the peer the outcome of its proposal ``handle``: the measured ``trial``
        (a failure when ``trial.ok`` is false). ``fresh`` is false for a duplicate."""

    @abstractmethod
    def _peer_refuse(self, handle: Any) -> None:
        """Tell the peer its proposal ``handle`` is not a valid configuration."""

    def _peer_history(self, trials: Sequence[Trial]) -> None:
        """Give the peer earlier trials (warm starts) before its first proposal; by
        default they are only answered when the peer proposes them."""

    def close(self) -> None:
        """Release what the peer holds (threads, temporary files); idempotent."""
