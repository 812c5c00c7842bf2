"""tensor — 4-D x 2-D tensor contraction (spec §3.8). VRANGE, ORANGE are single-valued."""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, Kernel, fixed, flags, one, ordinals, tp

_LOOPS = ("I", "J", "K", "L", "M")

KERNEL = Kernel(
    name="tensor",
    parameters=(
        *ordinals(P12, *[f"T1_{x}" for x in _LOOPS]),
        *ordinals(P12, *[f"T1_{x}a" for x in _LOOPS]),
        *ordinals(R30, *[f"U1_{x}" for x in _LOOPS]),
        *flags("SCREP", "VEC", "OMP"),
        fixed("VRANGE", 500),
        fixed("ORANGE", 10),
    ),
    constraints=(
        *[tp(f"T1_{x}", f"T1_{x}a") for x in _LOOPS],
        "U1_I * U1_J * U1_K * U1_L + U1_I * U1_M * U1_K * U1_L + U1_J * U1_M <= 130",
        one(*[f"U1_{x}" for x in _LOOPS]),
    ),
    blocks={
        "C1": Composite(
            """
            for i = 0..V-1:
                for j = 0..V-1:
                    for k = 0..O-1:
                        for l = 0..O-1:
                            for m = 0..O-1:
                                R[i][j][k][l] = R[i][j][k][l] + T[i][m][k][l]*A2[j][m]
            """,
            tiles=two_level(*[(x.lower(), f"T1_{x}", f"T1_{x}a") for x in _LOOPS]),
            unroll=tuple((x.lower(), f"U1_{x}") for x in _LOOPS),
            scalar="SCREP",
            vector="VEC",
            openmp="OMP",
            private="iii,jjj,kkk,lll,mmm,ii,jj,kk,ll,mm,i,j,k,l,m",
        ),
    },
    timed="@C1",
    sizes={"V": 500, "O": 25},
    small={"V": 60, "O": 15},
    declarations="double **A2, ****T, ****R;",
    initialisation="""
  int i, j, k, l;
  A2 = (double **) malloc(V * sizeof(double *));
  for (i = 0; i < V; i++) {
    A2[i] = (double *) malloc(O * sizeof(double));
    for (j = 0; j < O; j++) A2[i][j] = ((i + j) % 5) + 1;
  }
  T = (double ****) malloc(V * sizeof(double ***));
  for (i = 0; i < V; i++) {
    T[i] = (double ***) malloc(O * sizeof(double **));
    for (j = 0; j < O; j++) {
      T[i][j] = (double **) malloc(O * sizeof(double *));
      for (k = 0; k < O; k++) {
        T[i][j][k] = (double *) malloc(O * sizeof(double));
        for (l = 0; l < O; l++) T[i][j][k][l] = ((i + j + k + l) % 5) + 1;
      }
    }
  }
  R = (double ****) malloc(V * sizeof(double ***));
  for (i = 0; i < V; i++) {
    R[i] = (double ***) malloc(V * sizeof(double **));
    for (j = 0; j < V; j++) {
      R[i][j] = (double **) malloc(O * sizeof(double *));
      for (k = 0; k < O; k++) {
        R[i][j][k] = (double *) malloc(O * sizeof(double));
        for (l = 0; l < O; l++) R[i][j][k][l] = 0;
      }
    }
  }
""",
    checksum="""
  int i, j, k, l, m;
  for (i = 0; i < V; i++)
    for (j = 0; j < V; j++)
      for (k = 0; k < O; k++)
        for (l = 0; l < O; l++)
          for (m = 0; m < O; m++) expected += R[i][j][k][l];
""",
    table_12_1="1.2e19",
    thesis_checksum=878906250000.0,
)
