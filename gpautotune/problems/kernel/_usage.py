"""Tuning parameters that nothing uses: a warning at set-up, naming the likely typo.

Each ``tune_params`` name becomes a ``#define``; a name that occurs nowhere in the
kernel source (as a whole word) and in none of the problem's expressions (the launch
geometry, ``defines``, ``metrics``, ``local:`` buffer sizes) changes nothing, most often
because it is misspelt (``tiel`` for ``tile``): then every configuration fails to build,
or all of them build the same kernel. A parameter may be unused on purpose (a switch for
later), so this is a warning, not an error.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Iterable
from pathlib import Path

from gpautotune.problems.kernel._geometry import Geometry
from gpautotune.problems.kernel._spec import KernelSpec

__all__ = ["unused_parameters", "warn_unused_parameters"]

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _expressions(spec: KernelSpec, geometry: Geometry | None) -> list[str]:
    """The texts outside the source that may name a parameter."""
    texts = [str(v) for v in spec.defines.values()]
    texts += [str(v) for v in spec.objective.metrics.values()]
    texts += [str(a.spec.local) for a in spec.arguments if a.spec is not None and a.is_local]
    if geometry is not None:
        texts += [*geometry.problem_size, *(t for t in geometry.grid_div if t is not None)]
        texts += geometry.block_size_names[: len(geometry.problem_size)]
    return texts


def _words(texts: Iterable[str]) -> set[str]:
    return {word for text in texts for word in _IDENTIFIER.findall(text)}


def unused_parameters(spec: KernelSpec, geometry: Geometry | None = None) -> list[str]:
    """The parameters of ``spec`` that neither its source nor its expressions name (in
    ``tune_params`` order); ``geometry``: an OpenCL kernel's work sizes."""
    used = _words([spec.source, *_expressions(spec, geometry)])
    return [name for name in spec.space.names if name not in used]


def warn_unused_parameters(spec: KernelSpec, geometry: Geometry | None = None) -> None:
    """Warn once per unused parameter (:func:`unused_parameters`), naming the source's
    identifier closest to it (``did you mean 'tile'?``) where one is close."""
    unused = unused_parameters(spec, geometry)
    if not unused:
        return
    where = Path(spec.source_path).name if spec.source_path else "the kernel source"
    candidates = sorted(_words([spec.source]) - set(spec.space.names))
    for name in unused:
        close = difflib.get_close_matches(name, candidates, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        warnings.warn(
            f"tune_params {name!r} occurs nowhere in {where}{hint}, nor in the problem's "
            "expressions: its values change nothing in the kernel; fix its name, or "
            "leave it out",
            stacklevel=3,
        )
