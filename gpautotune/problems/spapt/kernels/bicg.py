"""bicg — BiCGStab sub-kernel, s = A^T r and q = A p (spec §3.10)."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="bicg",
    parameters=(
        *ordinals(R30, "U1_I"),
        *flags("VEC1"),
        *ordinals(P12, "T1_I", "T1_J", "T2_I", "T2_J"),
        *ordinals(R30, "U_I", "U_J"),
        *ordinals(RT6, "RT_I", "RT_J"),
        *flags("SCR", "VEC2", "OMP"),
    ),
    constraints=(tp("T1_I", "T2_I"), tp("T1_J", "T2_J"), "RT_I * RT_J <= 150", one("U_I", "U_J")),
    blocks={
        "C1": Composite(
            """
            for i = 0..ny-1:
                s[i] = 0
            """,
            unroll=(("i", "U1_I"),),
            vector="VEC1",
        ),
        "C2": Composite(
            """
            for i = 0..nx-1:
                q[i] = 0
                for j = 0..ny-1:
                    s[j] = s[j] + r[i]*A[i*ny+j]
                    q[i] = q[i] + A[i*ny+j]*p[j]
            """,
            tiles=two_level(("i", "T1_I", "T2_I"), ("j", "T1_J", "T2_J")),
            regtile=(("i", "RT_I"), ("j", "RT_J")),
            unroll=(("i", "U_I"), ("j", "U_J")),
            scalar="SCR",
            vector="VEC2",
            openmp="OMP",
            private="iii,jjj,ii,jj,i,j",
        ),
    },
    timed="@C1\n@C2",
    sizes={"N": 40000, "nx": "N", "ny": "N"},
    small={"N": 2000, "nx": "N", "ny": "N"},
    declarations="double *A, *r, *q, *s, *p;",
    initialisation="""
  int i, j;
  A = (double *) malloc((size_t) nx * ny * sizeof(double));
  r = (double *) malloc(nx * sizeof(double));
  q = (double *) malloc(nx * sizeof(double));
  s = (double *) malloc(ny * sizeof(double));
  p = (double *) malloc(ny * sizeof(double));
  for (i = 0; i < nx; i++) {
    r[i] = ((i + 1) / nx) / 2.0;
    q[i] = ((i + 1) / nx) / 3.0;
    for (j = 0; j < ny; j++) A[(size_t) i * ny + j] = ((i * j) / N) / 2.0;
  }
  for (j = 0; j < ny; j++) {
    s[j] = ((j + 1) / ny) / 4.0;
    p[j] = ((j + 1) / ny) / 5.0;
  }
""",
    checksum="""
  double sums = 0.0, sumq = 0.0;
  int i;
  for (i = 0; i < nx; i++) {
    sums += s[i] * 0.09;
    sumq += q[i] * 0.09;
  }
  expected = sums / sumq;
""",
    table_12_1="3.2e11",
    thesis_checksum=2.5,
)
