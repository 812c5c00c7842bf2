"""Greedy search with restarts (GSR)."""

from __future__ import annotations

from gpautotune.strategies._registry import register
from gpautotune.strategies.greedy import GreedySearch

__all__ = ["GreedyRestart"]


@register("greedy-restart")
class GreedyRestart(GreedySearch):
    """Greedy search restarted from a new uniformly random valid point at every local
    optimum, until the budget is spent (seed 000 §6, GSR). Starts are never points the
    search has already generated.

    The options are the fields of :class:`~gpautotune.strategies.greedy.GreedySettings`.
    """

    restart = True
