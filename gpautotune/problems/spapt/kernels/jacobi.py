"""jacobi — 1-D Jacobi sweep stored as a time x space array (spec §3.13).

Unroll-and-jam or register tiling of ``i`` and OMP break its dependence (row i reads row
i - 1): those configurations fail validation, as in the original.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="jacobi",
    parameters=(
        *ordinals(P12, "T2_I", "T2_J", "T2_Ia", "T2_Ja"),
        *ordinals(R30, "U2_I", "U2_J"),
        *ordinals(RT6, "RT2_I", "RT2_J"),
        *flags("SCR", "VEC2", "OMP"),
    ),
    constraints=(
        tp("T2_I", "T2_Ia"),
        tp("T2_J", "T2_Ja"),
        "RT2_I * RT2_J <= 150",
        one("U2_I", "U2_J"),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 1..T-1:
                for j = 1..N-2:
                    a[i][j] = 0.333*(a[i-1][j-1] + a[i-1][j] + a[i-1][j+1])
            """,
            tiles=two_level(("i", "T2_I", "T2_Ia"), ("j", "T2_J", "T2_Ja")),
            regtile=(("i", "RT2_I"), ("j", "RT2_J")),
            unroll=(("i", "U2_I"), ("j", "U2_J")),
            scalar="SCR",
            vector="VEC2",
            openmp="OMP",
            private="iii,jjj,ii,jj,i,j",
        ),
    },
    timed="@C1",
    sizes={"T": 10000, "N": 10000},
    small={"T": 2000, "N": 2000},
    declarations="double a[T][N];",
    initialisation="""
  int i, j;
  for (i = 0; i < T; i++)
    for (j = 0; j < N; j++) a[i][j] = i + ((double) j) / N;
""",
    checksum="""
  int i, j;
  for (i = 1; i < T; i++)
    for (j = 1; j < N - 1; j++) expected += a[i][j] * 0.1 * 0.9;
""",
    table_12_1="5.3e9",
    thesis_checksum=145057485.810668,
)
