"""Candidate pools: the sample part has its intended size on tightly constrained spaces."""

from __future__ import annotations

import numpy as np
import pytest

from gpautotune.acquisition._pool import SAMPLE, CandidatePool, PoolSettings
from gpautotune.exceptions import ConfigError
from gpautotune.problems.spapt import get_kernel
from gpautotune.space import IntRange, Space


@pytest.mark.parametrize("kernel", ["dgemv3", "fdtd"])
def test_pool_sample_of_a_tight_spapt_space_has_its_intended_size(kernel: str) -> None:
    space = get_kernel(kernel).space  # valid fractions 1.7e-4 and 9e-6
    pool = CandidatePool(space, PoolSettings(), seed=0)
    assert not pool.exhaustive and space.sampling_plan.expected_raw(pool.sample_size) > 1 << 20

    def unseen(rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows), dtype=bool)

    def score(rows: np.ndarray) -> np.ndarray:
        return -rows.sum(axis=1)

    for step in range(2):
        rows, _, sources = pool.propose(step, unseen, score)
        assert (sources == SAMPLE).sum() == pool.sample_size == 60 * space.dims
        assert space.valid_mask(rows).all()


@pytest.mark.parametrize(
    "settings", [{"n_best": -1}, {"sample_size": 0}, {"radius": 1.5}, {"perturbation_width": 0}]
)
def test_pool_sizes_it_would_misread_are_refused(settings):
    with pytest.raises(ConfigError, match="PoolSettings"):
        PoolSettings(**settings)


def test_a_fixed_name_that_is_no_parameter_is_named():
    space = Space([IntRange("n", 0, 3), IntRange("m", 0, 3)])
    with pytest.raises(ConfigError, match=r"fixed: \['nn'\] are not parameters"):
        CandidatePool(space, PoolSettings(), 0, fixed={"nn": 3})
