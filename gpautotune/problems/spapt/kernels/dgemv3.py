"""dgemv3 — three fused/unfused GEMV-style products (spec §3.2).

Block [C5]'s inclusive bound ``j <= A_nrows`` reads one element past each row of ``A``
and writes ``t10[M]`` in the original; here ``t10`` and every row of ``A`` get one
extra (initialised) element, as the specification recommends.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import F5, P12, RT6, Kernel, flags, one, ordinals, tp

_NESTS = {
    1: "t2[j] = t2[j] + A[i][j]*x[i]",
    3: "t6[j] = t6[j] + A[i][j]*w[i]",
    5: "t10[j] = t10[j] + A[i][j]*e[i]",
}
_UPDATES = {
    2: "y[i] = t2[i] + y[i]",
    4: "z[i] = t6[i] + z[i]",
    6: "p[i] = t10[i] + p[i]",
    8: "y[i] = t2[i] + y[i]",
    9: "z[i] = t6[i] + z[i]",
    10: "p[i] = t10[i] + p[i]",
}


def _nest(n: int) -> Composite:
    upper = "A_nrows" if n == 5 else "A_nrows-1"
    body = (
        "\n        ".join(
            [
                "t10[j] = t10[j] + e[i]*A[i][j]",
                "t6[j] = t6[j] + w[i]*A[i][j]",
                "t2[j] = t2[j] + A[i][j]*x[i]",
            ]
        )
        if n == 7
        else _NESTS[n]
    )
    return Composite(
        f"for i = 0..A_ncols-1:\n    for j = 0..{upper}:\n        {body}",
        tiles=two_level(("i", f"T{n}_I", f"T{n}_Ia"), ("j", f"T{n}_J", f"T{n}_Ja")),
        regtile=(("i", f"RT{n}_I"), ("j", f"RT{n}_J")),
        unroll=(("i", f"U{n}_I"), ("j", f"U{n}_J")),
        scalar="SCR",
        vector=f"VEC{n}",
    )


def _update(n: int) -> Composite:
    return Composite(
        f"for i = 0..A_nrows-1:\n    {_UPDATES[n]}", unroll=(("i", f"U{n}_I"),), vector=f"VEC{n}"
    )


_BLOCKS = {f"C{n}": (_nest(n) if n in (1, 3, 5, 7) else _update(n)) for n in range(1, 11)}

KERNEL = Kernel(
    name="dgemv3",
    parameters=(
        *ordinals(P12, *[f"T{n}_{x}" for n in (1, 3, 5, 7) for x in ("I", "J")]),
        *ordinals(P12, *[f"T{n}_{x}" for n in (1, 3, 5, 7) for x in ("Ia", "Ja")]),
        *ordinals(F5, *[f"U{n}_{x}" for n in (1, 3, 5, 7) for x in ("I", "J")]),
        *ordinals(F5, *[f"U{n}_I" for n in (2, 4, 6, 8, 9, 10)]),
        *ordinals(RT6, *[f"RT{n}_{x}" for n in (1, 3, 5, 7) for x in ("I", "J")]),
        *flags("SCR", *[f"VEC{n}" for n in range(1, 11)]),
    ),
    constraints=tuple(
        c
        for n in (1, 3, 5, 7)
        for c in (
            tp(f"T{n}_I", f"T{n}_Ia"),
            tp(f"T{n}_J", f"T{n}_Ja"),
            f"RT{n}_I * RT{n}_J <= 150",
            one(f"U{n}_I", f"U{n}_J"),
        )
    ),
    blocks=_BLOCKS,
    timed="\n".join(f"@C{n}" for n in range(1, 11)),
    sizes={"M": 20000, "N": 20000},
    small={"M": 2000, "N": 2000},
    declarations="""
int A_nrows = M, A_ncols = N;
double **A, *e, *x, *w, *y, *z, *p, *t2, *t6, *t10;
""",
    initialisation="""
  int i, j;
  A = (double **) malloc(M * sizeof(double *));
  for (i = 0; i < M; i++) {
    A[i] = (double *) malloc((N + 1) * sizeof(double));
    for (j = 0; j <= N; j++) A[i][j] = ((i + j) % 5) + 1;
  }
  e = (double *) malloc(N * sizeof(double));
  x = (double *) malloc(N * sizeof(double));
  w = (double *) malloc(N * sizeof(double));
  for (i = 0; i < N; i++) e[i] = x[i] = w[i] = (i % 5) + 1;
  y = (double *) malloc(M * sizeof(double));
  z = (double *) malloc(M * sizeof(double));
  p = (double *) malloc(M * sizeof(double));
  t2 = (double *) malloc(M * sizeof(double));
  t6 = (double *) malloc(M * sizeof(double));
  t10 = (double *) malloc((M + 1) * sizeof(double));
  for (i = 0; i < M; i++) {
    y[i] = z[i] = (i % 5) + 1;
    p[i] = t2[i] = t6[i] = t10[i] = 0;
  }
  t10[M] = 0;
""",
    checksum="""
  double s2 = 0.0, s6 = 0.0, s10 = 0.0;
  int ii;
  for (ii = 0; ii < M; ii++) s2 += 0.1 * t2[ii];
  for (ii = 0; ii < M; ii++) s6 += 0.5 * t6[ii];
  for (ii = 0; ii < M; ii++) s10 += 0.9 * t10[ii];
  expected = s2 + s6 + s10;
""",
    table_12_1="3.8e36",
    thesis_checksum=10800000000.0,
    notes="t10 and each row of A have one extra element (the original overflows them in [C5]).",
)
