"""hessian — Hessian-style quadratic form (spec §3.5).

In Orio-compatible mode every OMP configuration fails to build, as in the original: its
fixed private list names the undeclared ``Y_copy``, ``X0_copy``, ... variables.
"""

from __future__ import annotations

from gpautotune.problems.spapt._composite import Composite, one_level
from gpautotune.problems.spapt._kernel import P12, R30, RT6, Kernel, flags, one, ordinals

# the statement of the loop nest, one line in the block below
_Y = (
    "Y[i][j] = a0*X0[i][j] + a1*X1[i][j] + a2*X2[i][j]"
    " + 2.0*b00*u0[i]*u0[j] + 2.0*b11*u1[i]*u1[j] + 2.0*b22*u2[i]*u2[j]"
    " + b01*u0[i]*u1[j] + b01*u1[i]*u0[j] + b02*u0[i]*u2[j] + b02*u2[i]*u0[j]"
    " + b12*u1[i]*u2[j] + b12*u2[i]*u1[j]"
)

KERNEL = Kernel(
    name="hessian",
    parameters=(
        *ordinals(P12, "T_I", "T_J"),
        *ordinals(RT6, "RT_I", "RT_J"),
        *ordinals(R30, "U_I", "U_J"),
        *flags("SCREP", "VEC", "OMP"),
    ),
    constraints=(one("U_I", "U_J"),),
    blocks={
        "C1": Composite(
            f"""
            for i = 0..N-1:
                for j = 0..N-1:
                    {_Y}
            """,
            tiles=one_level(("i", "T_I"), ("j", "T_J")),
            regtile=(("i", "RT_I"), ("j", "RT_J")),
            unroll=(("i", "U_I"), ("j", "U_J")),
            scalar="SCREP",
            vector="VEC",
            openmp="OMP",
            private="i,j,ii,jj,iii,jjj,Y_copy,X0_copy,X1_copy,X2_copy",
        ),
    },
    timed="@C1",
    sizes={"N": 8000},
    small={"N": 1500},
    declarations="""
double X0[N][N], X1[N][N], X2[N][N], Y[N][N], u0[N], u1[N], u2[N];
double a0 = 32.12, a1 = 3322.12, a2 = 1.123;
double b00 = 1321.9, b01 = 21.55, b02 = 10.3, b11 = 1210.313, b12 = 9.373, b22 = 1992.31221;
""",
    initialisation="""
  int i, j;
  for (i = 0; i < N; i++) {
    u0[i] = u1[i] = u2[i] = (i % 5) + 1;
    for (j = 0; j < N; j++) {
      X0[i][j] = X1[i][j] = X2[i][j] = ((i + j) % 5) + 1;
      Y[i][j] = 0;
    }
  }
""",
    checksum="""
  int i;
  for (i = 0; i < N - 1; i++) expected += Y[i][0] * 0.1 * 0.5;
""",
    table_12_1="3.7e7",
    thesis_checksum=14981109.589145,
)
