"""gemver — rank-2 update plus two matrix-vector products (spec §3.3).

As in the original, the unroll factors of block [C4] are swapped: ``U4_J`` unrolls loop
``i`` and ``U4_I`` unrolls loop ``j``.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

_PRIVATE = "iii,jjj,kkk,ii,jj,kk,i,j,k"

KERNEL = Kernel(
    name="gemver",
    parameters=(
        *ordinals(P12, "T2_J", "T2_I", "T2_Ja", "T2_Ia", "T4_I", "T4_J", "T4_Ia", "T4_Ja"),
        *ordinals(R30, "U1_I", "U2_J", "U2_I", "U3_I", "U4_J", "U4_I"),
        *ordinals(RT6, "RT2_J", "RT2_I", "RT4_I", "RT4_J"),
        *flags("SCR", "VEC1", "VEC2", "VEC3", "VEC4", "OMP"),
    ),
    constraints=(
        tp("T2_I", "T2_Ia"),
        tp("T2_J", "T2_Ja"),
        tp("T4_I", "T4_Ia"),
        tp("T4_J", "T4_Ja"),
        "RT2_I * RT2_J <= 150",
        "RT4_I * RT4_J <= 150",
        one("U2_I", "U2_J"),
        one("U4_I", "U4_J"),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..n-1:
                x[i] = 0
                w[i] = 0
            """,
            unroll=(("i", "U1_I"),),
            vector="VEC1",
        ),
        "C2": Composite(
            """
            for j = 0..n-1:
                for i = 0..n-1:
                    B[j*n+i] = u2[j]*v2[i] + u1[j]*v1[i] + A[j*n+i]
                    x[i] = y[j]*B[j*n+i] + x[i]
            """,
            tiles=two_level(("j", "T2_J", "T2_Ja"), ("i", "T2_I", "T2_Ia")),
            regtile=(("j", "RT2_J"), ("i", "RT2_I")),
            unroll=(("j", "U2_J"), ("i", "U2_I")),
            scalar="SCR",
            vector="VEC2",
            openmp="OMP",
            private=_PRIVATE,
        ),
        "C3": Composite(
            """
            for i = 0..n-1:
                x[i] = b*x[i] + z[i]
            """,
            unroll=(("i", "U3_I"),),
            vector="VEC3",
        ),
        "C4": Composite(
            """
            for i = 0..n-1:
                for j = 0..n-1:
                    w[i] = w[i] + B[i*n+j]*x[j]
                w[i] = a*w[i]
            """,
            tiles=two_level(("i", "T4_I", "T4_Ia"), ("j", "T4_J", "T4_Ja")),
            regtile=(("i", "RT4_I"), ("j", "RT4_J")),
            unroll=(("i", "U4_J"), ("j", "U4_I")),
            scalar="SCR",
            vector="VEC4",
            openmp="OMP",
            private=_PRIVATE,
        ),
    },
    timed="@C1\n@C2\n@C3\n@C4",
    sizes={"N": 40000, "n": "N"},
    small={"N": 2000, "n": "N"},
    declarations="""
double a = 1.5, b = 2.5;
double *A, *B, *u1, *u2, *v1, *v2, *y, *z, *w, *x;
""",
    initialisation="""
  int i, j;
  A = (double *) malloc((size_t) n * n * sizeof(double));
  B = (double *) malloc((size_t) n * n * sizeof(double));
  u1 = (double *) malloc(n * sizeof(double));
  u2 = (double *) malloc(n * sizeof(double));
  v1 = (double *) malloc(n * sizeof(double));
  v2 = (double *) malloc(n * sizeof(double));
  y = (double *) malloc(n * sizeof(double));
  z = (double *) malloc(n * sizeof(double));
  w = (double *) malloc(n * sizeof(double));
  x = (double *) malloc(n * sizeof(double));
  for (i = 0; i < n; i++) {
    u1[i] = ((i + 1) / n) / 1.0;
    u2[i] = ((i + 1) / n) / 2.0;
    v1[i] = ((i + 1) / n) / 3.0;
    v2[i] = ((i + 1) / n) / 4.0;
    y[i] = ((i + 1) / n) / 5.0;
    z[i] = ((i + 1) / n) / 6.0;
    w[i] = ((i + 1) / n) / 7.0;
    x[i] = ((i + 1) / n) / 8.0;
    for (j = 0; j < n; j++) {
      A[(size_t) i * n + j] = (i * j) / n;
      B[(size_t) i * n + j] = 0;
    }
  }
""",
    checksum="""
  int i;
  for (i = 0; i < n - 1; i++) expected += 0.1 * w[i];
""",
    table_12_1="2.6e22",
    thesis_checksum=31994000891461392.0,
)
