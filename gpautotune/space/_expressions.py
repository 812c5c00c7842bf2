"""Safe, vectorised arithmetic expressions over parameter names.

Constraint predicates (``"threads_number % lws_y == 0"``) and derived quantities are
parsed once with :mod:`ast` and checked against a whitelist: numbers, strings,
``True``/``False``, names, ``+ - * / // % **``, comparisons (chained too), ``and``,
``or``, ``not``, membership in a literal list or tuple (``x in (1, 2, 4)``, ``not in``;
Kernel Tuner restrictions use it), and calls of ``min``, ``max``, ``abs``, ``ceil``,
``floor``, ``log2`` (plus functions a caller adds to the whitelist).
Anything else (attribute access, subscripts, lambdas, other calls such as
``__import__``) is refused with a :class:`PredicateError`. The result is a tree of
closures evaluated on NumPy columns: nothing is ever passed to ``eval``.

Hostile or mistaken text gets a :class:`PredicateError` too, never a crash: expressions
are at most :data:`MAX_LENGTH` characters and :data:`MAX_DEPTH` levels deep, a constant
exponent is at most :data:`MAX_EXPONENT` in size, a negative power of integers is
computed in floating point (``x ** -1`` is ``1 / x``), and values an expression cannot
be evaluated on (``x < "abc"`` over numbers) are reported with the expression.

Rows where Python would raise ``ZeroDivisionError`` (``/``, ``//`` or ``%`` by zero, zero
to a negative power) are *undefined*: :meth:`Expression.evaluate` says which, with
``and``/``or`` short-circuiting as Python's do (``v == 0 or n % v == 0`` is defined where
``v`` is 0), and a constraint does not admit them.
"""

from __future__ import annotations

import ast
import contextvars
import math
import operator
from collections.abc import Callable, Collection, Mapping
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


def _by_zero(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    """``fn`` with the rows of a zero divisor marked undefined (Python's ZeroDivisionError;
    numpy gives 0 or inf there)."""

    def call(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        right = np.asarray(right)
        if right.dtype.kind in "iufcb":
            _mark_undefined(right == 0)
        return fn(left, right)

    return call


def _power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``base ** exponent``; in floating point when integers meet a negative exponent."""
    base, exponent = np.asarray(base), np.asarray(exponent)
    if base.dtype.kind in "iufb" and exponent.dtype.kind in "iuf":
        _mark_undefined((base == 0) & (exponent < 0))
    if exponent.dtype.kind in "iu" and base.dtype.kind in "iub" and (exponent < 0).any():
        return np.power(base.astype(float), exponent)
    return np.power(base, exponent)


_BINARY = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: _by_zero(np.true_divide),
    ast.FloorDiv: _by_zero(np.floor_divide),
    ast.Mod: _by_zero(np.mod),
    ast.Pow: _power,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda x, members: np.isin(x, members),
    ast.NotIn: lambda x, members: ~np.isin(x, members),
}


def _reduce(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def call(*args: np.ndarray) -> np.ndarray:
        out = args[0]
        for a in args[1:]:
            out = fn(out, a)
        return out

    return call


#: A whitelisted function: the callable and its number of arguments (None: one or more).
Function = tuple[Callable[..., np.ndarray], int | None]

_FUNCTIONS: dict[str, Function] = {
    "min": (_reduce(np.minimum), None),
    "max": (_reduce(np.maximum), None),
    "abs": (np.abs, 1),
    "ceil": (np.ceil, 1),
    "floor": (np.floor, 1),
    "log2": (np.log2, 1),
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
                return self._root(columns)
            except (TypeError, ValueError, ArithmeticError) as exc:
                raise PredicateError(
                    f"expression {self.text!r} cannot be evaluated on the values of "
                    f"{sorted(self.names)}: {exc}"
                ) from None

    def evaluate(self, columns: Columns) -> tuple[np.ndarray, np.ndarray]:
        """The expression's values and a mask of the rows where it is undefined (where
        Python would raise ``ZeroDivisionError``; a scalar False when none is)."""
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


def _constant(node: ast.AST) -> float | None:
    """The value of a constant numeric subtree (inf when it overflows), else None."""
    if isinstance(node, ast.Constant):
        value = node.value
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return float(value) if ok else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _constant(node.left), _constant(node.right)
        if left is None or right is None:
            return None
        try:
            fn = {ast.Pow: operator.pow, ast.Mult: operator.mul}.get(type(node.op))
            return float(fn(left, right)) if fn else float(_BINARY[type(node.op)](left, right))
        except (OverflowError, ZeroDivisionError):
            return math.inf
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
            "use parameter names, numbers, + - * / // % **, comparisons, and/or/not, "
            "`in (literal, ...)`, " + "/".join(self.functions)
        )

    def visit(self, node: ast.AST) -> _Node:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.refuse(node, type(node).__name__)
        return method(node)

    def visit_Constant(self, node: ast.Constant) -> _Node:  # noqa: N802
        value = node.value
        if not isinstance(value, (int, float, str, bool)):
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
        exponent = _constant(node.right) if isinstance(node.op, ast.Pow) else None
        if exponent is not None and not abs(exponent) <= MAX_EXPONENT:
            shown = ast.get_source_segment(self.text.strip(), node.right) or ast.unparse(node.right)
            raise PredicateError(
                f"the exponent {shown!r} in expression {self.text[:80]!r} is "
                f"too large (at most {MAX_EXPONENT} in size)"
            )
        left, right = self.visit(node.left), self.visit(node.right)
        return lambda cols: fn(left(cols), right(cols))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> _Node:  # noqa: N802
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda cols: np.negative(operand(cols))
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            return lambda cols: np.logical_not(operand(cols))
        raise self.refuse(node, f"the operator {type(node.op).__name__}")

    def visit_BoolOp(self, node: ast.BoolOp) -> _Node:  # noqa: N802
        parts = [self.visit(v) for v in node.values]
        fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or

        def run(cols: Columns) -> np.ndarray:
            out, undefined = _scoped(parts[0], cols)
            for part in parts[1:]:
                value, rows = _scoped(part, cols)  # Python evaluates it where it is reached:
                reached = np.logical_not(out) if fn is np.logical_or else np.asarray(out, bool)
                undefined = np.logical_or(undefined, reached & rows)
                out = fn(out, value)
            _mark_undefined(undefined)
            return out

        return run

    def visit_Compare(self, node: ast.Compare) -> _Node:  # noqa: N802
        ops = []
        for op in node.ops:
            fn = _COMPARE.get(type(op))
            if fn is None:
                raise self.refuse(node, f"the comparison {type(op).__name__}")
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
        """The right side of ``in``: a literal list or tuple of constants."""
        if not isinstance(node, (ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Constant) for e in node.elts
        ):
            raise self.refuse(node, "`in` with anything but a literal list or tuple of constants")
        members = tuple(e.value for e in node.elts)
        return lambda cols: members

    def visit_Call(self, node: ast.Call) -> _Node:  # noqa: N802
        if not isinstance(node.func, ast.Name) or node.func.id not in self.functions:
            what = ast.unparse(node.func) if hasattr(ast, "unparse") else "this call"
            raise self.refuse(node, f"calling {what!r}")
        if node.keywords:
            raise self.refuse(node, "a keyword argument")
        fn, arity = self.functions[node.func.id]
        if arity is not None and len(node.args) != arity or not node.args:
            raise PredicateError(
                f"{node.func.id}() takes {arity or 'one or more'} argument(s) in {self.text!r}"
            )
        args = [self.visit(a) for a in node.args]
        return lambda cols: fn(*[a(cols) for a in args])
