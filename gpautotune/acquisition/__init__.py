"""Acquisition functions and the candidate pools they are maximised over."""

from gpautotune.acquisition._functions import Acquisition, make_acquisition, score_candidates
from gpautotune.acquisition._pool import CandidatePool, PoolSettings

__all__ = ["Acquisition", "CandidatePool", "PoolSettings", "make_acquisition", "score_candidates"]
