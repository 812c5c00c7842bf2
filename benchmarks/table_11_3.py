"""Seed 003 Table 11.3 from a comparison journal, beside the thesis' own per-run results.

Run after ``gpautotune compare configs/table-11-3.yaml`` or ``benchmarks/baselines-laplacian.yaml``
(any subset of their labels)::

    python benchmarks/table_11_3.py --journal results/table-11-3.db \
        --out benchmarks/results/compare/table-11-3

It reads every finished repetition of the journal (``gpautotune.analysis.load_runs``),
takes each one's final slowdown (best value / the table's optimum), and writes, into
``--out``:

* ``runs.csv.gz`` — one row per repetition (label, seed, slowdown, used, best_at,
  final_slowdown), so that the tables and figure can be redrawn without the journal
  (``--runs`` reads it back, and joins several: parts of a comparison run into separate
  journals);
* ``thesis_vs_ours.md`` — mean, median, min, max, share above 1.2 and budget (mean and
  maximum evaluations used) per method, next
  to the thesis' 1,000 runs (``shared/data/laplacian-k40c/thesis_*_runs_1000.csv``), with
  the difference of means and whether it is within ±0.03 (labels the thesis does not
  have, the variants, without the thesis' columns), and for the factor-fixing methods
  (lm, qr, dlmt) the *final-slice* slowdown: the best measurement inside the slice the
  run ends in (the ``fixed`` factors its last proposal records), what the seeds report
  for LM/RQ ("the best of the 4 points left") and DLMT;
* ``dlmt_first_step.csv`` — for the runs labelled ``DLMT``: whether its first analysis
  found nothing significant, how many factors its first fixing step fixed and whether
  ``elements_number`` was among them (a summary is printed);
* ``thesis_vs_ours.png`` — the two slowdown distributions of every method of the thesis,
  one above the other (values above 2 drawn at 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from gpautotune.analysis import load_runs, save_figure
from gpautotune.problems import find_data
from gpautotune.storage import Journal
from gpautotune.trial import Trial

#: Our labels (configs/table-11-3.yaml) -> the thesis' method names.
THESIS_NAMES = {
    "RS": "RS",
    "LHS": "LHS",
    "GS": "GS",
    "GSR": "GSR",
    "GA": "GA",
    "LM": "LM",
    "QR": "RQ",
    "DLMT": "DLMT",
    "GPR-seeds": "GPR",
    "GPR": "GPR",
}
OPTIMUM = 1.16501e-10
#: Strategies that fix factors step by step and record their slice in each proposal.
FIXING = ("lm", "qr", "dlmt")


def thesis_runs() -> pd.DataFrame:
    """The thesis' per-run results: method (our label's thesis name), slowdown, used."""
    methods = pd.read_csv(find_data("laplacian-k40c/thesis_method_runs_1000.csv"))
    gpr = pd.read_csv(find_data("laplacian-k40c/thesis_gpr_runs_1000.csv"))
    return pd.concat(
        [
            methods[["method", "slowdown", "point_number"]].rename(
                columns={"point_number": "used"}
            ),
            gpr[["method", "slowdown"]].assign(used=120),
        ],
        ignore_index=True,
    )


def our_runs(journal: Path, fixing: list[dict]) -> pd.DataFrame:
    """One row per finished repetition of the journal's Laplacian replay runs, with the
    final-slice slowdowns of ``fixing`` (:func:`fixing_runs`)."""
    rows = []
    for g in load_runs(journal).groups:
        final = g.curves[np.arange(g.repetitions), np.minimum(g.budgets, g.horizon) - 1]
        rows.append(
            pd.DataFrame(
                {
                    "label": g.label,
                    "seed": g.seeds,
                    "slowdown": final / OPTIMUM,
                    "used": g.used,
                    "best_at": g.best_at,
                }
            )
        )
    ours = pd.concat(rows, ignore_index=True)
    final = {(r["label"], r["seed"]): r["final_slowdown"] for r in fixing}
    keys = zip(ours["label"], ours["seed"], strict=True)
    ours["final_slowdown"] = [final.get(k, np.nan) for k in keys]
    return ours.sort_values(["label", "seed"], kind="stable")


def fixing_runs(journal: Path) -> list[dict]:
    """Per finished run of a factor-fixing strategy: its final-slice slowdown and what its
    first analyses decided (from the ``step`` and ``fixed`` its proposals record)."""
    out = []
    with Journal(journal, read_only=True) as j:
        for run in j.runs():
            if run.strategy not in FIXING or run.status != "finished":
                continue
            trials = j.trials(run.id)
            out.append(
                {"label": run.label, "seed": run.seed, "strategy": run.strategy}
                | final_slice(trials)
                | first_decisions(trials)
            )
    return out


def final_slice(trials: list[Trial]) -> dict[str, float]:
    """The best ok value inside the slice of the last proposal, over the optimum."""
    fixed = trials[-1].info.get("fixed") if trials else None
    inside = [
        t.value
        for t in trials
        if fixed is not None and t.ok and all(t.config[k] == v for k, v in fixed.items())
    ]
    return {"final_slowdown": min(inside) / OPTIMUM if inside else np.nan}


def first_decisions(trials: list[Trial]) -> dict[str, object]:
    """Nothing fixed after the first analysis (step 1 fixes nothing), and the factors of
    the first step that fixed some."""
    by_step = {t.info.get("step"): t.info.get("fixed") for t in trials}
    first = next((t.info["fixed"] for t in trials if t.info.get("fixed")), {})
    return {
        "nothing_significant_first": by_step.get(1) == {},
        "first_fixed": len(first),
        "elements_number_first": "elements_number" in first,
    }


def dlmt_steps(fixing: list[dict], ours: pd.DataFrame) -> pd.DataFrame:
    """The first decisions of the runs labelled DLMT, with their slowdown and budget."""
    steps = pd.DataFrame([r for r in fixing if r["label"] == "DLMT"])
    if steps.empty:
        return steps
    frame = steps.merge(ours[["label", "seed", "slowdown", "used"]], on=["label", "seed"])
    frame = frame[
        ["seed", "slowdown", "used", "nothing_significant_first", "first_fixed"]
        + ["elements_number_first"]
    ]
    print(
        f"DLMT runs {len(frame)}; nothing significant at the first analysis: "
        f"{frame.nothing_significant_first.mean():.2f}"
    )
    by_en = frame.groupby("elements_number_first").agg(
        runs=("seed", "size"), mean=("slowdown", "mean")
    )
    print("elements_number fixed at the first fixing step:\n" + by_en.round(3).to_string())
    by_k = frame.groupby("first_fixed").agg(
        runs=("seed", "size"), mean=("slowdown", "mean"), used=("used", "mean")
    )
    print("factors fixed at the first fixing step:\n" + by_k.round(3).to_string())
    return frame


STATS = ("mean", "median", "min", "max", "> 1.2", "used mean", "used max")


def table(ours: pd.DataFrame, thesis: pd.DataFrame) -> str:
    """Markdown: ours next to the thesis, per label (the thesis' methods first, in its
    order, then the variants without the thesis' columns)."""
    head = ["method", "reps", *STATS, *(f"thesis {c}" for c in STATS)]
    head += ["mean - thesis", "within ±0.03", "final-slice mean", "final-slice max"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    labels = set(ours["label"])
    order = [k for k in THESIS_NAMES if k in labels]
    for label in order + sorted(labels - set(order), key=list(ours["label"]).index):
        a = ours.loc[ours["label"] == label]
        cells = [label, f"{len(a)}", *_stats(a)]
        if label in THESIS_NAMES:
            b = thesis.loc[thesis["method"] == THESIS_NAMES[label]]
            diff = a["slowdown"].mean() - b["slowdown"].mean()
            cells += [*_stats(b), f"{diff:+.3f}", "yes" if abs(diff) <= 0.03 else "no"]
        else:
            cells += ["–"] * (len(STATS) + 2)
        final = a["final_slowdown"].dropna() if "final_slowdown" in a else pd.Series()
        cells += [f"{final.mean():.4f}", f"{final.max():.3f}"] if len(final) else ["–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _stats(frame: pd.DataFrame) -> list[str]:
    s = frame["slowdown"]
    return [
        f"{s.mean():.3f}",
        f"{s.median():.3f}",
        f"{s.min():.3f}",
        f"{s.max():.3f}",
        f"{(s > 1.2).mean():.1%}",
        f"{frame['used'].mean():.1f}",
        f"{frame['used'].max():.0f}",
    ]


def figure(ours: pd.DataFrame, thesis: pd.DataFrame, path: Path) -> None:
    """Per method, the thesis' and our slowdown histograms (densities, shared bins)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [k for k in THESIS_NAMES if k in set(ours["label"])]
    fig, axes = plt.subplots(len(labels), 1, figsize=(7, 1.5 * len(labels)), sharex=True)
    bins = np.linspace(1.0, 2.0, 51)
    for ax, label in zip(np.atleast_1d(axes), labels, strict=True):
        a = np.clip(thesis.loc[thesis["method"] == THESIS_NAMES[label], "slowdown"], 1, 2)
        b = np.clip(ours.loc[ours["label"] == label, "slowdown"], 1, 2)
        ax.hist(a, bins=bins, density=True, alpha=0.5, label=f"thesis ({len(a)} runs)")
        ax.hist(b, bins=bins, density=True, alpha=0.5, label=f"gpautotune ({len(b)} runs)")
        ax.set_ylabel(label, rotation=0, ha="right")
        ax.set_yticks([])
        ax.legend(fontsize=7, loc="upper right")
    np.atleast_1d(axes)[-1].set_xlabel("slowdown vs the optimum (values above 2 drawn at 2)")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--journal", type=Path, help="the comparison's journal")
    source.add_argument(
        "--runs",
        type=Path,
        nargs="+",
        help="runs.csv.gz written earlier; several (parts run into separate journals) are joined",
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    fixing = fixing_runs(args.journal) if args.journal else []
    if args.journal:
        ours = our_runs(args.journal, fixing)
    else:
        ours = pd.concat([pd.read_csv(path) for path in args.runs], ignore_index=True)
    if args.journal or len(args.runs) > 1:
        ours.to_csv(args.out / "runs.csv.gz", index=False, float_format="%.6g")
    if args.journal:
        steps = dlmt_steps(fixing, ours)
        if not steps.empty:
            steps.to_csv(args.out / "dlmt_first_step.csv", index=False, float_format="%.6g")
    thesis = thesis_runs()
    text = table(ours, thesis)
    (args.out / "thesis_vs_ours.md").write_text(text + "\n")
    if set(ours["label"]) & set(THESIS_NAMES):
        figure(ours, thesis, args.out / "thesis_vs_ours.png")
    print(text)


if __name__ == "__main__":
    main()
