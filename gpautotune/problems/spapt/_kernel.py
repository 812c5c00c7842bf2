"""How a kernel is declared: parameters with value sets, constraints, blocks, sizes, data.

Every kernel module under :mod:`.kernels` builds one :class:`Kernel`. The C parts
(declarations, initialisation, checksum) are short C snippets over the size macros; the
tunable code is written in the loop language with ``@label`` slots for its blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from gpautotune.problems.spapt._composite import Composite
from gpautotune.space import Boolean, Categorical, Config, Ordinal, Parameter, Space

__all__ = [
    "Kernel",
    "P12",
    "R30",
    "F5",
    "RT3",
    "RT6",
    "RT7",
    "P7A",
    "P7B",
    "ordinals",
    "flags",
    "fixed",
    "tp",
    "one",
]

P12 = tuple(2**k for k in range(12))
R30 = tuple(range(1, 31))
F5 = (1, 4, 8, 12, 16)
RT6 = (1, 2, 4, 8, 16, 32)
RT7 = (1, 2, 4, 8, 16, 32, 64)
RT3 = (1, 8, 32)
P7A = (1, 16, 32, 64, 128, 256, 512)
P7B = (1, 64, 128, 256, 512, 1024, 2048)


def ordinals(levels: tuple[int, ...], *names: str) -> list[Parameter]:
    """Numeric factors over ``levels`` (log2 encoding for powers of two, else linear)."""
    scale = "log2" if all(v & (v - 1) == 0 for v in levels) else "linear"
    return [Ordinal(n, levels, scale=scale) for n in names]


def flags(*names: str) -> list[Parameter]:
    """Boolean factors."""
    return [Boolean(n) for n in names]


def fixed(name: str, value: Any) -> Parameter:
    """A single-valued factor (counted in the factor number, changes nothing)."""
    return Categorical(name, (value,))


def tp(inner: str, outer: str) -> str:
    """The tile-pair constraint ``TP(a, b)``: ``b = 1 or b mod a = 0``."""
    return f"{outer} == 1 or {outer} % {inner} == 0"


def one(*names: str) -> str:
    """``ONE(x1, ..., xn)``: at least one factor equals 1."""
    return " or ".join(f"{n} == 1" for n in names)


@dataclass(frozen=True)
class Kernel:
    """One SPAPT kernel.

    Attributes:
        name: the kernel's name (``spapt/<name>`` as a problem).
        parameters: the factors in the specification's order.
        constraints: predicate expressions (:mod:`gpautotune.space` syntax).
        blocks: the transformation blocks by label.
        timed: the timed code in the loop language, with ``@label`` slots.
        sizes: the seeds' (thesis) problem sizes, as C macros.
        small: sizes that keep one measurement to seconds on a 2-core machine.
        declarations: C at file scope (arrays, scalars), using the size macros.
        initialisation: C body of the data initialisation (run once, not timed).
        checksum: C body reducing the outputs into ``double expected``.
        prologue: C placed at the top of the timed code (e.g. atax's ``malloc``).
        repetitions: timed repetitions per program (10 in the thesis).
        table_12_1: the size listed in the thesis' Table 12.1 (None: not in the thesis).
        orio_failures: ``(predicate, message)`` regions where Orio's generator or the
            code it generates fails (reproduced as build errors in Orio-compatible mode).
        orio_atol: Orio's validation tolerance (``|expected - actual| < 1`` after the
            C integer truncation; atax compares with ``1e-8``).
        thesis_checksum: the original's reference checksum at the thesis sizes (None:
            the original has none); it sets the default relative tolerance.
        rtol: a default relative tolerance that overrides the one derived from
            ``thesis_checksum`` (seidel: its reordered variants, all accepted in the
            thesis, deviate by more than the thesis-size ratio at small sizes).
        notes: deviations from the original worth knowing.
    """

    name: str
    parameters: tuple[Parameter, ...]
    constraints: tuple[str, ...]
    blocks: Mapping[str, Composite]
    timed: str
    sizes: Mapping[str, int]
    small: Mapping[str, int]
    declarations: str
    initialisation: str
    checksum: str
    prologue: str = ""
    repetitions: int = 10
    table_12_1: str | None = None
    orio_failures: tuple[tuple[str, str], ...] = ()
    orio_atol: float = 1.0
    thesis_checksum: float | None = None
    rtol: float | None = None
    notes: str = ""

    @cached_property
    def space(self) -> Space:
        """The search space (raw size = product of the value-set sizes)."""
        return Space(self.parameters, self.constraints, name=f"spapt/{self.name}")

    @property
    def baseline(self) -> Config:
        """Every parameter at its minimum: the untransformed code (spec §1.8)."""
        return {p.name: p.levels[0] for p in self.parameters}  # type: ignore[attr-defined]

    @property
    def default_rtol(self) -> float:
        """The relative strictness of Orio's check at the thesis sizes.

        Orio accepts ``|x - ref| < orio_atol`` at the thesis sizes, i.e. a relative
        tolerance of ``orio_atol / |ref|``: about 4e-6 for seidel (whose reordered
        variants it accepts), ~1e-17 or less for gemver, atax, fdtd and stencil3d (bit
        identical), 0.4 to 9 for the ratio checksums of bicg, mvt and correlation.
        Kernels without a reference use 1e-6.
        """
        if self.rtol is not None:
            return self.rtol
        if not self.thesis_checksum:
            return 1e-6
        return self.orio_atol / abs(self.thesis_checksum)

    @property
    def in_thesis(self) -> bool:
        return self.table_12_1 is not None

    def preset(self, name: str) -> dict[str, int]:
        """Sizes of a preset: ``thesis`` or ``small``."""
        if name == "thesis":
            return dict(self.sizes)
        if name == "small":
            return dict(self.small)
        raise KeyError(name)
