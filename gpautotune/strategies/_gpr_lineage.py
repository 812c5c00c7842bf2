"""A GPR run's lineages: where a new start (``restart_after``) begins and ends.

By default a GPR run is one lineage: every model step fits every trial. With
``restart_after`` a run whose best has not moved for that many measurements begins a new
lineage (a fresh initial design, then GPs fitted to its own trials only, as TuRBO starts
again when its trust region collapses); with ``restart_length`` a later lineage is an
excursion after which the first resumes. :class:`Lineages` keeps the run's *segments*,
each (the position it begins at, the position its lineage's trials begin at), and reads
the next one from the trials alone, so a resumed run begins its segments where the first
did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gpautotune.trial import Trial

__all__ = ["LineageRule", "Lineages"]


@dataclass(frozen=True)
class LineageRule:
    """When lineages begin and end: the GPR options of the same names
    (:class:`gpautotune.strategies.gpr.GPRSettings`)."""

    restart_after: int | None = None
    restart_init: int | None = None
    restart_rule: str = "stall"
    restart_length: int | None = None
    restart_from: float = 0.0
    restart_count: int | None = None
    restart_share: float = 1.0


class Lineages:
    """The segments of one run.

    Args:
        rule: when lineages begin and end.
        n_init: the first lineage's initial design size.
    """

    def __init__(self, rule: LineageRule, n_init: int) -> None:
        self.rule, self.n_init = rule, n_init
        #: Each (position it begins at, position its lineage's trials begin at).
        self.segments: list[tuple[int, int]] = [(0, 0)]

    def start(self, step: int) -> int:
        """Where the trials of the lineage of the step at ``step`` trials begin (0, every
        trial, by default)."""
        return max(segment for segment in self.segments if segment[0] <= step)[1]

    def later(self, upto: float = np.inf) -> int:
        """How many later lineages began (those whose trials begin by ``upto``)."""
        return sum(1 for _, first in self.segments if 0 < first <= upto)

    def info(self, start: int) -> dict[str, int]:
        """The info a pick of the lineage whose trials begin at ``start`` records: its
        number (1 for the first later lineage, ...); nothing for the run's own."""
        return {"lineage": self.later(start)} if start else {}

    def design_size(self, start: int) -> int:
        """The initial design's size of the lineage that begins at ``start``: ``n_init``
        for the first, ``restart_init`` (default ``n_init``) for the others."""
        return self.n_init if start == 0 else self.rule.restart_init or self.n_init

    def observe(
        self,
        trials: Sequence[Trial],
        i: int,
        budget: int | None,
        polled_share: Callable[[Trial, Sequence[Trial]], float],
    ) -> None:
        """Begin the segment that follows the trial at position ``i`` of ``trials``, if
        one does (:meth:`next_segment`)."""
        segment = self.next_segment(trials, i, budget, polled_share)
        if segment is not None:
            self.segments.append(segment)

    def next_segment(
        self,
        trials: Sequence[Trial],
        i: int,
        budget: int | None,
        polled_share: Callable[[Trial, Sequence[Trial]], float],
    ) -> tuple[int, int] | None:
        """The segment that begins after the trial at position ``i``, if one does: the
        first lineage again once a later one has lasted ``restart_length`` trials; a new
        lineage once the current one's initial design is measured and ``restart_after``
        measurements (since the segment began) went by without a new best in it, with
        ``restart_rule="local_minimum"`` measurements after its design, and only once
        ``restart_share`` of its best's one-parameter moves are measured
        (``polled_share(best, trials[: i + 1])``); none before the ``restart_from``
        share of the ``budget``, nor after ``restart_count`` lineages. Read from the
        trials up to ``i``."""
        rule = self.rule
        after = rule.restart_after
        if after is None:
            return None
        begin, first = self.segments[-1]
        if first and rule.restart_length is not None:
            return (i + 1, 0) if i + 1 - begin >= rule.restart_length else None
        if budget is not None and i + 1 < rule.restart_from * budget:
            return None
        if rule.restart_count is not None and self.later() >= rule.restart_count:
            return None
        lineage, size = trials[first : i + 1], self.design_size(first)
        if len(lineage) < size:
            return None
        ok = [(t.value, j) for j, t in enumerate(lineage) if t.ok]
        found = min(ok)[1] if ok else 0
        since = len(lineage) - 1 - max(found, begin - first - 1)
        if rule.restart_rule == "stall":
            return (i + 1, i + 1) if since >= after else None
        if min(since, len(lineage) - size) < after or not ok:  # after the design too
            return None
        share = polled_share(lineage[found], trials[: i + 1])
        return (i + 1, i + 1) if share >= rule.restart_share else None
