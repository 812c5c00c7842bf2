"""The runs of a journal as best-so-far curves, grouped by problem and strategy label.

A run's best-so-far curve ``c[b-1]`` is the lowest ok value among its first ``b``
budget-counting trials (NaN while none has succeeded). A run that stopped before its
budget (the strategy had nothing more to propose) keeps its final best up to the budget;
budgets beyond a run's own are unobserved (NaN). Only finished runs are analysed.

Alongside, per run and budget: the failed evaluations spent, and the peers' counters
of proposals refused as invalid and duplicates answered (from the trials' ``info``,
NaN for strategies that keep none); and per run its wall time.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gpautotune.exceptions import StorageError
from gpautotune.storage import problem_catalog

__all__ = ["Group", "RunTable", "load_runs"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Group:
    """The repetitions of one strategy (label) on one problem.

    Attributes:
        problem: the problem's display name.
        label: the strategy's display label (the run label, else the strategy name).
        strategy: the strategy's registered name.
        curves: best-so-far values, shape (repetitions, longest budget).
        used: budget-counting trials per repetition.
        best_at: 1-based position of each repetition's best trial (0 if none succeeded).
        seeds: each repetition's seed.
        budgets: each repetition's budget.
        failed: failed evaluations within the first ``b`` trials, shape as ``curves``.
        refused: proposals refused as invalid before trial ``b`` (peers; NaN otherwise).
        duplicates: duplicate proposals answered before trial ``b`` (peers; NaN otherwise).
        wall_s: each repetition's wall time (finished minus started).
    """

    problem: str
    label: str
    strategy: str
    curves: np.ndarray
    used: np.ndarray
    best_at: np.ndarray
    seeds: np.ndarray
    budgets: np.ndarray
    failed: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    refused: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    duplicates: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    wall_s: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def repetitions(self) -> int:
        return len(self.curves)

    @property
    def horizon(self) -> int:
        return self.curves.shape[1]

    def at(self, budget: int) -> np.ndarray:
        """Best values at ``budget`` of the repetitions that reached it (NaN dropped)."""
        if budget > self.horizon:
            return np.empty(0)
        column = self.curves[:, budget - 1]
        return column[~np.isnan(column)]

    def count_at(self, what: str, budget: int) -> np.ndarray:
        """``failed``, ``refused`` or ``duplicates`` at ``budget`` of the repetitions that
        reached it (NaN where the strategy keeps no such counter)."""
        table = getattr(self, what)
        if table.ndim != 2 or budget > table.shape[1]:
            return np.empty(0)
        return table[self.budgets >= budget, budget - 1]


@dataclass(frozen=True)
class ProblemInfo:
    """A compared problem: display name, known optimum, and how to rebuild it."""

    name: str
    optimum: float | None
    section: Mapping[str, object] | None = None


@dataclass(frozen=True)
class RunTable:
    """Every finished run of a journal, grouped."""

    path: str
    groups: list[Group]
    problems: dict[str, ProblemInfo] = field(default_factory=dict)
    unfinished: int = 0

    def of(self, problem: str) -> list[Group]:
        return [g for g in self.groups if g.problem == problem]

    def labels(self, problem: str | None = None) -> list[str]:
        seen = [g.label for g in self.groups if problem is None or g.problem == problem]
        return list(dict.fromkeys(seen))


def _query(path: str, sql: str) -> pd.DataFrame:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60.0)
    try:
        return pd.read_sql_query(sql, conn)
    finally:
        conn.close()


def _problem_names(runs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """A display name per (problem, settings): the name, plus the settings where several
    settings share a name."""
    names = {}
    for problem, sub in runs.groupby("problem", sort=False):
        variants = list(dict.fromkeys(sub["problem_settings"]))
        for i, settings in enumerate(variants):
            if len(variants) == 1:
                names[problem, settings] = problem
                continue
            parsed = json.loads(settings)
            shown = ", ".join(f"{k}={v}" for k, v in parsed.items() if k != "name")
            names[problem, settings] = f"{problem} ({shown or i})"
    return names


def _curve(values: np.ndarray, horizon: int, budget: int) -> tuple[np.ndarray, int]:
    """Best-so-far of one run's values (NaN = failed) over ``horizon`` budgets, and the
    1-based position of its best trial."""
    curve = np.full(horizon, np.nan)
    if len(values):
        best = np.fmin.accumulate(values)
        n = min(len(best), horizon)
        curve[:n] = best[:n]
        if n < min(budget, horizon):
            curve[n : min(budget, horizon)] = best[n - 1]
    finite = np.isfinite(values)
    best_at = int(np.nanargmin(np.where(finite, values, np.nan)) + 1) if finite.any() else 0
    return curve, best_at


def _held(values: np.ndarray, horizon: int) -> np.ndarray:
    """Values per budget 1..horizon, the last one held after the run ends (NaN if none)."""
    out = np.full(horizon, np.nan)
    n = min(len(values), horizon)
    out[:n] = values[:n]
    if 0 < n < horizon:
        out[n:] = values[n - 1]
    return out


def _counts(sub: pd.DataFrame, horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run's failed evaluations, refusals and duplicates per budget."""
    failed = np.cumsum(sub["status"].to_numpy() != "ok").astype(float)
    return (
        _held(failed, horizon),
        _held(sub["refused"].to_numpy(dtype=float), horizon),
        _held(sub["duplicates"].to_numpy(dtype=float), horizon),
    )


def load_runs(path: str | os.PathLike[str]) -> RunTable:
    """Read a journal's finished runs and its problem catalog.

    Raises:
        StorageError: the journal does not exist or is not a journal.
    """
    path = str(path)
    if not Path(path).is_file():
        raise StorageError(f"journal {path!r} does not exist")
    try:
        runs = _query(
            path,
            "SELECT id, problem, problem_settings, strategy, seed, budget, status, label,"
            " finished_at - started_at AS wall_s FROM runs ORDER BY id",
        )
        trials = _query(
            path,
            "SELECT run_id, number, status, value,"
            " json_extract(info, '$.invalid_refused') AS refused,"
            " json_extract(info, '$.duplicates') AS duplicates"
            " FROM trials WHERE origin='tuner' ORDER BY run_id, number",
        )
    except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
        raise StorageError(f"{path!r} is not a gpautotune journal: {exc}") from None
    catalog = problem_catalog(path)
    names = _problem_names(runs)
    finished = runs[runs["status"] == "finished"]
    trials.loc[trials["status"] != "ok", "value"] = np.nan
    grouped = dict(list(trials.groupby("run_id", sort=False)))
    by_run = {rid: sub["value"].to_numpy(dtype=float) for rid, sub in grouped.items()}
    groups = []
    finished = finished.assign(
        group=finished["label"].fillna(finished["strategy"]),
        display=[
            names[p, s]
            for p, s in zip(finished["problem"], finished["problem_settings"], strict=True)
        ],
    )
    for (display, label), sub in finished.groupby(["display", "group"], sort=False):
        horizon = int(sub["budget"].max())
        values = [
            by_run.get(rid, np.empty(0))[: int(b)]
            for rid, b in zip(sub["id"], sub["budget"], strict=True)
        ]
        pairs = [_curve(v, horizon, int(b)) for v, b in zip(values, sub["budget"], strict=True)]
        empty = trials.iloc[:0]
        counts = [
            _counts(grouped.get(rid, empty).iloc[: int(b)], horizon)
            for rid, b in zip(sub["id"], sub["budget"], strict=True)
        ]
        groups.append(
            Group(
                problem=display,
                label=label,
                strategy=str(sub["strategy"].iloc[0]),
                curves=np.vstack([c for c, _ in pairs]),
                used=np.array([len(v) for v in values]),
                best_at=np.array([b for _, b in pairs]),
                seeds=sub["seed"].to_numpy(),
                budgets=sub["budget"].to_numpy(),
                failed=np.vstack([c[0] for c in counts]),
                refused=np.vstack([c[1] for c in counts]),
                duplicates=np.vstack([c[2] for c in counts]),
                wall_s=sub["wall_s"].to_numpy(dtype=float),
            )
        )
    problems = {}
    for (problem, settings), display in names.items():
        entry = catalog.get((problem, settings))
        problems[display] = ProblemInfo(
            display, entry.optimum if entry else None, entry.section if entry else None
        )
    return RunTable(path, groups, problems, int((runs["status"] != "finished").sum()))
