"""Writing a comparison report: CSV and Markdown tables, PNG figures, a Rich table.

Files written into the output folder::

    summary.csv      per problem, strategy, checkpoint (see gpautotune.analysis._summary)
    pairwise.csv     each strategy against the reference, per checkpoint
    curves.csv       mean best-so-far, 95% band, random expectation, score, per budget
    peers.csv        gpr against the best peer, paired over seeds (comparisons with peers)
    report.md        the tables in Markdown, with the figures
    <problem>-histogram.png, <problem>-best-so-far.png, <problem>-score.png
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from rich.table import Table

from gpautotune.analysis import _plots
from gpautotune.analysis._summary import ComparisonReport, analyse

__all__ = ["write_report", "write_files", "summary_table", "markdown"]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "problem"


def _f(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x + 0.0:#.4g}" if isinstance(x, float) else str(x)  # + 0.0: no "-0"; #: keep 1.000


def write_report(
    db_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    reference: str | None = None,
    checkpoints: Sequence[int] | None = None,
    practical: float = 0.01,
) -> list[Path]:
    """Analyse a journal and write its report into ``out_dir``; returns the files written.

    Args:
        db_path: the journal (a comparison's ``storage``, or any journal of runs).
        out_dir: the folder to write (created if needed).
        reference: the strategy label others are compared with (see :func:`analyse`).
        checkpoints: budgets to tabulate (default: quarters of each problem's budget).
        practical: relative difference below which "better" is "not practically better".
    """
    return analyse(
        db_path, reference=reference, checkpoints=checkpoints, practical=practical
    ).write(out_dir)


def write_files(report: ComparisonReport, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``report``'s tables and figures into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("summary", "pairwise", "curves", "peers"):
        if name == "peers" and report.peers.empty:
            continue
        path = out / f"{name}.csv"
        getattr(report, name).to_csv(path, index=False)
        written.append(path)
    figures = {p: _figures(report, p, out) for p in report.problems}
    for paths in figures.values():
        written += paths
    path = out / "report.md"
    path.write_text(markdown(report, {p: [f.name for f in fs] for p, fs in figures.items()}))
    written.append(path)
    return written


def _figures(report: ComparisonReport, problem: str, out: Path) -> list[Path]:
    groups = report.runs.of(problem)
    info = report.runs.problems.get(problem)
    optimum = info.optimum if info is not None else None
    scale = 1.0 / optimum if optimum is not None and optimum > 0 else None
    what = "slowdown (best / optimum)" if scale is not None else "best value"
    final = max(report.checkpoints[problem])
    slug = _slug(problem)
    paths = []
    samples = {g.label: g.at(final) * (scale or 1.0) for g in groups}
    fig = _plots.histograms(
        samples, title=f"{problem}: {what} after {final} evaluations", xlabel=what
    )
    paths.append(_plots.save(fig, out / f"{slug}-histogram.png"))
    baseline = report.baselines.get(problem)
    curves = {g.label: g.curves * (scale or 1.0) for g in groups}
    positive = all(np.nanmin(c) > 0 for c in curves.values() if np.isfinite(c).any())
    fig = _plots.best_so_far(
        curves,
        title=f"{problem}: best so far (mean, 95% band)",
        ylabel=what,
        random_expectation=None if baseline is None else baseline.values * (scale or 1.0),
        log=positive,
    )
    paths.append(_plots.save(fig, out / f"{slug}-best-so-far.png"))
    scores = report.curves[(report.curves["problem"] == problem)]
    if scores["score"].notna().any():
        series = {
            label: sub["score"].to_numpy() for label, sub in scores.groupby("strategy", sort=False)
        }
        fig = _plots.score_curves(
            series,
            title=f"{problem}: score of Willemsen et al. ({baseline.source})",
            checkpoints=report.checkpoints[problem],
        )
        paths.append(_plots.save(fig, out / f"{slug}-score.png"))
    return paths


def aggregate_scores(report: ComparisonReport) -> pd.DataFrame:
    """Mean score over budgets 1..B per problem and strategy (problems with a baseline)."""
    c = report.curves
    if c.empty or not c["score"].notna().any():
        return pd.DataFrame(columns=["problem", "strategy", "score"])
    return (
        c.dropna(subset=["score"])
        .groupby(["problem", "strategy"], sort=False)["score"]
        .mean()
        .reset_index()
    )


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _summary_md(s: pd.DataFrame, slowdown: bool) -> str:
    p = "slowdown_" if slowdown else ""
    header = [
        "strategy",
        "budget",
        "n",
        "mean",
        "95% CI of mean",
        "median",
        "min",
        "max",
        "used mean",
        "used max",
        "best found at (mean)",
        "score",
        "failed",
        "refused",
        "duplicates",
        "wall s/run",
    ]
    rows = [
        [
            r["strategy"],
            str(r["budget"]),
            str(r["n"]),
            _f(r[p + "mean"]),
            f"[{_f(r[p + 'ci_low'])}, {_f(r[p + 'ci_high'])}]",
            _f(r[p + "median"]),
            _f(r[p + "min"]),
            _f(r[p + "max"]),
            _f(r["used_mean"]),
            _f(r["used_max"]),
            _f(r["best_at_mean"]),
            _f(r["score"]),
            _f(r.get("failed_mean", math.nan)),
            _f(r.get("refused_mean", math.nan)),
            _f(r.get("duplicates_mean", math.nan)),
            _f(r.get("wall_s_mean", math.nan)),
        ]
        for r in s.to_dict("records")
    ]
    return _md_table(header, rows)


def _peers_md(d: pd.DataFrame) -> str:
    header = ["ours", "best peer", "budget", "mean", "peer mean", "pairs"]
    header += ["difference [95% CI]", "Wilcoxon p", "verdict"]
    rows = [
        [
            r["strategy"],
            r["peer"],
            str(r["budget"]),
            _f(r["mean"]),
            _f(r["peer_mean"]),
            str(r["pairs"]),
            f"{_f(r['diff'])} [{_f(r['diff_ci_low'])}, {_f(r['diff_ci_high'])}]",
            f"{r['wilcoxon_p']:.3g}",
            r["verdict"],
        ]
        for r in d.to_dict("records")
    ]
    return _md_table(header, rows)


def _pairwise_md(d: pd.DataFrame) -> str:
    header = [
        "strategy",
        "budget",
        "mean",
        "reference mean",
        "difference [95% CI]",
        "relative",
        "Mann-Whitney p",
        "P(better)",
        "verdict",
    ]
    rows = [
        [
            r["strategy"],
            str(r["budget"]),
            _f(r["mean"]),
            _f(r["mean_ref"]),
            f"{_f(r['diff'])} [{_f(r['diff_ci_low'])}, {_f(r['diff_ci_high'])}]",
            f"{r['relative_diff']:+.2%}" if np.isfinite(r["relative_diff"]) else "-",
            f"{r['p_value']:.3g}" if np.isfinite(r["p_value"]) else "-",
            _f(r["p_better"]),
            r["verdict"],
        ]
        for r in d.to_dict("records")
    ]
    return _md_table(header, rows)


def _baseline_md(report: ComparisonReport, problem: str, optimum: float | None) -> str:
    """The random-search expectation at the checkpoints (as slowdowns when defined)."""
    baseline = report.baselines[problem]
    scale = 1.0 / optimum if optimum is not None and optimum > 0 else 1.0
    at = ", ".join(
        f"{b}: {baseline.values[b - 1] * scale:.4g}"
        for b in report.checkpoints[problem]
        if b <= len(baseline.values)
    )
    return f"Random-search expectation, {baseline.source}, by budget: {at}."


def markdown(report: ComparisonReport, figures: dict[str, list[str]] | None = None) -> str:
    """The report as Markdown (figure file names per problem are linked when given)."""
    parts = [f"# Comparison report: `{report.runs.path}`", ""]
    if report.runs.unfinished:
        parts += [f"{report.runs.unfinished} unfinished runs are left out.", ""]
    scores = aggregate_scores(report)
    for problem in report.problems:
        info = report.runs.problems.get(problem)
        s = report.summary[report.summary["problem"] == problem]
        slowdown = bool(s["slowdown_mean"].notna().any())
        parts += [f"## {problem}", ""]
        if info is not None and info.optimum is not None:
            parts += [f"Known optimum: {info.optimum:.6g}."]
        if problem in report.baselines:
            parts += [_baseline_md(report, problem, info.optimum if info is not None else None)]
        parts += [
            "",
            f"### {'Slowdown (best / optimum)' if slowdown else 'Best value'} at each checkpoint",
            "",
            _summary_md(s, slowdown),
            "",
        ]
        d = (
            report.pairwise[report.pairwise["problem"] == problem]
            if not report.pairwise.empty
            else report.pairwise
        )
        if not d.empty:
            parts += [
                f"### Against {report.reference[problem]} (difference of means: bootstrap BCa 95% CI; "
                f"Mann-Whitney two-sided; practical threshold {report.practical:.0%})",
                "",
                _pairwise_md(d),
                "",
            ]
        peers = report.peers[report.peers["problem"] == problem] if not report.peers.empty else None
        if peers is not None and not peers.empty:
            parts += [
                "### Against the best peer (lowest mean at each budget; paired by seed)",
                "",
                _peers_md(peers),
                "",
            ]
        sc = scores[scores["problem"] == problem]
        if not sc.empty:
            parts += [
                "### Score of Willemsen et al., mean over budgets 1..B",
                "",
                _md_table(
                    ["strategy", "score"],
                    [[r["strategy"], f"{r['score']:.4f}"] for r in sc.to_dict("records")],
                ),
                "",
            ]
        parts += [f"![{name}]({name})" for name in (figures or {}).get(problem, [])] + [""]
    return "\n".join(parts)


def summary_table(report: ComparisonReport, budget: int | None = None) -> Table:
    """A Rich table for the terminal: each problem and strategy at ``budget`` (default:
    each problem's last checkpoint), slowdowns where the optimum is known, with the
    verdict against the reference."""
    table = Table(title=f"comparison: {report.runs.path}")
    for col in (
        "problem",
        "strategy",
        "budget",
        "n",
        "mean [95% CI]",
        "median",
        "min..max",
        "used",
        "best at",
        "score",
        "vs reference",
    ):
        table.add_column(
            col, justify="left" if col in ("problem", "strategy", "vs reference") else "right"
        )
    for problem in report.problems:
        b = budget or max(report.checkpoints[problem])
        s = report.summary[(report.summary["problem"] == problem) & (report.summary["budget"] == b)]
        slowdown = bool(s["slowdown_mean"].notna().any())
        p = "slowdown_" if slowdown else ""
        d = report.pairwise
        for r in s.to_dict("records"):
            match = (
                d[(d["problem"] == problem) & (d["budget"] == b) & (d["strategy"] == r["strategy"])]
                if not d.empty
                else d
            )
            versus = (
                "(reference)"
                if r["strategy"] == report.reference[problem]
                else (match["verdict"].iloc[0] if len(match) else "-")
            )
            table.add_row(
                problem + (" (slowdown)" if slowdown else ""),
                r["strategy"],
                str(b),
                str(r["n"]),
                f"{_f(r[p + 'mean'])} [{_f(r[p + 'ci_low'])}, {_f(r[p + 'ci_high'])}]",
                _f(r[p + "median"]),
                f"{_f(r[p + 'min'])}..{_f(r[p + 'max'])}",
                _f(r["used_mean"]),
                _f(r["best_at_mean"]),
                _f(r["score"]),
                versus,
            )
    return table
