"""How the default GPR's own models rank the configurations that would meet the bound.

    GPAUTOTUNE_DATA=../shared/data python benchmarks/trap_ranks.py [--workers 2] \
        [--out benchmarks/results/gpr/trap_ranks.csv]

The bound of issue #18 on a cache is the best peer's mean slowdown at 60 evaluations
(docs/benchmarks/gpr-spaces.md, "The worst run against every strategy's worst"); a run is
trapped when its best at 120 is above it. For each run of ``RUNS`` (the default's trapped
runs of the peers comparison, seeds 1-20, and, on the same tables, the runs that were
furthest above the bound at 60 and still ended under it), the default run is made again
(``tune(problem, "gpr", 120, seed)``; a run made on another machine need not repeat the
stored one, the ``final`` column gives the run studied) and, at evaluations 40,
60, 90 and 119, the GP the run itself used at that step is restored from the
hyperparameters its trials record (no refit). Its expected improvement, weighted by the
feasibility classifier where configurations fail as the step weighs it, ranks every
unmeasured configuration of the table; the rows give the best rank held by a
configuration under the bound (0: the run's next pick), how many such configurations are
left, the Spearman correlation of the GP's mean with the whole table, and the model the
step used; among the unmeasured one-parameter moves of the best configuration so far
(those an escape step polls), the fastest one and its rank by the same score; and the best
rank of a configuration under the bound by a random forest fitted to the same trials
(:class:`~gpautotune.surrogate.ForestSurrogate`, seeded by the run's seed, on the kernel's
inputs and the log values, as ``forest_every`` fits it) and its expected improvement,
weighted alike. Per run:
when a configuration under the bound was first measured, and how many parameters the last
best configuration differs in from the nearest one under the bound.

Five columns ask whether the step's model was misfitted rather than short of data:
``loo_rho``, the Spearman correlation of the GP's leave-one-out means with the measured
values (the default's ``loo_rank``, as its choice among GPs scores a fit), beside
``forest_oob_rho``, the same for the forest's out-of-bag means (so a choice between the
two by held-out ranking would pick the forest where it is higher); ``mll_gain``, how much
higher a marginal likelihood 20 more fresh starts (prior draws) find than the step's own
hyperparameters refined alone, and ``restarts_rank``, the best rank of a configuration
under the bound under that fit's expected improvement; ``xi_rank``, that rank under the
step's own GP when expected improvement aims at ``XI`` standard deviations below the
incumbent (the classic exploration margin); ``laplace_rank``, that rank when the step's
score is averaged over ``DRAWS`` length-scale vectors drawn from a Laplace approximation
of their posterior (:mod:`gpautotune.surrogate._laplace`, the draws of the
``lengthscale_draws`` option; the other hyperparameters held), as Spearmint's integrated
acquisition averages over hyperparameter samples, so that a region the fit explains by
one length-scale can keep the expected improvement another would give it.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import warnings

import numpy as np
from scipy.special import logsumexp
from scipy.stats import spearmanr

from gpautotune.acquisition import make_acquisition, score_candidates
from gpautotune.parallel import dask_client
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.strategies import make_strategy
from gpautotune.strategies._gpr_feasibility import feasibility_model, success, weigh
from gpautotune.strategies._gpr_records import ModelFit
from gpautotune.surrogate import ForestSurrogate, lengthscale_draws, lengthscales
from gpautotune.surrogate._gp import GPSurrogate
from gpautotune.tuner import tune

#: The bound of each cache with a trapped run (docs/benchmarks/gpr-spaces.md).
BOUNDS = {
    "gemm/RTX_2080_Ti": 1.092,
    "gemm/RTX_3060_laptop": 1.131,
    "gemm/RTX_3090": 1.152,
    "pnpoly/RTX_2080_Ti": 1.023,
    "convolution/RTX_3060_laptop": 1.017,
    "convolution/RTX_Titan": 1.059,
}
#: (cache, seed, kind): the trapped runs of `benchmarks/results/gpr/kt-loo40/runs.csv`
#: and, per table, the run furthest above the bound at 60 that ended under it.
RUNS = [
    ("gemm/RTX_2080_Ti", 10, "trapped"),
    ("gemm/RTX_3060_laptop", 3, "trapped"),
    ("gemm/RTX_3060_laptop", 6, "trapped"),
    ("gemm/RTX_3060_laptop", 11, "trapped"),
    ("gemm/RTX_3090", 19, "trapped"),
    ("pnpoly/RTX_2080_Ti", 13, "trapped"),
    ("convolution/RTX_3060_laptop", 14, "trapped"),
    ("convolution/RTX_Titan", 7, "trapped"),
]
STEPS = (40, 60, 90, 119)
#: Extra fresh starts of the ``restarts`` refit, and the exploration margin of ``xi_rank``
#: (standardised output units).
RESTARTS, XI = 20, 0.5
#: Length-scale draws of ``laplace_rank``.
DRAWS = 32
COLUMNS = [
    "problem", "seed", "kind", "final", "first_under", "distance", "step",
    "under_left", "best_rank", "median_rank", "table_rho", "variant",
    "moves_left", "best_move", "best_move_rank", "forest_rank",
    "loo_rho", "forest_oob_rho", "mll_gain", "restarts_rank", "xi_rank", "laplace_rank",
]  # fmt: skip


def _controls(runs_csv: str) -> list[tuple[str, int, str]]:
    """Per table of :data:`BOUNDS`, the run ending under the bound that was worst at 60."""
    rows = [r for r in csv.DictReader(open(runs_csv)) if r["label"] == "GPR-loo40"]
    out = []
    for problem, bound in BOUNDS.items():
        ok = [r for r in rows if r["problem"] == problem and float(r["slowdown_120"]) <= bound]
        worst = max(ok, key=lambda r: float(r["slowdown_60"]))
        out.append((problem, int(worst["seed"]), "escaped"))
    return out


def study(problem_name: str, seed: int, kind: str) -> list[dict]:
    warnings.simplefilter("ignore")
    problem = kt_cache_problem(f"kt-caches/{problem_name}.json.gz")
    bound = BOUNDS[problem_name]
    trials = tune(problem, "gpr", 120, seed=seed).trials
    space = problem.space
    table = problem._index[problem._allowed]
    truth = problem._values[problem._allowed] / problem.optimum
    measured = np.isfinite(truth)
    under = measured & (truth <= bound)
    values = np.array([t.value / problem.optimum if t.ok else np.inf for t in trials])
    rows = space.to_index([t.config for t in trials])
    first = np.flatnonzero(values <= bound)
    best_row = rows[int(np.argmin(values))]
    distance = int((table[under] != best_row).sum(axis=1).min())
    base = {
        "problem": problem_name,
        "seed": seed,
        "kind": kind,
        "final": round(float(values.min()), 4),
        "first_under": int(first[0]) + 1 if len(first) else "",
        "distance": distance,
    }
    out = []
    keys = space.row_keys(table)
    for step in STEPS:
        fit = ModelFit.of(trials[step].info)
        if fit is None or fit.step != step:
            continue
        strategy = make_strategy("gpr", space, seed=seed)
        strategy.tell(trials[:step])
        gp, X, y = strategy.restored(fit)
        features = strategy.features(table)
        mean, _ = gp.predict(features)
        # the step's own score: log-EI at the incumbent, weighted by the probability of success
        feasible = feasibility_model(space, trials[:step])
        p = success(space, table, feasible)
        seen = np.isin(keys, space.row_keys(rows[:step]))
        left = under & ~seen

        args = (strategy, y, features, p, seen)
        score = _scored(gp, *args)
        warm = fit.hyperparameters  # refined alone (no fresh start), then beside RESTARTS more
        alone = GPSurrogate(gp.settings, gp.d, gp.k).fit(X, y, seed=seed, warm=warm, fresh=False)
        multi = GPSurrogate(dataclasses.replace(gp.settings, restarts=RESTARTS), gp.d, gp.k)
        more = multi.fit(X, y, seed=seed, warm=warm, fresh=True)
        forest_scores = strategy.forest_scores(trials[:step], table, feasible, seed)
        forest = _ranks(np.where(seen, -np.inf, forest_scores))
        incumbent = rows[:step][int(np.argmin(values[:step]))]
        moves = ((table != incumbent).sum(axis=1) == 1) & ~seen & measured
        move = int(np.argmin(np.where(moves, truth, np.inf))) if moves.any() else None
        move_rank = int((score[moves] > score[move]).sum()) if move is not None else ""
        out.append(
            {
                **base,
                "step": step,
                "under_left": int(left.sum()),
                "best_rank": _best_under(score, left),
                "median_rank": int(np.median(_ranks(score)[left])) if left.any() else "",
                "table_rho": round(float(spearmanr(mean[measured], truth[measured])[0]), 3),
                "variant": ["own", "unit", "copula"][fit.variant or 0],
                "moves_left": int(moves.sum()),
                "best_move": round(float(truth[move]), 4) if move is not None else "",
                "best_move_rank": move_rank,
                "forest_rank": int(forest[left].min()) if left.any() else "",
                "loo_rho": round(gp.loo_rank(), 3),
                "forest_oob_rho": round(_oob_rho(X[:, : gp.d], gp.transform(y), seed), 3),
                "mll_gain": round(more.mll - alone.mll, 3),
                "restarts_rank": _best_under(_scored(multi, *args), left),
                "xi_rank": _best_under(_scored(gp, *args, XI), left),
                "laplace_rank": _best_under(_integrated(gp, args, seed * 1000 + step), left),
            }
        )
    return out


def _scored(model, strategy, y, features, p, seen, margin: float = 0.0) -> np.ndarray:
    """The step's score (log-EI at the incumbent less ``margin``, weighted by the
    probability of success ``p``) of the unmeasured rows under ``model``; -inf where
    ``seen``."""
    kind = strategy.options.acquisition
    acqf = make_acquisition(kind, model.model, float(model.transform(y).min()) - margin)
    score = weigh(score_candidates(acqf, features), p, kind)
    return np.where(seen, -np.inf, score)


def _integrated(gp, args, seed: int) -> np.ndarray:
    """The step's score averaged (as expected improvement, not its log) over
    :data:`DRAWS` length-scale vectors drawn from the Laplace approximation of their
    posterior at the step's own fit (as ``lengthscale_draws`` draws them)."""
    rng = np.random.default_rng(seed)
    draws = []
    for values in lengthscale_draws(gp.model, DRAWS, rng):
        with lengthscales(gp.model, values):
            draws.append(_scored(gp, *args))
    scores = np.vstack(draws)
    mean = np.full(scores.shape[1], -np.inf)
    finite = np.isfinite(scores).any(axis=0)
    mean[finite] = logsumexp(scores[:, finite], axis=0) - np.log(DRAWS)
    return mean


def _best_under(score: np.ndarray, left: np.ndarray) -> int | str:
    """The best rank by ``score`` of a configuration under the bound not yet measured."""
    return int(_ranks(score)[left].min()) if left.any() else ""


def _oob_rho(X: np.ndarray, z: np.ndarray, seed: int) -> float:
    """The Spearman correlation of the forest's out-of-bag means with ``z``, the rows at
    the largest ``z`` (imputed failures) left out as :meth:`GPSurrogate.loo_rank` does."""
    forest = ForestSurrogate(seed).forest.set_params(oob_score=True).fit(X, z)
    keep = z < z.max()
    return float(spearmanr(forest.oob_prediction_[keep], z[keep]).statistic)


def _ranks(score: np.ndarray) -> np.ndarray:
    """Each row's rank by ``score``, highest first (0), ties in row order."""
    rank = np.empty(len(score), dtype=int)
    rank[np.argsort(-score, kind="stable")] = np.arange(len(score))
    return rank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs-csv", default="benchmarks/results/gpr/kt-loo40/runs.csv")
    parser.add_argument("--out", default="benchmarks/results/gpr/trap_ranks.csv")
    args = parser.parse_args()
    runs = RUNS + _controls(args.runs_csv)
    with dask_client(workers=args.workers) as client:  # one run per task
        results = client.gather(client.map(study, *zip(*runs, strict=True), pure=False))
    write_rows([r for result in results for r in result], COLUMNS, args.out)


def write_rows(rows: list[dict], columns: list[str], out: str) -> None:
    """Write ``rows`` to the CSV file ``out`` and print them as a Markdown table."""
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in columns) + " |")


if __name__ == "__main__":
    main()
