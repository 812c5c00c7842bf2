"""Unroll-and-jam with the flags of every SPAPT kernel keeps the checksum (spec §1.2, §3).

One C program per kernel holds every variant: each re-initialises the data, runs the
transformed timed code and prints the checksum, which must equal the untransformed
one's. Sizes are tiny and odd (11, 7, ...), so unroll remainders run.

Which combinations, and why these suffice:

* unroll factors: every subset of a nest's unroll parameters the constraints allow,
  the first at its third level (3; dgemv3: 8) and the others at their second. Jamming
  depends only on which loops are unrolled (their headers, declarations and statement
  positions), not on the factor beyond 1.
  Nests of different top-level blocks are independent code, so their subsets are
  tested side by side in the same variant (variant ``k`` takes subset ``k`` of each).
* flags (OpenMP, vector pragmas, scalar replacement, array copy): none, each alone, and
  all. In a block they run after unroll-and-jam, so they transform the unrolled code;
  in a nested block (lu) they run before the outer block's unroll, which then jams the
  blocks and declarations they created (the statement-order bug of a fused k body).
* lu also crosses its inner block's tiling and register tiling, whose loops and blocks
  the outer unroll of k and j meets as well.

Runs use one OpenMP thread: the ordering must be right without any race; the races of
the specification's OMP hazards are not what this checks. The documented changes of
result are left out: jacobi's unroll of i breaks its dependence (spec §3.13); seidel's
unroll of t or i changes its execution order (§3.14); lu's scalar replacement, textual as
Orio's (§1.4), loads ``A[k+1][k+1]`` at the top of a k body unrolled by U1_K before the
copy for row k updates it (§3.11).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gpautotune.problems.spapt import KERNEL_NAMES, Kernel, get_kernel
from gpautotune.problems.spapt._program import data_code, timed_code
from gpautotune.space import Boolean

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

TINY = {
    "tensor": {"V": 7, "O": 5},
    "adi": {"T": 3, "N": 11},
    "jacobi": {"T": 5, "N": 11},
    "seidel": {"T": 3, "N": 11},
    "stencil3d": {"N": 9, "T": 2},
    "fdtd": {"tmax": 3, "nx": 11, "ny": 9},
    "covariance": {"m": 11, "n": 9},
    "correlation": {"m": 11, "n": 9},
    "mm": {"M": 11, "N": 9, "K": 7},
}
# The documented result-changing combinations (module docstring), by kernel.
HAZARDS: dict[str, Callable[[dict], bool]] = {
    "jacobi": lambda c: c["U2_I"] > 1,
    "seidel": lambda c: c["U1_T"] > 1 or c["U1_I"] > 1,
    "lu": lambda c: c["SCR"] and c["U1_K"] > 1,
}
# lu: transformations of its inner block that the outer unroll meets.
LU_INNER = ({}, {"T2_I": 2, "T2_J": 4}, {"RT2_I": 2}, {"RT2_J": 2})
RTOL = {"seidel": 1e-9}  # its /9.0 becomes * 0.111111111111 in unrolled copies


def _tiny(kernel: Kernel) -> dict[str, object]:
    sizes = {k: 11 for k, v in kernel.small.items() if isinstance(v, int)}
    sizes.update(TINY.get(kernel.name, {}))
    return {**sizes, **{k: v for k, v in kernel.small.items() if not isinstance(v, int)}}


def _groups(kernel: Kernel) -> list[list[str]]:
    """Unroll parameters per top-level block (a nested block joins its parent)."""
    groups = []
    for label in kernel.blocks:
        if f"@{label}" not in kernel.timed:
            continue
        labels, names = [label], []
        while labels:
            block = kernel.blocks[labels.pop()]
            names += [f for _, f in block.unroll if isinstance(f, str)]
            labels += [x for x in kernel.blocks if f"@{x}" in block.nest]
        groups.append(list(dict.fromkeys(names)))
    return groups


def _unroll_sets(kernel: Kernel, names: list[str]) -> list[dict[str, int]]:
    levels = {p.name: p.levels for p in kernel.parameters}  # type: ignore[attr-defined]
    out = []
    for r in range(len(names) + 1):
        for chosen in itertools.combinations(names, r):
            values = {n: levels[n][2 if i == 0 else 1] for i, n in enumerate(chosen)}
            if not kernel.space.violated({**kernel.baseline, **values}):
                out.append(values)
    return out


def variants(kernel: Kernel) -> list[dict[str, object]]:
    """The configurations checked for ``kernel`` (module docstring)."""
    per_group = [_unroll_sets(kernel, names) for names in _groups(kernel)]
    unrolls = [
        {k: v for sets in per_group for k, v in sets[i % len(sets)].items()}
        for i in range(max(len(s) for s in per_group))
    ]
    names = [p.name for p in kernel.parameters if isinstance(p, Boolean)]
    flag_sets = [{}, *({n: True} for n in names), dict.fromkeys(names, True)]
    inner = LU_INNER if kernel.name == "lu" else ({},)
    out = []
    for unroll, flags, extra in itertools.product(unrolls, flag_sets, inner):
        config = {**kernel.baseline, **unroll, **flags, **extra}
        if not kernel.space.violated(config) and not HAZARDS.get(kernel.name, bool)(config):
            out.append(config)
    return out


def _program(kernel: Kernel, configs: list[dict[str, object]]) -> str:
    sizes = _tiny(kernel)
    parts = [
        "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\n#include <limits.h>",
        "\n".join(f"#define {k} {v}" for k, v in sizes.items()),
        *data_code(kernel),
    ]
    for k, config in enumerate(configs):
        body = "\n".join("    " + line for line in timed_code(kernel, config))
        parts.append(
            f"static double variant_{k}(void) {{\n  spapt_init();\n  {{\n{body}\n  }}\n"
            "  return spapt_checksum();\n}"
        )
    calls = "\n".join(f'  printf("%.17g\\n", variant_{k}());' for k in range(len(configs)))
    parts.append(f"int main(void) {{\n{calls}\n  return 0;\n}}")
    return "\n\n".join(parts) + "\n"


def checksums(kernel: Kernel, configs: list[dict[str, object]], folder: Path) -> list[float]:
    """Compile all variants into one program and run it with one OpenMP thread."""
    (folder / "v.c").write_text(_program(kernel, configs))
    cmd = ["gcc", "-O0", "-fopenmp", "-w", "-o", "v", "v.c", "-lm"]
    subprocess.run(cmd, cwd=folder, check=True, capture_output=True, timeout=300)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        ["./v"], cwd=folder, env=env, check=True, capture_output=True, text=True, timeout=120
    ).stdout
    return [float(x) for x in out.split()]


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_unrolled_variants_keep_the_checksum(name: str, tmp_path: Path) -> None:
    kernel = get_kernel(name)
    configs = [kernel.baseline, *variants(kernel)]
    values = checksums(kernel, configs, tmp_path)
    reference, rtol = values[0], RTOL.get(name, 1e-12)
    wrong = [
        {k: v for k, v in c.items() if v != kernel.baseline[k]}
        for c, x in zip(configs[1:], values[1:], strict=True)
        if not abs(x - reference) <= rtol * abs(reference)
    ]
    assert wrong == [], f"{len(wrong)} of {len(configs) - 1} variants change the checksum"
