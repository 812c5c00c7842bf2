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
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpautotune.analysis._stats import Difference, compare_paired, compare_samples
from gpautotune.storage import Journal

__all__ = ["Group", "RunTable", "failure_kinds", "load_runs"]

_log = logging.getLogger(__name__)


def failure_kinds(counts: Counter[str]) -> str:
    """``build_error 12, run_error 3``: failure statuses, the most frequent first."""
    return ", ".join(f"{k} {n}" for k, n in counts.most_common())


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
        statuses: each repetition's trial statuses (``ok``, ``build_error``, ...), in
            order, up to its budget.
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
    statuses: tuple[np.ndarray, ...] = ()

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

    def by_seed(self, budget: int) -> dict[int, float]:
        """Seed -> best value at ``budget`` of the seeded repetitions that reached it."""
        if budget > self.horizon:
            return {}
        column = self.curves[:, budget - 1]
        return {
            int(seed): float(v)
            for seed, v in zip(self.seeds, column, strict=True)
            if seed is not None and np.isfinite(seed) and np.isfinite(v)
        }

    def against(self, ref: Group, budget: int, scale: float = 1.0) -> Difference:
        """This group's best values at ``budget`` (times ``scale``) against ``ref``'s:
        paired (Wilcoxon) over the seeds both ran when at least two, else unpaired."""
        mine, theirs = self.by_seed(budget), ref.by_seed(budget)
        shared = sorted(set(mine) & set(theirs))
        if len(shared) >= 2:
            x = np.array([mine[k] for k in shared]) * scale
            y = np.array([theirs[k] for k in shared]) * scale
            return compare_paired(x, y)
        return compare_samples(self.at(budget) * scale, ref.at(budget) * scale)

    def no_success(self, budget: int | None = None) -> str | None:
        """None when some repetition has a successful evaluation within the first
        ``budget`` (default: all), else what happened, e.g. ``no successful evaluation (12
        of 12 failed: build_error 12)``; None too when no evaluation was made."""
        budget = budget or self.horizon
        if np.isfinite(self.curves[:, : min(budget, self.horizon)]).any():
            return None
        evaluations = sum(len(s[:budget]) for s in self.statuses)
        if not evaluations:
            return None
        counts = self.failures(budget)
        kinds = failure_kinds(counts)
        return (
            f"no successful evaluation ({sum(counts.values())} of {evaluations} failed"
            f"{': ' + kinds if kinds else ''})"
        )

    def failures(self, budget: int | None = None) -> Counter[str]:
        """The statuses of the repetitions' failed evaluations within the first ``budget``
        (default: all), counted."""
        return Counter(str(x) for s in self.statuses for x in s[:budget] if x != "ok")

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


def _ordered(groups: list[Group], labels: list[str]) -> list[Group]:
    """Groups by problem (first appearance), then in the comparison's strategy order
    (labels it does not list after, in order of appearance)."""
    problems = list(dict.fromkeys(g.problem for g in groups))
    rank = {label: i for i, label in enumerate(labels)}
    return sorted(groups, key=lambda g: (problems.index(g.problem), rank.get(g.label, len(rank))))


def _warn_if_mixed(problem: str, label: str, runs: pd.DataFrame) -> None:
    """Warn when one label holds runs of different strategies or settings (a journal
    shared by comparison files that use the label for different entries): the report
    would pool them as one strategy."""
    kinds = runs[["strategy", "strategy_settings"]].drop_duplicates()
    if len(kinds) > 1:
        _log.warning(
            "label %r on %s holds runs of %d different strategy settings (%s), reported "
            "as one: give the entries different labels, or each comparison its own journal",
            label,
            problem,
            len(kinds),
            "; ".join(f"{k.strategy} {k.strategy_settings}" for k in kinds.itertuples()),
        )


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
        # by seed: the bootstrap draws the same resamples whatever order the runs ended in
        sub = sub.sort_values(["seed", "id"], kind="stable", na_position="last")
        _warn_if_mixed(display, label, sub)
        horizon = int(sub["budget"].max())
        values = [
            by_run.get(rid, np.empty(0))[: int(b)]
            for rid, b in zip(sub["id"], sub["budget"], strict=True)
        ]
        pairs = [_curve(v, horizon, int(b)) for v, b in zip(values, sub["budget"], strict=True)]
        empty = trials.iloc[:0]
        made = [
            grouped.get(rid, empty).iloc[: int(b)]
            for rid, b in zip(sub["id"], sub["budget"], strict=True)
        ]
        counts = [_counts(m, horizon) for m in made]
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
                statuses=tuple(m["status"].to_numpy(dtype=str) for m in made),
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
