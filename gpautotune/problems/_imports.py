"""User code that files name (``package.module:function``), imported only on request."""

from __future__ import annotations

import importlib
from typing import Any

from gpautotune.exceptions import ConfigError

__all__ = ["OPT_IN", "import_object"]

#: The keyword through which factories receive the user's opt-in to imports; never a
#: key a file may set.
OPT_IN = "allow_imports"


def import_object(name: str, *, allowed: bool, key: str = "a key") -> Any:
    """The object ``module:attribute`` names, imported only when the user opted in.

    Args:
        name: ``package.module:attribute`` (the attribute may be dotted).
        allowed: the user's explicit opt-in (``--allow-imports``, ``allow_imports=True``).
        key: where the name was written, for the messages (``problem.answer``).

    Raises:
        ConfigError: no opt-in (the message names the key and how to opt in), a name that
            is not ``module:attribute``, or one that cannot be imported.
    """
    if not allowed:
        raise ConfigError(
            f"{key} names Python code ({name!r}), which is imported only on request: "
            "run with --allow-imports (Python: allow_imports=True)"
        )
    module, sep, attr = str(name).partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"{key}: {name!r} is not 'package.module:function'")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{key}: cannot import {name!r}: {exc}") from None
    return obj
