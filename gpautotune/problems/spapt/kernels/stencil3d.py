"""stencil3d — 7-point 3-D Jacobi stencil with copy-back (spec §3.15).

Unroll mapping quirk, reproduced: each block's unroll list names ``(t, i, j)`` with
factors ``(Un_I, Un_J, Un_K)``; t is outside the block, so ``Un_I`` does nothing,
``Un_J`` unrolls i, ``Un_K`` unrolls j, and k is never unrolled.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

_BODIES = {
    1: (
        "b[i][j][k] = f1*a[i][j][k] + f2*(a[i+1][j][k] + a[i-1][j][k] + a[i][j+1][k]"
        " + a[i][j-1][k] + a[i][j][k+1] + a[i][j][k-1])"
    ),
    2: "a[i][j][k] = b[i][j][k]",
}


def _block(n: int) -> Composite:
    return Composite(
        f"for i = 1..N-2:\n    for j = 1..N-2:\n        for k = 1..N-2:\n            {_BODIES[n]}",
        tiles=two_level(
            ("i", f"T{n}_I", f"T{n}_Ia"), ("j", f"T{n}_J", f"T{n}_Ja"), ("k", f"T{n}_K", f"T{n}_Ka")
        ),
        regtile=(("i", f"RT{n}_I"), ("j", f"RT{n}_J"), ("k", f"RT{n}_K")),
        unroll=(("t", f"U{n}_I"), ("i", f"U{n}_J"), ("j", f"U{n}_K")),
        scalar="SCR",
        vector=f"VEC{n}",
        openmp=f"OMP{n}",
        private="iii,jjj,kkk,ii,jj,kk,i,j,k",
    )


def _params(n: int) -> list:
    return [
        *ordinals(P12, f"T{n}_I", f"T{n}_J", f"T{n}_K", f"T{n}_Ia", f"T{n}_Ja", f"T{n}_Ka"),
        *ordinals(R30, f"U{n}_I", f"U{n}_J", f"U{n}_K"),
        *ordinals(RT6, f"RT{n}_I", f"RT{n}_J", f"RT{n}_K"),
        *flags(f"VEC{n}", f"OMP{n}"),
    ]


KERNEL = Kernel(
    name="stencil3d",
    parameters=(*_params(1), *_params(2), *flags("SCR")),
    constraints=tuple(
        c
        for n in (1, 2)
        for c in (
            tp(f"T{n}_I", f"T{n}_Ia"),
            tp(f"T{n}_J", f"T{n}_Ja"),
            tp(f"T{n}_K", f"T{n}_Ka"),
            f"RT{n}_I * RT{n}_J + RT{n}_I * RT{n}_K + RT{n}_J * RT{n}_K <= 150",
            one(f"U{n}_I", f"U{n}_J", f"U{n}_K"),
        )
    ),
    blocks={"C1": _block(1), "C2": _block(2)},
    timed="for t = 0..T-1:\n    @C1\n    @C2",
    sizes={"N": 200, "T": 100},
    small={"N": 64, "T": 20},
    declarations="""
double a[N][N][N], b[N][N][N];
double f1 = 0.5, f2 = 0.6;
""",
    initialisation="""
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++) {
        a[i][j][k] = ((i + j + k) % 5) + 1;
        b[i][j][k] = 0;
      }
""",
    checksum="""
  int i, j, k;
  for (i = 1; i < N - 1; i++)
    for (j = 1; j < N - 1; j++)
      for (k = 1; k < N - 1; k++) expected += a[i][j][k] * 0.1 * 0.9;
""",
    table_12_1="9.7e27",
    thesis_checksum=3.5365613106853966e67,
)
