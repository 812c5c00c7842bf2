"""gesummv — y = a A x + b B x (spec §3.4)."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="gesummv",
    parameters=(
        *ordinals(P12, "T1_I", "T1_J", "T1_Ia", "T1_Ja"),
        *ordinals(R30, "U1_I", "U1_J"),
        *ordinals(RT6, "RT1_I", "RT1_J"),
        *flags("SCR", "VEC1", "OMP"),
    ),
    constraints=(
        tp("T1_I", "T1_Ia"),
        tp("T1_J", "T1_Ja"),
        "RT1_I * RT1_J <= 150",
        one("U1_I", "U1_J"),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..n-1:
                tmp[i] = 0
                y[i] = 0
                for j = 0..n-1:
                    tmp[i] = A[i*n+j]*x[j] + tmp[i]
                    y[i] = B[i*n+j]*x[j] + y[i]
                y[i] = a*tmp[i] + b*y[i]
            """,
            tiles=two_level(("i", "T1_I", "T1_Ia"), ("j", "T1_J", "T1_Ja")),
            regtile=(("i", "RT1_I"), ("j", "RT1_J")),
            unroll=(("i", "U1_I"), ("j", "U1_J")),
            scalar="SCR",
            vector="VEC1",
            openmp="OMP",
            private="iii,jjj,ii,jj,i,j",
        ),
    },
    timed="@C1",
    prologue=(
        "tmp = (double *) malloc(n * sizeof(double));  /* every repetition, as in the original */"
    ),
    sizes={"N": 40000, "n": "N"},
    small={"N": 2000, "n": "N"},
    declarations="""
double a = 1.5, b = 2.5;
double *A, *B, *x, *y, *tmp;
""",
    initialisation="""
  int i, j;
  A = (double *) malloc((size_t) n * n * sizeof(double));
  B = (double *) malloc((size_t) n * n * sizeof(double));
  x = (double *) malloc(n * sizeof(double));
  y = (double *) malloc(n * sizeof(double));
  for (i = 0; i < n; i++) {
    x[i] = ((i + 1) / n) / 3.0;
    y[i] = ((i + 1) / n) / 4.0;
    for (j = 0; j < n; j++) {
      A[(size_t) i * n + j] = ((i * j) / n) / 2.0;
      B[(size_t) i * n + j] = ((i * j) / n) / 3.0;
    }
  }
""",
    checksum="""
  int i;
  for (i = 0; i < n - 1; i++) expected += 0.1 * y[i];
""",
    table_12_1="5.3e9",
    thesis_checksum=42216944.602778,
)
