"""Set-up mistakes a kernel's source shows before anything is built.

Tuning parameters that nothing uses: each ``tune_params`` name becomes a ``#define``; a
name that occurs nowhere in the kernel source (as a whole word) and in none of the
problem's expressions (the launch geometry, ``defines``, ``metrics``, ``local:`` buffer
sizes) changes nothing, most often because it is misspelt (``tiel`` for ``tile``): then
every configuration fails to build, or all of them build the same kernel. A parameter may
be unused on purpose (a switch for later), so this is a warning, not an error.

The function to call: ``kernel:`` names a function that the source must write (comments
aside); a misspelt name otherwise fails every build alike. The source is read as text
(the parameters are ``#define`` lines of each configuration, so nothing is compiled
yet): a name that a macro may paste together or other code may define (an included
file, the compiler options) gets a warning instead; a name written somewhere is left to
the build to judge.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpautotune.exceptions import ConfigError
from gpautotune.problems.kernel._geometry import Geometry
from gpautotune.problems.kernel._spec import KernelSpec

__all__ = ["check_kernel_name", "defined_functions", "unused_parameters", "warn_unused_parameters"]

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _expressions(spec: KernelSpec, geometry: Geometry | None) -> list[str]:
    """The texts outside the source that may name a parameter."""
    texts = [str(v) for v in spec.defines.values()]
    texts += [str(v) for v in spec.objective.metrics.values()]
    texts += [str(a.spec.local) for a in spec.arguments if a.spec is not None and a.is_local]
    if geometry is not None:
        texts += [*geometry.problem_size, *(t for t in geometry.grid_div if t is not None)]
        texts += geometry.block_size_names[: len(geometry.problem_size)]
    return texts


def _words(texts: Iterable[str]) -> set[str]:
    return {word for text in texts for word in _IDENTIFIER.findall(text)}


def unused_parameters(spec: KernelSpec, geometry: Geometry | None = None) -> list[str]:
    """The parameters of ``spec`` that neither its source nor its expressions name (in
    ``tune_params`` order); ``geometry``: an OpenCL kernel's work sizes."""
    used = _words([spec.source, *_expressions(spec, geometry)])
    return [name for name in spec.space.names if name not in used]


def warn_unused_parameters(spec: KernelSpec, geometry: Geometry | None = None) -> None:
    """Warn once per unused parameter (:func:`unused_parameters`), naming the source's
    identifier closest to it (``did you mean 'tile'?``) where one is close."""
    unused = unused_parameters(spec, geometry)
    if not unused:
        return
    where = Path(spec.source_path).name if spec.source_path else "the kernel source"
    candidates = sorted(_words([spec.source]) - set(spec.space.names))
    for name in unused:
        close = difflib.get_close_matches(name, candidates, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        warnings.warn(
            f"tune_params {name!r} occurs nowhere in {where}{hint}, nor in the problem's "
            "expressions: its values change nothing in the kernel; fix its name, or "
            "leave it out",
            stacklevel=3,
        )


#: Comments, dropped; string and character literals are matched whole so that ``"//"``
#: or ``'"'`` starts none.
_COMMENT_OR_LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL
)
#: A name, its parameter list and a body: a function definition (or a macro call
#: ending in one), for the list of names the message offers.
_DEFINITION = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*\{")
_KERNEL_QUALIFIER = re.compile(r"\b(?:__)?kernel\b")
_STATEMENTS = frozenset({"if", "for", "while", "switch", "__attribute__"})
#: An #include line and its first character: ``"`` (a file of the user's) or ``<``.
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*(\S)", re.MULTILINE)
#: Compiler options that bring in code besides the source, and those whose value is the
#: next word (``-D NAME=1``: no file).
_CODE_OPTIONS = ("-include", "-imacros", "-l")
_VALUE_OPTIONS = frozenset({"-D", "-U", "-I", "-x", "-o", "-isystem", "-iquote", "-idirafter"})


def strip_comments(source: str) -> str:
    """``source`` without its ``//`` and ``/* */`` comments (literals kept)."""
    return _COMMENT_OR_LITERAL.sub(lambda m: " " if m.group()[0] == "/" else m.group(), source)


def defined_functions(source: str, *, opencl: bool) -> list[str]:
    """The functions ``source`` (comments left out) appears to define, in order; for
    OpenCL those marked ``__kernel`` (all of them where none is marked)."""
    text = strip_comments(source)
    found = []
    for match in _DEFINITION.finditer(text):
        if match.group(1) in _STATEMENTS:
            continue
        head = text[text.rfind(";", 0, match.start()) + 1 : match.start()]
        found.append((match.group(1), bool(_KERNEL_QUALIFIER.search(head.rsplit("}", 1)[-1]))))
    kernels = [n for n, marked in found if marked] if opencl else []
    return list(dict.fromkeys(kernels or [n for n, _ in found]))


def _why_unsure(text: str, options: Sequence[str]) -> str | None:
    """What could define a name the source (``text``, comments left out) never writes."""
    if "##" in text:
        return "its macros paste names together (##)"
    includes = set(_INCLUDE.findall(text))  # a system header defines no user's function,
    if includes - {"<"} or (includes and any(o.startswith("-I") for o in options)):  # -I aside
        return "an included file may define it"
    after = zip(["", *options], options, strict=False)
    if any(
        o.startswith(_CODE_OPTIONS) or not o.startswith("-") and p not in _VALUE_OPTIONS
        for p, o in after
    ):
        return "the compiler options bring in other code"
    return None


def _where(spec: KernelSpec) -> str:
    """The source file, relative to the working directory where it lies below it."""
    if not spec.source_path:
        return "the kernel source"
    path = Path(spec.source_path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def check_kernel_name(spec: KernelSpec, *, opencl: bool, options: Sequence[str] = ()) -> None:
    """Check that ``spec.kernel`` is a name the source writes (comments aside) or the
    compiler ``options`` give; the build itself tells whether it is the right function.

    Raises:
        ConfigError: the name occurs nowhere and nothing could make it; the message lists
            the functions defined there and the closest one (``did you mean 'matmul'?``).
            Where a macro (``##``), an included file or the options could make it, a
            warning says so instead.
    """
    text = strip_comments(spec.source)
    if spec.kernel in _words([text, *options, *map(str, spec.defines.values())]):
        return
    names = defined_functions(spec.source, opencl=opencl)
    close = difflib.get_close_matches(spec.kernel, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    listing = f"functions there: {', '.join(names) or 'none found'}{hint}"
    unsure = _why_unsure(text, options)
    if unsure is None:
        raise ConfigError(f"kernel: no function {spec.kernel!r} in {_where(spec)}; {listing}")
    warnings.warn(
        f"kernel: {spec.kernel!r} occurs nowhere in {_where(spec)} ({unsure}); {listing}. "
        "If its builds fail, check the name",
        stacklevel=4,  # the caller of opencl_kernel or c_kernel
    )
