"""How a run's own GP ranks the adjacent moves of its best configuration that are under the bound.

    GPAUTOTUNE_DATA=../shared/data python benchmarks/adjacent_ranks.py \
        results/gpr-kt-adjacent-lent.db --table gemm/RTX_3060_laptop --bound 1.123 \
        --seed 3 --label GPR-adjacent --steps 92 100 108 116

For each step of one stored run (a journal of ``gpautotune compare``), the GP that step
used is restored from the hyperparameters its trial records (no refit), with the options
of the run's label (``poll_adjacent`` where the label says ``adjacent``), and scores the
unmeasured adjacent moves of the best configuration so far (every parameter within one
level of its own, :meth:`Space.adjacent_index`'s moves, from the whole table): by LCB with
kappa 10 (the escape steps' score), by log expected improvement (the model steps') and by
the mean. Per step: how many such moves are left, how many are under the bound, and the
best rank (0 first) one of those holds under each score. Where that rank is near the
middle of the moves, the GP tells them apart no better than a random order would.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from gpautotune.acquisition import make_acquisition, score_candidates
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.storage import Journal
from gpautotune.strategies import make_strategy
from gpautotune.strategies._gpr_records import ModelFit


def _best_rank(score: np.ndarray, under: np.ndarray) -> int | str:
    """The best rank (highest score first, 0) of a row of ``under``."""
    if not under.any():
        return "-"
    rank = np.empty(len(score), dtype=int)
    rank[np.argsort(-score, kind="stable")] = np.arange(len(score))
    return int(rank[under].min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--table", required=True)
    parser.add_argument("--bound", type=float, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--steps", type=int, nargs="+", required=True)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    problem = kt_cache_problem(f"kt-caches/{args.table}.json.gz")
    space = problem.space
    table = problem._index[problem._allowed]
    truth = problem._values[problem._allowed] / problem.optimum
    keys = space.row_keys(table)
    journal = Journal(args.db, read_only=True)
    run = next(
        r
        for r in journal.runs()
        if (r.problem, r.label, r.seed) == (args.table, args.label, args.seed)
    )
    trials = journal.trials(run.id)
    options = {"poll_adjacent": True} if "adjacent" in args.label else {}
    print("| step | adjacent moves left | under the bound | best rank: LCB 10 | log-EI | mean |")
    print("|---|---|---|---|---|---|")
    for step in args.steps:
        fit = ModelFit.of(trials[step].info)
        strategy = make_strategy("gpr", space, seed=args.seed, **options)
        strategy.tell(trials[:step])
        gp, _, y = strategy.restored(fit)
        values = np.array([t.value if t.ok else np.inf for t in trials[:step]])
        best = space.to_index([trials[int(np.argmin(values))].config])[0]
        seen = np.isin(keys, space.row_keys(space.to_index([t.config for t in trials[:step]])))
        moves = (np.abs(table - best).max(axis=1) == 1) & ~seen
        features = strategy.features(table[moves])
        under = truth[moves] <= args.bound
        best_f = float(gp.transform(y).min())
        lcb = score_candidates(make_acquisition("lcb", gp.model, best_f, 10.0), features)
        ei = score_candidates(make_acquisition("logei", gp.model, best_f), features)
        mean, _ = gp.predict(features)
        ranks = [_best_rank(s, under) for s in (lcb, ei, -np.asarray(mean))]
        print(
            f"| {step} | {int(moves.sum())} | {int(under.sum())} | "
            + " | ".join(map(str, ranks))
            + " |"
        )


if __name__ == "__main__":
    main()
