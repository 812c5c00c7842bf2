"""The field's exchange formats in: Kernel Tuner cache files and T4 results files.

A **Kernel Tuner cache** (``.json``, often ``.json.gz``) holds ``tune_params`` (the
levels of each parameter), ``tune_params_keys`` (their order), ``objective`` and
``cache``: one record per measured configuration, keyed by the comma-joined values,
holding the parameter values and the recorded fields (``time``, ``times``,
``GFLOP/s``, ...). A configuration that failed has an error marker instead of a number
(``InvalidConfig``, ``CompilationFailedConfig``, ``RuntimeFailedConfig``, or the
generic ``ErrorConfig``; any field may hold it, as Kernel Tuner's own ``read_cache``
reads it); caches of old Kernel Tuner versions recorded failures as a huge sentinel
time (``1e20``, ``sys.float_info.max``), read here as any value of magnitude >= 1e20 or
not finite. A cache left open by an interrupted run (ending in ``,``) is closed the way
Kernel Tuner closes it.

A **T4 results file** holds ``results``: one entry per configuration with
``configuration``, ``invalidity`` (``correct``, ``compile``, ``runtime``,
``constraints``, ``timeout``, ``correctness``), ``measurements`` (``name``, ``value``,
``unit``) and ``times.runtimes``. Any other ``invalidity`` is a failure too, read as
``runtime`` (the generic failure: nothing says the configuration was invalid) with the
word in its error text. Its free-form ``metadata``, where it holds what gpautotune's
export writes, gives each key's levels in order (``tune_params``) and the objective's
``direction`` (about ``metadata.objective``); without them the levels are the values
seen and the file states no direction.

Both are read into one :class:`TuningRecords`, whose failure kinds use the T4
``invalidity`` vocabulary.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError

__all__ = [
    "TuningRecords",
    "read_tuning_file",
    "read_json_document",
    "STATUS_INVALIDITY",
    "HIGHER_IS_BETTER",
]

#: Our failure statuses (``Status`` values) and T4's ``invalidity`` words, both ways.
STATUS_INVALIDITY = {
    "ok": "correct",
    "invalid": "constraints",
    "build_error": "compile",
    "run_error": "runtime",
    "wrong_result": "correctness",
    "timeout": "timeout",
}
#: Objectives whose direction Kernel Tuner knows (its ``objective_default_map``): True
#: where higher is better. A file's objective takes this direction unless one is given.
HIGHER_IS_BETTER = {
    **dict.fromkeys(("time", "energy", "cost", "loss"), False),
    **dict.fromkeys(
        ("GFLOP/s", "TFLOP/s", "GB/s", "TB/s", "GFLOPS/W", "TFLOPS/W", "GFLOP/J", "TFLOP/J"),
        True,
    ),
    "fitness": True,
}
#: Kernel Tuner's error markers and the invalidity each one means.
MARKERS = {
    "InvalidConfig": "constraints",
    "CompilationFailedConfig": "compile",
    "RuntimeFailedConfig": "runtime",
    "ErrorConfig": "runtime",
}
SENTINEL = 1e20
#: Seconds per unit of the time units (an objective or samples in one is a time).
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
#: T4's words for the unit of ``times.runtimes`` (``metadata.timeunit``), by unit.
TIME_WORDS = {
    "ns": "nanoseconds",
    "us": "microseconds",
    "ms": "milliseconds",
    "s": "seconds",
    "s/pixel": "seconds per pixel",
}
_UNIT_OF_WORD = {word: unit for unit, word in TIME_WORDS.items()} | {"miliseconds": "ms"}
_HINT = "give a Kernel Tuner cache (.json or .json.gz) or a T4 results file"


@dataclass(frozen=True)
class TuningRecords:
    """The rows of a Kernel Tuner cache or T4 file, with one objective read out.

    Attributes:
        source: the file read.
        format: ``"cache"`` or ``"t4"``.
        objective: the recorded field read as the objective.
        levels: tuned parameter (the file's order) -> its levels (``tune_params`` of a
            cache or of a T4 file's ``metadata``; else the values seen: numbers sorted,
            others in the order seen).
        columns: tuned parameter -> its value in each row.
        values: the objective of each row; NaN where the row failed.
        invalidity: each row's T4 invalidity (``"correct"`` for a measured row).
        errors: each row's error text (the marker), None for measured rows.
        samples: each row's recorded run times (may be empty).
        metadata: the file's description (device, kernel, problem size, ...).
        skipped: why rows were left out (a reason -> count and up to three examples).
        direction: ``"min"`` or ``"max"`` where the file states the objective's direction
            (a T4 file's ``metadata.direction``, about this objective), else None.
        units: recorded field -> the unit the file states for it (a T4 file's first
            non-empty ``unit`` of each measurement; empty for a cache).
        timeunit: the unit of ``samples`` the file states (a T4 file's
            ``metadata.timeunit``, its word read as ``ms``, ``s``...; ``""``: none).
    """

    source: str
    format: str
    objective: str
    levels: dict[str, tuple[Any, ...]]
    columns: dict[str, list[Any]]
    values: np.ndarray
    invalidity: list[str]
    errors: list[str | None]
    samples: list[tuple[float, ...]]
    metadata: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, tuple[int, list[dict[str, Any]]]] = field(default_factory=dict)
    direction: str | None = None
    units: dict[str, str] = field(default_factory=dict)
    timeunit: str = ""

    def __len__(self) -> int:
        return len(self.values)


def read_json_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A JSON object from a ``.json`` or gzip-compressed file (Kernel Tuner's open caches
    closed first).

    Raises:
        ConfigError: the file cannot be decompressed or parsed, or holds no JSON object.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc}); {_HINT}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        document = _closed_open_cache(text)
        if document is None:
            raise ConfigError(
                f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}; "
                f"a truncated file?); {_HINT}"
            ) from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: holds a JSON {type(document).__name__}, not an object; {_HINT}")
    return document


def _closed_open_cache(text: str) -> Any | None:
    """An interrupted Kernel Tuner run leaves its cache open, ending in ``,``."""
    stripped = text.rstrip()
    if not stripped.endswith(",") or '"cache"' not in stripped[:100_000]:
        return None
    try:
        return json.loads(stripped[:-1] + "}\n}")
    except json.JSONDecodeError:
        return None


def read_tuning_file(path: str | os.PathLike[str], objective: str | None = None) -> TuningRecords:
    """Read a Kernel Tuner cache or T4 results file (the format is recognised by its keys).

    Args:
        path: the file (``.json`` or ``.json.gz``).
        objective: the recorded field to read; default the file's own (a cache's
            ``objective``, a T4 entry's ``objectives[0]``), else ``time``.

    Raises:
        ConfigError: unreadable file, neither format, no records, or an objective that no
            record holds (the message lists the recorded ones).
    """
    document = read_json_document(path)
    if "results" in document:
        return _read_t4(str(path), document, objective)
    if "cache" not in document:
        raise ConfigError(
            f"{path}: no `cache` key, so not a Kernel Tuner cache (and no `results` key of a "
            f"T4 file); it has keys {sorted(document)[:20]}"
        )
    return _read_cache(str(path), document, objective)


# ------------------------------------------------------------------ shared rows logic
class _Rows:
    """Accumulates rows, skipping (and counting) those that cannot be used."""

    def __init__(self, keys: Sequence[str], levels: Mapping[str, Sequence[Any]] | None) -> None:
        self.keys = list(keys)
        self.allowed = None if levels is None else {k: set(map(_typed, levels[k])) for k in keys}
        self.columns: dict[str, list[Any]] = {k: [] for k in keys}
        self.values: list[float] = []
        self.invalidity: list[str] = []
        self.errors: list[str | None] = []
        self.samples: list[tuple[float, ...]] = []
        self.skipped: dict[str, tuple[int, list[dict[str, Any]]]] = {}
        self._seen: set[tuple[Any, ...]] = set()

    def skip(self, reason: str, config: dict[str, Any]) -> None:
        count, examples = self.skipped.get(reason, (0, []))
        self.skipped[reason] = (count + 1, examples + [config] if len(examples) < 3 else examples)

    def add(self, config: Mapping[str, Any], outcome: tuple[float, str, str | None], times: Any):
        missing = [k for k in self.keys if k not in config]
        row = {k: config.get(k) for k in self.keys}
        if missing:
            return self.skip(f"lacks parameter(s) {missing}", row)
        if self.allowed is not None:
            outside = [k for k in self.keys if _typed(row[k]) not in self.allowed[k]]
            if outside:
                return self.skip(f"values of {outside} are not levels of tune_params", row)
        key = tuple(row.values())
        if key in self._seen:
            return self.skip("repeats an earlier configuration (the first is kept)", row)
        self._seen.add(key)
        for k in self.keys:
            self.columns[k].append(row[k])
        value, invalidity, error = outcome
        self.values.append(value)
        self.invalidity.append(invalidity)
        self.errors.append(error)
        self.samples.append(_numbers(times))


def _typed(value: Any) -> tuple[bool, Any]:
    """A value as a level to match: ``true`` is not the level ``1`` (nor ``0`` the level
    ``false``), as Kernel Tuner keys them apart (``"32,True"``, ``"32,1"``)."""
    return isinstance(value, bool), value


def _numbers(times: Any) -> tuple[float, ...]:
    if not isinstance(times, list):
        return ()
    try:
        return tuple(map(float, times))
    except (TypeError, ValueError):
        return tuple(float(t) for t in times if _is_number(t))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def unrecorded(objective: str) -> str:
    """The error a row lacking ``objective`` (or holding null) is read with."""
    return f"no {objective!r} recorded"


def listed(objective: str) -> str:
    """The error a row holding a list in ``objective`` (``times``) is read with."""
    return f"{objective!r} holds a list, not a number"


def _outcome(value: Any, objective: str) -> tuple[float, str, str | None]:
    """(value, invalidity, error) of one recorded objective value."""
    if isinstance(value, str) and value in MARKERS:
        return math.nan, MARKERS[value], value
    if value is None:
        return math.nan, "runtime", unrecorded(objective)
    if isinstance(value, list):
        return math.nan, "runtime", listed(objective)
    if not _is_number(value):
        return math.nan, "runtime", f"{objective!r} is {value!r}, not a number"
    if not math.isfinite(value) or abs(value) >= SENTINEL:
        return math.nan, "runtime", f"{objective!r} is {value!r} (an old failure sentinel)"
    return float(value), "correct", None


def _unknown_objective(path: str, objective: str, recorded: Sequence[str]) -> ConfigError:
    return ConfigError(
        f"{path}: no record holds the objective {objective!r}; recorded fields: "
        f"{sorted(recorded)[:30]}; choose one with `objective:`"
    )


def _finish(
    path: str,
    kind: str,
    objective: str,
    levels: dict,
    rows: _Rows,
    meta: dict,
    direction: str | None = None,
) -> TuningRecords:
    if not rows.values:
        reasons = "; ".join(f"{n} {r}" for r, (n, _) in rows.skipped.items()) or "it is empty"
        raise ConfigError(f"{path}: no usable record ({reasons})")
    return TuningRecords(
        path,
        kind,
        objective,
        levels,
        rows.columns,
        np.asarray(rows.values, dtype=float),
        rows.invalidity,
        rows.errors,
        rows.samples,
        meta,
        rows.skipped,
        direction,
    )


# ---------------------------------------------------------------------- the formats
def _read_cache(path: str, document: dict[str, Any], objective: str | None) -> TuningRecords:
    cache, tune_params = document["cache"], document.get("tune_params")
    if not isinstance(cache, dict) or not isinstance(tune_params, dict) or not tune_params:
        raise ConfigError(
            f"{path}: a Kernel Tuner cache needs `cache` (an object of records) and "
            "`tune_params` (an object of parameter levels)"
        )
    keys = _tuned_keys(path, document.get("tune_params_keys") or list(tune_params), tune_params)
    levels = {k: tuple(tune_params[k]) for k in keys}
    objective = objective or document.get("objective") or "time"
    if not isinstance(objective, str):
        objective = "time"
    records = [r for r in cache.values() if isinstance(r, dict)]
    if records and not any(objective in r for r in records):
        recorded = {k for r in records[:100] for k in r if k not in levels}
        raise _unknown_objective(path, objective, recorded)
    rows = _Rows(keys, levels)
    for record in records:
        marker = next((v for v in record.values() if isinstance(v, str) and v in MARKERS), None)
        outcome = _outcome(marker or record.get(objective), objective)
        rows.add(record, outcome, record.get("times"))
    meta = {k: document[k] for k in ("device_name", "kernel_name", "problem_size") if k in document}
    return _finish(path, "cache", objective, levels, rows, meta)


def _tuned_keys(path: str, listed: Any, tune_params: dict[str, Any]) -> list[str]:
    """The tuned keys in ``tune_params_keys``' order. Kernel Tuner refuses a cache whose
    keys differ from those tuned; here a key left out would vanish from the space."""
    if not isinstance(listed, list) or not all(isinstance(k, str) for k in listed):
        raise ConfigError(f"{path}: `tune_params_keys` must be a list of the keys of `tune_params`")
    unlisted = [k for k in tune_params if k not in listed]
    unknown = [k for k in listed if k not in tune_params]
    if unlisted or unknown:
        what = [f"`tune_params` has {unlisted} that `tune_params_keys` lacks"] if unlisted else []
        what += [f"`tune_params_keys` has {unknown} that `tune_params` lacks"] if unknown else []
        raise ConfigError(
            f"{path}: {'; '.join(what)}; a cache lists every tuned key in both (Kernel Tuner "
            "refuses it too)"
        )
    return list(dict.fromkeys(listed))


def _read_t4(path: str, document: dict[str, Any], objective: str | None) -> TuningRecords:
    results = document["results"]
    if not isinstance(results, list):
        raise ConfigError(f"{path}: `results` must be a list of T4 result entries")
    entries = [
        e for e in results if isinstance(e, dict) and isinstance(e.get("configuration"), dict)
    ]
    if not entries:
        raise ConfigError(f"{path}: no T4 result entry with a `configuration`")
    own = (entries[0].get("objectives") or ["time"])[0]
    objective = objective or own
    recorded = {m.get("name") for e in entries for m in e.get("measurements") or []}
    if objective not in recorded:
        raise _unknown_objective(path, objective, [str(r) for r in recorded if r is not None])
    keys = list(entries[0]["configuration"])
    rows = _Rows(keys, None)
    for entry in entries:
        found = [
            m.get("value") for m in entry.get("measurements") or [] if m.get("name") == objective
        ]
        outcome = _outcome(found[0] if found else None, objective)
        invalidity = entry.get("invalidity", "correct")
        if invalidity != "correct":
            marker = found[0] if found and isinstance(found[0], str) else None
            error = marker or f"T4 invalidity {invalidity!r}"
            if invalidity not in STATUS_INVALIDITY.values():  # a word T4 does not define
                invalidity = "runtime"
            outcome = (math.nan, invalidity, error)
        times = entry.get("times") if isinstance(entry.get("times"), dict) else {}
        rows.add(entry["configuration"], outcome, times.get("runtimes"))
    meta = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    levels = _t4_levels(path, keys, rows.columns, meta.get("tune_params"))
    direction = _t4_direction(path, meta, objective, own)
    records = _finish(path, "t4", objective, levels, rows, dict(meta), direction)
    return replace(records, **_t4_units(entries, meta))


def _t4_units(entries: list[dict[str, Any]], meta: Mapping[str, Any]) -> dict[str, Any]:
    """What a T4 file states of its units: ``units``, each measurement's first non-empty
    ``unit``, and ``timeunit``, ``metadata.timeunit`` (a word such as ``milliseconds``,
    read as ``ms``; ``""`` where the file gives none). Kernel Tuner's own writer gives
    ``ms`` to its fields named ``time...`` and no ``timeunit``."""
    units: dict[str, str] = {}
    for entry in entries:
        for m in entry.get("measurements") or []:
            name, unit = (m.get("name"), m.get("unit")) if isinstance(m, dict) else (None, None)
            if isinstance(name, str) and isinstance(unit, str) and unit.strip():
                units.setdefault(name, unit.strip())
    word = meta.get("timeunit") if isinstance(meta.get("timeunit"), str) else ""
    timeunit = _UNIT_OF_WORD.get(word.strip().lower(), word.strip())
    return {"units": units, "timeunit": timeunit}


def _t4_levels(
    path: str, keys: list[str], columns: Mapping[str, list[Any]], listed: Any
) -> dict[str, tuple[Any, ...]]:
    """Each key's levels: those ``metadata.tune_params`` lists that configurations hold,
    in its order (gpautotune's export writes the levels in the order of the space it
    tuned), else the values seen; a listed level no row holds is left out, as a file
    read before metadata was read left it out (the space of a run stored then is kept).

    Raises:
        ConfigError: ``metadata.tune_params`` is not a list of levels per configuration
            key, or lacks a value a configuration holds.
    """
    if listed is None:
        return {k: _seen_levels(columns[k]) for k in keys}
    where = f"{path}: metadata.tune_params"
    scalar = (str, int, float, bool, type(None))
    if not isinstance(listed, dict) or not all(
        isinstance(v, list) and all(isinstance(x, scalar) for x in v) for v in listed.values()
    ):
        raise ConfigError(
            f"{where} must map each configuration key to the list of its levels (numbers, "
            "text, true/false); correct it, or remove it to take the levels from the "
            "configurations"
        )
    if set(listed) != set(keys):
        raise ConfigError(
            f"{where} lists the keys {sorted(listed)}, but the configurations hold {keys}; "
            "correct it, or remove it to take the levels from the configurations"
        )
    for key in keys:
        allowed = set(map(_typed, listed[key]))
        outside = [v for t, v in {_typed(v): v for v in columns[key]}.items() if t not in allowed]
        if outside:
            raise ConfigError(
                f"{where}[{key!r}] lists {listed[key][:10]}, which lacks {outside[:3]} that "
                "configurations hold; correct it, or remove it to take the levels from the "
                "configurations"
            )
    seen = {k: set(map(_typed, columns[k])) for k in keys}  # a level no row holds is none
    return {k: tuple(v for v in listed[k] if _typed(v) in seen[k]) for k in keys}


def _t4_direction(path: str, meta: Mapping[str, Any], objective: str, own: str) -> str | None:
    """``metadata.direction`` where it is about ``objective`` (``metadata.objective``,
    else the file's own objective ``own``), else None.

    Raises:
        ConfigError: a direction other than ``min`` or ``max``.
    """
    direction = meta.get("direction")
    if direction is None or meta.get("objective", own) != objective:
        return None
    if direction not in ("min", "max"):
        raise ConfigError(
            f"{path}: metadata.direction is {direction!r}, not 'min' or 'max'; correct it, "
            "or give `direction:`"
        )
    return str(direction)


def _seen_levels(column: list[Any]) -> tuple[Any, ...]:
    """A T4 parameter's levels: numbers sorted (an ordinal's), other values in the order
    the file first gives them (a categorical's, as its tuning script listed them)."""
    seen = tuple(dict.fromkeys(column))
    return tuple(sorted(seen)) if all(_is_number(v) for v in seen) else seen
