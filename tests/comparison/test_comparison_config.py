from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from gpautotune.comparison import expand, load_comparison
from gpautotune.config import Section, build_problem
from gpautotune.exceptions import ConfigError, MissingExtraError
from gpautotune.storage import Journal
from gpautotune.strategies import _registry
from gpautotune.tuner import tune

ROOT = Path(__file__).resolve().parents[2]
BASE = """
problems: [{name: booth}]
strategies:
  - {name: random, label: RS}
  - {name: sobol, repetitions: 2}
repetitions: 3
budget: 5
seed: 10
storage: STORAGE
"""


def _write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text.replace("STORAGE", str(tmp_path / "c.db")))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("budget: 5", "budget: 0"), "budget"),
        (("seed: 10", "seed: 10\nwokers: 2"), "wokers"),
        (
            ("{name: random, label: RS}", "{name: random, label: RS, kappa: 2}"),
            "strategies.0 (random): unknown option(s) ['kappa']",
        ),
        (
            ("{name: booth}", "{name: booth, lvls: 3}"),
            "problems.0 (booth): unknown option(s) ['lvls']",
        ),
        (("{name: booth}", "{name: nope}"), "unknown problem 'nope'"),
        (
            ("{name: sobol, repetitions: 2}", "{name: sobol, label: RS, repetitions: 2}"),
            "distinct `label`",
        ),
        (
            ("seed: 10", "seed: 10\ncheckpoints: [2, 9]"),
            "checkpoint 9 exceeds every budget (at most 5)",
        ),
        (
            ("problems: [{name: booth}]", "problems: [{name: booth}, {name: booth}]"),
            "problems ['booth'] are listed twice",
        ),
        (("seed: 10", "seed: 10\nreference: GPR"), "reference 'GPR'"),
        (("repetitions: 2}", "repetitions: -1}"), "strategies.1.repetitions"),
        (
            ("repetitions: 3\n", ""),
            "give the file's `repetitions`, or `repetitions` or `seeds` to the strategies ['RS']",
        ),
        (("{name: booth}", "{name: 'no.such.module:factory'}"), "--allow-imports"),
        # true/false is no number (pydantic would read 1/0)
        (("seed: 10", "seed: true"), "seed: must be an integer; true/false is not one"),
        (("repetitions: 3", "repetitions: true"), "repetitions: must be an integer"),
        (("budget: 5", "budget: true"), "budget: must be an integer"),
        (("repetitions: 2}", "seeds: [1, false]}"), "strategies.1.seeds.1: must be an integer"),
    ],
)
def test_mistakes_name_their_key(tmp_path, change, message):
    text = BASE.replace(*change)
    assert text != BASE
    with pytest.raises(ConfigError, match=None) as info:
        load_comparison(_write(tmp_path, text))
    assert message in str(info.value)


def test_a_tuning_file_is_named_as_such(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("problem: {name: booth}\nstrategy: {name: random}\nbudget: 4\n")
    with pytest.raises(ConfigError) as info:
        load_comparison(path)
    assert str(info.value) == (
        f"{path}: this is a tuning file (it has `strategy`, not `strategies`): run "
        f"`gpautotune tune {path}`"
    )


def test_a_journal_given_apart_replaces_the_files_or_stands_in_for_it(tmp_path):
    """``storage`` (``--db``) replaces the file's journal, and a file without one loads
    with it; without either the file's missing key is named."""
    given = str(tmp_path / "other.db")
    assert load_comparison(_write(tmp_path, BASE), storage=given).storage == given
    bare = _write(tmp_path, BASE.replace("storage: STORAGE\n", ""))
    assert load_comparison(bare, storage=given).storage == given
    with pytest.raises(ConfigError, match="storage: Field required"):
        load_comparison(bare)


def test_only_needs_the_optional_packages_of_the_strategies_it_keeps(tmp_path, monkeypatch):
    """``--only`` drops the other strategies before their options are checked: a peer whose
    package is missing stops the whole file, but not a run of the strategies kept."""
    monkeypatch.setitem(sys.modules, "gpautotune.strategies.peers._optuna", None)
    kept = {k: v for k, v in _registry._REGISTERED.items() if not k.startswith("optuna")}
    monkeypatch.setattr(_registry, "_REGISTERED", kept)  # as if never imported
    path = _write(
        tmp_path, BASE.replace("repetitions: 3", "  - {name: optuna-tpe}\nrepetitions: 3")
    )
    with pytest.raises(MissingExtraError, match="optuna-tpe.*gpautotune\\[peers\\]"):
        load_comparison(path)
    config = load_comparison(path, only=["RS", "sobol"])
    assert [s.display for s in config.strategies] == ["RS", "sobol"]
    with pytest.raises(ConfigError, match="no strategy labelled \\['SA'\\]"):
        load_comparison(path, only=["SA"])


def test_a_factory_name_is_imported_only_on_request(tmp_path):
    """A comparison file naming ``module:factory`` runs nothing without the opt-in (the
    `os:system` attack of issue 19); with it, an unknown module names the import error."""
    pwned = tmp_path / "pwned"
    text = BASE.replace("{name: booth}", f"{{name: 'os:system', command: 'touch {pwned}'}}")
    with pytest.raises(ConfigError, match="imported only on request: run with --allow-imports"):
        load_comparison(_write(tmp_path, text))
    with pytest.raises(ConfigError, match="--allow-imports"):
        build_problem(Section(name="os:system", command=f"touch {pwned}"), factory_names=True)
    assert not pwned.exists()
    text = BASE.replace("{name: booth}", "{name: 'no.such.module:factory'}")
    with pytest.raises(ConfigError, match="cannot import"):
        load_comparison(_write(tmp_path, text), allow_imports=True)


def test_single_problem_key_and_defaults(tmp_path):
    cfg = load_comparison(
        _write(tmp_path, BASE.replace("problems: [{name: booth}]", "problem: {name: booth}"))
    )
    assert [p.name for p in cfg.problems] == ["booth"]
    assert cfg.report_checkpoints() == [1, 2, 4, 5]  # quarters of the budget
    assert cfg.reference_label() == "RS"  # the random strategy
    part = cfg.select(["sobol"])
    assert [s.display for s in part.strategies] == ["sobol"]
    # a part run with --only reports as the whole file: its reference, its order
    assert part.reference_label() == "RS" and part.file_labels() == ["RS", "sobol"]
    with pytest.raises(ConfigError, match="no strategy labelled"):
        cfg.select(["GPR"])


def test_expand_interleaves_repetitions_with_consecutive_seeds(tmp_path):
    cfg = load_comparison(_write(tmp_path, BASE))
    reps = list(expand(cfg, [build_problem(p, factory_names=True) for p in cfg.problems]))
    assert Counter(r.label for r in reps) == {"RS": 3, "sobol": 2}
    assert [(r.label, r.seed) for r in reps[:4]] == [
        ("RS", 10),
        ("sobol", 10),
        ("RS", 11),
        ("sobol", 11),
    ]
    assert len({r.key for r in reps}) == len(reps)


def test_repetition_keys_are_the_keys_the_tuner_stores(tmp_path):
    """The runner skips finished repetitions by key: it must be the tuner's own run key."""
    cfg = load_comparison(_write(tmp_path, BASE))
    problem = build_problem(cfg.problems[0], factory_names=True)
    rep = next(r for r in expand(cfg, [problem]) if r.label == "sobol" and r.seed == 11)
    tune(problem, "sobol", 5, storage=cfg.storage, seed=11, label="sobol")
    with Journal(cfg.storage) as journal:
        assert [r.key for r in journal.runs()] == [rep.key]


def test_import_path_problems(tmp_path):
    text = BASE.replace(
        "{name: booth}", "{name: 'tests.comparison.faulty_problems:SlowBooth', delay_s: 0.0}"
    )
    cfg = load_comparison(_write(tmp_path, text), allow_imports=True)
    problem = build_problem(cfg.problems[0], factory_names=True, allow_imports=True)
    assert problem.name == "slow-booth" and problem.delay_s == 0.0


def test_shipped_smoke_comparison_validates():
    cfg = load_comparison(ROOT / "configs" / "compare-smoke.yaml")
    assert [s.display for s in cfg.strategies] == ["RS", "Sobol"] and len(cfg.problems) == 2


@pytest.mark.slow  # imports torch for the GPR options
def test_shipped_laplacian_comparison_validates():
    lap = load_comparison(ROOT / "configs" / "compare-laplacian.yaml")
    assert {s.display: lap.repetitions_of(s) for s in lap.strategies} == {
        "RS": 1000,
        "Sobol": 1000,
        "GPR": 200,
    }
    assert lap.budget == 120


def test_a_strategy_can_have_its_own_budget(tmp_path):
    text = BASE.replace(
        "- {name: sobol, repetitions: 2}", "- {name: sobol, repetitions: 2, budget: 7}"
    )
    cfg = load_comparison(_write(tmp_path, text))
    reps = list(expand(cfg, [build_problem(p, factory_names=True) for p in cfg.problems]))
    assert {(r.label, r.budget) for r in reps} == {("RS", 5), ("sobol", 7)}
    assert "budget" not in cfg.strategies[1].options  # not passed on as a strategy option


def test_shipped_table_11_3_comparison_validates():
    cfg = load_comparison(ROOT / "configs" / "table-11-3.yaml")
    assert [s.display for s in cfg.strategies] == [
        "RS",
        "LHS",
        "GS",
        "GSR",
        "GA",
        "LM",
        "QR",
        "DLMT",
        "GPR-seeds",
        "GPR",
    ]
    assert {
        s.display: cfg.repetitions_of(s) for s in cfg.strategies if s.name.startswith("gpr")
    } == {
        "GPR-seeds": 200,
        "GPR": 200,
    }
    assert {s.display: cfg.budget_of(s) for s in cfg.strategies if cfg.budget_of(s) != 120} == {
        "LHS": 125,
        "DLMT": 125,
    }


def test_problems_are_selected_by_name_or_family(tmp_path):
    from gpautotune.comparison import select_problems

    problems_yaml = (
        "problems:\n  - {name: booth}\n"
        "  - {name: kt-cache, path: kt-caches/pnpoly/RTX_3090.json.gz}\n"
        "  - {name: kt-cache, path: kt-caches/gemm/RTX_3090.json.gz}"
    )
    cfg = load_comparison(
        _write(tmp_path, BASE.replace("problems: [{name: booth}]", problems_yaml))
    )
    built = [build_problem(p, factory_names=True) for p in cfg.problems]
    assert [p.name for p in built] == ["booth", "pnpoly/RTX_3090", "gemm/RTX_3090"]
    chosen, problems = select_problems(cfg, built, ["booth", "gemm"])
    assert [p.name for p in problems] == ["booth", "gemm/RTX_3090"]
    assert [s.options.get("path") for s in chosen.problems] == [None, built[2].path]
    assert select_problems(cfg, built, None)[0] is cfg
    with pytest.raises(ConfigError, match=r"no problem called \['gem'\]"):
        select_problems(cfg, built, ["gem"])


def test_explicit_seeds_replace_consecutive_repetitions(tmp_path):
    text = BASE.replace("{name: sobol, repetitions: 2}", "{name: sobol, seeds: [61, 7]}")
    cfg = load_comparison(_write(tmp_path, text))
    reps = list(expand(cfg, [build_problem(p, factory_names=True) for p in cfg.problems]))
    assert [r.seed for r in reps if r.label == "sobol"] == [61, 7]
    assert [r.seed for r in reps if r.label == "RS"] == [10, 11, 12]
    for bad, message in (
        ("{name: sobol, seeds: [3, 3]}", "distinct and non-negative, got [3, 3]"),
        ("{name: sobol, seeds: [1], repetitions: 2}", "both `seeds` and `repetitions`"),
        ("{name: sobol, batch_size: 0}", "batch_size: Input should be greater than 0 (got 0)"),
    ):
        with pytest.raises(ConfigError) as info:
            load_comparison(_write(tmp_path, BASE.replace("{name: sobol, repetitions: 2}", bad)))
        text = str(info.value)
        assert message in text and text.count("got") == message.count("got")  # said once


def test_a_file_whose_strategies_all_give_seeds_needs_no_repetitions(tmp_path):
    text = BASE.replace("{name: random, label: RS}", "{name: random, label: RS, seeds: [4]}")
    cfg = load_comparison(_write(tmp_path, text.replace("repetitions: 3\n", "")))
    reps = list(expand(cfg, [build_problem(p, factory_names=True) for p in cfg.problems]))
    assert sorted((r.label, r.seed) for r in reps) == [("RS", 4), ("sobol", 10), ("sobol", 11)]


def test_a_batched_repetition_tunes_in_batches(tmp_path):
    """``batch_size`` reaches the tuner: the stored trials are those of a batched run."""
    from gpautotune.comparison import run_repetition

    text = BASE.replace(
        "{name: sobol, repetitions: 2}", "{name: gpr, label: q3, batch_size: 3, n_init: 3}"
    )
    cfg = load_comparison(_write(tmp_path, text.replace("budget: 5", "budget: 6")))
    problem = build_problem(cfg.problems[0], factory_names=True)
    rep = next(r for r in expand(cfg, [problem]) if r.label == "q3")
    outcome = run_repetition(rep)
    options = {"n_init": 3}
    batched = tune(problem, "gpr", 6, seed=rep.seed, batch_size=3, strategy_options=options)
    serial = tune(problem, "gpr", 6, seed=rep.seed, strategy_options=options)
    with Journal(cfg.storage, read_only=True) as journal:
        stored = [t.config for t in journal.trials(outcome.run_id)]
    assert stored == [t.config for t in batched.trials]
    assert stored != [t.config for t in serial.trials]


def test_checkpoints_may_reach_a_strategys_own_budget(tmp_path):
    text = BASE.replace("{name: sobol, repetitions: 2}", "{name: sobol, repetitions: 2, budget: 8}")
    cfg = load_comparison(
        _write(tmp_path, text.replace("seed: 10", "seed: 10\ncheckpoints: [4, 8]"))
    )
    assert cfg.report_checkpoints() == [4, 8]


def test_a_budget_below_finished_runs_is_refused_before_any_repetition(tmp_path):
    from gpautotune.comparison import run_repetition
    from gpautotune.comparison._run import pending_repetitions

    cfg = load_comparison(_write(tmp_path, BASE))
    problem = build_problem(cfg.problems[0], factory_names=True)
    run_repetition(next(r for r in expand(cfg, [problem]) if r.label == "RS"))
    shorter = load_comparison(_write(tmp_path, BASE.replace("budget: 5", "budget: 3")))
    with pytest.raises(
        ConfigError, match="finished .* with a budget of 5, above the comparison's 3"
    ):
        pending_repetitions(shorter, [problem])
    assert len(pending_repetitions(cfg, [problem])[0]) == 4  # the other repetitions


def test_a_label_taken_with_other_options_is_refused_before_any_repetition(tmp_path):
    """One journal, two files giving the label RS to other settings: said once, before
    Dask starts; a repetition whose label another process took meanwhile fails without
    being retried."""
    from gpautotune.comparison import run_repetition
    from gpautotune.comparison._run import pending_repetitions
    from gpautotune.storage import RunNameError

    cfg = load_comparison(_write(tmp_path, BASE))
    problem = build_problem(cfg.problems[0], factory_names=True)
    run_repetition(next(r for r in expand(cfg, [problem]) if r.label == "RS"))
    other = load_comparison(
        _write(tmp_path, BASE.replace("name: random, label: RS", "name: lhs, label: RS"))
    )
    with pytest.raises(
        RunNameError, match="run name 'RS' is taken .*strategy random there, lhs here"
    ):
        pending_repetitions(other, [problem])
    outcome = run_repetition(next(r for r in expand(other, [problem]) if r.label == "RS"))
    assert outcome.run_id == -1 and outcome.error.startswith("RunNameError")
    assert len(pending_repetitions(cfg, [problem])[0]) == 4  # its own label: resumed
