"""Model formulas: parsing, term values, shortcuts and the errors users see."""

from __future__ import annotations

import numpy as np
import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.space import Boolean, Categorical, IntRange, Ordinal, PowerOfTwo, Real, Space
from gpautotune.surrogate import build_basis


@pytest.fixture()
def space() -> Space:
    return Space(
        [
            PowerOfTwo("threads", 32, 1024),
            IntRange("unroll", 1, 4),
            Boolean("overlap"),
            Categorical("layout", ("row", "col", "tile")),
            Ordinal("size", (2, 4)),
        ],
        constraints=["unroll <= 3 or threads >= 64"],
    )


def _columns(space: Space, configs: list[dict]) -> dict[str, np.ndarray]:
    return space.columns(space.to_index(configs))


CONFIGS = [
    {"threads": 32, "unroll": 1, "overlap": False, "layout": "row", "size": 2},
    {"threads": 256, "unroll": 3, "overlap": True, "layout": "tile", "size": 4},
    {"threads": 1024, "unroll": 4, "overlap": True, "layout": "col", "size": 2},
]


def test_terms_are_evaluated_on_columns(space: Space) -> None:
    basis = build_basis(
        "threads + 1/threads + log2(threads) + unroll^2 + threads*unroll + overlap", space
    )
    assert basis.term_names == [
        "threads",
        "1/threads",
        "log2(threads)",
        "unroll^2",
        "threads*unroll",
        "overlap",
    ]
    H = basis(_columns(space, CONFIGS))
    t, u = np.array([32.0, 256, 1024]), np.array([1.0, 3, 4])
    expected = np.column_stack([t, 1 / t, np.log2(t), u**2, t * u, [0.0, 1, 1]])
    np.testing.assert_allclose(H, expected)


def test_power_can_be_written_with_double_star_and_products_mix_transforms(space: Space) -> None:
    basis = build_basis("unroll**3 + log2(threads)*1/unroll", space)
    assert basis.term_names == ["unroll^3", "log2(threads)*1/unroll"]
    H = basis(_columns(space, CONFIGS))
    np.testing.assert_allclose(H[:, 1], np.log2([32, 256, 1024]) / np.array([1, 3, 4]))
    assert build_basis("threads/unroll", space).term_names == ["threads*1/unroll"]


def test_repeated_terms_appear_once_and_keep_their_first_position(space: Space) -> None:
    basis = build_basis("unroll + threads + unroll", space)
    assert basis.term_names == ["unroll", "threads"]


def test_shortcuts(space: Space) -> None:
    assert build_basis("constant", space).term_names == []
    linear = build_basis("linear", space).term_names
    assert linear == ["threads", "unroll", "overlap", "layout[col]", "layout[tile]", "size"]
    quadratic = build_basis("quadratic", space).term_names
    # squares only for numeric factors with more than two levels
    assert quadratic == linear + ["threads^2", "unroll^2"]
    assert build_basis("constant + unroll", space).term_names == ["unroll"]


def test_constant_basis_has_no_columns(space: Space) -> None:
    H = build_basis("constant", space)(_columns(space, CONFIGS))
    assert H.shape == (3, 0)


def test_categorical_gives_treatment_dummies(space: Space) -> None:
    basis = build_basis("layout", space)
    np.testing.assert_array_equal(basis(_columns(space, CONFIGS)), [[0, 0], [0, 1], [1, 0]])


def test_parameters_restrict_and_terms_of(space: Space) -> None:
    basis = build_basis("threads + 1/threads + unroll + threads*unroll + size", space)
    assert basis.parameters == ["threads", "unroll", "size"]
    assert basis.terms_of("threads") == [0, 1, 3]
    assert basis.restrict(["unroll", "size"]).term_names == ["unroll", "size"]
    assert basis.restrict([]).term_names == []


def test_unknown_parameter_names_it_and_the_known_ones(space: Space) -> None:
    with pytest.raises(ConfigError) as err:
        build_basis("threads + 1/unrol", space)
    assert "'unrol'" in str(err.value)
    for name in space.names:
        assert name in str(err.value)


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("1/overlap", "non-zero"),
        ("threads - unroll", "cannot read"),
        ("2*threads", "cannot read"),
        ("unroll^1", "integer >= 2"),
        ("unroll^0.5", "integer >= 2"),
        ("log2(threads", "cannot parse"),
        ("1/layout", "categorical"),
        ("layout*threads", "categorical"),
        ("log2(1/threads)", "must be a parameter name"),
        ("", "non-empty"),
    ],
)
def test_malformed_formulas_are_config_errors(space: Space, formula: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_basis(formula, space)


def test_transforms_check_every_level_and_real_intervals() -> None:
    space = Space([IntRange("k", 0, 3), Real("r", -1.0, 1.0), Real("p", 0.5, 2.0)])
    with pytest.raises(ConfigError, match="non-zero"):
        build_basis("1/k", space)
    with pytest.raises(ConfigError, match="positive"):
        build_basis("log2(r)", space)
    with pytest.raises(ConfigError, match="non-zero"):
        build_basis("1/r", space)
    H = build_basis("log2(p) + 1/p", space)({"p": np.array([0.5, 2.0])})
    np.testing.assert_allclose(H, [[-1.0, 2.0], [1.0, 0.5]])


def test_the_seeds_laplacian_model_parses() -> None:
    from gpautotune.problems.laplacian.space import laplacian_space

    formula = (
        "y_component_number + 1/y_component_number + vector_length + lws_y + 1/lws_y"
        " + load_overlap + temporary_size + elements_number + 1/elements_number"
        " + threads_number + 1/threads_number"
    )
    basis = build_basis(formula, laplacian_space())
    assert len(basis) == 11 and len(basis.parameters) == 7


def test_derived_model_inputs_can_be_trend_terms() -> None:
    space = Space([IntRange("a", 1, 8), IntRange("b", 1, 4)], derived={"ratio": "a / b"})
    basis = build_basis("linear + ratio + ratio*b", space, inputs=("ratio",))
    assert basis.term_names == ["a", "b", "ratio", "ratio*b"]
    h = basis(_columns(space, [{"a": 6, "b": 3}, {"a": 8, "b": 1}]))
    np.testing.assert_allclose(h, [[6, 3, 2, 6], [8, 1, 8, 8]])
    assert build_basis("linear", space, inputs=("ratio",)).term_names == [
        "a",
        "b",
    ]  # shortcuts: parameters only
    with pytest.raises(ConfigError, match="'ratio'"):
        build_basis("ratio", space)  # not passed as an input: unknown
    with pytest.raises(ConfigError, match="only enter as itself"):
        build_basis("1/ratio", space, inputs=("ratio",))
    with pytest.raises(ConfigError, match="not derived"):
        build_basis("a", space, inputs=("nope",))
