import numpy as np
import pytest
from scipy.stats import qmc

from gpautotune.exceptions import PredicateError, SpaceError
from gpautotune.problems.laplacian.space import laplacian_space
from gpautotune.space import Boolean, Categorical, IntRange, PowerOfTwo, Space, space_from_spec
from gpautotune.space._sampling import sample_index


@pytest.fixture(scope="module")
def lap():
    return laplacian_space()


def small_space():
    return Space(
        [PowerOfTwo("t", 1, 8), IntRange("u", 1, 4), Boolean("b"), Categorical("c", ("x", "y"))],
        constraints=["t % u == 0", lambda cols: (cols["b"] == 1) | (cols["c"] == "x")],
    )


def test_enumerate_matches_brute_force():
    space = small_space()
    expected = [
        dict(t=t, u=u, b=b, c=c)
        for t in (1, 2, 4, 8)
        for u in (1, 2, 3, 4)
        for b in (False, True)
        for c in ("x", "y")
        if t % u == 0 and (b or c == "x")
    ]
    got = space.enumerate()
    assert sorted(map(str, got)) == sorted(map(str, expected))
    assert space.count_valid().estimate == len(expected) and space.count_valid().exact


def test_laplacian_valid_count_is_the_seeds(lap):
    assert lap.size == 190_080
    assert lap.count_valid().estimate == 23_100
    assert laplacian_space("slides").count_valid().estimate == 18_080


def test_seed_table_rows_rejected_by_the_register_proxy(laplacian):
    # 20 of the 23,120 measured rows exceed the register proxy; all share one shape.
    assert laplacian.table_size == 23_120
    assert laplacian.rows_violating_predicates == 20
    space = laplacian.space
    bad = laplacian._index[~laplacian._valid]
    configs = space.to_configs(bad)
    assert all(space.violated(c) == ["register_size < 942080"] for c in configs)
    assert {
        (
            c["elements_number"] // c["y_component_number"],
            c["vector_length"],
            c["temporary_size"],
            c["load_overlap"],
            c["threads_number"],
        )
        for c in configs
    } == {(1, 16, 4, False, 512)}


def test_validate_names_the_problem(lap):
    good = dict(
        elements_number=6,
        y_component_number=6,
        vector_length=1,
        temporary_size=2,
        load_overlap=True,
        threads_number=1024,
        lws_y=2,
    )
    assert lap.validate(good) == good
    with pytest.raises(SpaceError, match="threads_number % lws_y == 0|lws_y <= threads_number"):
        lap.validate({**good, "lws_y": 1024, "threads_number": 32})
    with pytest.raises(SpaceError, match="missing"):
        lap.validate({k: v for k, v in good.items() if k != "lws_y"})
    with pytest.raises(SpaceError, match="unknown"):
        lap.validate({**good, "colour": 3})


def test_sobol_sample_is_valid_distinct_and_more_uniform_than_random(lap):
    n = 256
    sobol = lap.to_index(lap.sample(n, "sobol", seed=5))
    rand = lap.to_index(lap.sample(n, "random", seed=5))
    for index in (sobol, rand):
        assert len(index) == n
        assert lap.valid_mask(index).all()
        assert len(np.unique(lap.row_keys(index))) == n

    # Discrepancy of the raw unit points behind each sample, measured over many seeds.
    def disc(method, seed):
        from gpautotune.space._sampling import unit_sample

        return qmc.discrepancy(unit_sample(method, lap.dims, 1024, seed))

    sob = np.mean([disc("sobol", s) for s in range(5)])
    ran = np.mean([disc("random", s) for s in range(5)])
    assert sob < ran

    # And on the decoded valid samples themselves (centred positions of the levels).
    def decoded(index):
        return np.column_stack(
            [(index[:, j] + 0.5) / p.n_levels for j, p in enumerate(lap.parameters)]
        )

    d_sobol = np.mean(
        [qmc.discrepancy(decoded(lap.to_index(lap.sample(n, "sobol", seed=s)))) for s in range(5)]
    )
    d_rand = np.mean(
        [qmc.discrepancy(decoded(lap.to_index(lap.sample(n, "random", seed=s)))) for s in range(5)]
    )
    assert d_sobol < d_rand


def test_sobol_sample_is_seeded_and_a_prefix_of_larger_samples(lap):
    a = lap.sample(50, seed=2)
    assert a == lap.sample(50, seed=2)
    assert a != lap.sample(50, seed=3)


def test_sampling_refuses_impossible_constraints():
    space = Space([IntRange("a", 1, 4)], constraints=["a > 10"])
    with pytest.raises(SpaceError, match="admit too few"):
        sample_index(space, 3, max_raw=1024)


def test_non_strict_sampling_returns_what_the_raw_budget_holds():
    space = Space(
        [IntRange("a", 1, 64), IntRange("b", 1, 64)], constraints=["a * b == 64"]
    )  # 7 valid points
    rows = sample_index(space, 50, max_raw=4096, strict=False)
    assert len(rows) == 7
    assert space.valid_mask(rows).all()
    assert len(space.unique_rows(rows)) == 7


@pytest.mark.parametrize("method", ["sobol", "random"])
def test_chunked_draws_give_the_first_valid_points_of_one_sequence(monkeypatch, method):
    """Drawing the raw sequence in small chunks must not change which points come out."""
    from gpautotune.space import _sampling

    space = Space([IntRange(f"x{i}", 1, 8) for i in range(6)], constraints=["x0 + x1 + x2 < 7"])
    whole = sample_index(space, 300, method=method, seed=4)
    monkeypatch.setattr(_sampling, "CHUNK", 64)
    chunked = sample_index(space, 300, method=method, seed=4)
    np.testing.assert_array_equal(whole, chunked)
    unit = _sampling.unit_sample(method, space.dims, 1 << 14, 4)
    index = space.from_unit(unit)
    expected = space.unique_rows(index[space.valid_mask(index)])[:300]
    np.testing.assert_array_equal(whole, expected)


def test_neighbors_are_valid_and_one_factor_away(lap):
    config = dict(
        elements_number=6,
        y_component_number=6,
        vector_length=1,
        temporary_size=2,
        load_overlap=True,
        threads_number=1024,
        lws_y=2,
    )
    neigh = lap.neighbors(config, radius=2)
    assert neigh
    base = lap.to_index([config])[0]
    for n in neigh:
        diff = lap.to_index([n])[0] - base
        assert np.count_nonzero(diff) == 1 and np.abs(diff).max() <= 2
        lap.validate(n)
    assert len(lap.neighbors(config, radius=1)) < len(neigh)


def test_encode_decode_round_trip(lap):
    configs = lap.sample(100, seed=0)
    enc = lap.encode(configs)
    assert enc.min() >= 0 and enc.max() <= 1
    assert lap.decode(enc) == configs


def test_count_valid_estimates_large_spaces():
    space = Space([IntRange(f"b{i}", 1, 8) for i in range(30)], constraints=["b0 + b1 <= 8"])
    count = space.count_valid(samples=50_000, limit=1e6)
    assert not count.exact
    true_fraction = 28 / 64
    assert count.low / count.raw_size <= true_fraction <= count.high / count.raw_size


def test_enumerate_refused_above_the_limit():
    space = Space([IntRange(f"b{i}", 1, 8) for i in range(30)])
    with pytest.raises(SpaceError, match="enumeration limit"):
        space.enumerate()


def test_derived_quantities_and_scalar_callables():
    space = Space(
        [IntRange("a", 1, 5), IntRange("b", 1, 5)], constraints=["s <= 4"], derived={"s": "a + b"}
    )
    assert len(space.enumerate()) == 6
    with pytest.warns(UserWarning, match="one configuration at a time"):
        scalar = Space(
            [IntRange("a", 1, 5), IntRange("b", 1, 5)],
            constraints=[lambda c: c["a"] > 1 and c["b"] > 1],
        )
        assert len(scalar.enumerate()) == 16


def test_space_from_spec_and_its_errors():
    space = space_from_spec(
        [
            {"name": "t", "kind": "pow2", "low": 1, "high": 8},
            {"name": "m", "kind": "categorical", "choices": ["a", "b"]},
        ],
        ["t > 1"],
    )
    assert space.count_valid().estimate == 6
    from gpautotune.exceptions import ConfigError

    with pytest.raises(ConfigError, match="parameters.0"):
        space_from_spec([{"name": "t", "kind": "pow2", "low": 1}])
    with pytest.raises(ConfigError, match="kind"):
        space_from_spec([{"name": "t", "kind": "weird"}])


def test_laplacian_vector_fill_is_the_share_of_lanes_doing_work(lap):
    """x components over V vectors of vector_length lanes, fed to the GP as a model input."""
    configs = [
        {"elements_number": 6, "y_component_number": 6, "vector_length": 2},  # x=1: 1 of 2 lanes
        {"elements_number": 12, "y_component_number": 6, "vector_length": 2},  # x=2: full
        {
            "elements_number": 12,
            "y_component_number": 4,
            "vector_length": 2,
        },  # x=3: 2 vectors, 3 of 4
        {"elements_number": 5, "y_component_number": 5, "vector_length": 1},
        {"elements_number": 4, "y_component_number": 1, "vector_length": 16},  # x=4: 4 of 16
    ]
    rest = {"temporary_size": 2, "load_overlap": True, "threads_number": 256, "lws_y": 4}
    cols = lap.columns(lap.to_index([{**c, **rest} for c in configs]))
    assert list(cols["vector_fill"]) == [0.5, 1.0, 0.75, 1.0, 0.25]
    assert lap.model_inputs == ("x_component_number", "vector_fill")


def test_retyped_keeps_the_constraints_and_checks_the_levels():
    space = small_space()
    seen = space.retyped({"u": Categorical("u", (1, 2, 3, 4))})
    assert isinstance(seen["u"], Categorical) and seen.names == space.names
    index = space.enumerate_index()
    np.testing.assert_array_equal(seen.enumerate_index(), index)
    assert seen.to_configs(index) == space.to_configs(index)
    with pytest.raises(SpaceError, match="'u' can only be retyped"):
        space.retyped({"u": Categorical("u", (1, 2, 3))})


def _bounded_sum_space() -> Space:
    return Space(
        [IntRange("a", 0, 3), IntRange("b", 0, 2), IntRange("c", 0, 1)],
        constraints=["a + b + c <= 4"],
    )


def test_pair_moves_change_exactly_two_factors_and_keep_the_valid_ones():
    space = _bounded_sum_space()
    row = space.to_index([{"a": 1, "b": 1, "c": 0}])[0]
    moves = space.pair_index(row)
    changed = (moves != row).sum(axis=1)
    assert (changed == 2).all()
    assert space.valid_mask(moves).all()
    every = space.enumerate_index()
    expected = every[(every != row).sum(axis=1) == 2]
    assert sorted(map(tuple, moves)) == sorted(map(tuple, expected))
    sample = space.pair_index(row, limit=4, seed=(7,))
    assert len(sample) <= 4 and {tuple(m) for m in sample} <= {tuple(m) for m in moves}


def test_adjacent_moves_keep_every_factor_within_one_level():
    space = _bounded_sum_space()
    row = space.to_index([{"a": 2, "b": 1, "c": 1}])[0]
    moves = space.adjacent_index(row)
    every = space.enumerate_index()
    step = np.abs(every - row).max(axis=1)
    expected = every[step == 1]
    assert sorted(map(tuple, moves)) == sorted(map(tuple, expected))
    assert 0 < len(expected) < 3 * 3 * 2 - 1  # the constraint cuts some
    sample = space.adjacent_index(row, limit=3, seed=(5,))
    assert len(sample) <= 3 and {tuple(m) for m in sample} <= {tuple(m) for m in moves}


def test_one_constraint_given_alone_is_one_constraint():
    params = [IntRange("a", 0, 3), IntRange("b", 0, 3)]
    alone = Space(params, constraints="a > b")
    assert alone.describe()["constraints"] == ["a > b"]
    assert alone.enumerate() == Space(params, constraints=["a > b"]).enumerate()
    assert len(Space(params, constraints=lambda c: c["a"] == c["b"]).enumerate()) == 4


def test_a_constraint_function_that_raises_is_named_with_its_input(recwarn):
    params = [IntRange("a", 0, 3), IntRange("b", 0, 3)]

    def reads_a_typo(c):
        return c["a"] > c["bb"]

    def broken(cols):
        raise RuntimeError("not ready")

    with pytest.raises(PredicateError, match=r"reads_a_typo raised KeyError: 'bb' on \{'a': 0"):
        Space(params, constraints=[reads_a_typo]).enumerate()
    assert not recwarn.list  # no advice to vectorise a function that fails anyway
    with pytest.raises(PredicateError, match="constraint broken raised RuntimeError: not ready"):
        Space(params, constraints=[broken]).enumerate()
