"""What the journal stores about runs: their identity, their records, the problem catalog."""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import numpy as np

from gpautotune.space import ROW_SET_LABEL
from gpautotune.storage._objective import RunObjective

__all__ = [
    "LOCATION_SETTINGS",
    "CatalogEntry",
    "RunRecord",
    "RunSpec",
    "RunningTrial",
    "dumps",
    "package_versions",
    "placeless_key",
]

_PACKAGES = ("gpautotune", "numpy", "scipy", "torch", "gpytorch", "botorch", "pandas", "pyopencl")


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages that shape results."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def dumps(value: Any) -> str:
    """The JSON text the journal stores (keys sorted; numpy values as Python ones).

    Dicts whose keys JSON cannot sort (``{0: 1.5, "total": 3.0}``) or hold (a tuple) are
    stored with every key as text, sorted as text (see ``_text_keys``)."""
    try:
        return json.dumps(value, default=_json_default, sort_keys=True)
    except TypeError:
        return json.dumps(_text_keys(value), default=_json_default, sort_keys=True)


def _text_keys(value: Any) -> Any:
    """``value`` with the keys of its dicts as text (as JSON writes them); a key whose
    text another key already has gets its type's name added, so no entry is lost."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, Mapping):
        out: dict[str, Any] = {k: _text_keys(v) for k, v in value.items() if isinstance(k, str)}
        for k, v in value.items():
            if not isinstance(k, str):
                text = _key_text(k)
                out[text if text not in out else f"{text} ({type(k).__name__})"] = _text_keys(v)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_text_keys(v) for v in value]
    return value


def _key_text(key: Any) -> str:
    """The text JSON gives a dict key (``0`` -> ``"0"``, ``None`` -> ``"null"``)."""
    if isinstance(key, np.generic):
        key = key.item()
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    return str(key)


def _rows(text: str) -> str:
    """A constraint's text, a replayed file's row set named by its size alone (the data
    digest, not the file's name, says which rows)."""
    found = ROW_SET_LABEL.match(text)
    return f"row of the replayed file {found.group(1) or ''}".rstrip() if found else text


def space_changes(stored: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between a run's stored space description and ``now``'s (both as
    ``Space.describe()`` gives them): parameters added, removed or changed, constraints
    added or removed, derived quantities and model inputs changed. Fields that only one
    of the two holds (a journal written by an older version) are not compared."""
    stored, now = json.loads(dumps(stored)), json.loads(dumps(now))
    changes: list[str] = []
    before = {p["name"]: p for p in stored.get("parameters", [])}
    after = {p["name"]: p for p in now.get("parameters", [])}
    changes += [f"parameter {n!r} added" for n in after if n not in before]
    changes += [f"parameter {n!r} removed" for n in before if n not in after]
    changes += [
        f"parameter {n!r} changed ({before[n]} -> {after[n]})"
        for n in after
        if n in before and before[n] != after[n]
    ]
    for field_name, what in (("constraints", "constraint"), ("model_inputs", "model input")):
        if field_name in stored and field_name in now:
            old, new = stored[field_name], now[field_name]
            if field_name == "constraints":  # a table's rows: its digest says which
                old, new = [_rows(c) for c in old], [_rows(c) for c in new]
            changes += [f"{what} {c!r} added" for c in new if c not in old]
            changes += [f"{what} {c!r} removed" for c in old if c not in new]
    if "derived" in stored and "derived" in now and stored["derived"] != now["derived"]:
        changes.append(f"derived quantities changed ({stored['derived']} -> {now['derived']})")
    return changes


#: Problem settings that say where a replayed table was read from (replay ``source``,
#: Kernel Tuner cache ``path``), not what it holds: the data digest says that.
LOCATION_SETTINGS = frozenset({"source", "path"})


def placeless_key(
    problem: str,
    problem_settings: Mapping[str, Any],
    strategy: str,
    strategy_settings: Any,
    seed: int | None,
    label: str | None,
    digest: str | None,
) -> str | None:
    """A run's identity without ``LOCATION_SETTINGS``, with its data digest instead
    (None without a digest: then the place is all that says which data a run used)."""
    if digest is None:
        return None
    settings = {k: v for k, v in problem_settings.items() if k not in LOCATION_SETTINGS}
    return dumps([problem, settings, strategy, strategy_settings, seed, label, digest])


@dataclass(frozen=True)
class RunSpec:
    """What identifies a run: same key, same run (re-running resumes it).

    ``data_digest`` (the digest of a replayed table, see ``Problem.data_digest``) is kept
    beside the key, not in it: a run resumed on other data is refused, not forked. Where
    that data lies (the problem settings ``LOCATION_SETTINGS``) is in the key, but a
    run made from the same data elsewhere (a journal brought from another machine, a data
    folder moved) is the same run: see ``placeless_key``. ``objective`` (the unit and
    direction the problem states) is stored beside the run, not in its key either.
    """

    problem: str
    problem_settings: Mapping[str, Any]
    strategy: str
    strategy_settings: Mapping[str, Any]
    seed: int | None
    space: Mapping[str, Any]
    label: str | None = None
    data_digest: str | None = None
    objective: RunObjective | None = None

    @property
    def key(self) -> str:
        return dumps(
            {
                "problem": self.problem,
                "problem_settings": self.problem_settings,
                "strategy": self.strategy,
                "strategy_settings": self.strategy_settings,
                "seed": self.seed,
                "label": self.label,
            }
        )

    @property
    def placeless_key(self) -> str | None:
        """The key without where the data lies, with its digest instead (None without a
        digest): equal for the runs that ``Journal.find`` takes for one run."""
        return placeless_key(
            self.problem,
            self.problem_settings,
            self.strategy,
            self.strategy_settings,
            self.seed,
            self.label,
            self.data_digest,
        )

    def describe(self) -> str:
        """``problem / strategy, seed S`` (with the name when the run has one)."""
        return _describe(self.problem, self.strategy, self.seed, self.label)


def _describe(problem: str, strategy: str, seed: int | None, label: str | None) -> str:
    named = f", name {label!r}" if label is not None else ""
    return f"{problem} / {strategy}, seed {seed}{named}"


@dataclass(frozen=True)
class RunRecord:
    """A stored run (``objective``: what its problem stated of its objective; None for a
    run stored before that was kept)."""

    id: int
    key: str
    problem: str
    strategy: str
    seed: int | None
    budget: int | None
    status: str
    started_at: float
    finished_at: float | None
    label: str | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    objective: RunObjective | None = None

    def describe(self) -> str:
        """``problem / strategy, seed S`` (with the name when the run has one)."""
        return _describe(self.problem, self.strategy, self.seed, self.label)


@dataclass(frozen=True)
class CatalogEntry:
    """A compared problem: its identity, how to build it, its optimum (None if unknown).

    A comparison records, next to its runs, the section (registry name and options) of
    each problem it ran and the problem's known optimum, so that a report made later from
    the journal alone can give slowdowns and rebuild replay tables (the exact random
    baseline). Entries are keyed like runs: the problem's name and its ``describe()``
    settings (as stored JSON).
    """

    problem: str
    settings: str
    section: Mapping[str, Any]
    optimum: float | None


@dataclass(frozen=True)
class RunningTrial:
    """A configuration dispatched for evaluation whose trial is not committed yet.

    An asynchronous run records each configuration as running before a worker gets it
    and removes the record in the transaction that commits its trial, so the records left
    after a crash are exactly the evaluations in flight: a resumed run measures them
    again, once.

    Attributes:
        id: the record's id in the journal.
        config: the configuration.
        info: the strategy's diagnostics for its proposal.
        dispatched_at: UNIX time when it was dispatched.
    """

    id: int
    config: Mapping[str, Any]
    info: Mapping[str, Any]
    dispatched_at: float
