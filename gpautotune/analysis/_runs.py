"""The runs of a journal as best-so-far curves, grouped by problem and strategy label.

A run's best-so-far curve ``c[b-1]`` is the lowest ok value among its first ``b``
budget-counting trials (NaN while none has succeeded). A run that stopped before its
budget (the strategy had nothing more to propose) keeps its final best up to the budget;
budgets beyond a run's own are unobserved (NaN). Only finished runs are analysed.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpautotune.storage import Journal

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
    """

    problem: str
    label: str
    strategy: str
    curves: np.ndarray
    used: np.ndarray
    best_at: np.ndarray
    seeds: np.ndarray
    budgets: np.ndarray

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
    #: The comparison's report settings recorded in the journal (checkpoints, reference,
    #: output), empty for other journals.
    settings: Mapping[str, object] = field(default_factory=dict)

    def of(self, problem: str) -> list[Group]:
        return [g for g in self.groups if g.problem == problem]

    def labels(self, problem: str | None = None) -> list[str]:
        seen = [g.label for g in self.groups if problem is None or g.problem == problem]
        return list(dict.fromkeys(seen))


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


def _ordered(groups: list[Group], labels: list[str]) -> list[Group]:
    """Groups by problem (first appearance), then in the comparison's strategy order
    (labels it does not list after, in order of appearance)."""
    problems = list(dict.fromkeys(g.problem for g in groups))
    rank = {label: i for i, label in enumerate(labels)}
    return sorted(groups, key=lambda g: (problems.index(g.problem), rank.get(g.label, len(rank))))


def load_runs(path: str | os.PathLike[str]) -> RunTable:
    """Read a journal's finished runs and its problem catalog.

    Raises:
        StorageError: the journal does not exist or is not a journal.
    """
    path = str(path)
    with Journal(path, read_only=True) as journal:
        runs, trials = journal.run_table(), journal.trial_values()
        catalog = journal.problem_catalog()
        report_settings = journal.report_settings()
    names = _problem_names(runs)
    finished = runs[runs["status"] == "finished"]
    trials.loc[trials["status"] != "ok", "value"] = np.nan
    by_run = {
        rid: sub["value"].to_numpy(dtype=float) for rid, sub in trials.groupby("run_id", sort=False)
    }
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
            )
        )
    groups = _ordered(groups, list(report_settings.get("labels") or []))
    problems = {}
    for (problem, settings), display in names.items():
        entry = catalog.get((problem, settings))
        problems[display] = ProblemInfo(
            display, entry.optimum if entry else None, entry.section if entry else None
        )
    unfinished = int((runs["status"] != "finished").sum())
    return RunTable(path, groups, problems, unfinished, report_settings)
