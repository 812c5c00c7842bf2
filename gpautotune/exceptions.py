"""The one exception root of gpautotune and its user-facing subclasses.

Errors a user can cause (a bad YAML key, an unknown parameter, a predicate that admits
nothing, a missing data file) raise a subclass of :class:`GPAutotuneError` whose message
says what to fix. Each subclass also derives from the matching built-in exception so that
callers who catch ``ValueError`` or ``FileNotFoundError`` keep working.
"""

from __future__ import annotations

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
