"""mvt — x1 += A y_1 and x2 += A^T y_2 (spec §3.7). PAR1i, PAR1j are dummy factors."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import ArrayCopy, Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, Kernel, flags, ordinals, tp

_BI = "(T1_I + (T1_I == 1) * (T2_I - 1))"
_BJ = "(T1_J + (T1_J == 1) * (T2_J - 1))"

KERNEL = Kernel(
    name="mvt",
    parameters=(
        *ordinals(P12, "T1_I", "T1_J", "T2_I", "T2_J"),
        *flags("ACOPY_A"),
        *ordinals(R30, "U_I", "U_J"),
        *flags("SCREP", "VEC", "OMP", "PAR1i", "PAR1j"),
    ),
    constraints=(
        tp("T1_I", "T2_I"),
        tp("T1_J", "T2_J"),
        "2 * U_I * U_J + 2 * U_I + 2 * U_J <= 130",
        f"not ACOPY_A or {_BI} * {_BJ} <= 262144",
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..N-1:
                for j = 0..N-1:
                    x1[i] = x1[i] + a[i][j]*y_1[j]
                    x2[j] = x2[j] + a[i][j]*y_2[i]
            """,
            tiles=two_level(("i", "T1_I", "T2_I"), ("j", "T1_J", "T2_J")),
            copies=(ArrayCopy("ACOPY_A", "a[i][j]", (_BI, _BJ)),),
            unroll=(("i", "U_I"), ("j", "U_J")),
            scalar="SCREP",
            vector="VEC",
            openmp="OMP",
            private="iii,jjj,ii,jj,i,j,a_copy",
        ),
    },
    timed="@C1",
    sizes={"M": 10000, "N": 10000},
    small={"M": 2000, "N": 2000},
    declarations="double a[M][N], y_1[N], y_2[M], x1[M], x2[N];",
    initialisation="""
  int i, j;
  for (i = 0; i < M; i++) {
    y_2[i] = (i % 5) + 1;
    x1[i] = 0;
    for (j = 0; j < N; j++) a[i][j] = ((i + j) % 5) + 1;
  }
  for (j = 0; j < N; j++) {
    y_1[j] = (j % 5) + 1;
    x2[j] = 0;
  }
""",
    checksum="""
  double s1 = 0.0, s2 = 0.0;
  int i;
  for (i = 0; i < M; i++) s1 += x1[i] * 0.1 * 0.9;
  for (i = 0; i < N; i++) s2 += x2[i] * 0.1 * 0.9;
  expected = s1 / s2;
""",
    table_12_1="1.1e9",
    thesis_checksum=1.0,
)
