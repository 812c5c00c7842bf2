"""Search strategies behind one ask/tell protocol, registered by name."""

from gpautotune.strategies._base import Proposal, Strategy
from gpautotune.strategies._registry import (
    available_strategies,
    make_strategy,
    register,
    strategy_class,
    strategy_options,
)

__all__ = [
    "Proposal",
    "Strategy",
    "available_strategies",
    "make_strategy",
    "register",
    "strategy_class",
    "strategy_options",
]
