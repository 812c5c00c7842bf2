"""Each transformation keeps the output of small loop nests bit for bit.

All variants of all nests go into ONE C program (one compilation): every variant
re-initialises the arrays, runs its transformed nest and prints a hash of every array.
Sizes (13 x 11) divide none of the tile, unroll and register-tile factors, so tile
edges, unroll remainders and register-tile cleanup loops all run. Data are small
integers, so every result is exact whatever the summation order.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from itertools import count

import pytest

from gpautotune.problems.spapt._composite import (
    ArrayCopy,
    Composite,
    Generator,
    one_level,
    two_level,
)
from gpautotune.problems.spapt._nest import For, iter_loops, render, to_lines
from gpautotune.problems.spapt._syntax import parse_nest
from gpautotune.problems.spapt._unroll import unroll_jam

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

NESTS = {
    # independent updates, i and j both free
    "perfect": """
for i = 0..N-1:
    for j = 0..M-1:
        C[i][j] = C[i][j] + A[i][j]*B[j][i]
""",
    # bicg-like imperfect nest: reset before and scaling after the inner loop
    "imperfect": """
for i = 0..N-1:
    q[i] = 0
    for j = 0..M-1:
        s[j] = s[j] + r[i]*A[i][j]
        q[i] = q[i] + A[i][j]*p[j]
    q[i] = 2*q[i]
""",
    # j-carried recurrence between two statements (copy-major order matters)
    "recurrence": """
for i = 0..N-1:
    for j = 1..M-1:
        X[i][j] = X[i][j-1] + B[i][j]
        B[i][j] = B[i][j] + X[i][j]
""",
    # trmm-like triangular nest: the k loop's bounds depend on i
    "triangular": """
for i = 0..N-1:
    for j = 0..M-1:
        C[i][j] = 2*C[i][j]
        for k = i+1..N-1:
            C[i][j] = C[i][j] + A[i][k]*C[k][j]
""",
}
SAFE_FOR_OMP = {"perfect", "recurrence"}

VARIANTS: dict[str, dict] = {
    "tile_i2": {"tiles": one_level(("i", 2))},
    "tile_i4_j8": {"tiles": one_level(("i", 4), ("j", 8))},
    "tile2_i2_8": {"tiles": two_level(("i", 2, 8))},
    "tile2_j1_4": {"tiles": two_level(("j", 1, 4))},
    "tile2_i4_4_j4_16": {"tiles": two_level(("i", 4, 4), ("j", 4, 16))},
    "tile_k4_8": {"tiles": two_level(("k", 4, 8))},
    "unroll_i2": {"unroll": (("i", 2),)},
    "unroll_i3": {"unroll": (("i", 3),)},
    "unroll_j5": {"unroll": (("j", 5),)},
    "unroll_i3_j2": {"unroll": (("i", 3), ("j", 2))},
    "unroll_k3": {"unroll": (("k", 3),)},
    "regtile_i2": {"regtile": (("i", 2),)},
    "regtile_i3": {"regtile": (("i", 3),)},
    "regtile_j4": {"regtile": (("j", 4),)},
    "regtile_i2_j3": {"regtile": (("i", 2), ("j", 3))},
    "regtile_i3_k2": {"regtile": (("i", 3), ("k", 2))},
    "regtile_i2_unroll_i3": {"regtile": (("i", 2),), "unroll": (("i", 3),)},
    "scalar": {"scalar": 1},
    "scalar_unroll_i2_j3": {"scalar": 1, "unroll": (("i", 2), ("j", 3))},
    "vector": {"vector": 1, "unroll": (("j", 3),)},
    "everything": {
        "tiles": two_level(("i", 2, 4), ("j", 4, 8)),
        "regtile": (("i", 2), ("j", 2)),
        "unroll": (("i", 3), ("j", 2)),
        "scalar": 1,
        "vector": 1,
    },
    "copy_p": {"tiles": one_level(("j", 4)), "copies": (ArrayCopy("on", "p[j]", ("4",)),)},
    "copy_s_written": {
        "tiles": two_level(("j", 1, 8)),
        "copies": (ArrayCopy("on", "s[j]", ("8",)),),
        "regtile": (("j", 3),),
    },
}
OMP_VARIANTS: dict[str, dict] = {
    "omp": {"openmp": 1},
    "omp_tiled_regtile": {
        "openmp": 1,
        "tiles": one_level(("i", 4)),
        "regtile": (("i", 2), ("j", 2)),
    },
    "omp_unrolled": {"openmp": 1, "unroll": (("i", 3),), "vector": 1},
}

PRELUDE = """
#include <stdio.h>
#include <string.h>
#define N 13
#define M 11
#define min(a, b) (((a) < (b)) ? (a) : (b))
#define max(a, b) (((a) > (b)) ? (a) : (b))
static double A[16][16], B[16][16], C[16][16], X[16][16], q[16], r[16], s[16], p[16];
static void init(void) {
  int i, j;
  for (i = 0; i < 16; i++) {
    q[i] = i % 3; r[i] = (i % 4) + 1; s[i] = (i % 5) - 2; p[i] = (i % 2) + 1;
    for (j = 0; j < 16; j++) {
      A[i][j] = (i + 2 * j) % 5 - 1; B[i][j] = (3 * i + j) % 4; C[i][j] = (i * j) % 3 + 1;
      X[i][j] = (i + j) % 2;
    }
  }
}
static unsigned long long hash_bytes(unsigned long long h, const void *data, size_t n) {
  const unsigned char *b = data;
  size_t k;
  for (k = 0; k < n; k++) h = (h ^ b[k]) * 1099511628211ULL;
  return h;
}
static void report(const char *name) {
  unsigned long long h = 1469598103934665603ULL;
  h = hash_bytes(h, A, sizeof A); h = hash_bytes(h, B, sizeof B); h = hash_bytes(h, C, sizeof C);
  h = hash_bytes(h, X, sizeof X); h = hash_bytes(h, q, sizeof q); h = hash_bytes(h, r, sizeof r);
  h = hash_bytes(h, s, sizeof s); h = hash_bytes(h, p, sizeof p);
  printf("%s %llu\\n", name, h);
}
"""


def _variant_code(nest: str, options: dict) -> list[str]:
    block = Composite(nest, **options)
    gen = Generator({"on": True}, {"X": block})
    stmts = gen.apply(block)
    names = sorted({loop.var for loop in iter_loops(stmts)} | {"i", "j", "k"})
    return [f"int {', '.join(names)};", *to_lines(stmts)]


def _program() -> tuple[str, list[tuple[str, str]]]:
    functions, calls, cases = [], [], []
    ids = count()
    for nest_name, nest in NESTS.items():
        variants = {
            "baseline": {},
            **VARIANTS,
            **(OMP_VARIANTS if nest_name in SAFE_FOR_OMP else {}),
        }
        for variant, options in variants.items():
            if any(f"for {t[0]} " not in nest for t, _, _ in options.get("tiles", ())):
                continue  # tiling a loop that does not exist is an error (spec 1.0)
            if any(c.ref not in nest for c in options.get("copies", ())):
                continue
            fn = f"case_{next(ids)}"
            body = "\n".join("  " + line for line in _variant_code(nest, options))
            functions.append(
                f'static void {fn}(void) {{\n  init();\n  {{\n{body}\n  }}\n  report("{fn}");\n}}'
            )
            calls.append(f"  {fn}();")
            cases.append((nest_name, variant))
    main = "int main(void) {\n" + "\n".join(calls) + "\n  return 0;\n}\n"
    return PRELUDE + "\n".join(functions) + "\n" + main, cases


@pytest.fixture(scope="module")
def hashes(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    source, cases = _program()
    folder = tmp_path_factory.mktemp("transforms")
    (folder / "t.c").write_text(source)
    subprocess.run(
        ["gcc", "-O1", "-fopenmp", "-w", "-o", "t", "t.c"],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = subprocess.run(
        ["./t"], cwd=folder, check=True, capture_output=True, text=True, timeout=60
    ).stdout
    values = dict(line.split() for line in out.splitlines())
    return {case: values[f"case_{k}"] for k, case in enumerate(cases)}


@pytest.mark.parametrize("nest", list(NESTS))
def test_every_variant_reproduces_the_untransformed_output(hashes: dict, nest: str) -> None:
    reference = hashes[(nest, "baseline")]
    wrong = sorted(v for (n, v), h in hashes.items() if n == nest and h != reference)
    assert wrong == []
    assert sum(n == nest for n, _ in hashes) >= 15  # the variants that apply to this nest


def test_the_harness_detects_a_wrong_transformation(tmp_path) -> None:
    """Unrolling the recurrence's j loop with its statements swapped must change the hash."""
    swapped = NESTS["recurrence"].replace(
        "X[i][j] = X[i][j-1] + B[i][j]\n        B[i][j] = B[i][j] + X[i][j]",
        "B[i][j] = B[i][j] + X[i][j]\n        X[i][j] = X[i][j-1] + B[i][j]",
    )
    source = (
        PRELUDE
        + "\n".join(
            f"static void {name}(void) {{\n  init();\n  {{\n"
            + "\n".join("  " + line for line in _variant_code(nest, {"unroll": (("j", 2),)}))
            + f'\n  }}\n  report("{name}");\n}}'
            for name, nest in (("good", NESTS["recurrence"]), ("bad", swapped))
        )
        + "\nint main(void) { good(); bad(); return 0; }\n"
    )
    (tmp_path / "t.c").write_text(source)
    subprocess.run(["gcc", "-O1", "-w", "-o", "t", "t.c"], cwd=tmp_path, check=True, timeout=120)
    out = subprocess.run(["./t"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    good, bad = (line.split()[1] for line in out.splitlines())
    assert good != bad


# ------------------------------------------------------------------ structure (no compiler)
def _loops(text: str, options: dict) -> str:
    block = Composite(text, **options)
    return render(Generator({}, {"X": block}).apply(block))


def test_strip_mining_keeps_tile_loops_in_place() -> None:
    code = _loops(NESTS["perfect"], {"tiles": two_level(("i", 2, 8), ("j", 4, 4))})
    order = [
        line.split("(")[1].split(" =")[0]
        for line in code.splitlines()
        if line.strip().startswith("for")
    ]
    assert order == ["iii", "ii", "i", "jj", "j"]  # j's second level equals its first: skipped
    assert "min(N - 1, iii + 6)" in code and "min(M - 1, jj + 3)" in code


def test_unroll_and_jam_fuses_copies_into_the_inner_loop() -> None:
    stmts = unroll_jam(parse_nest(NESTS["perfect"]), {"i": 2})
    main = stmts[0].body[1]
    assert isinstance(main, For) and main.step == 2
    inner = main.body
    assert len(inner) == 1 and isinstance(inner[0], For) and len(inner[0].body) == 2
    assert "C[i + 1][j]" in render(inner)


def test_triangular_copies_are_concatenated_not_fused() -> None:
    code = _loops(NESTS["triangular"], {"unroll": (("i", 2),)})
    main = code.split("for (i = N - N % 2")[0]
    assert main.count("for (k = i + 1;") == 1 and main.count("for (k = i + 2;") == 1
    assert (
        main.index("C[i][j] = 2 * C[i][j]")
        < main.index("for (k = i + 1;")
        < main.index("C[i + 1][j] = 2 * C[i + 1][j]")
    )


def test_unrolled_copies_are_normalised_and_cleanup_is_not() -> None:
    code = _loops(
        "for j = 0..M-1:\n    x[j] = (y[j] + y[j+1] - 1.0 - z[j] + 3)/9.0", {"unroll": (("j", 2),)}
    )
    main, cleanup = code.split("for (j = M - M % 2")
    assert "0.111111111111 * (y[j] + y[j + 1] - z[j] + 2)" in main
    assert "0.111111111111 * (y[j + 1] + y[j + 2] - z[j + 1] + 2)" in main
    assert "(y[j] + y[j + 1] - 1.0 - z[j] + 3) / 9.0" in cleanup


def test_register_tiling_keeps_statements_around_the_jammed_loop() -> None:
    code = _loops(NESTS["imperfect"], {"regtile": (("i", 2),)})
    main = code.split("for (i = N - N % 2")[0]
    assert main.index("q[it] = 0;") < main.index("q[it + 1] = 0;") < main.index("for (j = 0;")
    assert main.index("q[it + 1] = 2 * q[it + 1];") > main.index("for (j = 0;")


def test_scalar_replacement_hoists_invariant_references() -> None:
    code = _loops(NESTS["imperfect"], {"scalar": 1})
    lines = [line.strip() for line in code.splitlines()]
    load = lines.index("scv_1 = s[j];") if "scv_1 = s[j];" in lines else None
    assert load is not None or any(line.endswith("= q[i];") for line in lines)
    store = [line for line in lines if line.startswith("q[i] = scv_")]
    assert len(store) == 1  # written q[i] stored once, after the j loop
    assert "p[j]" in code  # used once: left alone


def test_openmp_private_list_names_inner_indices() -> None:
    code = _loops(NESTS["perfect"], {"openmp": 1, "regtile": (("j", 2),)})
    pragma = next(line for line in code.splitlines() if "omp parallel for" in line)
    assert "jt" in pragma and "j" in pragma.split("private(")[1]


def _kernel_code(name: str, **values: object) -> str:
    from gpautotune.problems.spapt import get_kernel
    from gpautotune.problems.spapt._program import timed_code

    kernel = get_kernel(name)
    return "\n".join(timed_code(kernel, {**kernel.baseline, **values}))


def test_lu_unrolled_k_divides_each_row_just_before_updating_it() -> None:
    code = _kernel_code("lu", OMP=True, U1_K=4, U1_J=2)
    main = code.split("for (k = N - N % 4")[0]
    divisions = [main.index(f"A[{r}][j] = A[{r}][j] / ") for r in ("k", "k + 1", "k + 2", "k + 3")]
    updates = [m.start() for m in re.finditer(r"#pragma omp parallel for", main)]
    assert len(updates) == 4
    assert divisions[0] < updates[0] < divisions[1] < updates[1] < divisions[2] < updates[2]
    assert updates[2] < divisions[3] < updates[3]


def test_no_jamming_when_an_inner_unrolled_loop_bound_mentions_the_index() -> None:
    # trmm [C2]: k = i+1.. is unrolled by the same block, so i's copies are plainly
    # unrolled (spec §1.2): two whole j loops in the i main loop instead of one.
    main = _kernel_code("trmm", U2_I=2, U2_K=2).split("for (i = N - N % 2")[0]
    i_main = main[main.index("for (i = 0; i <= N - 2; i += 2)") :]
    assert i_main.count("for (j = 0; j <= N - 1; j++)") == 2
    jammed = _kernel_code("trmm", U2_I=2, U2_J=2).split("for (i = N - N % 2")[0]
    assert "B[i + 1][j] = B[i + 1][j]" in jammed.split("for (j = N - N % 2")[0]
