"""Reference answers and the check of a kernel's outputs against them.

An answer names the outputs to check and how their expected values are made:

* per output, an expression over the arguments and sizes (``"a + b"``,
  ``"matmul(A, B)"``; floating-point inputs are promoted to ``float64``), a NumPy array
  (Python), or ``{file: expected.npy}``;
* or one Python function (``"module:function"`` in a file, needing the user's opt-in;
  any callable in Python), called with copies of the argument values and returning the
  expected outputs as a list aligned with the arguments (``None`` where not checked) or
  a mapping of argument name to array.

An output passes when every element satisfies ``|out - ref| <= atol + rtol·|ref|``
(NaN never does); the largest ``|out - ref|`` is reported either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.problems.kernel._values import compile_value, evaluate

__all__ = ["Answer", "Check", "compare_outputs", "describe_answer"]

Values = Mapping[str, Any]


@dataclass(frozen=True)
class Check:
    """The outcome of comparing outputs with their reference."""

    max_abs_error: float
    mismatch: str | None


class Answer:
    """Expected outputs of a kernel, from expressions, arrays, files or a function.

    Args:
        answer: see the module docstring (``None``: nothing is checked).
        names: the argument names, in order.
        size_names: the problem's sizes, which expressions may also use.
        allow_imports: the user's opt-in to a ``module:function`` answer.
        non_arrays: the arguments that are not arrays, each with what it is (``{"n": "a
            scalar argument"}``): they have no output to check.

    Raises:
        ConfigError: an unknown output name, an output that is not an array argument,
            a bad expression, or a function named without the opt-in.
    """

    def __init__(
        self,
        answer: Any,
        names: Sequence[str],
        size_names: Sequence[str] = (),
        *,
        allow_imports: bool,
        non_arrays: Mapping[str, str] | None = None,
    ) -> None:
        self.names, self.size_names = list(names), list(size_names)
        self.non_arrays = dict(non_arrays or {})
        self.function: Callable[..., Any] | str | None = None
        self.entries: dict[str, Any] = {}
        if answer is None:
            return
        if isinstance(answer, str) or callable(answer):
            if isinstance(answer, str):
                from gpautotune.problems._imports import import_object

                if ":" not in answer:
                    raise ConfigError(
                        f"answer: {answer!r} is neither a mapping {{output: expression}} nor "
                        "'module:function'"
                    )
                import_object(answer, allowed=allow_imports, key="answer")
            self.function = answer
        elif isinstance(answer, Mapping):
            self.entries = {str(k): self._entry(str(k), v) for k, v in answer.items()}
        elif isinstance(answer, Sequence) and len(answer) == len(self.names):
            self.entries = {
                n: self._entry(n, v)
                for n, v in zip(self.names, answer, strict=True)
                if v is not None
            }
        else:
            raise ConfigError(
                "answer: give a mapping {output: expression}, a list aligned with the "
                f"{len(self.names)} arguments, or a function"
            )

    def _output(self, name: str, where: str = "answer") -> None:
        """Raise unless ``name`` is an array argument (an output the kernel can write)."""
        if name not in self.names:
            raise ConfigError(f"{where}: {name!r} is not an argument; arguments: {self.names}")
        if name in self.non_arrays:
            raise ConfigError(
                f"{where}: {name} is {self.non_arrays[name]}; only array arguments can be checked"
            )

    def _entry(self, name: str, value: Any) -> Any:
        self._output(name)
        if isinstance(value, Mapping) and set(value) == {"file"}:
            path = Path(str(value["file"]))
            if not path.is_file():
                raise ConfigError(f"answer.{name}.file: no file {str(path)!r}")
            return ("file", str(path.resolve()))
        if isinstance(value, (str, int, float)):
            names = [*self.names, *self.size_names]
            compile_value(value, names, f"answer.{name}", arrays=True)
            return ("expression", str(value))
        return ("array", np.asarray(value))

    def expected(self, arguments: Values, sizes: Values) -> dict[str, np.ndarray]:
        """The expected outputs given the argument values (before the kernel ran)."""
        if self.function is not None:
            return self._call(arguments)
        promoted = {
            k: v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
            for k, v in arguments.items()
            if v is not None
        }
        values = {**sizes, **promoted}
        out = {}
        for name, (kind, item) in self.entries.items():
            if kind == "expression":
                expr = compile_value(item, values, f"answer.{name}", arrays=True)
                out[name] = np.asarray(evaluate(expr, values))
            elif kind == "file":
                out[name] = np.load(item, allow_pickle=False)
            else:
                out[name] = item
        return out

    def _call(self, arguments: Values) -> dict[str, np.ndarray]:
        function = self.function
        if isinstance(function, str):
            from gpautotune.problems._imports import import_object

            function = import_object(function, allowed=True, key="answer")
        copies = [None if v is None else np.copy(v) for v in arguments.values()]
        result = function(copies)
        if isinstance(result, Mapping):
            out = {str(k): np.asarray(v) for k, v in result.items()}
        elif isinstance(result, Sequence) and len(result) == len(self.names):
            out = {
                n: np.asarray(v) for n, v in zip(self.names, result, strict=True) if v is not None
            }
        else:
            raise ConfigError(
                f"answer function returned {type(result).__name__}; expected a list aligned "
                f"with the {len(self.names)} arguments or a mapping name -> array"
            )
        unknown = sorted(set(out) - set(self.names))
        if unknown:
            raise ConfigError(f"answer function returned {unknown}, not arguments {self.names}")
        for name in out:
            self._output(name, "answer function")
        return out


def compare_outputs(outputs: Values, expected: Values, *, atol: float, rtol: float) -> Check:
    """Compare every expected output; the first failing one is described."""
    worst, mismatch = 0.0, None
    for name, ref in expected.items():
        got = np.asarray(outputs[name])
        ref = np.asarray(ref)
        if got.size != ref.size:
            return Check(float("inf"), f"{name}: {got.size} elements, the answer has {ref.size}")
        got, ref = got.reshape(ref.shape), ref
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        bad = ~(diff <= atol + rtol * np.abs(ref.astype(np.float64)))
        finite = diff[np.isfinite(diff)]
        err = float(finite.max()) if finite.size == diff.size and diff.size else float("inf")
        worst = max(worst, err if diff.size else 0.0)
        if bad.any() and mismatch is None:
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            mismatch = (
                f"{name}: {int(bad.sum())} of {ref.size} elements differ from the answer; "
                f"max |error| {err:.6g} (atol {atol:g}, rtol {rtol:g}); first at {first}: "
                f"expected {ref[first]!r}, got {got[first]!r}"
            )
    return Check(worst, mismatch)


def describe_answer(answer: Answer) -> dict[str, Any]:
    """What identifies an answer in a run's settings."""
    if isinstance(answer.function, str):
        return {"function": answer.function}
    if answer.function is not None:
        name = getattr(answer.function, "__qualname__", type(answer.function).__name__)
        return {"function": f"{getattr(answer.function, '__module__', '?')}:{name}"}
    out: dict[str, Any] = {}
    for name, (kind, item) in answer.entries.items():
        if kind == "array":
            data = np.ascontiguousarray(item)
            item = f"array{list(data.shape)}:{hashlib.sha256(data.tobytes()).hexdigest()[:16]}"
        out[name] = item
    return out
