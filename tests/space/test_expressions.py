import numpy as np
import pytest

from gpautotune.exceptions import PredicateError
from gpautotune.space import IntRange, Space, compile_expression

COLS = {"a": np.array([1, 2, 3, 4]), "b": np.array([2, 2, 1, 8])}


def test_arithmetic_and_comparisons_are_vectorised():
    expr = compile_expression("a % b == 0 and not a > 3 or min(a, b) == 8", ["a", "b"])
    assert expr(COLS).tolist() == [False, True, True, False]
    assert expr.names == {"a", "b"}


def test_chained_comparison_and_functions():
    expr = compile_expression("1 < a * 2 <= 6", ["a", "b"])
    assert expr(COLS).tolist() == [True, True, True, False]
    assert compile_expression("ceil(a / b)", ["a", "b"])(COLS).tolist() == [1, 1, 3, 1]
    assert compile_expression("log2(b) + abs(-a)", ["a", "b"])(COLS).tolist() == [2, 3, 3, 7]


def test_division_by_zero_gives_no_error():
    out = compile_expression("a / (b - 2) < 10", ["a", "b"])(
        {"a": np.array([1.0, 1.0]), "b": np.array([2.0, 3.0])}
    )
    assert out.tolist() == [False, True]


@pytest.mark.parametrize(
    ("text", "undefined"),
    [
        ("n % v == 0", [True, False, False]),  # ZeroDivisionError in Python where v is 0
        ("not n // v == 1", [True, False, False]),
        ("n / v >= 4 and n > 0", [True, False, False]),
        ("v == 0 or n % v == 0", [False, False, False]),  # short-circuits where v is 0
        ("v > 0 and n % v == 0", [False, False, False]),
        ("v != 0 or n % v == 0", [True, False, False]),  # reaches the division where v is 0
        ("v ** -1 < 1", [True, False, False]),
        ("n % 2 == 0", [False, False, False]),
    ],
)
def test_rows_python_cannot_evaluate_are_undefined(text, undefined):
    cols = {"n": np.array([4, 4, 6]), "v": np.array([0, 2, 4])}
    _, rows = compile_expression(text, ["n", "v"]).evaluate(cols)
    assert np.broadcast_to(rows, (3,)).tolist() == undefined


def test_a_constraint_does_not_admit_a_division_by_zero():
    space = Space([IntRange("n", 1, 8), IntRange("v", 0, 4)], constraints=["n % v == 0"])
    assert {c["v"] for c in space.enumerate()} == {1, 2, 3, 4}
    guarded = Space(
        [IntRange("n", 1, 8), IntRange("v", 0, 4)], constraints=["v == 0 or n % v == 0"]
    )
    assert sum(c["v"] == 0 for c in guarded.enumerate()) == 8


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "a.__class__",
        "a[0]",
        "(lambda: 1)()",
        "open('x')",
        "[a for a in b]",
        "min(a, key=b)",
    ],
)
def test_unsafe_or_unsupported_constructs_are_refused(text):
    with pytest.raises(PredicateError):
        compile_expression(text, ["a", "b"])


def test_unknown_name_is_named_in_the_error():
    with pytest.raises(PredicateError, match="'c'"):
        compile_expression("a + c > 1", ["a", "b"])


def test_syntax_error_is_a_predicate_error():
    with pytest.raises(PredicateError, match="cannot parse"):
        compile_expression("a >", ["a"])


def test_membership_in_a_literal_list_or_tuple():
    assert compile_expression("a in [1, 4]", ["a"])(COLS).tolist() == [True, False, False, True]
    expr = compile_expression("b not in (2,) and a*b <= 8", ["a", "b"])
    assert expr(COLS).tolist() == [False, False, True, False]
    with pytest.raises(PredicateError, match="literal list"):
        compile_expression("a in b", ["a", "b"])
