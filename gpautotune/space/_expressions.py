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
import math
import operator
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from gpautotune.exceptions import PredicateError
from gpautotune.space._operators import (
    _BINARY,
    _COMPARE,
    _FUNCTIONS,
    _SCOPES,
    MAX_EXPONENT,
    Function,
    _choose,
    _invert,
    _mark_undefined,
    _negative,
    _operand,
    _plain,
    _settle,
    _truth,
)

__all__ = ["Expression", "compile_expression", "MAX_DEPTH", "MAX_EXPONENT", "MAX_LENGTH"]

#: Longest expression text accepted (characters).
MAX_LENGTH = 10_000
#: Deepest nesting of an expression's syntax tree (``a + b + c`` is two levels).
MAX_DEPTH = 100

Columns = Mapping[str, np.ndarray]
_Node = Callable[[Columns], np.ndarray]


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
