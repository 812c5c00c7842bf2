"""Slices of a space: enumeration, uniform sampling by rejection, exclusions."""

from __future__ import annotations

import numpy as np

from gpautotune.problems import ConstrainedBitsProblem
from gpautotune.space import IntRange, Space
from gpautotune.strategies._subspace import Subspace


def _space() -> Space:
    return Space(
        [IntRange("a", 0, 5), IntRange("b", 0, 5), IntRange("c", 0, 3)], constraints=["a + b <= 6"]
    )


def test_enumerate_keeps_the_fixed_levels_and_the_predicates() -> None:
    space = _space()
    sub = Subspace(space).fix({0: 2.0})
    rows = sub.enumerate()
    assert len(rows) == 5 * 4 and (rows[:, 0] == 2).all() and space.valid_mask(rows).all()
    assert sub.free_names == ["b", "c"]


def test_sample_without_the_excluded_keys_and_never_more_than_exists() -> None:
    space = _space()
    sub = Subspace(space).fix({0: 5.0, 2: 1.0})  # b in 0..1 only
    everything = sub.enumerate()
    keys = space.row_keys(everything).tolist()
    rows = sub.sample(10, np.random.default_rng(0), exclude={keys[0]})
    assert len(rows) == 1 and space.row_keys(rows)[0] == keys[1]


def test_rejection_sampling_in_a_large_slice_is_valid_distinct_and_fixed() -> None:
    space = ConstrainedBitsProblem().space
    sub = Subspace(space).fix({0: 7.0, 53: 0.0})
    assert not sub.enumerable
    rows = sub.sample(300, np.random.default_rng(1))
    assert len(rows) == 300 and space.valid_mask(rows).all()
    assert (rows[:, 0] == 7).all() and (rows[:, 53] == 0).all()
    assert len(set(space.row_keys(rows).tolist())) == 300
    # roughly uniform over a free factor's levels (no level starved)
    counts = np.bincount(rows[:, 10].astype(int), minlength=8)
    assert counts.min() > 0


def test_sampling_is_seeded() -> None:
    space = ConstrainedBitsProblem().space
    a = Subspace(space).sample(20, np.random.default_rng(9))
    b = Subspace(space).sample(20, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
