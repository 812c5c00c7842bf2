"""Which stored run a run specification is, and whether it may be resumed.

A run is found by its key, else (replayed data read from another place) by its placeless
key: the same problem, strategy, seed, label and data digest (see
``RunSpec.placeless_key``). Resuming it is refused where its stored search space differs
from the specification's, or where it was made from other data (another digest).

A run's label names a strategy with its options on a problem, as a study's name does in
Optuna: runs may share it across seeds (repetitions) and problems, as a comparison's do
and as reports group them, but a new run is refused where a run of the same problem has
the label with another strategy or other options (:func:`check_name`, in the
transaction that makes the run).

Kept apart from :class:`~gpautotune.storage.Journal`: matching a specification to the
runs stored, and the rules that refuse a resume or a name, are one concept that several
journal operations (opening a run, listing finished runs, joining journals) share.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpautotune.exceptions import StorageError
from gpautotune.storage._records import RunRecord, RunSpec, dumps, placeless_key, space_changes

if TYPE_CHECKING:
    from gpautotune.storage._journal import Journal

__all__ = [
    "RunNameError",
    "check_data",
    "check_name",
    "check_run_name",
    "check_space",
    "find",
    "identities",
]


class RunNameError(StorageError):
    """A run's name (its label) is taken in the journal by a run with other settings."""


def find(journal: Journal, spec: RunSpec) -> RunRecord | None:
    """The run of ``spec`` in ``journal`` (see :meth:`Journal.find`)."""
    existing = journal.find_run(spec.key)
    if existing is not None or spec.placeless_key is None:
        return existing
    rows = journal._conn.execute(
        "SELECT r.id, r.problem_settings, r.strategy_settings FROM runs r JOIN run_data d"
        " ON d.run_id = r.id WHERE r.problem=? AND r.strategy=? AND r.seed IS ?"
        " AND r.label IS ? AND d.digest=? AND r.status != 'stopped' ORDER BY r.id",
        (spec.problem, spec.strategy, spec.seed, spec.label, spec.data_digest),
    ).fetchall()
    for run_id, problem, strategy in rows:
        stored = placeless_key(
            spec.problem,
            json.loads(problem),
            spec.strategy,
            json.loads(strategy),
            spec.seed,
            spec.label,
            spec.data_digest,
        )
        if stored == spec.placeless_key:
            return journal.get_run(run_id)
    return None


def identities(
    conn: sqlite3.Connection, condition: str
) -> list[tuple[int, str, int | None, str | None]]:
    """``(id, key, budget, placeless key)`` of the runs that meet the SQL ``condition``."""
    rows = conn.execute(
        "SELECT r.id, r.key, r.budget, r.problem, r.problem_settings, r.strategy,"
        " r.strategy_settings, r.seed, r.label, d.digest FROM runs r"
        f" LEFT JOIN run_data d ON d.run_id = r.id WHERE {condition} ORDER BY r.id"
    ).fetchall()
    return [
        (run_id, key, budget, placeless_key(p, json.loads(ps), s, json.loads(ss), seed, lb, dg))
        for run_id, key, budget, p, ps, s, ss, seed, lb, dg in rows
    ]


def check_space(journal: Journal, existing: RunRecord, spec: RunSpec) -> None:
    """Refuse to resume a run whose stored space differs from ``spec``'s (a function
    tuned again with a constraint added or a range widened: its trials and best would
    belong to another space)."""
    changes = space_changes(journal.get_run(existing.id).settings.get("space", {}), spec.space)
    if changes:
        more = f"; and {len(changes) - 4} more" if len(changes) > 4 else ""
        shown = "; ".join(changes[:4]) + more
        raise StorageError(
            f"run {existing.id} ({existing.describe()}) in {journal.path!r} was made on another "
            f"search space ({shown}): resume it with the space it was made on, or give the "
            "new run another name (label=, --name) or journal (storage=, --db)"
        )


def check_data(journal: Journal, record: RunRecord, digest: str | None) -> None:
    """Record the run's data digest, or refuse other data than the run was made from."""
    if digest is None:
        return
    stored = journal.data_digest(record.id)
    if stored is None:
        journal._conn.execute(
            "INSERT OR IGNORE INTO run_data (run_id, digest) VALUES (?,?)", (record.id, digest)
        )
    elif stored != digest:
        raise StorageError(
            f"run {record.id} ({record.problem}) in {journal.path!r} was made from other data "
            f"(digest {stored[:16]}, now {digest[:16]}): its data (a replayed table, a "
            "validation set) changed since; resume it with the data it was made from, or "
            "tune into another journal (--db, or storage= in Python)"
        )


def name_clash(journal: Journal, spec: RunSpec) -> RunRecord | None:
    """The first run of ``journal`` with ``spec``'s label on the same problem (name,
    settings and space) but another strategy or other strategy options (settings a
    strategy derives from the space, GPR's ``n_init`` say, differ with the space, which
    makes another problem); runs set aside (``Journal.set_aside_run``) leave their label
    free."""
    if spec.label is None:
        return None
    rows = journal._conn.execute(
        "SELECT id, problem_settings, space, strategy, strategy_settings FROM runs"
        " WHERE label=? AND problem=? AND status != 'stopped' ORDER BY id",
        (spec.label, spec.problem),
    ).fetchall()
    problem_settings, space, strategy_settings = (
        json.loads(dumps(s)) for s in (spec.problem_settings, spec.space, spec.strategy_settings)
    )
    for run_id, problem_there, space_there, strategy, strategy_there in rows:
        if json.loads(problem_there) != problem_settings or space_changes(
            json.loads(space_there), space
        ):
            continue  # another problem
        if strategy != spec.strategy or json.loads(strategy_there) != strategy_settings:
            return journal.get_run(run_id)
    return None


def check_name(journal: Journal, spec: RunSpec) -> None:
    """Refuse ``spec``'s label where a run of its problem has it with another strategy
    or other options (see :func:`name_clash`), saying what differs and what to do.

    Raises:
        RunNameError: naming the label, the journal, the run that has it and how their
            strategies differ.
    """
    clash = name_clash(journal, spec)
    if clash is None:
        return
    differs = _differences(clash, spec)
    more = f"; and {len(differs) - 4} more" if len(differs) > 4 else ""
    shown = f" ({'; '.join(differs[:4])}{more})" if differs else ""
    raise RunNameError(
        f"run name {spec.label!r} is taken in {journal.path!r} by run {clash.id} "
        f"({clash.describe()}) with another strategy setting{shown}; a name stands for one "
        "strategy with its options on a problem (its runs may differ by seed): give this "
        "run another name (label=, --name), or that run's strategy and options"
    )


def check_run_name(journal: Journal, spec: RunSpec) -> None:
    """:func:`check_name` for a run ``spec`` would make (read-only journals too): a run
    stored already is resumed, never refused (older journals may hold several strategies
    under one label)."""
    if journal.find(spec) is None:
        check_name(journal, spec)


def _differences(record: RunRecord, spec: RunSpec) -> list[str]:
    """How a stored run's strategy differs from ``spec``'s, as ``strategy random there,
    gpr here`` or by option (``strategy option 'n_init' 10 there, 13 here``)."""
    if record.strategy != spec.strategy:
        return [f"strategy {record.strategy} there, {spec.strategy} here"]
    return _options("strategy option", record.settings.get("strategy"), spec.strategy_settings)


def _options(what: str, stored: Any, given: Mapping[str, Any]) -> list[str]:
    """The options that differ between stored settings (JSON) and given ones."""
    here = json.loads(dumps(given))
    if not isinstance(stored, dict) or not isinstance(here, dict):
        return [] if stored == here else [f"{what}s {stored} there, {here} here"]
    absent = object()
    return [
        f"{what} {name!r} "
        + " there, ".join("(none)" if v is absent else str(v) for v in (there, now))
        + " here"
        for name in sorted(set(stored) | set(here))
        if (there := stored.get(name, absent)) != (now := here.get(name, absent))
    ]
