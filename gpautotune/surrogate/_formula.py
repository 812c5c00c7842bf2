"""Model formulas over parameter names, turned into a feature (basis) matrix.

A formula is a sum of terms, ``"vector_length + lws_y + 1/lws_y + log2(threads) + x^2 + a*b"``.
Each term is a product of one or more *factors*, and a factor is one of

* ``x`` — the parameter's value (booleans as 0/1; a categorical gives one treatment
  dummy ``x[level]`` per level but the first),
* ``1/x`` — its inverse (no level may be 0),
* ``log2(x)`` — its base-2 logarithm (all levels positive),
* ``x^k`` — an integer power ``k >= 2`` (``x**k`` works too).

``a/b`` is read as ``a*1/b``.

Three shortcuts stand for whole sets of terms and can be mixed with explicit terms:
``constant`` (no term: a model with only the intercept), ``linear`` (``x`` for every
parameter) and ``quadratic`` (``linear`` plus ``x^2`` for every numeric parameter with
more than two levels; no interactions — write them as ``a*b``).

For ``n`` configurations the :class:`Basis` gives the ``(n, k)`` matrix
``H[i, j] = h_j(x_i)`` of the ``k`` term functions ``h_j``; the intercept is not a column
(models add it). A linear model is then ``y = b_0 + H b``; a GP trend is ``m(x) = b_0 +
h(x)^T b``. Terms are evaluated, vectorised, by
:func:`gpautotune.space.compile_expression`, so nothing is ever passed to ``eval``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.space import Categorical, Expression, Space, compile_expression

__all__ = ["Basis", "Term", "build_basis", "SHORTCUTS"]

#: Formula words that expand to sets of terms.
SHORTCUTS = ("constant", "linear", "quadratic")


@dataclass(frozen=True)
class Term:
    """One model term: its canonical name, the parameters it involves and its function."""

    name: str
    parameters: tuple[str, ...]
    #: The term's function of the columns; None for a categorical dummy.
    expression: Expression | None
    #: For a categorical dummy: the parameter value whose indicator the term is.
    level: object | None = None

    def __call__(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        if self.expression is None:
            return (np.asarray(columns[self.parameters[0]]) == self.level).astype(float)
        n = len(columns[self.parameters[0]])
        values = np.asarray(self.expression(columns), dtype=float)
        return np.broadcast_to(values, (n,)).astype(float)


@dataclass(frozen=True)
class Basis:
    """The term functions of a formula over a space's parameters.

    Call it with columns (``space.columns(index)`` or any mapping name -> array) to get
    the ``(n, k)`` feature matrix, one column per term, in :attr:`term_names` order.
    """

    formula: str
    terms: tuple[Term, ...]

    @property
    def term_names(self) -> list[str]:
        return [t.name for t in self.terms]

    @property
    def parameters(self) -> list[str]:
        """Parameters that appear in at least one term, in first-use order."""
        seen: dict[str, None] = {}
        for t in self.terms:
            seen.update(dict.fromkeys(t.parameters))
        return list(seen)

    def __len__(self) -> int:
        return len(self.terms)

    def __call__(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        if not self.terms:
            first = next(iter(columns.values()), np.empty(0))
            return np.empty((len(first), 0))
        return np.column_stack([t(columns) for t in self.terms])

    def restrict(self, parameters: Collection[str]) -> Basis:
        """The basis with only the terms whose parameters are all in ``parameters``."""
        keep = set(parameters)
        return Basis(self.formula, tuple(t for t in self.terms if set(t.parameters) <= keep))

    def terms_of(self, parameter: str) -> list[int]:
        """Column positions of the terms that involve ``parameter``."""
        return [j for j, t in enumerate(self.terms) if parameter in t.parameters]


def build_basis(formula: str, space: Space, inputs: Collection[str] = ()) -> Basis:
    """Parse ``formula`` (see the module docstring) into a :class:`Basis` over ``space``.

    ``inputs`` are derived quantities of the space that the formula may also name as plain
    ``x`` factors (a GP trend over its model inputs); the ``linear`` and ``quadratic``
    shortcuts cover the parameters only (on the Laplacian replay, adding the derived
    ``x_component_number`` to the linear trend made more runs stall: see
    docs/benchmarks/gpr.md, "The model inputs, without escapes").

    Raises:
        ConfigError: the formula does not parse, names an unknown parameter (the message
            lists the known ones), or applies a transform a parameter cannot take.
    """
    if not isinstance(formula, str) or not formula.strip():
        raise ConfigError(f"a model formula must be a non-empty string, got {formula!r}")
    text = formula.strip().replace("^", "**")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ConfigError(
            f"cannot parse model formula {formula!r}; write terms joined by '+'"
        ) from None
    unknown = [n for n in inputs if n not in space.describe()["derived"]]
    if unknown:
        raise ConfigError(f"model inputs {unknown} are not derived quantities of the space")
    space = _WithInputs(space, tuple(inputs))
    terms: dict[str, Term] = {}
    for node in _summands(tree):
        for term in _expand(node, formula, space):
            terms.setdefault(term.name, term)
    return Basis(formula, tuple(terms.values()))


class _WithInputs:
    """The space as the parser sees it: its parameters, plus derived ``inputs`` that may
    appear as plain factors."""

    def __init__(self, space: Space, inputs: tuple[str, ...]) -> None:
        self._space, self.inputs = space, inputs

    def __getattr__(self, name: str) -> object:
        return getattr(self._space, name)

    def __getitem__(self, name: str) -> object:
        return self._space[name]


def _summands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _summands(node.left) + _summands(node.right)
    return [node]


def _expand(node: ast.expr, formula: str, space: Space) -> list[Term]:
    if isinstance(node, ast.Name) and node.id in SHORTCUTS:
        return _shortcut(node.id, space)
    if (
        isinstance(node, ast.Name)
        and node.id in space.names
        and isinstance(space[node.id], Categorical)
    ):
        return _dummies(node.id, space)
    factors = _factors(node, formula, space)
    parameters = tuple(dict.fromkeys(name for name, _ in factors))
    canonical = "*".join(text for _, text in factors)
    expression = compile_expression(
        " * ".join(_python(t) for _, t in factors), (*space.names, *space.inputs)
    )
    return [Term(canonical, parameters, expression)]


def _factors(node: ast.expr, formula: str, space: Space) -> list[tuple[str, str]]:
    """``(parameter, canonical text)`` of each factor of a product term."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left, formula, space) + _factors(node.right, formula, space)
    if isinstance(node, ast.Name):
        return [(_parameter(node.id, formula, space, "x"), node.id)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        # Python reads a*1/b as (a*1)/b: the factors of the left side, then 1/b.
        name = _name_of(node.right, formula)
        _check_levels(
            space,
            _parameter(name, formula, space, "1/x"),
            "1/x",
            lambda v: v != 0,
            "non-zero levels",
        )
        left = node.left
        if (
            isinstance(left, ast.BinOp)
            and isinstance(left.op, ast.Mult)
            and _is_number(left.right, 1)
        ):
            left = left.left
        head = [] if _is_number(left, 1) else _factors(left, formula, space)
        return head + [(name, f"1/{name}")]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "log2"
        and len(node.args) == 1
    ):
        name = _name_of(node.args[0], formula)
        _check_levels(
            space,
            _parameter(name, formula, space, "log2(x)"),
            "log2(x)",
            lambda v: v > 0,
            "positive levels",
        )
        return [(name, f"log2({name})")]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        name = _name_of(node.left, formula)
        power = node.right.value if isinstance(node.right, ast.Constant) else None
        if not isinstance(power, int) or isinstance(power, bool) or power < 2:
            raise ConfigError(
                f"in model formula {formula!r}: a power must be an integer >= 2, as in {name}^2"
            )
        _parameter(name, formula, space, "x^k")
        return [(name, f"{name}^{power}")]
    raise ConfigError(
        f"cannot read {ast.unparse(node)!r} in model formula {formula!r}; a term is a product "
        "of x, 1/x, log2(x) or x^k over parameter names, or one of " + ", ".join(SHORTCUTS)
    )


def _is_number(node: ast.expr, value: float) -> bool:
    return (
        isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == value
    )


def _name_of(node: ast.expr, formula: str) -> str:
    if not isinstance(node, ast.Name):
        raise ConfigError(
            f"in model formula {formula!r}: {ast.unparse(node)!r} must be a parameter name"
        )
    return node.id


def _parameter(name: str, formula: str, space: Space, form: str) -> str:
    """Check that ``name`` is a numeric parameter usable in the factor ``form``."""
    inputs = space.inputs
    if name in inputs and name not in space.names:
        if form != "x":
            raise ConfigError(
                f"model formula {formula!r}: the derived input {name!r} "
                f"can only enter as itself, not {form}"
            )
        return name
    if name not in space.names:
        known = list(space.names) + list(inputs)
        raise ConfigError(
            f"model formula {formula!r} names an unknown parameter {name!r}; "
            f"known parameters: {known}"
        )
    if isinstance(space[name], Categorical):
        raise ConfigError(
            f"model formula {formula!r}: the categorical parameter {name!r} "
            "can only be a term by itself "
            f"(its treatment dummies), not {form} or part of a product"
        )
    return name


def _check_levels(
    space: Space, name: str, form: str, ok: Callable[[np.ndarray], np.ndarray], rule: str
) -> None:
    """Raise unless ``ok`` holds for every value the parameter can take."""
    param = space[name]
    if param.is_discrete:
        values = np.asarray(param.values_at(np.arange(param.n_levels)), dtype=float)
    else:  # a real interval: its end points, and 0 when it lies inside
        values = np.array([param.low, param.high] + ([0.0] if param.low < 0 < param.high else []))
    if not np.all(ok(values)):
        raise ConfigError(
            f"the term {form.replace('x', name)} needs {rule}, "
            f"but parameter {name!r} takes {values.tolist()}"
        )


def _python(text: str) -> str:
    return re.sub(r"\^", "**", text.replace("1/", "1 / "))


def _dummies(name: str, space: Space) -> list[Term]:
    return [
        Term(f"{name}[{level}]", (name,), None, level=level) for level in space[name].levels[1:]
    ]


def _shortcut(word: str, space: Space) -> list[Term]:
    if word == "constant":
        return []
    terms: list[Term] = []
    for p in space.parameters:
        if isinstance(p, Categorical):
            terms.extend(_dummies(p.name, space))
            continue
        terms.append(Term(p.name, (p.name,), compile_expression(p.name, space.names)))
    if word == "quadratic":
        for p in space.parameters:
            if not isinstance(p, Categorical) and (not p.is_discrete or p.n_levels > 2):
                terms.append(
                    Term(
                        f"{p.name}^2", (p.name,), compile_expression(f"{p.name} ** 2", space.names)
                    )
                )
    return terms
