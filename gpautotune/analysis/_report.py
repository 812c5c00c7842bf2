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
from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from gpautotune.analysis import _plots
from gpautotune.analysis._summary import ComparisonReport, RandomBaseline, analyse
from gpautotune.exceptions import ConfigError

__all__ = ["write_report", "write_files", "summary_table", "markdown"]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "problem"


#: Repetitions below which an interval is marked: a bootstrap percentile interval of n
#: values lies within their range (with two, it is their min-max), so it is no 95% interval.
FEW = 5
#: The mark of such an interval, and the note that explains it.
FEW_MARK = "†"
FEW_NOTE = (
    f"{FEW_MARK} fewer than {FEW} repetitions: the bootstrap interval lies within the range "
    "of so few values (with 2, it is their min-max), so it is no 95% interval; run more "
    "repetitions for one"
)


def _interval(low: float, high: float, n: float) -> str:
    """``[low, high]``, marked when it rests on fewer than :data:`FEW` repetitions."""
    few = FEW_MARK if n < FEW and math.isfinite(low) else ""
    return f"[{_f(low)}, {_f(high)}]{few}"


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
    """Write ``report``'s tables and figures into ``out_dir``.

    Raises:
        ConfigError: ``out_dir`` cannot be written (a file, or an unwritable place).
    """
    try:
        return _write_files(report, Path(out_dir))
    except OSError as exc:
        raise ConfigError(
            f"cannot write the report into {str(out_dir)!r}: {exc.strerror or exc}; "
            "give another folder"
        ) from None


def _write_files(report: ComparisonReport, out: Path) -> list[Path]:
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
    floor = 1.0 if scale is not None else optimum
    final = max(report.checkpoints[problem])
    slug = _slug(problem)
    style = _plots.styles(report.runs.labels())  # one colour per strategy in every figure
    samples = {g.label: g.at(final) * (scale or 1.0) for g in groups}
    fig = _plots.histograms(
        samples, title=f"{problem}: after {final} evaluations", xlabel=what, floor=floor
    )
    paths = [_plots.save(fig, out / f"{slug}-histogram.png")]
    baseline = report.baselines.get(problem)
    curves = report.curves[report.curves["problem"] == problem]
    by_label = dict(list(curves.groupby("strategy", sort=False)))
    bands = {
        g.label: tuple(by_label[g.label][k].to_numpy() * (scale or 1.0) for k in _BAND)
        for g in groups
    }
    exact = baseline is not None and baseline.estimated_from is None
    fig = _plots.best_so_far(
        bands,  # type: ignore[arg-type]
        title=f"{problem}: best so far (mean and 95% interval)",
        ylabel=what,
        runs={g.label: g.repetitions for g in groups},
        random_expectation=baseline.values * (scale or 1.0) if exact else None,
        random_label="random search, exact expectation",
        floor=floor,
        checkpoints=report.checkpoints[problem],
        style=style,
    )
    paths.append(_plots.save(fig, out / f"{slug}-best-so-far.png"))
    if curves["score"].notna().any():
        series = {label: sub["score"].to_numpy() for label, sub in by_label.items()}
        series = {k: v for k, v in series.items() if np.isfinite(v).any()}
        fig = _plots.score_curves(
            series,
            title=f"{problem}: score of Willemsen et al.",
            checkpoints=report.checkpoints[problem],
            note=_score_note(baseline),
            style=style,
        )
        paths.append(_plots.save(fig, out / f"{slug}-score.png"))
    return paths


_BAND = ("mean", "ci_low", "ci_high")


def _score_note(baseline: RandomBaseline | None) -> str | None:
    """Where the score's random baseline comes from, and who is left out."""
    if baseline is None:
        return None
    note = f"Random baseline: {baseline.source}."
    if baseline.estimated_from is not None:
        note += (
            f" {baseline.estimated_from} has no score: its runs are the baseline, so its "
            "score would be 0 by construction."
        )
    return note


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
        "95% CI of mean (bootstrap)",
        "median",
        "min",
        "max",
        "at optimum",
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
            _interval(r[p + "ci_low"], r[p + "ci_high"], r["n"]),
            _f(r[p + "median"]),
            _f(r[p + "min"]),
            _f(r[p + "max"]),
            _f(r.get("at_optimum", math.nan)),
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


def _difference(r: dict, n: float) -> str:
    """A difference with its interval: ``diff [low, high]`` (marked for ``n`` < FEW)."""
    return f"{_f(r['diff'])} {_interval(r['diff_ci_low'], r['diff_ci_high'], n)}"


def _peers_md(d: pd.DataFrame) -> str:
    header = ["ours", "best peer", "budget", "mean", "peer mean", "pairs"]
    header += ["difference [95% CI]", "test", "p", "verdict"]
    rows = [
        [
            r["strategy"],
            r["peer"],
            str(r["budget"]),
            _f(r["mean"]),
            _f(r["peer_mean"]),
            str(r["pairs"]),
            _difference(r, r["pairs"]),
            r["test"],
            _p(r["p_value"]),
            r["verdict"],
        ]
        for r in d.to_dict("records")
    ]
    return _md_table(header, rows)


def _pairwise_md(d: pd.DataFrame) -> str:
    header = [
        "strategy",
        "budget",
        "n",
        "mean",
        "reference mean",
        "difference [95% CI]",
        "relative",
        "test",
        "p",
        "p (Holm)",
        "P(better)",
        "verdict",
    ]
    rows = [
        [
            r["strategy"],
            str(r["budget"]),
            str(r["n"]),
            _f(r["mean"]),
            _f(r["mean_ref"]),
            _difference(r, min(r["n"], r["n_ref"])),
            f"{r['relative_diff']:+.2%}" if np.isfinite(r["relative_diff"]) else "-",
            r["test"],
            _p(r["p_value"]),
            _p(r["p_holm"]),
            _f(r["p_better"]),
            r["verdict"],
        ]
        for r in d.to_dict("records")
    ]
    return _md_table(header, rows)


def _p(p: float) -> str:
    return f"{p:.3g}" if np.isfinite(p) else "-"


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


_NONE = "no successful evaluation"


def _noted(table: str) -> list[str]:
    """A Markdown table and, when it marks intervals of few repetitions, the note."""
    return [table, "", *([FEW_NOTE + ".", ""] if FEW_MARK in table else [])]


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
            note = _score_note(report.baselines[problem])
            if report.baselines[problem].estimated_from is not None and note:
                parts += [note.split(". ", 1)[1]]
        failed = report.never_succeeded().get(problem, [])
        if failed:
            said = [f"{g.label}{(g.no_success() or '').removeprefix(_NONE)}" for g in failed]
            parts += [f"{_NONE.capitalize()} in any run of {', '.join(said)}."]
        parts += [
            "",
            f"### {'Slowdown (best / optimum)' if slowdown else 'Best value'} at each checkpoint",
            "",
            *_noted(_summary_md(s, slowdown)),
        ]
        d = (
            report.pairwise[report.pairwise["problem"] == problem]
            if not report.pairwise.empty
            else report.pairwise
        )
        if not d.empty:
            parts += [
                f"### Against {report.reference[problem]}",
                "",
                "Differences of means with bootstrap 95% intervals; `wilcoxon`: signed-rank "
                "test over the seeds both strategies ran (n pairs, the difference is the "
                "mean paired difference), `mann-whitney`: U test where they share fewer "
                "than two seeds; two-sided p-values, Holm-adjusted over the "
                f"{d['strategy'].nunique()} strategies tested against "
                f"{report.reference[problem]}; verdicts at 5% with a practical threshold "
                f"of {report.practical:.0%}.",
                "",
                *_noted(_pairwise_md(d)),
            ]
        peers = report.peers[report.peers["problem"] == problem] if not report.peers.empty else None
        if peers is not None and not peers.empty:
            parts += [
                "### Against the best peer (lowest mean at each budget; paired by seed)",
                "",
                *_noted(_peers_md(peers)),
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


def summary_table(report: ComparisonReport, budget: int | None = None) -> Group:
    """Rich tables for the terminal, one per problem: each strategy at ``budget``
    (default: the problem's last checkpoint), slowdowns where the optimum is known, with
    the verdict against the reference; a caption says how intervals and tests are made."""
    tables = [_problem_table(report, problem, budget) for problem in report.problems]
    few = any(
        ((rows["n"] < FEW) & rows["ci_low"].notna()).any()
        for rows in (_shown(report, problem, budget)[1] for problem in report.problems)
    )
    estimated = sorted(
        {b.estimated_from for b in report.baselines.values() if b.estimated_from is not None}
    )
    notes = ["intervals: 95% bootstrap; vs reference: Wilcoxon over shared seeds, Holm-adjusted"]
    if estimated:
        notes.append(
            f"{', '.join(estimated)}: no score (the estimated random baseline; 0 by construction)"
        )
    if few:
        notes.append(FEW_NOTE)
    if report.runs.unfinished:
        notes.append(
            f"{report.runs.unfinished} unfinished run(s) left out (resume them to include them)"
        )
    if not tables:
        notes.insert(0, "no finished run in this journal")
    return Group(*tables, *(Text(n, style="dim") for n in notes))


def _shown(report: ComparisonReport, problem: str, budget: int | None) -> tuple[int, pd.DataFrame]:
    """The budget the terminal shows for ``problem`` and the summary rows there."""
    b = budget or max(report.checkpoints[problem])
    return b, report.summary[
        (report.summary["problem"] == problem) & (report.summary["budget"] == b)
    ]


def _problem_table(report: ComparisonReport, problem: str, budget: int | None) -> Table:
    b, s = _shown(report, problem, budget)
    slowdown = bool(s["slowdown_mean"].notna().any())
    p = "slowdown_" if slowdown else ""
    reference = report.reference[problem]
    what = "slowdown (best / optimum)" if slowdown else "best value"
    table = Table(
        title=f"{problem}: {what} after {b} evaluations",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for col in ("strategy", "n", "mean [95% CI]", "median", "best at", "score"):
        table.add_column(col, justify="left" if col == "strategy" else "right", no_wrap=True)
    table.add_column(f"vs {reference}")
    d = report.pairwise
    for r in s.to_dict("records"):
        match = d[(d["problem"] == problem) & (d["budget"] == b)] if not d.empty else d
        match = match[match["strategy"] == r["strategy"]] if len(match) else match
        versus = (
            _reference_cell(report, problem, reference, b)
            if r["strategy"] == reference
            else (match["verdict"].iloc[0] if len(match) else "-")
        )
        table.add_row(
            r["strategy"],
            str(r["n"]),
            f"{_f(r[p + 'mean'])} {_interval(r[p + 'ci_low'], r[p + 'ci_high'], r['n'])}",
            _f(r[p + "median"]),
            f"{r['best_at_mean']:.0f}" if np.isfinite(r["best_at_mean"]) else "-",
            f"{r['score']:.3f}" if np.isfinite(r["score"]) else "-",
            versus,
        )
    return table


def _reference_cell(report: ComparisonReport, problem: str, reference: str, budget: int) -> str:
    """``reference``, or what went wrong when none of its evaluations succeeded."""
    group = next(g for g in report.runs.of(problem) if g.label == reference)
    failed = group.no_success(budget)
    return f"reference; {failed}" if failed else "reference"
