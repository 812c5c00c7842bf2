"""adi — alternating-direction implicit sweeps (spec §3.12).

The value sets are the original-SPAPT ones (tiles P7a/P7b, register tiles {1, 8, 32}),
which give Table 12.1's 6.0e15; the repository's current file widened them.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P7A, P7B, R30, RT3, Kernel, flags, one, ordinals, tp

_NAMES = {"i1": ("ii", "iii"), "i2": ("jj", "jjj")}
_BODIES = {
    1: """
for i1 = 0..N-1:
    for i2 = 1..N-1:
        X[i1][i2] = X[i1][i2] - X[i1][i2-1]*A[i1][i2]/B[i1][i2-1]
        B[i1][i2] = B[i1][i2] - A[i1][i2]*A[i1][i2]/B[i1][i2-1]
""",
    2: """
for i1 = 1..N-1:
    for i2 = 0..N-1:
        X[i1][i2] = X[i1][i2] - X[i1-1][i2]*A[i1][i2]/B[i1-1][i2]
        B[i1][i2] = B[i1][i2] - A[i1][i2]*A[i1][i2]/B[i1-1][i2]
""",
}


def _block(n: int) -> Composite:
    return Composite(
        _BODIES[n],
        tiles=two_level(
            ("i1", f"T{n}_I1", f"T{n}_I1a"), ("i2", f"T{n}_I2", f"T{n}_I2a"), names=_NAMES
        ),
        regtile=(("i1", f"RT{n}_I1"), ("i2", f"RT{n}_I2")),
        unroll=(("i1", f"U{n}_I1"), ("i2", f"U{n}_I2")),
        scalar=f"SCR{n}",
        vector=f"VEC{n}",
    )


def _params(n: int) -> list:
    return [
        *ordinals(P7A, f"T{n}_I1", f"T{n}_I2"),
        *ordinals(P7B, f"T{n}_I1a", f"T{n}_I2a"),
        *ordinals(R30, f"U{n}_I1", f"U{n}_I2"),
        *ordinals(RT3, f"RT{n}_I1", f"RT{n}_I2"),
        *flags(f"SCR{n}", f"VEC{n}"),
    ]


KERNEL = Kernel(
    name="adi",
    parameters=(*_params(1), *_params(2)),
    constraints=tuple(
        c
        for n in (1, 2)
        for c in (
            tp(f"T{n}_I1", f"T{n}_I1a"),
            tp(f"T{n}_I2", f"T{n}_I2a"),
            f"RT{n}_I1 * RT{n}_I2 <= 150",
            one(f"U{n}_I1", f"U{n}_I2"),
        )
    ),
    blocks={"C1": _block(1), "C2": _block(2)},
    timed="for t = 0..T-1:\n    @C1\n    @C2",
    sizes={"T": 256, "N": 1024},
    small={"T": 16, "N": 256},
    declarations="double X[N][N + 20], A[N][N + 20], B[N][N + 20];",
    initialisation="""
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N + 20; j++) X[i][j] = A[i][j] = B[i][j] = ((i + j) % 5) + 1;
""",
    checksum="""
  double sx = 0.0, sb = 0.0;
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N + 20; j++) {
      sx += X[i][j] * 0.09;
      sb += B[i][j] * 0.09;
    }
  expected = sx / sb;
""",
    table_12_1="6.0e15",
    thesis_checksum=-29488901894.314121,
)
