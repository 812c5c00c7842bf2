"""Does a GP's leave-one-out ranking tell which GP variant ranks the whole table best?

    python benchmarks/loo_study.py JOURNAL PROBLEM --steps 40 60 90 [--label GPR] \
        [--option KEY=VALUE ...]

For each finished run of ``PROBLEM`` in a comparison journal (the runs labelled
``--label``), and each step ``k``: the GPR strategy's own GP, the ``unit`` length-scale
prior, the copula output warp and the Kumaraswamy input warp are fitted (fresh starts) to
the run's first ``k`` trials, as a GPR step would fit them. Each GP's score of
``model_choice: loo`` (the Spearman correlation of its closed-form leave-one-out means
with the measured values, the worst value and failures left out) is printed beside what
the table says of it: the Spearman correlation of its posterior mean with every valid,
measured configuration of the table (log values), and how many configurations it ranks
above the optimum. The problem is rebuilt from the section the journal recorded; GPR
options the runs were given (e.g. ``extra_inputs=[]``) are repeated with ``--option``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy.stats import spearmanr

from gpautotune.config import apply_overrides
from gpautotune.problems import make_problem
from gpautotune.storage import Journal
from gpautotune.strategies import make_strategy

VARIANTS = {
    "own": {},
    "unit": {"lengthscale_prior": "unit"},
    "copula": {"output_warp": "copula"},
    "kumaraswamy": {"input_warp": "kumaraswamy"},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("journal")
    parser.add_argument("problem")
    parser.add_argument("--steps", type=int, nargs="+", default=[40, 60, 90])
    parser.add_argument("--label", default="GPR")
    parser.add_argument(
        "--option", action="append", default=[], help="a GPR option of the runs, KEY=VALUE"
    )
    args = parser.parse_args(argv)
    given = apply_overrides({}, args.option)  # YAML scalars; ConfigError names a bad one
    warnings.filterwarnings("ignore")
    with Journal(args.journal, read_only=True) as journal:
        entry = next(e for e in journal.problem_catalog().values() if e.problem == args.problem)
        runs = [
            (r.seed, journal.trials(r.id))
            for r in journal.runs()
            if r.problem == args.problem and r.label == args.label and r.status == "finished"
        ]
    section = dict(entry.section)
    problem = make_problem(section.pop("name"), **section)
    configs = problem.space.enumerate()
    measured = [problem.evaluate(c) for c in configs]
    kept = [(c, m.value) for c, m in zip(configs, measured, strict=True) if m.value is not None]
    rows = problem.space.to_index([c for c, _ in kept])
    truth = np.array([v for _, v in kept])
    optimum = int(np.argmin(truth))
    print("| seed | step | end at 120 | " + " | ".join(VARIANTS) + " |")
    print("|---|---|---|" + "---|" * len(VARIANTS))
    for seed, trials in sorted(runs):
        end = min(t.value for t in trials if t.ok) / truth[optimum]
        for k in args.steps:
            cells = []
            for options in VARIANTS.values():
                strategy = make_strategy("gpr", problem.space, seed=seed, **given, **options)
                X, y = strategy._training_data(trials[:k])
                strategy.gp.fit(X, y, seed=0, fresh=True)
                mean, _ = strategy.gp.predict(strategy.features(rows))
                rho = spearmanr(mean, np.log(truth)).statistic
                above = int(np.sum(mean < mean[optimum]))
                cells.append(f"{strategy.gp.loo_rank():.2f} / {rho:.2f} / {above}")
            print(f"| {seed} | {k} | {end:.3f} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
