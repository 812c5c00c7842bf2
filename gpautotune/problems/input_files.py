"""Problem options that name input files, and where a YAML file's relative paths lie.

A problem factory marks such an option in its signature, where the option is declared::

    def kt_cache_problem(path: Annotated[str, InputFile(searched=True)], ...): ...
    def c_kernel(arguments: Annotated[list[dict[str, Any]], InputFile("*.file")], ...): ...

A relative path written in a YAML file is looked for first in the working directory
(as it always was: the repository's files say ``source: configs/kernels/matmul.cl`` and
are run from its root), then in the YAML file's folder (as compose-style files are
read). :func:`resolve_input_files` rewrites only a path found in the second place, to
that file's absolute path, so that a section that worked before is passed on unchanged
(the same run key) and the path a worker receives is the one found. A name found in
neither place is refused there, naming both (unless the problem searches the data
folders for it too: ``kt-cache``'s ``path``). Python calls (no YAML file) never come
here: their paths are relative to the working directory only.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, get_origin

from gpautotune.exceptions import DataNotFoundError

__all__ = ["InputFile", "find_input", "input_files", "is_file", "locate", "resolve_input_files"]


@dataclass(frozen=True)
class InputFile:
    """``Annotated`` marker: the option, or the parts ``within`` its value, name input files.

    Attributes:
        within: where the file names are inside the option's value, dotted, ``*`` for
            every item of a list or mapping (``"*.file"``: each argument's ``file``);
            empty for the value itself. Parts absent or not text are left alone.
        searched: the problem also searches the data folders
            (:func:`~gpautotune.problems.find_data`) for the name, as given, and says
            where it looked when none has it.
        code: the value may be code instead of a path (a kernel's source): text with a
            line break, or naming no file and holding a brace, as ``read_source`` says.
        section: the value is a problem section of its own (a wrapped problem), whose
            problem marks its input files.
    """

    within: str = ""
    searched: bool = False
    code: bool = False
    section: bool = False


def input_files(factory: Callable[..., Any]) -> dict[str, InputFile]:
    """The options of ``factory`` (a function or class) marked as input files, by name."""
    func = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable hints: nothing declared
        return {}
    return {
        name: mark
        for name, hint in hints.items()
        if get_origin(hint) is Annotated
        for mark in hint.__metadata__
        if isinstance(mark, InputFile)
    }


def is_file(path: str | Path) -> bool:
    """Whether ``path`` names a file (False for a name the system refuses, too long say)."""
    try:
        return Path(path).is_file()
    except OSError:
        return False


def locate(path: str, folder: Path) -> str | None:
    """Where a path written in a file of ``folder`` lies: ``path`` itself when it names a
    file as given (from the working directory, or absolute), else the file of that name
    in ``folder`` (its absolute path), else None."""
    given = Path(path).expanduser()
    if is_file(given):
        return path
    beside = folder / given
    if given.is_absolute() or not is_file(beside):
        return None
    return str(beside.resolve())


def _places(file: Path) -> str:
    """The places a relative path of YAML ``file`` is looked for, in words."""
    cwd, folder = Path.cwd().resolve(), file.parent.resolve()
    if folder == cwd:
        return f"in the working directory ({cwd}), the folder of {file.name}"
    return f"in the working directory ({cwd}) nor in the folder of {file.name} ({folder})"


def find_input(path: str, file: Path, key: str, mark: InputFile = InputFile()) -> str:
    """The input file a path written in YAML ``file`` names (see :func:`locate`). Kept as
    written when found in neither place: code (``mark.code``), an absolute path (which
    the problem refuses as before), and a name the problem also searches the data folders
    for (``mark.searched``): a shipped file may name a table made later, and whether the
    data folders hold it is the problem's to say, when it is built.

    Raises:
        DataNotFoundError: no such file, ``key`` first, naming the places looked in.
    """
    if mark.code and "\n" in path:
        return path
    found = locate(path, file.parent)
    if found is not None:
        return found
    if mark.searched or (mark.code and "{" in path) or Path(path).expanduser().is_absolute():
        return path  # the data folders' (perhaps filled later), code, or the problem's to refuse
    code = ", or the kernel's code itself" if mark.code else ""
    raise DataNotFoundError(
        f"{key}: no file {path!r} {_places(file)}; give a path relative to the working "
        f"directory or to the YAML file{code}"
    )


def _walk(value: Any, parts: list[str], key: str, visit: Callable[[str, str], str]) -> Any:
    """``value`` with ``visit(text, key)`` applied to the texts at ``parts`` within it."""
    if not parts:
        return visit(value, key) if isinstance(value, str) else value
    head, rest = parts[0], parts[1:]
    if head == "*" and isinstance(value, list):
        return [_walk(v, rest, f"{key}.{i}", visit) for i, v in enumerate(value)]
    if head == "*" and isinstance(value, Mapping):
        return {k: _walk(v, rest, f"{key}.{k}", visit) for k, v in value.items()}
    if isinstance(value, Mapping) and head in value:
        return {**value, head: _walk(value[head], rest, f"{key}.{head}", visit)}
    return value


def resolve_input_files(
    factory: Callable[..., Any],
    options: Mapping[str, Any],
    file: Path,
    where: str = "",
    section: Callable[[Mapping[str, Any], str], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``options`` of ``factory`` (as written in YAML ``file``) with each input file it
    marks found by :func:`find_input`; messages name keys as ``<where><option>...``. A
    wrapped problem's section goes to ``section(options, where)``, which finds its
    problem's own.

    Raises:
        DataNotFoundError: an input file found in neither place.
    """
    out = dict(options)
    for name, mark in input_files(factory).items():
        if mark.section:
            if section is not None and isinstance(out.get(name), Mapping):
                out[name] = section(out[name], f"{where}{name}.")
        elif name in out:
            parts = mark.within.split(".") if mark.within else []
            visit = functools.partial(_find_marked, file=file, mark=mark)
            out[name] = _walk(out[name], parts, f"{where}{name}", visit)
    return out


def _find_marked(path: str, key: str, *, file: Path, mark: InputFile) -> str:
    return find_input(path, file, key, mark)
