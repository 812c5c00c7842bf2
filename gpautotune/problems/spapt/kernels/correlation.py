"""correlation — correlation matrix (spec §3.16). OMP3 is single-valued (False)."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT3, Kernel, fixed, flags, one, ordinals, tp

KERNEL = Kernel(
    name="correlation",
    parameters=(
        *ordinals(P12, "T2_I", "T2_J", "T2_Ia", "T2_Ja", "T3_I", "T3_J", "T3_Ia", "T3_Ja"),
        *ordinals(R30, "U2_I", "U2_J", "U3_I", "U3_J"),
        *ordinals(RT3, "RT2_I", "RT2_J", "RT3_I", "RT3_J"),
        *flags("VEC2", "VEC3", "SCREP", "OMP2"),
        fixed("OMP3", False),
    ),
    constraints=(
        tp("T2_I", "T2_Ia"),
        tp("T2_J", "T2_Ja"),
        tp("T3_I", "T3_Ia"),
        tp("T3_J", "T3_Ja"),
        "U2_I * U2_J <= 150",
        one("U2_I", "U2_J"),
        "U3_I * U3_J <= 150",
        one("U3_I", "U3_J"),
    ),
    blocks={
        "C2": Composite(
            """
            for j = 1..m:
                stddev[j] = 0
                for i = 1..n:
                    stddev[j] = stddev[j] + (data[i][j] - mean[j])*(data[i][j] - mean[j])
                stddev[j] = stddev[j]/float_n
                stddev[j] = sqrt(stddev[j])
                stddev[j] = 1.0
            """,
            tiles=two_level(("i", "T2_I", "T2_Ia"), ("j", "T2_J", "T2_Ja")),
            regtile=(("i", "RT2_I"), ("j", "RT2_J")),
            unroll=(("i", "U2_I"), ("j", "U2_J")),
            scalar="SCREP",
            vector="VEC2",
            openmp="OMP2",
            private="i,j,ii,jj,iii,jjj",
        ),
        "C3": Composite(
            """
            for i = 1..n:
                for j = 1..m:
                    data[i][j] = data[i][j] - mean[j]
                    data[i][j] = data[i][j]/(sqrt(float_n)*stddev[j])
            """,
            tiles=two_level(("i", "T3_I", "T3_Ia"), ("j", "T3_J", "T3_Ja")),
            regtile=(("i", "RT3_I"), ("j", "RT3_J")),
            unroll=(("i", "U3_I"), ("j", "U3_J")),
            scalar="SCREP",
            vector="VEC3",
            openmp="OMP3",
            private="i,j,ii,jj,iii,jjj",
        ),
    },
    timed="""
for j = 1..m:
    mean[j] = 0
    for i = 1..n:
        mean[j] = mean[j] + data[i][j]
    mean[j] = mean[j]/float_n
@C2
@C3
for k = 1..m-1:
    symmat[k][k] = 1
    for j = k+1..m:
        symmat[k][j] = 0
        for i = 1..n:
            symmat[k][j] = symmat[k][j] + data[i][k]*data[i][j]
        symmat[j][k] = symmat[k][j]
symmat[m][m] = 1
""",
    sizes={"m": 1000, "n": 1000},
    small={"m": 400, "n": 400},
    declarations="""
double data[m + 10][m + 10], symmat[m + 10][m + 10], stddev[m + 10], mean[m + 10];
double float_n = 321414134.01, eps = 0.005;
""",
    initialisation="""
  int i, j;
  for (i = 0; i < m + 10; i++) {
    stddev[i] = mean[i] = (i % 5) + 1;
    for (j = 0; j < m + 10; j++) data[i][j] = symmat[i][j] = ((i + j) % 5) + 1;
  }
""",
    checksum="""
  double s1 = 0.0, s9 = 0.0;
  int k, j;
  for (k = 1; k <= m; k++)
    for (j = k + 1; j <= m; j++) {
      s1 += symmat[k][j] * 0.1;
      s9 += symmat[k][j] * 0.9;
    }
  expected = s1 / s9;
""",
    table_12_1="4.5e17",
    thesis_checksum=0.111111,
)
