"""Acquisition functions and the candidate pools they are maximised over."""

from gpautotune.acquisition._functions import (
    Acquisition,
    expected_improvement,
    make_acquisition,
    score_candidates,
    score_many,
)
from gpautotune.acquisition._hedge import PORTFOLIO, HedgeStep, draw, portfolio
from gpautotune.acquisition._pool import POOL_MAX_RAW, CandidatePool, PoolSettings
from gpautotune.acquisition._thompson import thompson_pick, thompson_subset
from gpautotune.acquisition._trust import TrustRegion

__all__ = [
    "POOL_MAX_RAW",
    "Acquisition",
    "CandidatePool",
    "HedgeStep",
    "PORTFOLIO",
    "PoolSettings",
    "TrustRegion",
    "draw",
    "expected_improvement",
    "make_acquisition",
    "portfolio",
    "score_candidates",
    "score_many",
    "thompson_pick",
    "thompson_subset",
]
