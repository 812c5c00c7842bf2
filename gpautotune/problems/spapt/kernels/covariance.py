"""covariance — covariance matrix (spec §3.18, ``covariance.src1.c``; not in Table 12.1).

The original declares ``data[m+10][n+10]`` but indexes columns up to ``m > n`` (undefined
behaviour); here ``data`` has ``max(m, n) + 10`` columns. 35 repetitions, as in the file.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P7A, P7B, R30, RT3, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="covariance",
    parameters=(
        *ordinals(P7A, "T1_J", "T1_I"),
        *ordinals(P7B, "T1_Ja", "T1_Ia"),
        *ordinals(R30, "U1_J", "U1_I"),
        *ordinals(RT3, "RT1_J", "RT1_I"),
        *flags("VEC1", "OMP1"),
        *ordinals(P7A, "T2_I", "T2_J", "T2_K"),
        *ordinals(P7B, "T2_Ia", "T2_Ja", "T2_Ka"),
        *ordinals(R30, "U2_I", "U2_J", "U2_K"),
        *ordinals(RT3, "RT2_I", "RT2_J", "RT2_K"),
        *flags("VEC2", "OMP2", "SCREP"),
    ),
    constraints=(
        tp("T1_J", "T1_Ja"),
        tp("T1_I", "T1_Ia"),
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
            for j = 1..m:
                mean[j] = 0
                for i = 1..n:
                    mean[j] = mean[j] + data[i][j]
                mean[j] = mean[j]/float_n
            """,
            tiles=two_level(("j", "T1_J", "T1_Ja"), ("i", "T1_I", "T1_Ia")),
            regtile=(("j", "RT1_J"), ("i", "RT1_I")),
            unroll=(("j", "U1_J"), ("i", "U1_I")),
            scalar="SCREP",
            vector="VEC1",
            openmp="OMP1",
            private="i,j,ii,jj,iii,jjj",
        ),
        "C2": Composite(
            """
            for k = 1..m-1:
                symmat[k][k] = 1
                for j = k+1..m:
                    symmat[k][j] = 0
                    for i = 1..n:
                        symmat[k][j] = symmat[k][j] + data[i][k]*data[i][j]
                    symmat[j][k] = symmat[k][j]
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
    timed="""
@C1
for i = 1..n:
    for j = 1..m:
        data[i][j] = data[i][j] - mean[j]
@C2
""",
    sizes={"m": 750, "n": 500},
    small={"m": 300, "n": 200},
    repetitions=35,
    declarations="""
#define SPAPT_COLS (((m) > (n) ? (m) : (n)) + 10)
double data[m + 10][SPAPT_COLS], symmat[m + 10][m + 10], mean[m + 10];
double float_n = 321414134.01, eps = 0.005;
""",
    initialisation="""
  int i, j;
  for (i = 0; i < m + 10; i++) {
    mean[i] = ((i % 5) + 1);
    for (j = 0; j < SPAPT_COLS; j++) data[i][j] = ((i + j) % 5) + 1;
    for (j = 0; j < m + 10; j++) symmat[i][j] = ((i + j) % 5) + 1;
  }
""",
    checksum="""
  int k, j;
  for (k = 1; k <= m; k++)
    for (j = 1; j <= m; j++) expected += symmat[k][j] * 0.1 * 0.9;
""",
    orio_failures=(
        (
            "RT2_K > 1 and RT2_J > 1 and T2_J == 1 and T2_Ja == 1",
            "non-rectangular register tiling: newlb_j/newub_j are not declared",
        ),
    ),
    notes=(
        "data has max(m, n) + 10 columns (the original's UB indexing is avoided); 35 repetitions."
    ),
)
