"""The baseline of a kernel: the untransformed code, measured once per machine and size.

The record (mean time, raw samples, checksum) gives each measurement its speedup
(baseline mean / mean) and its validation reference. Records are kept in a JSON file
keyed by everything that changes them: kernel, sizes, compiler, flags, repetitions,
thread setting and host name. The file lives in ``$GPAUTOTUNE_CACHE/spapt`` (default
``~/.cache/gpautotune/spapt``) unless a folder is given.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["BaselineRecord", "BaselineCache", "default_cache_dir"]


@dataclass(frozen=True)
class BaselineRecord:
    """One baseline measurement."""

    mean_s: float
    samples: tuple[float, ...]
    checksum: float
    threads: int | None
    compile_s: float
    measured_at: float


def default_cache_dir() -> Path:
    """``$GPAUTOTUNE_CACHE/spapt`` or ``~/.cache/gpautotune/spapt``."""
    root = os.environ.get("GPAUTOTUNE_CACHE")
    return (
        Path(root).expanduser() / "spapt"
        if root
        else Path.home() / ".cache" / "gpautotune" / "spapt"
    )


class BaselineCache:
    """A JSON file of baseline records (read-modify-write with an atomic replace)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(folder or default_cache_dir()) / "baselines.json"

    @staticmethod
    def key(fields: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The record key of ``fields`` (host name added)."""
        full = {**fields, "host": platform.node()}
        text = json.dumps(full, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:24], full

    def _load(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def get(self, fields: Mapping[str, Any]) -> BaselineRecord | None:
        key, _ = self.key(fields)
        entry = self._load().get(key)
        if entry is None:
            return None
        record = dict(entry["record"])
        record["samples"] = tuple(record["samples"])
        return BaselineRecord(**record)

    def put(self, fields: Mapping[str, Any], record: BaselineRecord) -> None:
        key, full = self.key(fields)
        data = self._load()
        data[key] = {"fields": full, "record": asdict(record)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.{time.time_ns()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)
