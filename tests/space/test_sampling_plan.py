"""Sampling plans: constraint groups, and sparse spaces sampled per group."""

from __future__ import annotations

import numpy as np
import pytest

from gpautotune.exceptions import SpaceError
from gpautotune.space import Boolean, IntRange, Space
from gpautotune.space._sampling import filter_index, sample_index


def pairs_space(pairs: int = 4, free: int = 3) -> Space:
    """``pairs`` constrained pairs (x*y <= 6: 14 of 900 combinations) and free factors."""
    params = [IntRange(f"{v}{k}", 1, 30) for k in range(pairs) for v in "xy"]
    params += [IntRange(f"f{k}", 1, 8) for k in range(free)]
    return Space(params, [f"x{k} * y{k} <= 6" for k in range(pairs)])


def test_constraint_groups_follow_constraints_through_derived_quantities() -> None:
    space = Space(
        [IntRange(n, 1, 8) for n in "abcde"],
        ["a % b == 0", "r <= 2"],
        derived={"r": "c / d"},
    )
    assert space.constraint_groups() == [("a", "b"), ("c", "d"), ("e",)]
    sub = space.restricted(("c", "d"))
    assert sub.names == ["c", "d"] and [c.text for c in sub.constraints] == ["r <= 2"]
    joined = Space([IntRange(n, 1, 8) for n in "abc"], [lambda cols: cols["a"] > 1])
    assert joined.constraint_groups() == [("a", "b", "c")]  # a callable may read anything


def test_sparse_space_is_filled_from_its_groups_deterministically() -> None:
    space = pairs_space()
    assert space.sampling_plan.useful and space.sampling_plan.fraction == pytest.approx(
        (14 / 900) ** 4
    )
    rows = sample_index(space, 500, seed=3, max_raw=1 << 16)
    assert len(rows) == 500 and space.valid_mask(rows).all()
    assert len(space.unique_rows(rows)) == 500
    np.testing.assert_array_equal(rows, sample_index(space, 500, seed=3, max_raw=1 << 16))
    assert not np.array_equal(rows, sample_index(space, 500, seed=4, max_raw=1 << 16))
    plain, _ = filter_index(space, 500, seed=3, max_raw=1 << 16)
    assert len(plain) == 0  # what filtering the same raw budget gives


@pytest.mark.parametrize("method", ["sobol", "random", "lhs"])
def test_grouped_samples_are_uniform_over_each_groups_valid_set(method: str) -> None:
    space = pairs_space(pairs=2, free=2)  # 14 * 14 * 64 valid configurations
    rows = sample_index(space, 2000, method=method, seed=1, max_raw=1 << 12)
    assert len(rows) == 2000 and space.valid_mask(rows).all()
    keys = rows[:, 0] * 30 + rows[:, 1]  # the first pair
    share = np.unique(keys, return_counts=True)[1] / len(rows)
    assert len(share) == 14 and np.abs(share - 1 / 14).max() < 0.02


def test_filling_spaces_keep_the_plain_filtered_sequence() -> None:
    space = pairs_space(pairs=1, free=3)  # 1.6% valid: 2^20 raw points fill 600 easily
    assert space.sampling_plan.useful
    rows = sample_index(space, 600, seed=5, max_raw=1 << 20)
    plain, _ = filter_index(space, 600, seed=5, max_raw=1 << 20)
    np.testing.assert_array_equal(rows, plain[:600])


def test_filtering_that_ends_short_is_topped_up_from_the_groups() -> None:
    space = Space(
        [IntRange("a", 1, 64), IntRange("b", 1, 64), IntRange("c", 1, 8)], ["a * b == 64"]
    )  # 7 * 8 = 56 valid configurations; 54 need 31,600 raw points on average
    plain, _ = filter_index(space, 54, method="random", seed=0, max_raw=1 << 15)
    assert len(plain) < 54  # random draws repeat: 2^15 raw points hold fewer distinct ones
    rows = sample_index(space, 54, method="random", seed=0, max_raw=1 << 15)
    assert len(space.unique_rows(rows)) == 54 and space.valid_mask(rows).all()
    np.testing.assert_array_equal(rows[: len(plain)], plain)


def test_a_group_without_valid_combination_is_reported() -> None:
    space = Space([IntRange("a", 1, 4), Boolean("b"), IntRange("c", 1, 3)], ["a * c > 20"])
    with pytest.raises(SpaceError, match="admit no configuration"):
        sample_index(space, 3)
    assert len(sample_index(space, 3, strict=False)) == 0


def test_the_laplacian_space_keeps_plain_filtering() -> None:
    """One constraint group of all seven factors: nothing to gain, the sequence is FILTER_SOBOL."""
    from gpautotune.problems.laplacian.space import laplacian_space

    space = laplacian_space()
    assert not space.sampling_plan.useful
    rows = sample_index(space, 1024, seed=2, max_raw=1 << 20)
    plain, _ = filter_index(space, 1024, seed=2, max_raw=1 << 20)
    np.testing.assert_array_equal(rows, plain[:1024])
