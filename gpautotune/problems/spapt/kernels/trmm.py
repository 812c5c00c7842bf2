"""trmm — triangular matrix multiply B <- alpha A B, A upper-triangular (spec §3.9).

The triangular ``k`` loops start at ``i + 1``: unroll-and-jam of ``i`` cannot fuse them
(each copy's statement and loop follow one another), and register tiling of ``i``
replicates them per offset. Orio's generated code does not compile for ``RT2_I > 1``
and ``RT2_K > 1`` with k untiled (undeclared ``newlb_k``); here that region compiles,
except in Orio-compatible mode.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="trmm",
    parameters=(
        *ordinals(
            P12, "T1_I", "T1_J", "T1_Ia", "T1_Ja", "T2_I", "T2_J", "T2_K", "T2_Ia", "T2_Ja", "T2_Ka"
        ),
        *ordinals(R30, "U1_I", "U1_J", "U2_I", "U2_J", "U2_K"),
        *ordinals(RT6, "RT1_I", "RT1_J", "RT2_I", "RT2_J", "RT2_K"),
        *flags("SCREP", "VEC1", "VEC2", "OMP1", "OMP2"),
    ),
    constraints=(
        tp("T1_I", "T1_Ia"),
        tp("T1_J", "T1_Ja"),
        tp("T2_I", "T2_Ia"),
        tp("T2_J", "T2_Ja"),
        tp("T2_K", "T2_Ka"),
        "U1_I * U1_J <= 150",
        one("U1_I", "U1_J"),
        "U2_I * U2_J + U2_I * U2_K + U2_J * U2_K <= 150",
        one("U2_I", "U2_J", "U2_K"),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..N-1:
                for j = 0..N-1:
                    B[i][j] = alpha*A[i][i]*B[i][j]
                    for k = i+1..N-1:
                        B[i][j] = B[i][j] + alpha*A[i][k]*B[k][j]
            """,
            tiles=two_level(("i", "T1_I", "T1_Ia"), ("j", "T1_J", "T1_Ja")),
            regtile=(("i", "RT1_I"), ("j", "RT1_J")),
            unroll=(("i", "U1_I"), ("j", "U1_J")),
            scalar="SCREP",
            vector="VEC1",
            openmp="OMP1",
            private="i,j,ii,jj,iii,jjj",
        ),
        "C2": Composite(
            """
            for i = 0..N-1:
                for j = 0..N-1:
                    for k = i+1..N-1:
                        B[i][j] = B[i][j] + alpha*A[i][k]*B[k][j]
            """,
            tiles=two_level(("i", "T2_I", "T2_Ia"), ("j", "T2_J", "T2_Ja"), ("k", "T2_K", "T2_Ka")),
            regtile=(("i", "RT2_I"), ("j", "RT2_J"), ("k", "RT2_K")),
            unroll=(("i", "U2_I"), ("j", "U2_J"), ("k", "U2_K")),
            scalar="SCREP",
            vector="VEC2",
            openmp="OMP2",
            private="iii,jjj,kkk,ii,jj,kk,i,j,k",
        ),
    },
    timed="@C1\n@C2",
    sizes={"N": 1000},
    small={"N": 250},
    declarations="""
#define alpha 1
double A[N][N + 20], B[N][N + 20];
""",
    initialisation="""
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N + 20; j++) A[i][j] = B[i][j] = ((i + j) % 5) + 1;
""",
    checksum="""
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) expected += B[i][j] * 0.1 * 0.9;
""",
    table_12_1="3.7e23",
    thesis_checksum=405404783999.161072,
    orio_failures=(
        (
            "RT2_I > 1 and RT2_K > 1 and T2_K == 1 and T2_Ka == 1",
            "non-rectangular register tiling: newlb_k/newub_k are not declared",
        ),
    ),
)
