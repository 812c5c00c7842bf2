"""A compiler's log as a ``build_error`` message: its first error line first.

Compilers open their log with context (gcc: ``scale.c: In function 'scale':``), and
the command line shows a failure's first line; the line that says what is wrong
(``scale.c:13:38: error: 'tile' undeclared ...; did you mean 'tiel'?``) comes later.
:func:`build_error_text` puts that line first and keeps the whole log below it.
"""

from __future__ import annotations

import re

__all__ = ["build_error_text", "first_error_line"]

#: A line that states an error: gcc's and clang's ``error:`` and ``fatal error:`` (also
#: OpenCL compilers, which are mostly clang), and the linker's ``undefined reference``,
#: which comes before its ``collect2: error: ld returned 1 exit status``.
_ERROR_LINE = re.compile(r"\berror\b\s*:|undefined reference to", re.IGNORECASE)


def first_error_line(log: str) -> str | None:
    """The log's first line that states an error, stripped; None when none does."""
    return next((line.strip() for line in log.splitlines() if _ERROR_LINE.search(line)), None)


def build_error_text(log: str) -> str:
    """``log`` led by its first error line (the log as it is when that line is already
    its first, or when no line states an error)."""
    lead = first_error_line(log)
    first = next((line.strip() for line in log.splitlines() if line.strip()), None)
    if lead is None or lead == first:
        return log
    return f"{lead}\n{log}"
