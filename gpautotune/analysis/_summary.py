"""The numbers of a comparison report: per problem, strategy and budget checkpoint.

:func:`analyse` reads a journal and returns a :class:`ComparisonReport` holding three
tables (pandas):

* ``summary`` — per problem, strategy label and checkpoint ``b``: repetitions, mean,
  median, min, max and the 95% bootstrap percentile interval of the mean of the best
  value found within ``b`` evaluations (and of the slowdown ``best / optimum`` when the
  optimum is known and positive), the share of repetitions at the optimum (when it is
  known, whatever its sign), mean and max budget used, mean position of the best
  trial, Willemsen score;
* ``pairwise`` — per problem, checkpoint and strategy: the difference of its mean
  (slowdown, else value) from the reference strategy's with a bootstrap 95% interval,
  the relative difference, the test (Wilcoxon signed-rank over the seeds both ran, else
  Mann-Whitney U), its p-value and its Holm-adjusted p-value (the family: the strategies
  tested against the reference at that checkpoint), ``P(better)`` and a verdict that
  separates statistically from practically better;
* ``curves`` — per problem, strategy and budget 1..B: mean best-so-far, its 95% band, the
  random-search expectation and the score (problems with a known optimum);
* ``peers`` — where a comparison holds peer strategies and ``gpr``: per problem and
  checkpoint, the best peer and ``gpr`` against it, paired over the shared seeds
  (:mod:`gpautotune.analysis._peers`).

A comparison records its checkpoints, reference and report folder in its journal
(:meth:`~gpautotune.storage.Journal.report_settings`); :func:`analyse` uses them unless
told otherwise, so ``gpautotune report`` repeats ``gpautotune compare``'s report.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gpautotune.analysis._peers import peer_comparison
from gpautotune.analysis._runs import Group, ProblemInfo, RunTable, failure_kinds, load_runs
from gpautotune.analysis._stats import (
    Difference,
    describe,
    holm,
    mean_band,
    verdict,
)
from gpautotune.analysis._willemsen import expected_random_best, willemsen_score
from gpautotune.exceptions import ConfigError

__all__ = ["ComparisonReport", "RandomBaseline", "analyse", "random_baseline", "report_dir"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RandomBaseline:
    """Random search's expected best per budget 1..B, and where it comes from.

    Attributes:
        values: the expectation per budget.
        source: how it was obtained (shown in reports).
        estimated_from: the label whose runs' mean it is, when estimated from the
            journal's random-search runs (their score is then 0 by construction).
    """

    values: np.ndarray
    source: str
    estimated_from: str | None = None


@dataclass(frozen=True)
class ComparisonReport:
    """The tables of a comparison (see the module docstring) and what they came from."""

    runs: RunTable
    checkpoints: dict[str, list[int]]
    reference: dict[str, str]
    summary: pd.DataFrame
    pairwise: pd.DataFrame
    curves: pd.DataFrame
    baselines: dict[str, RandomBaseline] = field(default_factory=dict)
    practical: float = 0.01
    peers: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def problems(self) -> list[str]:
        return list(dict.fromkeys(g.problem for g in self.runs.groups))

    def never_succeeded(self) -> dict[str, list[Group]]:
        """Per problem, the strategies (groups) none of whose runs had a successful
        evaluation (only problems with such strategies)."""
        out: dict[str, list[Group]] = {}
        for g in self.runs.groups:
            if g.no_success() is not None:
                out.setdefault(g.problem, []).append(g)
        return out

    def never_succeeded_text(self) -> str | None:
        """One line naming the problems and strategies whose runs never succeeded, with
        the statuses of their failed evaluations; None when there are none."""
        parts = []
        for problem, groups in self.never_succeeded().items():
            kinds = failure_kinds(sum((g.failures() for g in groups), Counter()))
            who = ", ".join(g.label for g in groups)
            parts.append(f"{problem} ({who}; failed: {kinds})")
        if not parts:
            return None
        return "no successful evaluation in any run of " + "; ".join(parts)

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write CSV and Markdown tables and PNG figures into ``out_dir`` (see
        :func:`gpautotune.analysis.write_report`)."""
        from gpautotune.analysis._report import write_files

        return write_files(self, out_dir)


def random_baseline(
    info: ProblemInfo, groups: Sequence[Group], horizon: int
) -> RandomBaseline | None:
    """The exact expectation from the problem's measured table when the catalog can
    rebuild a problem that has one (``measured_values()``: replay problems; failed rows,
    ``failed_rows``, cost draws), else the mean
    curve of the journal's ``random`` runs; None without a known optimum."""
    if info.optimum is None:
        return None
    if info.section is not None:
        try:
            from gpautotune.config import Section, build_problem

            problem = build_problem(Section(**info.section), factory_names=True)
            values = getattr(problem, "measured_values", None)
            failures = int(getattr(problem, "failed_rows", 0))
            if callable(values):
                return RandomBaseline(
                    expected_random_best(values(), np.arange(1, horizon + 1), failures=failures),
                    "exact (measured table)",
                )
        except Exception as exc:  # noqa: BLE001 - e.g. the table is not on this machine: fall back
            _log.warning(
                "cannot rebuild problem %s for the exact random baseline: %s", info.name, exc
            )
    rs = [g for g in groups if g.strategy == "random" and g.repetitions >= 2]
    if rs:
        g = max(rs, key=lambda g: g.repetitions)
        mean = np.array(
            [np.nanmean(col) if np.isfinite(col).any() else np.nan for col in g.curves.T]
        )
        return RandomBaseline(
            mean[:horizon], f"estimated ({g.repetitions} runs of {g.label})", g.label
        )
    return None


def _scale(info: ProblemInfo) -> float | None:
    """1 / optimum when slowdowns are defined (a known, positive optimum)."""
    return 1.0 / info.optimum if info.optimum is not None and info.optimum > 0 else None


def _best_at(g: Group, b: int) -> np.ndarray:
    """1-based position of the best trial within the first ``b`` (repetitions with a value at b)."""
    c = g.curves[:, :b]
    final = c[:, b - 1]
    rows = ~np.isnan(final)
    return np.argmax(c[rows] == final[rows, None], axis=1) + 1.0


def _summary_rows(
    problem: str,
    groups: Sequence[Group],
    checkpoints: Sequence[int],
    info: ProblemInfo,
    scores: dict[str, np.ndarray],
) -> list[dict]:
    scale = _scale(info)
    rows = []
    for g in groups:
        for b in checkpoints:
            values = g.at(b)
            reached = g.budgets >= b
            used = np.minimum(g.used[reached], b) if reached.any() else np.array([np.nan])
            s = describe(values)
            row = {
                "problem": problem,
                "strategy": g.label,
                "budget": b,
                "n": s.n,
                "mean": s.mean,
                "median": s.median,
                "min": s.min,
                "max": s.max,
                "ci_low": s.ci_low,
                "ci_high": s.ci_high,
            }
            sd = describe(values * scale) if scale is not None else None
            for key in ("mean", "median", "min", "max", "ci_low", "ci_high"):
                row[f"slowdown_{key}"] = getattr(sd, key) if sd is not None else math.nan
            row["at_optimum"] = _at_optimum(values, info.optimum)
            best_at = _best_at(g, b) if b <= g.horizon else np.empty(0)
            row.update(_accounting(g, b))
            row.update(
                used_mean=float(np.mean(used)),
                used_max=float(np.max(used)),
                best_at_mean=float(best_at.mean()) if len(best_at) else math.nan,
                score=float(scores[g.label][b - 1])
                if g.label in scores and b <= len(scores[g.label])
                else math.nan,
            )
            rows.append(row)
    return rows


#: Tolerances of "at the optimum" (relative, absolute): a best within them has reached it.
OPTIMUM_RTOL, OPTIMUM_ATOL = 1e-9, 1e-12


def _at_optimum(values: np.ndarray, optimum: float | None) -> float:
    """Share of the repetitions whose best is the optimum (NaN without a known optimum).

    A best ``v`` has reached the optimum ``f*`` when ``v <= f* + max(1e-9 |f*|, 1e-12)``:
    the values are compared with the optimum itself, so the share is defined whatever the
    sign of ``f*`` (Booth's 0, a negative optimum), not only where slowdowns are.
    """
    finite = values[np.isfinite(values)]
    if optimum is None or not math.isfinite(optimum) or not len(finite):
        return math.nan
    tolerance = max(OPTIMUM_RTOL * abs(optimum), OPTIMUM_ATOL)
    return float(np.mean(finite <= optimum + tolerance))


def _nanmean(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else math.nan


def _accounting(g: Group, b: int) -> dict[str, float]:
    """Mean failed evaluations, refusals and duplicates at ``b``, and wall time per run."""
    return {
        "failed_mean": _nanmean(g.count_at("failed", b)),
        "refused_mean": _nanmean(g.count_at("refused", b)),
        "duplicates_mean": _nanmean(g.count_at("duplicates", b)),
        "wall_s_mean": _nanmean(g.wall_s),
    }


def _pairwise_rows(
    problem: str,
    groups: Sequence[Group],
    reference: str,
    checkpoints: Sequence[int],
    scale: float | None,
    practical: float,
) -> list[dict]:
    ref = next(g for g in groups if g.label == reference)
    others = [g for g in groups if g.label != reference]
    rows = []
    for b in checkpoints:
        family = holm([g.against(ref, b, scale or 1.0) for g in others])
        for g, d in zip(others, family, strict=True):
            rows.append(
                {
                    "problem": problem,
                    "strategy": g.label,
                    "reference": reference,
                    "budget": b,
                    "metric": "slowdown" if scale is not None else "value",
                    "n": d.n,
                    "n_ref": d.n_ref,
                    "mean": d.mean,
                    "mean_ref": d.mean_ref,
                    "diff": d.diff,
                    "diff_ci_low": d.ci_low,
                    "diff_ci_high": d.ci_high,
                    "relative_diff": d.relative,
                    "test": d.test,
                    "statistic": d.statistic,
                    "p_value": d.p_value,
                    "p_holm": d.p_adjusted,
                    "p_better": d.p_better,
                    "verdict": _verdict(g, ref, b, d, practical),
                }
            )
    return rows


def _verdict(g: Group, ref: Group, b: int, d: Difference, practical: float) -> str:
    """The verdict of ``g`` against ``ref`` at ``b``; where either has no successful
    evaluation within ``b`` (every evaluation failed), or no value at ``b`` (its runs
    stop before ``b``), that, not "too few repetitions"."""
    own = g.no_success(b)
    if own is not None:
        return own
    if ref.no_success(b) is not None:
        return f"reference {ref.label}: no successful evaluation"
    for group, who in ((g, ""), (ref, "reference ")):
        short = _unreached(group, b)
        if short is not None:
            return who + short
    return verdict(d, practical=practical)


def _unreached(g: Group, b: int) -> str | None:
    """Why ``g`` has no best value at ``b``, e.g. ``RS's budget 4 < 12`` (its runs stop
    before ``b``); None when some run has one."""
    if len(g.at(b)):
        return None
    top = int(np.max(g.budgets)) if len(g.budgets) else 0
    if top < b:
        return f"{g.label}'s budget {top} < {b}"
    return f"no run of {g.label} that reaches {b} has a successful evaluation"


def _curve_rows(
    problem: str, groups: Sequence[Group], baseline: RandomBaseline | None, optimum: float | None
) -> tuple[list[dict], dict[str, np.ndarray]]:
    rows, scores = [], {}
    for g in groups:
        mean, low, high = mean_band(g.curves)
        counts = np.isfinite(g.curves).sum(axis=0)
        random = np.full(g.horizon, np.nan)
        if baseline is not None:
            n = min(g.horizon, len(baseline.values))
            random[:n] = baseline.values[:n]
            if baseline.estimated_from != g.label:  # else 0 by construction: left out
                scores[g.label] = willemsen_score(mean, random, optimum)
        score = scores.get(g.label, np.full(g.horizon, np.nan))
        rows += [
            {
                "problem": problem,
                "strategy": g.label,
                "budget": b + 1,
                "n": int(counts[b]),
                "mean": mean[b],
                "ci_low": low[b],
                "ci_high": high[b],
                "random": random[b],
                "score": score[b],
            }
            for b in range(g.horizon)
        ]
    return rows, scores


def _check_checkpoints(requested: Sequence[int], groups: Sequence[Group]) -> None:
    """Refuse the user's checkpoints that no problem's budget reaches (below 1, or above
    every problem's; one above a single problem's budget is left out for that problem).

    Raises:
        ConfigError: the first such checkpoint, with the budgets there are.
    """
    horizon = max((g.horizon for g in groups), default=0)
    outside = sorted({int(c) for c in requested if not 1 <= c <= horizon})
    if outside and groups:
        raise ConfigError(
            f"checkpoint {outside[0]} is outside 1..{horizon} (the largest budget of the "
            f"runs); give budgets from 1 to {horizon}"
        )


def _checkpoints(requested: Sequence[int] | None, horizon: int) -> list[int]:
    """The budgets to tabulate: the requested ones the problem's ``horizon`` reaches."""
    if requested:
        kept = sorted({int(c) for c in requested if 1 <= c <= horizon})
        return kept or [horizon]
    from gpautotune.comparison import default_checkpoints

    return default_checkpoints(horizon)


def _reference(groups: Sequence[Group], requested: str | None) -> str:
    labels = [g.label for g in groups]
    if requested in labels:
        return requested  # type: ignore[return-value]
    if requested is not None:
        _log.warning("reference %r has no runs here; using another strategy", requested)
    return next((g.label for g in groups if g.strategy == "random"), labels[0])


def analyse(
    db_path: str | os.PathLike[str],
    *,
    reference: str | None = None,
    checkpoints: Sequence[int] | None = None,
    practical: float = 0.01,
) -> ComparisonReport:
    """Compute the report tables of every problem and strategy in a journal.

    Args:
        db_path: the journal (a comparison's ``storage``, or any journal).
        reference: the strategy label others are compared with (default: ``random`` runs
            if present, else the first label of each problem).
        checkpoints: budgets to tabulate (default: the comparison's, else quarters of each
            problem's budget).
        practical: the relative difference of means below which a significant difference
            is reported as "not practically" better or worse.

    A comparison's journal holds its checkpoints and reference (see
    :meth:`~gpautotune.storage.Journal.report_settings`): they are the defaults here.
    """
    runs = load_runs(db_path)
    stored = runs.settings
    if reference is not None and runs.groups and reference not in runs.labels():
        raise ConfigError(  # a misspelt label would test every strategy against another
            f"reference {reference!r} is none of the journal's strategy labels {runs.labels()}"
        )
    reference = reference or stored.get("reference")
    if checkpoints:  # the caller's own, not the comparison's
        _check_checkpoints(checkpoints, runs.groups)
    checkpoints = checkpoints or stored.get("checkpoints")
    summary, pairwise, curves, peers = [], [], [], []
    chosen, refs, baselines = {}, {}, {}
    for problem in dict.fromkeys(g.problem for g in runs.groups):
        groups = runs.of(problem)
        info = runs.problems.get(problem, ProblemInfo(problem, None))
        horizon = max(g.horizon for g in groups)
        chosen[problem] = _checkpoints(checkpoints, horizon)
        refs[problem] = _reference(groups, reference)
        baseline = random_baseline(info, groups, horizon)
        if baseline is not None:
            baselines[problem] = baseline
        rows, scores = _curve_rows(problem, groups, baseline, info.optimum)
        curves += rows
        summary += _summary_rows(problem, groups, chosen[problem], info, scores)
        pairwise += _pairwise_rows(
            problem, groups, refs[problem], chosen[problem], _scale(info), practical
        )
        table = peer_comparison(groups, chosen[problem], _scale(info))
        if not table.empty:
            peers.append(table.assign(problem=problem))
    return ComparisonReport(
        runs,
        chosen,
        refs,
        pd.DataFrame(summary),
        pd.DataFrame(pairwise),
        pd.DataFrame(curves),
        baselines,
        practical,
        pd.concat(peers, ignore_index=True) if peers else pd.DataFrame(),
    )


def report_dir(db_path: str | os.PathLike[str]) -> Path:
    """Where a journal's report goes by default: the comparison's ``output`` folder as
    recorded in the journal, else ``<journal stem>-report`` beside the journal (the
    folder ``gpautotune compare`` writes)."""
    from gpautotune.storage import Journal, journal_path

    path = Path(journal_path(db_path))
    with Journal(path, read_only=True) as journal:
        output = journal.report_settings().get("output")
    return Path(output) if output else path.with_name(f"{path.stem}-report")
