"""The one exception root of gpautotune and its user-facing subclasses.

Errors a user can cause (a bad YAML key, an unknown parameter, a predicate that admits
nothing, a missing data file) raise a subclass of :class:`GPAutotuneError` whose message
says what to fix. Each subclass also derives from the matching built-in exception so that
callers who catch ``ValueError`` or ``FileNotFoundError`` keep working.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable
from typing import Any, Protocol

__all__ = [
    "GPAutotuneError",
    "ConfigError",
    "SpaceError",
    "PredicateError",
    "DataNotFoundError",
    "StorageError",
    "BudgetError",
    "DeviceError",
    "MissingExtraError",
    "PeerError",
    "EvaluationError",
    "format_validation_error",
    "unknown_options",
]


class GPAutotuneError(Exception):
    """Root of every error gpautotune raises on purpose."""


class ConfigError(GPAutotuneError, ValueError):
    """A configuration (YAML file, keyword argument) is wrong; the message names the key."""


class SpaceError(GPAutotuneError, ValueError):
    """A search space, parameter or configuration is malformed."""


class PredicateError(SpaceError):
    """A constraint expression could not be parsed or uses something not allowed."""


class DataNotFoundError(GPAutotuneError, FileNotFoundError):
    """A data file the user pointed to (or the default one) does not exist."""


class StorageError(GPAutotuneError, RuntimeError):
    """The trial journal cannot be opened or does not match the run being resumed."""


class BudgetError(GPAutotuneError, ValueError):
    """A budget is not a positive integer or cannot be met."""


class DeviceError(GPAutotuneError, RuntimeError):
    """No usable compute device (no OpenCL runtime, no matching platform or device)."""


class MissingExtraError(GPAutotuneError, ImportError):
    """An optional package is not installed; the message names the extra to install."""


class PeerError(GPAutotuneError, RuntimeError):
    """A peer tuner (Optuna, Kernel Tuner, SMAC3) failed inside its own code."""


class EvaluationError(GPAutotuneError, RuntimeError):
    """Evaluations fail in a way that points at the objective's code (the first ones all
    raise the same exception), not at the configurations tried."""


class _HasErrors(Protocol):
    """A pydantic ``ValidationError`` (not imported here: pydantic is not needed to raise)."""

    def errors(self) -> list[dict[str, Any]]: ...


#: Values in messages, bounded (a YAML file of nested aliases stands for 10^9 strings).
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 2, 120, 120
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6


#: The error types of validators' own messages (``raise ValueError(...)``), which may
#: quote the value; pydantic's built-in messages never do.
_OWN_ERRORS = frozenset({"value_error", "assertion_error"})


def format_validation_error(exc: _HasErrors, where: str) -> str:
    """A pydantic ``ValidationError`` as one line: ``where.key.subkey: message (got value)``
    per problem, joined by ``; `` (checks of several keys at once give the message only).
    The value is left out only where the message is one of ours that shows it already:
    pydantic's own never do (``greater than 0`` names the bound, not the value 0)."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in (where, *err["loc"]) if p != "")
        msg = str(err["msg"]).removeprefix("Value error, ")
        shown = _SHORT.repr(err["input"]) if "input" in err else ""
        ours = err.get("type") in _OWN_ERRORS
        got = (
            f" (got {shown})"
            if err["loc"]
            and shown
            and not isinstance(err["input"], dict)
            and not (ours and shown in msg)
            else ""
        )
        lines.append(f"{loc}: {msg}{got}" if loc else msg)
    return "; ".join(lines)


def unknown_options(where: str, unknown: Iterable[str], allowed: Iterable[str]) -> ConfigError:
    """The error for options not among ``allowed``: ``where: unknown option(s) [...]``,
    the likeliest meant name of each misspelt one (``did you mean``), then every allowed
    name."""
    unknown, allowed = sorted(unknown), sorted(allowed)
    meant = {u: difflib.get_close_matches(u, allowed, n=1) for u in unknown}
    hints = [f"{u!r} -> {m[0]!r}" for u, m in meant.items() if m]
    hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
    return ConfigError(f"{where}: unknown option(s) {unknown}{hint}; allowed: {allowed}")
