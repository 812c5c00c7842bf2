"""Expressions give what Python gives (Kernel Tuner evaluates restrictions as Python):
integer arithmetic past int64, and the forms its users write (``int``, ``round``, the bit
operators, ``x if c else y``, ``is None``). Each case is checked against Python's
``eval`` on every row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpautotune.exceptions import PredicateError
from gpautotune.space import Categorical, IntRange, Ordinal, Space, compile_expression

MIXED = np.empty(8, dtype=object)
MIXED[:] = [1, 1.5, 2, 1, 2.5, 1.5, 2, 1]  # an ordinal of ints and floats
MODE = np.empty(8, dtype=object)
MODE[:] = [None, "a", None, "b", "a", None, "b", "a"]  # a categorical with a null level
COLS = {
    "x": np.array([1, 16, 64, 1024, 3, 0, 7, 2**40], dtype=np.int64),
    "y": np.array([3, 0, -1, 2, 5, 63, 1, 2], dtype=np.int64),
    "f": np.array([0.5, -1.5, 2.5, 0.0, 3.7, 1e30, -2.5, 7.25]),
    "m": MIXED,
    "mode": MODE,
}
BUILTINS = {"int": int, "round": round, "abs": abs, "min": min, "max": max}
#: What Python raises on a row that the expression then leaves undefined.
UNDEFINED = (ZeroDivisionError, ValueError, OverflowError)


def python_rows(text):
    """Python's value of ``text`` on each row of COLS, or the exception type it raises."""
    out = []
    for i in range(len(COLS["x"])):
        row = {k: (v[i].item() if isinstance(v[i], np.generic) else v[i]) for k, v in COLS.items()}
        try:
            out.append(eval(text, {"__builtins__": BUILTINS}, row))  # noqa: S307
        except UNDEFINED as exc:
            out.append(type(exc))
    return out


def same(ours, theirs):
    if isinstance(theirs, float) and math.isnan(theirs):
        return isinstance(ours, float) and math.isnan(ours)
    return ours == theirs and (isinstance(ours, bool) or not isinstance(theirs, bool))


def assert_as_python(text, *, types=False):
    """The expression's values equal Python's on every row where Python gives one (of the
    same type with ``types``), and the rows where Python raises are the undefined ones."""
    values, undefined = compile_expression(text, list(COLS)).evaluate(COLS)
    n = len(COLS["x"])
    values = np.broadcast_to(np.asarray(values), (n,)).tolist()
    undefined = np.broadcast_to(undefined, (n,)).tolist()
    expected = python_rows(text)
    for i, (ours, theirs) in enumerate(zip(values, expected, strict=True)):
        if isinstance(theirs, type):
            assert undefined[i], f"{text}: row {i} raises {theirs.__name__} in Python"
            continue
        assert not undefined[i], f"{text}: row {i} is {theirs!r} in Python, undefined here"
        assert same(ours, theirs), f"{text}: row {i} is {theirs!r} in Python, {ours!r} here"
        if types:
            assert type(ours) is type(theirs), f"{text}: row {i}: {ours!r} vs {theirs!r}"


@pytest.mark.parametrize(
    "text",
    [
        "x ** 3 > 2 ** 63",  # numpy wrapped 2 ** 63 to -2 ** 63: every row passed
        "x * 2 ** 60 > 0",  # wrapped negative: no row passed
        "x * x * x * x > 2 ** 62",
        "x + 2 ** 63 - 1 > 2 ** 63",
        "-(x - 2 ** 62 - 2 ** 62 - 2 ** 62) > 0",
        "abs(x - 2 ** 62 - 2 ** 62 - 2 ** 62) > 2 ** 63",
        "(x << 60) // 3 > 2 ** 60",
        "2 ** (x % 70) % 1000 == 24",
        "(x * 2 ** 62) // (y + 2) > 0",
        "(2 ** 62 + x) / 3 > 1537228672809129301",  # exact quotient past 2 ** 53
        "min(x, 2 ** 70) == x and max(x, 2 ** 70) > x",
        "(x * 2 ** 60 if y > 1 else -x) > 0",
    ],
)
def test_integer_arithmetic_past_int64_is_exact(text):
    assert_as_python(text, types=True)


def test_arithmetic_that_fits_stays_vectorised_in_int64():
    expr = compile_expression("x * y + (x << 2) - 2 ** 40", ["x", "y"])
    assert expr(COLS).dtype == np.int64
    big = compile_expression("x * 2 ** 62", ["x"])(COLS)  # past int64: floats, not wrapped
    assert big.dtype == float and big[3] == 1024 * 2.0**62 and big[4] == 3 * 2.0**62


def test_a_restricted_space_counts_rows_past_int64_as_python_does():
    params = [IntRange("x", 1, 64), IntRange("y", 0, 8)]
    space = Space(params, constraints=["x * 2 ** 60 > 0", "x ** 11 > 2 ** 63 or y == 0"])
    python = sum(
        x * 2**60 > 0 and (x**11 > 2**63 or y == 0) for x in range(1, 65) for y in range(9)
    )
    assert space.count_valid().estimate == python == 64 * 9 - 52 * 8


@pytest.mark.parametrize(
    "text",
    [
        "int(x / 3) > 10",
        "int(f) == 0",
        "int(m) == m",
        "int(-2.7) + int(x) == x - 2",
        "round(f)",
        "round(x / 3) > 10",
        "round(m) == 2",  # round(1.5) and round(2.5) are both 2 (halves to even)
        "round(f, 1) == 3.7",
        "round(x, -1) == 20",
        "x & (x - 1) == 0",  # power-of-two checks
        "x & 32 == 0",
        "x | y > 63",
        "x ^ y",
        "x >> 4 > 2",
        "x >> y",  # a negative count raises ValueError in Python: undefined there
        "x << y",
        "1 << y",
        "~x",
        "~(x > 10)",  # ~True is -2
        "(x > 10) + (y > 1)",  # True + True is 2
        "-(x > 10)",
        "x if y > 1 else f",
        "(x if y else -x) < 0",
        "x // y if y != 0 else -1",  # the division is not reached where y is 0
        "(y if m == 1 else x / y) > 1",
        "mode is None",
        "mode is not None",
        "None is mode",
        "mode == None",
        "mode != None and mode != 'a'",
        "mode in (None, 'b')",
        "(mode if mode is not None else 'z') == 'z'",
        "x if mode is None else -x",
        "m * 2 == 3",
        "m // 2",
        "m % 2 == 0",
        "x / m > 10",
        "x in {1, 3}",
    ],
)
def test_python_forms_of_kernel_tuner_restrictions_give_pythons_values(text):
    assert_as_python(text)


def test_ints_and_rounds_keep_pythons_types():
    for text in ["int(f / 1e20)", "round(f / 1e20)", "round(m)", "int(m)", "round(x, -1)"]:
        assert_as_python(text, types=True)
    assert_as_python("round(f, 1)", types=True)
    assert_as_python("int(f) > 2 ** 63 and round(f) > 2 ** 63", types=True)  # 1e30


def test_a_branch_is_evaluated_only_where_it_is_taken():
    choice = Categorical("v", (1, "auto", 2.5))
    space = Space([choice, IntRange("n", 0, 3)], constraints=['(v / 2 if v != "auto" else 0) < n'])
    python = sum((v / 2 if v != "auto" else 0) < n for v in (1, "auto", 2.5) for n in range(4))
    assert space.count_valid().estimate == python == 8


def test_int_of_nan_or_inf_and_negative_shifts_are_undefined():
    cols = {"a": np.array([1.0, 0.0, -1.0]), "s": np.array([1, -1, 2])}
    _, rows = compile_expression("int(1 / a) > 0", ["a", "s"]).evaluate(cols)
    assert np.broadcast_to(rows, (3,)).tolist() == [False, True, False]
    _, rows = compile_expression("(4 << s) + (4 >> s) > 0", ["a", "s"]).evaluate(cols)
    assert np.broadcast_to(rows, (3,)).tolist() == [False, True, False]


def test_a_space_of_an_ordinal_of_ints_and_floats_evaluates_restrictions_as_python():
    space = Space(
        [Ordinal("unroll", (1, 1.5, 2, 4)), IntRange("bx", 1, 4)],
        constraints=["int(unroll) == unroll and bx << int(unroll) <= 16 or unroll / bx == 1.5"],
    )
    python = [
        {"unroll": u, "bx": b}
        for b in range(1, 5)
        for u in (1, 1.5, 2, 4)
        if int(u) == u and b << int(u) <= 16 or u / b == 1.5
    ]
    configs = space.enumerate()
    assert sorted(map(str, configs)) == sorted(map(str, python))
    assert {type(c["unroll"]) for c in configs if c["unroll"] != 1.5} == {int}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sum([x, y]) > 3", "calling 'sum' is not allowed"),
        ("len(str(x)) == 2", "calling 'len' is not allowed"),
        ("x is True", "`is` with anything but None"),
        ("x is y", "`is` with anything but None"),
        ("x in range(4)", "`in` with anything but a literal list, tuple or set"),
        ("int(x, 2)", r"int\(\) takes 1 argument"),
        ("round(x, 1, 2)", r"round\(\) takes 1 or 2 argument"),
        ("x << 2000", "the shift '2000'"),
    ],
)
def test_what_stays_unsupported_is_refused_naming_it(text, message):
    with pytest.raises(PredicateError, match=message):
        compile_expression(text, ["x", "y"])


def test_an_integer_raised_to_a_huge_column_is_refused_not_computed():
    cols = {"x": np.array([2, 3]), "e": np.array([10, 2**40])}
    with pytest.raises(PredicateError, match="exponent .* too large"):
        compile_expression("x ** e > 0", ["x", "e"])(cols)
