"""mm — matrix multiplication C += A B (spec §3.6). PAR is a dummy factor, as in the original."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="mm",
    parameters=(
        *ordinals(P12, "T1_I", "T1_J", "T1_K", "T1_Ia", "T1_Ja", "T1_Ka"),
        *ordinals(R30, "U_I", "U_J", "U_K"),
        *flags("SCREP", "VEC", "OMP", "PAR"),
    ),
    constraints=(
        tp("T1_I", "T1_Ia"),
        tp("T1_J", "T1_Ja"),
        tp("T1_K", "T1_Ka"),
        "U_I * U_J + U_I * U_K + U_J * U_K <= 150",
        one("U_I", "U_J", "U_K"),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..M-1:
                for j = 0..N-1:
                    for k = 0..K-1:
                        C[i][j] = C[i][j] + A[i][k]*B[k][j]
            """,
            tiles=two_level(("i", "T1_I", "T1_Ia"), ("j", "T1_J", "T1_Ja"), ("k", "T1_K", "T1_Ka")),
            unroll=(("i", "U_I"), ("j", "U_J"), ("k", "U_K")),
            scalar="SCREP",
            vector="VEC",
            openmp="OMP",
            private="iii,jjj,kkk,ii,jj,kk,i,j,k",
        ),
    },
    timed="@C1",
    sizes={"M": 2000, "N": 2000, "K": 500},
    small={"M": 400, "N": 400, "K": 200},
    declarations="double A[M][K], B[K][N], C[M][N];",
    initialisation="""
  int i, j;
  for (i = 0; i < M; i++)
    for (j = 0; j < K; j++) A[i][j] = ((i + j) % 5) + 1;
  for (i = 0; i < K; i++)
    for (j = 0; j < N; j++) B[i][j] = ((i + j) % 5) + 1;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) C[i][j] = 0;
""",
    checksum="""
  int i, j;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) expected += C[i][j] * 0.1 * 0.9;
""",
    table_12_1="1.2e12",
    thesis_checksum=1620000000.0,
)
