"""A plain Python function of a configuration, as a problem.

``tune(objective, space=space, ...)`` wraps ``objective`` in a :class:`FunctionProblem`:
the function receives one configuration (a dict of parameter values) and returns the
value to minimise, as a number or as a :class:`~gpautotune.Measurement` (use
``Measurement.failure(Status.RUN_ERROR, "why")`` for a configuration that fails; an
exception it raises is stored as a ``run_error`` too).

The run key holds the function's identity (:meth:`FunctionProblem.describe`): its
``module:qualname``, and where that name alone does not tell two objectives apart
(``functools.partial`` objects, lambdas, closures, callable objects) a text of what is
bound to it, the same in every Python session for the same function and values.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import types
from collections.abc import Callable
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.measurement import Measurement
from gpautotune.problems._base import Problem
from gpautotune.space import Config, Space

__all__ = ["FunctionProblem", "Objective", "as_problem"]

#: A function of one configuration returning the value to minimise (or a Measurement).
Objective = Callable[[Config], "Measurement | float"]


class FunctionProblem(Problem):
    """``objective(config)`` minimised over ``space``.

    Args:
        objective: the function; it may return a float or a :class:`Measurement`.
        space: the configurations it accepts.
        name: the problem's name in the journal (default: the function's ``__name__``, a
            partial's function's); with a name, a function whose identity is not all
            stable (:attr:`unidentified`) is not warned about.
        optimum: the known minimum, if any (reports then give slowdowns).

    Raises:
        ConfigError: ``objective`` is not callable or ``space`` is not a :class:`Space`.
    """

    def __init__(
        self,
        objective: Objective,
        space: Space,
        *,
        name: str | None = None,
        optimum: float | None = None,
    ) -> None:
        if not callable(objective):
            raise ConfigError(f"the objective must be callable, got {type(objective).__name__}")
        if not isinstance(space, Space):
            raise ConfigError(
                f"space must be a gpautotune.space.Space, got {type(space).__name__}; build "
                "one from typed parameters, e.g. Space([IntRange('n', 1, 8)])"
            )
        self.objective = objective
        self.space = space
        self.name = name or _name(objective)
        self.optimum = optimum
        function, bound, unstable = _identify(objective)
        self._identity = {"function": function, **({"bound": _short(bound)} if bound else {})}
        #: What of the objective has no text stable across sessions (it is left out of
        #: the run key, so another objective may take this one's run), or None; never
        #: set for a problem given a ``name``, which is then the user's identity for it.
        self.unidentified = None if name or not unstable else ", ".join(unstable)

    def evaluate(self, config: Config) -> Measurement | float:
        return self.objective(dict(config))

    def describe(self) -> dict[str, Any]:
        """The name and the function's identity (part of the run key): ``module:qualname``,
        with ``bound`` where that name is shared by other objectives (see the module)."""
        return {"name": self.name, **self._identity}


#: How deep :func:`_stable_text` looks into nested values before giving up.
_DEPTH = 8
#: ``bound`` texts longer than this are stored as their digest.
_SHORT = 160
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


class _Unstable(Exception):
    """A value with no text that another Python session would give for it too."""


def _name(objective: Any) -> str:
    """The default problem name: the function's ``__name__`` (a partial's function's)."""
    while isinstance(objective, functools.partial):
        objective = objective.func
    return getattr(objective, "__name__", None) or "function"


def _digest(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()[:16]


def _short(text: str) -> str:
    return text if len(text) <= _SHORT else f"sha256:{_digest(text)}"


def _qualified(fn: Any) -> str:
    """``module:qualname``, as run keys have always named functions."""
    where = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", type(fn).__name__)
    return f"{where}:{qualname}" if where else qualname


def _identify(
    objective: Any, depth: int = 0, path: set[int] | None = None
) -> tuple[str, str, list[str]]:
    """``(module:qualname, bound text, what has no stable text)`` of a callable (``depth``
    and ``path``: see :func:`_stable_text`, which calls it for functions in values).

    A module-level function is named by its qualified name alone (its code and defaults
    are in its source), so that stored runs of named functions keep resuming."""
    unstable: list[str] = []
    path = set() if path is None else path

    def text(value: Any, what: str) -> str:
        if isinstance(value, dict):  # entry by entry: the others still tell runs apart
            entries = (f"{k}: {text(v, f'{what} {k!r}')}" for k, v in sorted(value.items()))
            return "{" + ", ".join(entries) + "}"
        try:
            return _stable_text(value, depth, path)
        except _Unstable as exc:
            unstable.append(f"{what} ({exc})")
        except Exception as exc:  # noqa: BLE001 - a broken __repr__ or property
            unstable.append(f"{what} ({type(value).__name__}: {type(exc).__name__})")
        return f"<{type(value).__name__}>"

    def parts(fn: Any) -> tuple[str, list[str]]:
        if isinstance(fn, functools.partial):
            function, inner = parts(fn.func)
            return function, [
                *inner,
                f"args={text(fn.args, 'the partial arguments')}",
                f"keywords={text(fn.keywords, 'the partial keyword')}",
            ]
        if isinstance(fn, types.MethodType):
            function, inner = parts(fn.__func__)
            owner = fn.__self__
            if isinstance(owner, type | types.ModuleType):
                return function, inner
            return function, [*inner, f"self={text(_state(owner), 'the attribute')}"]
        if isinstance(fn, types.FunctionType):
            return _qualified(fn), _function_parts(fn, text)
        state = _state(fn) if not isinstance(fn, type) else None
        if state:  # a callable object: its attributes
            return _qualified(fn), [f"state={text(state, 'the attribute')}"]
        return _qualified(fn), []

    function, bound = parts(objective)
    return function, "; ".join(bound), unstable


def _function_parts(fn: types.FunctionType, text: Callable[[Any, str], str]) -> list[str]:
    """What tells this function from others of its name: the code of a lambda (lambdas
    of one scope share a name), the defaults of a function made at run time (a nested
    one), the values it closes over."""
    out = []
    made_at_run_time = "<" in fn.__qualname__
    if "<lambda>" in fn.__qualname__:
        out.append(f"code={_code_digest(fn.__code__)}")
    if made_at_run_time and (fn.__defaults__ or fn.__kwdefaults__):
        defaults = (fn.__defaults__, dict(sorted((fn.__kwdefaults__ or {}).items())))
        out.append(f"defaults={text(defaults, 'the defaults')}")
    if fn.__closure__:
        cells = {}
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            try:
                cells[var] = cell.cell_contents
            except ValueError:  # a cell not filled yet
                cells[var] = None
        out.append(f"closure={text(cells, 'the closure value')}")
    return out


def _code_digest(code: types.CodeType) -> str:
    """A digest of what a code object does (bytecode, names, constants), not of where
    it lies (file, line)."""
    h = hashlib.sha256()

    def add(c: types.CodeType) -> None:
        h.update(c.co_code)
        h.update(repr(c.co_names).encode())
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                add(const)
            else:
                h.update(_stable_text(const, 0, set()).encode())

    add(code)
    return h.hexdigest()[:16]


def _state(obj: Any) -> dict[str, Any]:
    """An object's attributes (``__dict__`` and slots), dunder names left out (what
    ``functools.wraps`` copies)."""
    state = {}
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if hasattr(obj, slot) and slot not in ("__dict__", "__weakref__"):
                state[slot] = getattr(obj, slot)
    state.update(getattr(obj, "__dict__", {}))
    return {k: v for k, v in state.items() if not (k.startswith("__") and k.endswith("__"))}


def _stable_text(value: Any, depth: int, path: set[int]) -> str:
    """A text of ``value`` that another Python session gives for an equal value: plain
    data by ``repr`` (sets and mappings sorted), functions by their identity, arrays by a
    digest of their bytes, other objects by their class and attributes.

    Raises:
        _Unstable: naming the value's type, where there is no such text (an object
            without attributes whose ``repr`` is its address, or too deeply nested).
    """
    if isinstance(value, (*_PLAIN, enum.Enum)):
        return repr(value)
    if depth > _DEPTH:
        raise _Unstable(f"nested deeper than {_DEPTH}")
    if id(value) in path:
        return "<cycle>"
    path.add(id(value))
    try:
        return _nested_text(value, depth + 1, path)
    finally:
        path.discard(id(value))


def _nested_text(value: Any, depth: int, path: set[int]) -> str:
    def each(items: Any) -> list[str]:
        return [_stable_text(v, depth, path) for v in items]

    if isinstance(value, tuple | list):
        return f"{type(value).__name__}({', '.join(each(value))})"
    if isinstance(value, set | frozenset):
        return f"{type(value).__name__}({', '.join(sorted(each(value)))})"
    if isinstance(value, dict):
        pairs = sorted(zip(each(value.keys()), each(value.values()), strict=True))
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, type | types.BuiltinFunctionType):
        return _qualified(value)
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, types.FunctionType | types.MethodType | functools.partial):
        function, bound, unstable = _identify(value, depth, path)
        if unstable:
            raise _Unstable(unstable[0])
        return f"{function}[{bound}]" if bound else function
    if all(hasattr(value, a) for a in ("tobytes", "dtype", "shape")):  # an array
        try:
            return f"array({value.dtype}, {tuple(value.shape)}, {_digest(value.tobytes())})"
        except Exception:  # noqa: BLE001 - not an array after all: go on
            pass
    state = _state(value)
    if state:
        return f"{_qualified(type(value))}({_nested_text(state, depth, path)})"
    text = repr(value)
    if type(value).__repr__ is object.__repr__ or " at 0x" in text:
        raise _Unstable(f"a {type(value).__name__} has no stable text")
    return text


def as_problem(problem: Problem | Objective, space: Space | None) -> Problem:
    """``problem`` itself, or a plain function of a configuration with its ``space``
    wrapped in a :class:`~gpautotune.problems.function.FunctionProblem`.

    Raises:
        ConfigError: a function without a space, or a space given with a Problem.
    """
    if isinstance(problem, Problem):
        if space is not None:
            raise ConfigError("space= is for a plain function; a Problem has its own space")
        return problem
    if not callable(problem):
        raise ConfigError(
            f"tune() needs a Problem or a function of a configuration, got {type(problem).__name__}"
        )
    if space is None:
        raise ConfigError(
            f"tune({getattr(problem, '__name__', 'function')}, ...) needs space=: the "
            "configurations the function accepts (a gpautotune.space.Space)"
        )
    return FunctionProblem(problem, space)
