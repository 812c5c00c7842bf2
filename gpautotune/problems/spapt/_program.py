"""The generated test program: one C file per configuration (spec §2.1).

Layout: headers, one macro per problem size, the ``min``/``max`` macros, the kernel's
data declarations, its initialisation and checksum functions, and ``main``, which
initialises the data once, runs the timed code ``ORIO_REPS`` times in the same process,
prints one ``time <seconds>`` line per repetition and, after the first repetition only,
prints ``checksum <value>`` and validates it.

Validation compares the checksum with a reference passed on the command line
(``prog <reference> <rtol> <atol>``): valid iff ``|x - ref| <= rtol |ref|`` or
``|x - ref| < atol`` (NaN never valid). A failure prints :data:`VALIDATION_MARK` to
stderr and exits with status 1, as Orio's harness does. Without arguments (the baseline
run that *defines* the reference) nothing is checked. The clock is
:func:`spapt_now`, compiled separately at ``-O0`` (:data:`TIMER_SOURCE`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gpautotune.problems.spapt._composite import Generator, parsed_nest
from gpautotune.problems.spapt._kernel import Kernel
from gpautotune.problems.spapt._nest import loop_vars, to_lines

__all__ = ["generate", "VALIDATION_MARK", "TIMER_SOURCE", "timed_code", "data_code"]

VALIDATION_MARK = "SPAPT-VALIDATION-FAILED"

TIMER_SOURCE = """\
#include <time.h>
double spapt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}
"""

_HEADERS = """\
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <limits.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
"""

_MAIN = """\
double spapt_now(void);

int main(int argc, char **argv) {
  int spapt_check = argc > 1;
  double spapt_reference = spapt_check ? strtod(argv[1], NULL) : 0.0;
  double spapt_rtol = argc > 2 ? strtod(argv[2], NULL) : 0.0;
  double spapt_atol = argc > 3 ? strtod(argv[3], NULL) : 0.0;
  int spapt_rep;
#ifdef _OPENMP
  printf("threads %d\\n", omp_get_max_threads());
#else
  printf("threads 1\\n");
#endif
  spapt_init();
  for (spapt_rep = 0; spapt_rep < ORIO_REPS; spapt_rep++) {
    double spapt_start = spapt_now();
    {
@TIMED@
    }
    double spapt_end = spapt_now();
    printf("time %.9f\\n", spapt_end - spapt_start);
    fflush(stdout);
    if (spapt_rep == 0) {
      double spapt_value = spapt_checksum();
      double spapt_diff = fabs(spapt_value - spapt_reference);
      printf("checksum %.17g\\n", spapt_value);
      fflush(stdout);
      if (spapt_check
          && !(spapt_diff <= spapt_rtol * fabs(spapt_reference) || spapt_diff < spapt_atol)) {
        fprintf(stderr, "@MARK@: checksum %.17g, reference %.17g\\n", spapt_value, spapt_reference);
        return 1;
      }
    }
  }
  return 0;
}
"""


def timed_code(
    kernel: Kernel,
    config: Mapping[str, Any],
    *,
    orio_private: bool = False,
    gcc_ivdep: bool = False,
) -> list[str]:
    """Lines of the timed code: index declarations, prologue, transformed loop nests."""
    gen = Generator(config, kernel.blocks, orio_private=orio_private, gcc_ivdep=gcc_ivdep)
    stmts = gen.expand(parsed_nest(kernel.timed))
    names = loop_vars(stmts)
    if orio_private:
        for block in kernel.blocks.values():
            extra = [n.strip() for n in block.private.split(",") if n.strip()]
            names += [n for n in extra if n not in names and not n.endswith("_copy")]
    lines = [f"int {', '.join(names)};"] if names else []
    lines += kernel.prologue.splitlines()
    return lines + to_lines(stmts)


def data_code(kernel: Kernel) -> list[str]:
    """The ``min``/``max`` macros, the kernel's data, ``spapt_init`` and ``spapt_checksum``
    (C at file scope, after the size macros)."""
    return [
        "#define min(a, b) (((a) < (b)) ? (a) : (b))\n#define max(a, b) (((a) > (b)) ? (a) : (b))",
        kernel.declarations.strip(),
        "static void spapt_init(void) {\n" + kernel.initialisation.strip("\n") + "\n}",
        "static double spapt_checksum(void) {\n  double expected = 0.0;\n"
        + kernel.checksum.strip("\n")
        + "\n  return expected;\n}",
    ]


def generate(
    kernel: Kernel,
    config: Mapping[str, Any],
    sizes: Mapping[str, int],
    *,
    repetitions: int | None = None,
    orio_private: bool = False,
    gcc_ivdep: bool = False,
) -> str:
    """The complete C program of one configuration.

    Raises:
        TransformError: the configuration cannot be generated (a build error).
    """
    timed = timed_code(kernel, config, orio_private=orio_private, gcc_ivdep=gcc_ivdep)
    reps = kernel.repetitions if repetitions is None else repetitions
    parts = [
        f"/* gpautotune SPAPT kernel {kernel.name}: {json.dumps(dict(config), sort_keys=True)} */",
        _HEADERS,
        "\n".join(f"#define {k} {v}" for k, v in sizes.items()),
        f"#ifndef ORIO_REPS\n#define ORIO_REPS {reps}\n#endif",
        *data_code(kernel),
        _MAIN.replace("@TIMED@", "\n".join("      " + line for line in timed)).replace(
            "@MARK@", VALIDATION_MARK
        ),
    ]
    return "\n\n".join(parts) + "\n"
