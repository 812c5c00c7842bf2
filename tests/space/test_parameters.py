import numpy as np
import pytest

from gpautotune.exceptions import SpaceError
from gpautotune.space import Boolean, Categorical, IntRange, Ordinal, PowerOfTwo, Real, Space


def test_power_of_two_is_log2_encoded():
    p = PowerOfTwo("t", 32, 1024)
    assert p.levels == (32, 64, 128, 256, 512, 1024)
    assert np.allclose(p.positions(np.arange(6)), np.linspace(0, 1, 6))


def test_log2_ordinal_spacing_follows_values():
    p = Ordinal("f", (1, 4, 8, 12, 16), scale="log2")
    pos = p.positions(np.arange(5))
    assert pos[0] == 0 and pos[-1] == 1
    assert np.isclose(pos[1], 2 / 4) and np.isclose(pos[2], 3 / 4)
    assert p.snap(np.array([0.49, 0.76])).tolist() == [1, 2]


def test_int_range_with_step():
    p = IntRange("u", 2, 11, step=3)
    assert p.levels == (2, 5, 8, 11)
    assert p.index_of([8]).tolist() == [2]


def test_equal_cells_give_each_level_the_same_mass():
    p = Ordinal("f", (1, 4, 8, 12, 16), scale="log2")
    u = (np.arange(1000) + 0.5) / 1000
    assert np.bincount(p.from_unit(u)).tolist() == [200] * 5


def test_boolean_accepts_strings_and_numbers():
    p = Boolean("flag")
    assert p.index_of(["true", "False", 1, True]).tolist() == [1, 0, 1, 1]


def test_bad_values_are_named():
    with pytest.raises(SpaceError, match="7 is not a level of parameter 't'"):
        PowerOfTwo("t", 1, 4).index_of([7])
    with pytest.raises(SpaceError, match="outside"):
        Real("r", 0, 1).index_of([2.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda: PowerOfTwo("t", 3, 8),
        lambda: Ordinal("o", (1, 1)),
        lambda: Ordinal("o", ("a", "b")),
        lambda: Ordinal("o", (0, 1), scale="log2"),
        lambda: IntRange("i", 5, 1),
        lambda: Real("r", 1, 0),
        lambda: Categorical("not an identifier", ("a",)),
    ],
)
def test_invalid_parameters_are_refused(make):
    with pytest.raises(SpaceError):
        make()


def test_real_round_trip():
    p = Real("r", 1e-3, 1.0, log=True)
    u = p.index_of([0.01, 0.1])
    assert np.allclose(p.values_at(u), [0.01, 0.1])


def test_categorical_choices_come_back_of_their_own_type():
    space = Space([Categorical("unroll", [0, "auto"]), Categorical("fast", ["auto", True, 1.5])])
    configs = space.enumerate()
    assert [(c["unroll"], c["fast"]) for c in configs[:3]] == [(0, "auto"), (0, True), (0, 1.5)]
    assert space.to_configs(space.to_index(configs)) == configs
    assert type(Categorical("k", ["a", "b"]).values_at(np.array([1]))[0]) is np.str_


@pytest.mark.parametrize(("low", "high", "log"), [(0.001, 0.1, True), (-1.0, 0.1, False)])
def test_a_real_parameters_ends_decode_inside_its_bounds(low, high, log):
    p = Real("a", low, high, log=log)
    ends = p.values_at(np.array([0.0, 1.0]))  # 0.1 came back as 0.10000000000000006
    assert low <= ends[0] <= ends[1] <= high and ends.tolist() == pytest.approx([low, high])
    assert p.index_of(ends).tolist() == pytest.approx([0.0, 1.0])


def test_an_ordinal_of_ints_and_floats_keeps_each_levels_type():
    # Kernel Tuner writes `#define factor 1`; an int level that came back as 1.0 did not build
    p = Ordinal("factor", (2, 1, 1.5))
    assert [(v, type(v)) for v in p.values_at(np.arange(3)).tolist()] == [
        (1, int),
        (1.5, float),
        (2, int),
    ]
    space = Space([p, IntRange("n", 1, 2)], constraints=["factor * n != 3"])
    configs = space.enumerate()
    assert [str(c["factor"]) for c in configs] == ["1", "1", "1.5", "2", "2"]
    assert space.to_configs(space.to_index(configs)) == configs
    assert p.index_of([1.0, 2.0, 1.5]).tolist() == [0, 2, 1]
    encoded = space.encode(space.to_index(configs))  # the model still sees floats
    assert encoded.dtype == float and encoded[:, 0].tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]
    linear = Ordinal("factor", (1, 1.5, 2), scale="linear")
    assert linear.positions(np.arange(3)).tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize(
    ("levels", "dtype"),
    [((1, 2, 4), np.int64), ((0.5, 1.0, 2.0), np.float64), ((1.0, 2.5), np.float64)],
)
def test_ordinals_of_one_number_type_keep_their_numpy_dtype(levels, dtype):
    values = Ordinal("u", levels).values_at(np.arange(len(levels)))
    assert values.dtype == dtype and values.tolist() == sorted(levels)
    assert IntRange("r", 1, 3).values_at(np.arange(3)).dtype == np.int64


def test_an_empty_cell_is_the_none_level_only_where_there_is_one():
    assert Categorical("mode", [None, "a"]).from_text("") is None
    assert Categorical("mode", [None, "a"]).from_text("None") is None
    assert Categorical("mode", ["", None]).from_text("") == ""  # a text level comes first
    assert np.isnan(Categorical("mode", ["a", "b"]).from_text(""))
    assert np.isnan(IntRange("x", 1, 3).from_text(""))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Ordinal("unroll", [1, 2, float("nan"), 4]), "level nan: drop missing values"),
        (lambda: Categorical("mode", ["a", np.float64("nan")]), "level nan: drop missing"),
        (lambda: Ordinal("unroll", [1, float("inf")]), "level inf: a level must be a finite"),
        (lambda: Categorical("mode", [-np.inf, "a"]), "level -inf"),
    ],
)
def test_a_non_finite_level_is_refused_when_the_parameter_is_built(make, message):
    # pandas' unique() of a column with a gap gives NaN; stored, the run could not resume
    with pytest.raises(SpaceError, match=message):
        make()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: IntRange("a", 1.5, 3), "low must be a whole number.*got 1.5"),
        (lambda: IntRange("a", 1, 6, step=2.5), "step must be a whole number.*got 2.5"),
        (lambda: IntRange("a", 1, 6, step=0.5), "step must be a whole number"),
        (lambda: IntRange("a", 1, 6, step=0), "need step >= 1"),
        (lambda: IntRange("a", "1", "5"), "low must be a whole number.*got '1'"),
        (lambda: IntRange("a", 0, True), "high must be a whole number.*got True"),
        (lambda: IntRange("a", 1, 3.0), "high must be a whole number"),  # as PowerOfTwo
        (lambda: PowerOfTwo("t", 4.0, 64), r"PowerOfTwo\('t'\): low must be a whole number"),
        (lambda: IntRange("a", 0, 2**40), "1,099,511,627,777 levels, at most 10,000,000"),
    ],
)
def test_int_range_bounds_are_whole_numbers_and_its_size_is_limited(make, message):
    # 1.5 was truncated to 1, step 2.5 to 2; 2**40 levels was a bare MemoryError
    with pytest.raises(SpaceError, match=message):
        make()
    assert IntRange("a", np.int64(1), np.int32(3), step=np.int8(2)).levels == (1, 3)
    assert type(IntRange("a", np.int64(1), 3).low) is int
