"""Seed 003 Table 11.3 from a comparison journal, beside the thesis' own per-run results.

Run after ``gpautotune compare configs/table-11-3.yaml`` (any subset of its labels)::

    python benchmarks/table_11_3.py --journal results/table-11-3.db \
        --out benchmarks/results/compare/table-11-3

It reads every finished repetition of the journal (``gpautotune.analysis.load_runs``),
takes each one's final slowdown (best value / the table's optimum), and writes, into
``--out``:

* ``runs.csv`` — one row per repetition (label, seed, slowdown, used, best_at), so that
  the table and figure can be redrawn without the journal (``--runs`` reads it back);
* ``thesis_vs_ours.md`` — mean, median, max, share above 1.2 and budget per method, next
  to the thesis' 1,000 runs (``shared/data/laplacian-k40c/thesis_*_runs_1000.csv``), with
  the difference of means and whether it is within ±0.03;
* ``thesis_vs_ours.png`` — the two slowdown distributions of every method, one above the
  other (values above 2 drawn at 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from gpautotune.analysis import load_runs
from gpautotune.problems import find_data

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


def our_runs(journal: Path) -> pd.DataFrame:
    """One row per finished repetition of the journal's Laplacian replay runs."""
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
    return pd.concat(rows, ignore_index=True).sort_values(["label", "seed"], kind="stable")


def table(ours: pd.DataFrame, thesis: pd.DataFrame) -> str:
    """Markdown: ours next to the thesis, per label, in the thesis' order."""
    head = (
        "| method | reps | mean | median | max | > 1.2 | used mean | thesis mean | thesis median "
        "| thesis max | thesis > 1.2 | thesis used mean | mean - thesis | within ±0.03 |"
    )
    lines = [head, "|" + "---|" * 14]
    for label in [k for k in THESIS_NAMES if k in set(ours["label"])]:
        a = ours.loc[ours["label"] == label]
        b = thesis.loc[thesis["method"] == THESIS_NAMES[label]]
        diff = a["slowdown"].mean() - b["slowdown"].mean()
        cells = [label, f"{len(a)}", *_stats(a), *_stats(b), f"{diff:+.3f}"]
        lines.append("| " + " | ".join(cells + ["yes" if abs(diff) <= 0.03 else "no"]) + " |")
    return "\n".join(lines)


def _stats(frame: pd.DataFrame) -> list[str]:
    s = frame["slowdown"]
    return [
        f"{s.mean():.3f}",
        f"{s.median():.3f}",
        f"{s.max():.3f}",
        f"{(s > 1.2).mean():.1%}",
        f"{frame['used'].mean():.1f}",
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
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--journal", type=Path, help="the comparison's journal")
    source.add_argument("--runs", type=Path, help="a runs.csv written earlier")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ours = our_runs(args.journal) if args.journal else pd.read_csv(args.runs)
    if args.journal:
        ours.to_csv(args.out / "runs.csv", index=False, float_format="%.6g")
    thesis = thesis_runs()
    text = table(ours, thesis)
    (args.out / "thesis_vs_ours.md").write_text(text + "\n")
    figure(ours, thesis, args.out / "thesis_vs_ours.png")
    print(text)


if __name__ == "__main__":
    main()
