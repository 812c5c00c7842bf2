"""A space of three valid configurations in a hundred, for runs whose designs and
budgets are larger than the space (shared by the conformance and peer tests)."""

from __future__ import annotations

from typing import Any

from gpautotune.space import IntRange, Space
from gpautotune.tuner import TuneResult, tune

TINY = Space([IntRange("x", 0, 9), IntRange("y", 0, 9)], ["x + y <= 1"])


def tiny_run(name: str, seed: int, options: dict[str, Any] | None) -> TuneResult:
    """``name`` with ``options`` on :data:`TINY` for 8 evaluations; the optimum is (1, 0)."""
    objective = lambda c: float((c["x"] - 1) ** 2 + c["y"])  # noqa: E731
    return tune(objective, name, 8, space=TINY, seed=seed, strategy_options=options)
