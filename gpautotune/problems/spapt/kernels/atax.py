"""atax — y = A^T (A x) (spec §3.1)."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import ArrayCopy, Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT7, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="atax",
    parameters=(
        *ordinals(P12, "T1_I", "T1_J", "T1_K", "T2_I", "T2_J", "T2_K"),
        *flags("ACOPY_x", "ACOPY_y"),
        *ordinals(R30, "U1_I", "U_I", "U_J", "U_K"),
        *ordinals(RT7, "RT_I", "RT_J", "RT_K"),
        *flags("SCR", "VEC1", "VEC2"),
    ),
    constraints=(
        tp("T1_I", "T2_I"),
        tp("T1_J", "T2_J"),
        tp("T1_K", "T2_K"),
        "RT_I * RT_J + RT_I * RT_K + RT_J * RT_K <= 150",
        one("U_I", "U_J", "U_K"),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..ny-1:
                y[i] = 0
            """,
            unroll=(("i", "U1_I"),),
            vector="VEC1",
        ),
        "C2": Composite(
            """
            for i = 0..nx-1:
                tmp[i] = 0
                for j = 0..ny-1:
                    tmp[i] = tmp[i] + A[i*ny+j]*x[j]
                for k = 0..ny-1:
                    y[k] = y[k] + A[i*ny+k]*tmp[i]
            """,
            tiles=two_level(("i", "T1_I", "T2_I"), ("j", "T1_J", "T2_J"), ("k", "T1_K", "T2_K")),
            copies=(
                ArrayCopy("ACOPY_x", "x[j]", ("T1_J + (T1_J == 1) * (T2_J - 1)",)),
                ArrayCopy("ACOPY_y", "y[k]", ("T1_K + (T1_K == 1) * (T2_K - 1)",)),
            ),
            regtile=(("i", "RT_I"), ("j", "RT_J"), ("k", "RT_K")),
            unroll=(("i", "U_I"), ("j", "U_J"), ("k", "U_K")),
            scalar="SCR",
            vector="VEC2",
        ),
    },
    timed="@C1\n@C2",
    prologue=(
        "tmp = (double *) malloc(nx * sizeof(double));  /* every repetition, as in the original */"
    ),
    sizes={"N": 40000, "nx": "N", "ny": "N"},
    small={"N": 2000, "nx": "N", "ny": "N"},
    declarations="double *A, *x, *y, *tmp;",
    initialisation="""
  int i, j;
  A = (double *) malloc((size_t) nx * ny * sizeof(double));
  x = (double *) malloc(ny * sizeof(double));
  y = (double *) malloc(ny * sizeof(double));
  for (i = 0; i < ny; i++) {
    x[i] = ((i + 1) / N) / 4.0;
    y[i] = ((i + 1) / N) / 5.0;
  }
  for (i = 0; i < nx; i++)
    for (j = 0; j < ny; j++) A[(size_t) i * ny + j] = ((i * j) / N) / 2.0;
""",
    checksum="""
  int i;
  for (i = 0; i < ny; i++) expected += y[i] * 0.1 * 0.9;
""",
    table_12_1="2.6e16",
    thesis_checksum=2399670049798078.0,
    orio_atol=1e-8,
)
