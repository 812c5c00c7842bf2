"""lu — LU decomposition without pivoting, with a nested block (spec §3.11).

Block [C2] (the update nest) is transformed first; [C1]'s unroll of ``j`` then acts on
every loop named ``j`` in the k body, including those [C2] produced. The k copies are
always plainly unrolled (the j loops start at k+1), so each row's division runs just
before its update. Scalar names are unique per program, so the duplicate ``scv_N``
declarations of the original do not occur; Orio-compatible mode reports its two failure
regions as build errors. SCR with U1_K > 1 gives a wrong result, as Orio's textual
scalar replacement would: ``A[k+1][k+1]`` is loaded at the top of the unrolled k body,
before the copy for row k updates it.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, two_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals, tp

KERNEL = Kernel(
    name="lu",
    parameters=(
        *ordinals(P12, "T2_I", "T2_J", "T2_Ia", "T2_Ja"),
        *ordinals(R30, "U2_I", "U2_J"),
        *ordinals(RT6, "RT2_I", "RT2_J"),
        *flags("SCR", "VEC2", "OMP"),
        *ordinals(R30, "U1_K", "U1_J"),
        *flags("VEC1"),
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
            for k = 0..N-1:
                for j = k+1..N-1:
                    A[k][j] = A[k][j]/A[k][k]
                @C2
            """,
            unroll=(("k", "U1_K"), ("j", "U1_J")),
            scalar="SCR",
            vector="VEC1",
        ),
        "C2": Composite(
            """
            for i = k+1..N-1:
                for j = k+1..N-1:
                    A[i][j] = A[i][j] - A[i][k]*A[k][j]
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
    sizes={"N": 2000},
    small={"N": 500},
    declarations="double L[N][N], U[N][N], A[N][N + 13];",
    initialisation="""
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      L[i][j] = j <= i ? i + j + 1 : 0;
      U[j][i] = j <= i ? i + j + 1 : 0;
    }
  for (i = 0; i < N; i++)
    for (j = 0; j < N + 13; j++) A[i][j] = 0;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++) A[i][j] += L[i][k] * U[k][j];
""",
    checksum="""
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) expected += A[i][j] * 0.1 * 0.9;
""",
    table_12_1="9.6e12",
    thesis_checksum=600480935677.017212,
    notes="SCR with U1_K > 1 loads A[k+1][k+1] before row k updates it: a wrong result.",
    orio_failures=(
        (
            "SCR and (U2_I > 1 or U2_J > 1 or RT2_I > 1 or RT2_J > 1)",
            "nested scalar replacement redeclares scv_N",
        ),
        ("(OMP or VEC2) and U1_K > 1", "Orio's outer unroll of k cannot process the inner pragmas"),
    ),
)
