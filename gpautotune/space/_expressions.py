"""Safe, vectorised arithmetic expressions over parameter names.

Constraint predicates (``"threads_number % lws_y == 0"``) and derived quantities are
parsed once with :mod:`ast` and checked against a whitelist: numbers, strings,
``True``/``False``/``None``, names, ``+ - * / // % **``, the bit operators
``& | ^ << >> ~``, comparisons (chained too), ``is None`` and ``is not None``, ``and``,
``or``, ``not``, ``x if c else y``, membership in a literal list, tuple or set
(``x in (1, 2, 4)``, ``not in``; Kernel Tuner restrictions use it), and calls of
``min``, ``max``, ``abs``, ``int``, ``round``, ``ceil``, ``floor``, ``log2`` (plus
functions a caller adds to the whitelist). Anything else (attribute access, subscripts,
lambdas, other calls such as ``sum``, ``len`` or ``__import__``) is refused with a
:class:`PredicateError`. The result is a tree of closures evaluated on NumPy columns:
nothing is ever passed to ``eval``.

The values are Python's (Kernel Tuner evaluates restrictions as Python): integer
arithmetic is done in int64 where the operands' magnitudes show it cannot overflow,
else exactly on Python ints (numpy would wrap around silently: ``x * 2 ** 60 > 0``); a
result past int64 comes back as a float. ``int``, ``round`` and ``~`` follow Python
(``round`` halves to even; ``~True`` is -2). Exceptions: ``and``/``or`` give True or
False rather than an operand, and a branch of ``x if c else y`` that mixes ints and
floats gives floats where that is exact.

Hostile or mistaken text gets a :class:`PredicateError` too, never a crash: expressions
are at most :data:`MAX_LENGTH` characters and :data:`MAX_DEPTH` levels deep, an integer
exponent or left shift is at most :data:`MAX_EXPONENT` in size, a negative power of
integers is computed in floating point (``x ** -1`` is ``1 / x``), and values an
expression cannot be evaluated on (``x < "abc"`` over numbers) are reported with the
expression.

Rows where Python would raise ``ZeroDivisionError`` (``/``, ``//`` or ``%`` by zero, zero
to a negative power), ``ValueError`` (a negative shift count, ``int`` or ``round`` of NaN
or inf) or ``OverflowError`` (a float power past the float range) are *undefined*:
:meth:`Expression.evaluate` says which, with ``and``/``or`` and ``x if c else y``
evaluating a part only where Python reaches it (``v == 0 or n % v == 0`` is defined
where ``v`` is 0), and a constraint does not admit them.
"""

from __future__ import annotations

import ast
import contextvars
import math
import operator
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from gpautotune.exceptions import PredicateError

__all__ = ["Expression", "compile_expression", "MAX_DEPTH", "MAX_EXPONENT", "MAX_LENGTH"]

#: Longest expression text accepted (characters).
MAX_LENGTH = 10_000
#: Deepest nesting of an expression's syntax tree (``a + b + c`` is two levels).
MAX_DEPTH = 100
#: Largest size of a constant exponent (``x ** 2048`` is refused).
MAX_EXPONENT = 1024

Columns = Mapping[str, np.ndarray]
_Node = Callable[[Columns], np.ndarray]


#: The undefined-row masks of the expression parts being evaluated (innermost last).
_SCOPES: contextvars.ContextVar[list[np.ndarray] | None] = contextvars.ContextVar(
    "gpautotune_expression_scopes", default=None
)


def _mark_undefined(rows: np.ndarray) -> None:
    """Record ``rows`` (a boolean mask) as undefined in the innermost scope, if any."""
    scopes = _SCOPES.get()
    if scopes is not None and np.any(rows):
        scopes[-1] = np.logical_or(scopes[-1], rows)


def _scoped(node: _Node, cols: Columns) -> tuple[np.ndarray, np.ndarray]:
    """``node``'s values and the rows it alone leaves undefined."""
    scopes = _SCOPES.get()
    if scopes is None:
        return node(cols), np.asarray(False)
    scopes.append(np.asarray(False))
    try:
        return node(cols), scopes[-1]
    finally:
        scopes.pop()


class _Rows(Mapping[str, np.ndarray]):
    """Some rows of columns (the values a branch of ``x if c else y`` is taken for)."""

    def __init__(self, columns: Columns, rows: np.ndarray) -> None:
        self._columns, self._rows = columns, rows

    def __getitem__(self, name: str) -> np.ndarray:
        column = np.asarray(self._columns[name])
        if column.ndim and column.shape != self._rows.shape:
            raise ValueError(
                f"{name!r} has {column.shape} values, the condition {self._rows.shape}"
            )
        return column[self._rows] if column.ndim else column

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)


def _branch(node: _Node, cols: Columns, taken: np.ndarray) -> tuple[object, np.ndarray]:
    """A branch's values and undefined rows, where it is ``taken``: computed on every row
    at once, or, where that fails, on the rows it is taken for alone (Python evaluates a
    branch only there: ``v / 2 if v != "auto" else 0``); the other rows hold 0."""
    if not taken.any():
        return 0, np.asarray(False)
    try:
        return _scoped(node, cols)
    except (TypeError, ValueError, ArithmeticError):
        if taken.ndim != 1 or taken.all():
            raise
    values, rows = _scoped(node, _Rows(cols, taken))
    out, undefined = np.zeros(taken.shape, dtype=object), np.zeros(taken.shape, dtype=bool)
    out[taken], undefined[taken] = values, rows
    return _settle(out), undefined


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


@dataclass(frozen=True)
class Expression:
    """A compiled expression: call it with a mapping of name -> column array."""

    text: str
    names: frozenset[str]
    _root: _Node

    def __call__(self, columns: Columns) -> np.ndarray:
        """The expression's values on the columns.

        Raises:
            PredicateError: the expression cannot be evaluated on these values (e.g. a
                number compared with a string).
        """
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            try:
                return _plain(self._root(columns))
            except (TypeError, ValueError, ArithmeticError) as exc:
                raise PredicateError(
                    f"expression {self.text!r} cannot be evaluated on the values of "
                    f"{sorted(self.names)}: {exc}"
                ) from None

    def evaluate(self, columns: Columns) -> tuple[np.ndarray, np.ndarray]:
        """The expression's values and a mask of the rows where it is undefined (where
        Python would raise ``ZeroDivisionError``, or ``ValueError`` for a negative shift
        or ``int`` of NaN; a scalar False when none is)."""
        token = _SCOPES.set([np.asarray(False)])
        try:
            values = self(columns)
            return values, _SCOPES.get()[-1]  # type: ignore[index]
        finally:
            _SCOPES.reset(token)


def compile_expression(
    text: str, allowed_names: Collection[str], functions: Mapping[str, Function] | None = None
) -> Expression:
    """Parse ``text`` into an :class:`Expression` over ``allowed_names``.

    ``functions`` adds callables to the whitelist (name -> (callable, arity)).

    Raises:
        PredicateError: the text does not parse, uses a construct outside the whitelist,
            or names something that is not in ``allowed_names``.
    """
    if not isinstance(text, str) or not text.strip():
        raise PredicateError(f"an expression must be a non-empty string, got {text!r}")
    if len(text) > MAX_LENGTH:
        raise PredicateError(
            f"expression {text[:40]!r}... has {len(text):,} characters (at most {MAX_LENGTH:,})"
        )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise PredicateError(f"cannot parse expression {text!r}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise PredicateError(
            f"cannot parse expression {text[:40]!r}: {type(exc).__name__} (nested too deeply?)"
        ) from None
    depth = _depth(tree.body)
    if depth > MAX_DEPTH:
        raise PredicateError(
            f"expression {text[:40]!r}... is nested {depth} levels deep (at most {MAX_DEPTH}); "
            "split it into several predicates"
        )
    names: set[str] = set()
    table = {**_FUNCTIONS, **dict(functions or {})}
    root = _Compiler(text, set(allowed_names), names, table).visit(tree.body)
    return Expression(text=text, names=frozenset(names), _root=root)


def _depth(root: ast.AST) -> int:
    """Depth of a syntax tree, without recursion (a deep tree must not crash the check)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


#: The arithmetic a constant exponent is computed with (in floats: quick to overflow).
_FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def _constant(node: ast.AST) -> float | None:
    """The value of a constant numeric subtree (inf when it overflows), else None."""
    if isinstance(node, ast.Constant):
        value = node.value
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return float(value) if ok else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
        left, right = _constant(node.left), _constant(node.right)
        if left is None or right is None:
            return None
        try:
            value = _FOLD[type(node.op)](left, right)
        except (OverflowError, ZeroDivisionError):
            return math.inf
        return float(value) if isinstance(value, (int, float)) else None  # not complex
    return None


class _Compiler:
    def __init__(
        self, text: str, allowed: set[str], used: set[str], functions: Mapping[str, Function]
    ) -> None:
        self.text, self.allowed, self.used, self.functions = text, allowed, used, functions

    def refuse(self, node: ast.AST, what: str) -> PredicateError:
        return PredicateError(
            f"{what} is not allowed in expression {self.text!r} "
            f"(column {getattr(node, 'col_offset', 0) + 1}); "
            "use parameter names, numbers, strings, True/False/None, + - * / // % ** "
            "& | ^ << >> ~, comparisons, `is None`, and/or/not, `x if c else y`, "
            "`in (literal, ...)`, " + "/".join(self.functions)
        )

    def visit(self, node: ast.AST) -> _Node:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.refuse(node, type(node).__name__)
        return method(node)

    def visit_Constant(self, node: ast.Constant) -> _Node:  # noqa: N802
        value = node.value
        if value is not None and not isinstance(value, (int, float, str, bool)):
            raise self.refuse(node, f"the constant {value!r}")
        return lambda cols: value

    def visit_Name(self, node: ast.Name) -> _Node:  # noqa: N802
        name = node.id
        if name in ("True", "False"):
            return lambda cols: name == "True"
        if name not in self.allowed:
            raise PredicateError(
                f"unknown name {name!r} in expression {self.text!r}; "
                f"known names: {sorted(self.allowed)}"
            )
        self.used.add(name)
        return lambda cols: cols[name]

    def visit_BinOp(self, node: ast.BinOp) -> _Node:  # noqa: N802
        fn = _BINARY.get(type(node.op))
        if fn is None:
            raise self.refuse(node, f"the operator {type(node.op).__name__}")
        exponent = _constant(node.right) if isinstance(node.op, (ast.Pow, ast.LShift)) else None
        if exponent is not None and not abs(exponent) <= MAX_EXPONENT:
            shown = ast.get_source_segment(self.text.strip(), node.right) or ast.unparse(node.right)
            what = "exponent" if isinstance(node.op, ast.Pow) else "shift"
            raise PredicateError(
                f"the {what} {shown!r} in expression {self.text[:80]!r} is "
                f"too large (at most {MAX_EXPONENT} in size)"
            )
        left, right = self.visit(node.left), self.visit(node.right)
        return lambda cols: fn(left(cols), right(cols))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> _Node:  # noqa: N802
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda cols: _negative(operand(cols))
        if isinstance(node.op, ast.UAdd):
            return lambda cols: _operand(operand(cols))
        if isinstance(node.op, ast.Invert):
            return lambda cols: _invert(operand(cols))
        if isinstance(node.op, ast.Not):
            return lambda cols: np.logical_not(_truth(operand(cols)))
        raise self.refuse(node, f"the operator {type(node.op).__name__}")

    def visit_IfExp(self, node: ast.IfExp) -> _Node:  # noqa: N802
        test, body, orelse = self.visit(node.test), self.visit(node.body), self.visit(node.orelse)

        def run(cols: Columns) -> object:
            condition, undefined = _scoped(test, cols)
            truth, defined = _truth(condition), np.logical_not(undefined)
            yes, yes_rows = _branch(body, cols, truth & defined)
            no, no_rows = _branch(orelse, cols, np.logical_not(truth) & defined)
            _mark_undefined(undefined | (truth & yes_rows) | (~truth & no_rows))
            return _choose(truth, yes, no)

        return run

    def visit_BoolOp(self, node: ast.BoolOp) -> _Node:  # noqa: N802
        parts = [self.visit(v) for v in node.values]
        fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or

        def run(cols: Columns) -> np.ndarray:
            out, undefined = _scoped(parts[0], cols)
            out = _truth(out)
            for part in parts[1:]:  # Python evaluates a part only where it is reached:
                reached = np.logical_not(out) if fn is np.logical_or else out
                value, rows = _branch(part, cols, reached & np.logical_not(undefined))
                undefined = np.logical_or(undefined, reached & rows)
                out = fn(out, _truth(value))
            _mark_undefined(undefined)
            return out

        return run

    def visit_Compare(self, node: ast.Compare) -> _Node:  # noqa: N802
        ops = []
        sides = [node.left, *node.comparators]
        for k, op in enumerate(node.ops):
            fn = _COMPARE.get(type(op))
            if fn is None:
                raise self.refuse(node, f"the comparison {type(op).__name__}")
            if isinstance(op, (ast.Is, ast.IsNot)) and not any(
                isinstance(side, ast.Constant) and side.value is None for side in sides[k : k + 2]
            ):
                raise self.refuse(node, "`is` with anything but None (write == True)")
            ops.append(fn)
        terms = [self.visit(node.left)] + [
            self.visit_members(c) if isinstance(op, (ast.In, ast.NotIn)) else self.visit(c)
            for op, c in zip(node.ops, node.comparators, strict=True)
        ]

        def run(cols: Columns) -> np.ndarray:
            values = [t(cols) for t in terms]
            out = ops[0](values[0], values[1])
            for k in range(1, len(ops)):
                out = np.logical_and(out, ops[k](values[k], values[k + 1]))
            return out

        return run

    def visit_members(self, node: ast.AST) -> _Node:
        """The right side of ``in``: a literal list, tuple or set of constants."""
        if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or not all(
            isinstance(e, ast.Constant) for e in node.elts
        ):
            raise self.refuse(
                node, "`in` with anything but a literal list, tuple or set of constants"
            )
        members = tuple(e.value for e in node.elts)
        return lambda cols: members

    def visit_Call(self, node: ast.Call) -> _Node:  # noqa: N802
        if not isinstance(node.func, ast.Name) or node.func.id not in self.functions:
            what = ast.unparse(node.func) if hasattr(ast, "unparse") else "this call"
            raise self.refuse(node, f"calling {what!r}")
        if node.keywords:
            raise self.refuse(node, "a keyword argument")
        fn, arity = self.functions[node.func.id]
        low, high = arity if isinstance(arity, tuple) else (arity or 1, arity)
        if not low <= len(node.args) <= (high or len(node.args)):
            takes = "one or more" if high is None else low if low == high else f"{low} or {high}"
            raise PredicateError(f"{node.func.id}() takes {takes} argument(s) in {self.text!r}")
        args = [self.visit(a) for a in node.args]
        return lambda cols: fn(*[a(cols) for a in args])
