"""The Python semantics of each operator and whitelisted function, on columns.

:mod:`._expressions` parses and compiles an expression into a tree of closures; this
module holds what they call: ``+ - * / // % **``, shifts, bit operators, negation,
comparisons, ``is None``, truth values, the ``x if c else y`` choice and ``min``, ``max``,
``abs``, ``int``, ``round``, ``ceil``, ``floor``, ``log2``, each giving on NumPy columns
the values Python gives row by row (int64 where it cannot overflow, else exact Python
ints; rows where Python raises are marked undefined in the compiler's scope). It is
separate from the compiler: what each operator means, not which syntax is allowed.
"""

from __future__ import annotations

import ast
import contextvars
import math
import operator
from collections.abc import Callable

import numpy as np

#: Largest size of a constant exponent (``x ** 2048`` is refused).
MAX_EXPONENT = 1024

#: The undefined-row masks of the expression parts being evaluated (innermost last).
_SCOPES: contextvars.ContextVar[list[np.ndarray] | None] = contextvars.ContextVar(
    "gpautotune_expression_scopes", default=None
)


def _mark_undefined(rows: np.ndarray) -> None:
    """Record ``rows`` (a boolean mask) as undefined in the innermost scope, if any."""
    scopes = _SCOPES.get()
    if scopes is not None and np.any(rows):
        scopes[-1] = np.logical_or(scopes[-1], rows)


_LOW, _HIGH = -(2**63), 2**63 - 1  # int64's range


def _operand(value: object, *, bools: bool = True) -> object:
    """``value`` ready for numpy arithmetic: booleans as ints (``True + True`` is 2 in
    Python, True in numpy) unless ``bools`` is False, and an int beyond int64 as a Python
    int in an object array (numpy would refuse it, or wrap it around)."""
    if isinstance(value, np.ndarray):
        return value.astype(np.int64) if bools and value.dtype.kind == "b" else value
    if bools and isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and not _LOW <= value <= _HIGH:
        return np.array(value, dtype=object)
    return value


def _numpy(value: object) -> object:
    """A constant computed by Python as the numpy scalar numpy gave before (its dtype then
    rules, as before, against a float32 array); an int beyond int64 stays a Python int."""
    if type(value) is int and _LOW <= value <= _HIGH:  # type: ignore[operator]
        return np.int64(value)
    return np.float64(value) if type(value) is float else value


def _kind(value: object) -> str:
    return (value if type(value) is np.ndarray else np.asarray(value)).dtype.kind


_PLAIN = (int, float, str)


def _python(*values: object) -> bool:
    """Whether all values are plain Python numbers or text (constants: Python's own
    arithmetic is exact and is used)."""
    return all(type(v) in _PLAIN for v in values)


def _span(value: object) -> int:
    """The largest magnitude in an integer array or scalar, as a Python int."""
    if type(value) is int:
        return abs(value)
    array = np.asarray(value)
    return max(int(array.max()), -int(array.min())) if array.size else 0


def _largest_int(value: object) -> int:
    """The largest magnitude among the integers of ``value`` (object arrays too), else 0."""
    array = np.asarray(value)
    if array.dtype.kind in "iu":
        return _span(array)
    if array.dtype == object:
        return max((abs(v) for v in array.flat if isinstance(v, int)), default=0)
    return 0


def _check_size(value: object, count: object, what: str) -> None:
    """Refuse an integer raised to, or shifted left by, more than :data:`MAX_EXPONENT`
    (Python would compute the number for minutes)."""
    top = _largest_int(count)
    if top > MAX_EXPONENT and _largest_int(value) > (1 if what == "exponent" else 0):
        raise OverflowError(f"the {what} {top} is too large (at most {MAX_EXPONENT})")


def _objects(value: object) -> object:
    """Integers as Python ints in an object array (exact arithmetic, as Python's)."""
    return value if isinstance(value, int) else np.asarray(value).astype(object)


def _settle(values: object) -> object:
    """An exactly computed (object) result back in int64 or float64 where every value is
    an int that fits, or a float, so that what follows is vectorised again."""
    if not isinstance(values, np.ndarray) or values.dtype != object or not values.size:
        return values
    flat = values.ravel().tolist()
    if all(type(v) is int for v in flat):
        return values.astype(np.int64) if _LOW <= min(flat) and max(flat) <= _HIGH else values
    if all(type(v) is float for v in flat):
        return values.astype(float)
    return values


def _plain(values: object) -> object:
    """An expression's result as callers take it: integers beyond int64 (exact while the
    expression was evaluated) as floats, since sizes and model inputs are numbers."""
    if isinstance(values, int) and not isinstance(values, bool) and not _LOW <= values <= _HIGH:
        return float(values)
    if (
        isinstance(values, np.ndarray)
        and values.dtype == object
        and values.size
        and type(values.flat[0]) is int
        and all(type(v) is int for v in values.flat)
    ):
        return values.astype(float)
    return values


def _zero(value: object) -> np.ndarray:
    """Rows where ``value`` is zero (numbers only: text is never zero)."""
    value = np.asarray(value)
    if value.dtype.kind in "iufcbO":
        return np.asarray(value == 0, dtype=bool)
    return np.zeros(value.shape, dtype=bool)


def _unless_zero(left: object, right: object) -> tuple[object, object]:
    """Operands with a zero divisor replaced by 1 (its rows are already undefined; Python
    objects would raise ZeroDivisionError there)."""
    zero = _zero(right)
    return left, (np.where(zero, 1, right) if zero.any() else right)


def _arithmetic(
    fn: Callable[[object, object], object],
    python: Callable[[object, object], object],
    fits: Callable[[object, object], bool] | None,
    guard: Callable[[object, object], tuple[object, object]] | None = None,
) -> Callable[..., object]:
    """A binary operator as Python computes it: vectorised in int64 where ``fits`` says
    the magnitudes cannot overflow it, else exactly on Python ints (numpy wraps around
    silently: ``x * 2 ** 60`` would turn negative). ``guard`` makes rows that are
    undefined harmless before Python objects meet them."""

    def call(left: object, right: object) -> object:
        left, right = _operand(left), _operand(right)
        if _python(left, right):
            try:
                return _numpy(python(left, right))
            except (ZeroDivisionError, OverflowError):
                pass  # numpy's inf or nan; the caller marked the rows undefined
        kinds = _kind(left) + _kind(right)
        exact = fits is not None and kinds.strip("iu") == "" and not fits(left, right)
        if exact or "U" in kinds:  # text as Python's str ("ab" * 2; numpy refuses)
            left, right = _objects(left), _objects(right)
        if guard is not None and "O" in (_kind(left), _kind(right)):
            left, right = guard(left, right)
        out = fn(left, right)
        return _settle(out) if exact else out

    return call


def _by_zero(fn: Callable[[object, object], object]) -> Callable[..., object]:
    """``fn`` with the rows of a zero divisor marked undefined (Python's ZeroDivisionError;
    numpy gives 0 or inf there)."""

    def call(left: object, right: object) -> object:
        _mark_undefined(_zero(right))
        return fn(left, right)

    return call


def _power(base: object, exponent: object) -> object:
    """``base ** exponent`` as Python's: exact (Python ints) where integers would overflow
    int64, in floats where an integer meets a negative exponent; zero to a negative power
    and a float power past the float range are undefined (Python raises there)."""
    base, exponent = _operand(base), _operand(exponent)
    if _python(base, exponent):
        try:
            value = base**exponent  # type: ignore[operator]
            if not isinstance(value, complex):
                return _numpy(value)
        except (ZeroDivisionError, OverflowError):
            pass
    b, e = np.asarray(base), np.asarray(exponent)
    numeric = b.dtype.kind in "iufO" and e.dtype.kind in "iufO"
    undefined = _zero(b) & np.asarray(e < 0, dtype=bool) if numeric else np.asarray(False)
    _mark_undefined(undefined)
    if e.dtype.kind in "iu" and b.dtype.kind in "iu":
        if (np.asarray(e < 0) & ~undefined).any():  # floats there, ints elsewhere:
            out = np.power(b.astype(float), e)
            if (np.abs(out) > 2.0**53).any() and _span(e) <= MAX_EXPONENT:
                e = np.where(undefined, 1, e)  # exact past 2**53
                return np.power(_objects(b), _objects(e))
            return out
        if undefined.any():
            e = np.where(undefined, 1, e)
        span, top = _span(b), _span(e)
        if span > 1 and (top * (span.bit_length() - 1) >= 64 or span**top > _HIGH):
            _check_size(b, e, "exponent")
            return _settle(np.power(_objects(b), _objects(e)))
        return np.power(b, e)
    if "O" in (b.dtype.kind, e.dtype.kind):
        _check_size(b, e, "exponent")
        if undefined.any():
            e = np.where(undefined, 1, e)
    out = np.power(b, e)
    if isinstance(out, (np.ndarray, np.floating)) and out.dtype.kind == "f" and numeric:
        if "O" not in (b.dtype.kind, e.dtype.kind):
            _mark_undefined(np.isinf(out) & np.isfinite(b) & np.isfinite(e))
    return out


def _shift(left_shift: bool) -> Callable[..., object]:
    """``<<`` or ``>>`` as Python's: a negative count is undefined (Python raises
    ValueError), a left shift past int64 is exact, a right shift by 64 or more is 0 or
    -1."""
    fn = np.left_shift if left_shift else np.right_shift

    def call(value: object, count: object) -> object:
        value, count = _operand(value), _operand(count)
        if _python(value, count) and isinstance(count, int) and count >= 0:
            if left_shift:
                _check_size(value, count, "shift")
            return _numpy(value << count if left_shift else value >> count)  # type: ignore[operator]
        c = np.asarray(count)
        if c.dtype.kind in "iuO":
            negative = np.asarray(c < 0, dtype=bool)
            _mark_undefined(negative)
            if negative.any():
                count = np.where(negative, 0, c)
        if left_shift and _kind(value) in "iu" and _kind(count) in "iu":
            span, top = _span(value), _span(count)
            if span and span.bit_length() + top > 63:
                _check_size(value, count, "shift")
                return _settle(fn(_objects(value), _objects(count)))
        elif left_shift and "O" in (_kind(value), _kind(count)):
            _check_size(value, count, "shift")
        return fn(value, count)

    return call


def _invert(value: object) -> object:
    """``~value``: of a boolean, of its int (``~True`` is -2 in Python, False in numpy)."""
    value = _operand(value)
    return _numpy(~value) if _python(value) else np.invert(value)  # type: ignore[operator]


def _negative(value: object) -> object:
    value = _operand(value)
    if _python(value):
        return _numpy(-value)  # type: ignore[operator]
    if _kind(value) in "iu" and not _not_lowest(value, None):
        return _settle(np.negative(_objects(value)))
    return np.negative(value)


def _abs(value: object) -> object:
    value = _operand(value)
    if _python(value):
        return _numpy(abs(value))  # type: ignore[arg-type]
    if _kind(value) in "iu" and not _not_lowest(value, None):
        return _settle(np.abs(_objects(value)))
    return np.abs(value)


def _floats(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    """A numpy function of floats that also takes numbers of several types (an object
    array: an ordinal of ``1`` and ``1.5``, or integers beyond int64)."""

    def call(value: object) -> np.ndarray:
        value = _operand(value)
        return fn(np.asarray(value, dtype=float) if _kind(value) == "O" else value)

    return call


def _pointwise(fn: Callable[..., object], *args: object) -> object:
    """``fn`` applied as Python applies it, value by value (once per distinct value where
    one argument varies)."""
    arrays = [np.asarray(a) for a in args]
    if all(a.ndim == 0 for a in arrays):
        return fn(*[a[()] if a.dtype == object else a.item() for a in arrays])
    varying = [k for k, a in enumerate(arrays) if a.ndim]
    if len(varying) == 1:
        k = varying[0]
        try:
            distinct, inverse = np.unique(arrays[k], return_inverse=True)
        except TypeError:  # values that do not sort together
            distinct = None
        if distinct is not None:
            fixed = [a[()] if a.dtype == object else a.item() for a in arrays if not a.ndim]
            results = np.empty(len(distinct), dtype=object)
            results[:] = [fn(*fixed[:k], v, *fixed[k:]) for v in distinct.tolist()]
            return _settle(results[inverse].reshape(arrays[k].shape))
    return _settle(np.frompyfunc(fn, len(arrays), 1)(*arrays))


def _whole(
    fn: Callable[[object], object], floats: Callable[[np.ndarray], np.ndarray]
) -> Callable[..., object]:
    """Python's ``int`` or ``round`` of one argument: a whole number; rows of NaN or inf
    are undefined (Python raises there)."""

    def call(value: object) -> object:
        value = _operand(value)
        kind = _kind(value)
        if kind in "iu":
            return value
        if kind == "f":
            array = np.asarray(value, dtype=float)
            finite = np.isfinite(array)
            _mark_undefined(~finite)
            whole = floats(np.where(finite, array, 0.0))
            if whole.size and np.abs(whole).max() >= 2.0**63:
                return _pointwise(int, whole)
            return whole.astype(np.int64) if whole.ndim else int(whole)
        if kind == "O":
            array = np.asarray(value)
            bad = np.frompyfunc(lambda v: isinstance(v, float) and not math.isfinite(v), 1, 1)
            undefined = np.asarray(bad(array), dtype=bool)
            _mark_undefined(undefined)
            if undefined.any():
                value = np.where(undefined, 0, array)
        return _pointwise(fn, value)

    return call


def _round(value: object, ndigits: object = None) -> object:
    """Python's ``round``: to a whole number (halves to even), or with ``ndigits``."""
    if ndigits is None:
        return _round_whole(value)
    if _largest_int(_operand(ndigits)) > MAX_EXPONENT:
        raise OverflowError(f"round()'s ndigits is too large (at most {MAX_EXPONENT})")
    return _pointwise(round, _operand(value), _operand(ndigits))


_round_whole = _whole(round, np.rint)


def _truth(values: object) -> np.ndarray:
    """Python's truth value of each row (text: non-empty)."""
    array = np.asarray(values)
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind in "iufc":
        return array.astype(bool)
    if array.dtype.kind in "US":
        return np.char.str_len(array) > 0
    return np.asarray(np.frompyfunc(bool, 1, 1)(array), dtype=bool)


def _choose(truth: np.ndarray, yes: object, no: object) -> object:
    """``yes`` where ``truth``, else ``no``: one numeric array where both are numbers (ints
    as floats only where that is exact) or both text, else an object array that keeps
    each value's type."""
    a, b = np.asarray(_operand(yes, bools=False)), np.asarray(_operand(no, bools=False))
    kinds = {a.dtype.kind, b.dtype.kind}
    exact = (
        not kinds & set("iu")
        or "f" not in kinds
        or _span(a if a.dtype.kind in "iu" else b) <= 2**53
    )
    if (kinds <= set("biuf") and exact) or kinds == {"U"}:
        return np.where(truth, a, b)
    return np.where(truth, a.astype(object), b.astype(object))


def _is_none(value: object) -> object:
    """Rows where ``value`` is None (only an object array can hold one)."""
    if not isinstance(value, np.ndarray):
        return value is None
    if value.dtype != object:
        return np.zeros(value.shape, dtype=bool)
    return np.asarray(np.frompyfunc(lambda v: v is None, 1, 1)(value), dtype=bool)


def _is(left: object, right: object) -> object:
    """``left is right`` where one of them is the constant None (the compiler checks)."""
    return _is_none(right if left is None else left)


def _is_not(left: object, right: object) -> object:
    return np.logical_not(_is(left, right))


def _fits_sum(left: object, right: object) -> bool:
    return _span(left) + _span(right) <= _HIGH


def _fits_product(left: object, right: object) -> bool:
    span = _span(left)
    return span == 0 or span * _span(right) <= _HIGH


def _exact_floats(left: object, right: object) -> bool:
    """Both exact as floats, so numpy's quotient is Python's (correctly rounded)."""
    return _span(left) <= 2**53 and _span(right) <= 2**53


def _not_lowest(left: object, right: object) -> bool:
    """No int64 minimum, whose ``// -1`` overflows (its ``% -1`` is 0 in numpy too)."""
    return (left if isinstance(left, int) else int(np.asarray(left).min(initial=0))) > _LOW


def _bitwise(
    fn: Callable[[object, object], object], python: Callable[..., object]
) -> Callable[..., object]:
    """``&``, ``|`` or ``^``: never beyond int64; booleans stay booleans, as in Python."""

    def call(left: object, right: object) -> object:
        left, right = _operand(left, bools=False), _operand(right, bools=False)
        return _numpy(python(left, right)) if _python(left, right) else fn(left, right)

    return call


_BINARY = {
    ast.Add: _arithmetic(np.add, operator.add, _fits_sum),
    ast.Sub: _arithmetic(np.subtract, operator.sub, _fits_sum),
    ast.Mult: _arithmetic(np.multiply, operator.mul, _fits_product),
    ast.Div: _by_zero(_arithmetic(np.true_divide, operator.truediv, _exact_floats, _unless_zero)),
    ast.FloorDiv: _by_zero(
        _arithmetic(np.floor_divide, operator.floordiv, _not_lowest, _unless_zero)
    ),
    ast.Mod: _by_zero(_arithmetic(np.mod, operator.mod, None, _unless_zero)),
    ast.Pow: _power,
    ast.LShift: _shift(left_shift=True),
    ast.RShift: _shift(left_shift=False),
    ast.BitAnd: _bitwise(np.bitwise_and, operator.and_),
    ast.BitOr: _bitwise(np.bitwise_or, operator.or_),
    ast.BitXor: _bitwise(np.bitwise_xor, operator.xor),
}


def _comparison(fn: Callable[[object, object], object]) -> Callable[..., object]:
    """A comparison that also takes ints beyond int64 (exactly, as Python's)."""
    return lambda left, right: fn(_operand(left, bools=False), _operand(right, bools=False))


_COMPARE = {
    ast.Eq: _comparison(operator.eq),
    ast.NotEq: _comparison(operator.ne),
    ast.Lt: _comparison(operator.lt),
    ast.LtE: _comparison(operator.le),
    ast.Gt: _comparison(operator.gt),
    ast.GtE: _comparison(operator.ge),
    ast.In: lambda x, members: np.isin(x, members),
    ast.NotIn: lambda x, members: ~np.isin(x, members),
    ast.Is: _is,
    ast.IsNot: _is_not,
}


def _reduce(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def call(*args: np.ndarray) -> np.ndarray:
        out = _operand(args[0], bools=False)
        for a in args[1:]:
            out = fn(out, _operand(a, bools=False))
        return out

    return call


#: A whitelisted function: the callable and its number of arguments (None: one or more;
#: a pair: from the first to the second).
Function = tuple[Callable[..., np.ndarray], int | tuple[int, int] | None]

_FUNCTIONS: dict[str, Function] = {
    "min": (_reduce(np.minimum), None),
    "max": (_reduce(np.maximum), None),
    "abs": (_abs, 1),
    "ceil": (_floats(np.ceil), 1),
    "floor": (_floats(np.floor), 1),
    "log2": (_floats(np.log2), 1),
    "int": (_whole(int, np.trunc), 1),
    "round": (_round, (1, 2)),
}
