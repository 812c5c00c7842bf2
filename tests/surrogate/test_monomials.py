import numpy as np

from gpautotune.space import Boolean, IntRange, Ordinal, PowerOfTwo, Space
from gpautotune.surrogate import Monomial, predicate_monomials


def _space(**kwargs) -> Space:
    return Space(
        [
            PowerOfTwo("mwg", 16, 128),
            PowerOfTwo("mdim", 8, 32),
            PowerOfTwo("vw", 1, 8),
            IntRange("tile", 1, 8),
            Ordinal("method", (0, 1, 2)),  # a zero level: no logarithm
            Boolean("padding"),
        ],
        **kwargs,
    )


def test_products_quotients_and_remainders_of_the_predicates_become_monomials():
    space = _space(
        constraints=[
            "mwg % (mdim * vw) == 0",  # the quotient, and the product inside it
            "mdim * vw <= 128",  # the same product again: one input
            "tile == 1 or tile % vw == 0",
            "method * tile < 9",  # method has the level 0
            "padding * mwg < 100",  # a boolean
            "tile <= 6",
        ]
    )
    labels = [m.label for m in predicate_monomials(space)]
    assert labels == ["mwg/(mdim*vw)", "mdim*vw", "tile/vw"]


def test_a_quotient_and_its_inverse_are_one_input():
    space = _space(constraints=["mwg % mdim == 0", "mdim / mwg <= 1", "mdim // mwg < 2"])
    assert [m.label for m in predicate_monomials(space)] == ["mwg/mdim"]


def test_derived_quantities_named_by_a_predicate_are_read_through():
    space = _space(
        constraints=["per_thread <= 8", "ceil(per_thread / tile) > 0"],
        derived={"per_thread": "mwg / (mdim * vw)"},
        model_inputs=("per_thread",),
    )
    found = [m.label for m in predicate_monomials(space)]
    assert found == ["mwg/(mdim*vw)", "mdim*vw", "mwg/(mdim*vw*tile)"]
    # an input the model already has is not given twice
    kept = [m.label for m in predicate_monomials(space, exclude=space.model_inputs)]
    assert kept == ["mdim*vw", "mwg/(mdim*vw*tile)"]


def test_a_space_without_arithmetic_predicates_has_none():
    assert predicate_monomials(_space(constraints=["tile <= mdim", "vw != 2"])) == ()
    assert predicate_monomials(_space()) == ()


def test_log_values_are_the_log_of_the_product():
    m = Monomial((("mwg", 1), ("mdim", -1), ("vw", -2)))
    assert m.label == "mwg/(mdim*vw^2)"
    cols = {"mwg": np.array([128.0, 16.0]), "mdim": np.array([8.0, 16.0]), "vw": [2.0, 1.0]}
    np.testing.assert_allclose(m.log_values(cols), np.log([128 / (8 * 4), 16 / 16]))
