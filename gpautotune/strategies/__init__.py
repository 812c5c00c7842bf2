"""Search strategies behind one ask/tell protocol, registered by name."""

from gpautotune.strategies._base import Proposal, Strategy
from gpautotune.strategies._registry import (
    available_strategies,
    make_strategy,
    register,
    strategy_class,
    strategy_options,
)
from gpautotune.strategies._settings import StrategySettings, strategy_settings

__all__ = [
    "Proposal",
    "Strategy",
    "StrategySettings",
    "available_strategies",
    "make_strategy",
    "register",
    "strategy_class",
    "strategy_options",
    "strategy_settings",
]
