"""The peers' adapters (Optuna, Kernel Tuner, SMAC3): the strategy contract on a small
constrained space, and the fair-accounting rules they share.

Every adapter runs twice with one seed on :class:`PeerGrid` (cached, shared by the
contract tests; SMAC's black-box facade, whose Gaussian-process fit takes seconds per
proposal, is marked slow): only valid, distinct configurations, never more than the budget,
the running counters in each trial's info, the same trials for the same seed (every
peer, Kernel Tuner's Latin hypercubes included).
"""

from __future__ import annotations

import gc
import random
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

pytest.importorskip("optuna")
pytest.importorskip("kernel_tuner")
pytest.importorskip("smac")

from gpautotune.exceptions import ConfigError, MissingExtraError  # noqa: E402
from gpautotune.problems import ConstrainedBitsProblem, Measurement, Problem, Status  # noqa: E402
from gpautotune.space import Boolean, Categorical, IntRange, PowerOfTwo, Space  # noqa: E402
from gpautotune.strategies import (  # noqa: E402
    available_strategies,
    make_strategy,
    strategy_class,
)
from gpautotune.strategies.peers import PEER_STRATEGIES, is_peer  # noqa: E402
from gpautotune.strategies.peers._fair import PeerAsk, PeerStrategy  # noqa: E402
from gpautotune.trial import Trial  # noqa: E402
from gpautotune.tuner import TuningRun, tune  # noqa: E402
from tests.strategies.tiny import TINY, tiny_run  # noqa: E402

BUDGET = 10
#: Optuna's GP sampler ignores failed trials and re-proposes them; its constraint mode
#: tells them as infeasible (the fail mode is exercised on an unconstrained space below).
OPTIONS: dict[str, dict[str, Any]] = {"optuna-gp": {"infeasible": "constraint"}}


def member(cols: Any) -> np.ndarray:
    """A predicate whose inputs no peer can see: a membership test, as a replayed
    table's rows (no constant pattern a translation could find)."""
    p, q = np.asarray(cols["p"]), np.asarray(cols["q"])
    return (p * 7 + q * 3) % 5 != 0


class PeerGrid(Problem):
    """Four typed factors (power of two, integers, strings, boolean), an expression
    predicate and optionally a hidden one; the first evaluation fails, then about one
    configuration in five."""

    name = "peer-grid"

    def __init__(self, hidden: bool = False) -> None:
        constraints: list[Any] = ["p * q <= 32"] + ([member] if hidden else [])
        self.space = Space(
            [
                PowerOfTwo("p", 1, 16),
                IntRange("q", 0, 7),
                Categorical("r", ("x", "y", "z")),
                Boolean("s"),
            ],
            constraints=constraints,
            name="peer-grid",
        )
        self.calls = 0

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        self.calls += 1
        if not self.space.valid_mask(self.space.to_index([config]))[0]:
            return Measurement.failure(Status.INVALID, "violates the predicates")
        p, q, r, s = config["p"], config["q"], config["r"], int(config["s"])
        if self.calls == 1 or (p + q + len(r) * s) % 5 == 0:
            return Measurement.failure(Status.RUN_ERROR, "simulated crash")
        return Measurement.success(1.0 + (np.log2(p) - 2) ** 2 + (q - 5) ** 2 + 0.5 * s)


def _run(name: str, problem: Problem, budget: int = BUDGET, seed: int = 5, **kw: Any):
    return tune(problem, name, budget, seed=seed, strategy_options=OPTIONS.get(name), **kw)


_RUNS: dict[str, tuple[Any, Any]] = {}
SLOW = {"smac-bb"}


def _params(names: Any) -> list[Any]:
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


PEERS = _params(PEER_STRATEGIES)


def runs(name: str) -> tuple[Any, Any]:
    """Two runs of ``name`` with one seed (computed once per test session)."""
    if name not in _RUNS:
        _RUNS[name] = (_run(name, PeerGrid()), _run(name, PeerGrid()))
    return _RUNS[name]


def test_every_peer_is_registered() -> None:
    assert set(PEER_STRATEGIES) <= set(available_strategies())
    assert {"optuna-gp", "optuna-tpe", "smac-bb", "smac-hpo", "kt-bayes_opt"} <= set(
        PEER_STRATEGIES
    )
    assert all(is_peer(n) for n in PEER_STRATEGIES) and not is_peer("gpr")


@pytest.mark.parametrize("name", PEERS)
def test_valid_distinct_within_budget(name: str) -> None:
    result = runs(name)[0]
    space = PeerGrid().space
    index = space.to_index([t.config for t in result.trials])
    assert space.valid_mask(index).all()
    keys = space.row_keys(index).tolist()
    assert len(set(keys)) == len(keys)
    assert 1 <= result.used <= BUDGET


@pytest.mark.parametrize("name", PEERS)
def test_survives_a_failed_evaluation(name: str) -> None:
    trials = runs(name)[0].trials
    assert trials[0].status is Status.RUN_ERROR  # the first evaluation always fails
    assert len(trials) > 1 and any(t.ok for t in trials[1:])


@pytest.mark.parametrize("name", PEERS)
def test_counters_are_stored_with_each_trial(name: str) -> None:
    infos = [t.info for t in runs(name)[0].trials]
    assert all(i["peer"] == name for i in infos)
    for key in ("invalid_refused", "duplicates"):
        counts = [i[key] for i in infos]
        assert counts == sorted(counts) and all(isinstance(c, int) for c in counts)


@pytest.mark.parametrize("name", PEERS)
def test_same_seed_same_trials(name: str) -> None:
    first, second = runs(name)
    assert [t.config for t in first.trials] == [t.config for t in second.trials]


@pytest.mark.parametrize("name", ["kt-bayes_opt", "kt-diff_evo"])
def test_kernel_tuner_latin_hypercube_follows_the_seed(name: str) -> None:
    """Their first points are a SciPy Latin hypercube Kernel Tuner creates without a seed:
    it follows the run's seed, and SciPy's class is unchanged outside such a run."""
    from scipy.stats import qmc

    first = [t.config for t in _run(name, PeerGrid(), seed=8).trials]
    assert [t.config for t in _run(name, PeerGrid(), seed=8).trials] == first
    assert [t.config for t in _run(name, PeerGrid(), seed=9).trials] != first
    assert not np.array_equal(qmc.LatinHypercube(3).random(4), qmc.LatinHypercube(3).random(4))
    seeded = [qmc.LatinHypercube(3, rng=1).random(4) for _ in range(2)]
    assert np.array_equal(*seeded)


@pytest.mark.parametrize("name", ["optuna-random", "smac-random", "optuna-tpe"])
def test_hidden_predicate_is_refused_without_spending_budget(name: str) -> None:
    problem = PeerGrid(hidden=True)
    result = _run(name, problem, budget=12)
    assert result.used == 12
    assert all(problem.space.valid_mask(problem.space.to_index([t.config for t in result.trials])))
    assert result.trials[-1].info["invalid_refused"] > 0
    assert problem.calls == 12  # refused proposals were never evaluated


def test_kernel_tuner_gets_the_predicates_as_restrictions() -> None:
    from gpautotune.strategies.peers._kernel_tuner import kernel_tuner_searchspace

    space = PeerGrid(hidden=True).space
    kt = kernel_tuner_searchspace(space)
    ours = {tuple(c.values()) for c in space.enumerate()}
    theirs = {(p, q, r, bool(s)) for p, q, r, s in kt.list}
    assert theirs == ours
    result = _run("kt-random_sample", PeerGrid(hidden=True), budget=12)
    assert result.trials[-1].info["invalid_refused"] == 0


def test_smac_forbidden_clauses_exclude_what_the_predicates_exclude() -> None:
    from gpautotune.strategies.peers._smac import smac_configspace

    space = PeerGrid().space
    cs, left = smac_configspace(space, seed=1)
    assert left == [] and len(cs.forbidden_clauses) > 0
    configs = [dict(c) for c in cs.sample_configuration(500)]
    assert space.valid_mask(space.to_index(configs)).all()
    _, left = smac_configspace(PeerGrid(hidden=True).space)
    assert left == ["member"]


def test_optuna_fail_mode_runs_on_an_unconstrained_space() -> None:
    space = Space([IntRange("a", 0, 99), PowerOfTwo("b", 1, 64)])
    run = TuningRun(space, "optuna-gp", seed=2, budget=13)
    while run.remaining:
        for config in run.ask():
            run.tell(config, (config["a"] - 3) ** 2 + np.log2(config["b"]))
    keys = space.row_keys(space.to_index([t.config for t in run.trials])).tolist()
    assert run.used == 13 and len(set(keys)) == 13


@pytest.mark.parametrize("name", ["kt-random_sample", "kt-greedy_ils", "optuna-tpe"])
def test_resume_replays_the_same_run(name: str, tmp_path) -> None:
    whole = _run(name, PeerGrid(), budget=12, seed=3)
    path = tmp_path / "journal.db"
    _run(name, PeerGrid(), budget=7, seed=3, storage=path)
    resumed = _run(name, PeerGrid(), budget=12, seed=3, storage=path)
    assert [t.config for t in resumed.trials] == [t.config for t in whole.trials]


@pytest.mark.parametrize("name", ["kt-pso", "kt-genetic_algorithm", "kt-greedy_ils", "kt-diff_evo"])
def test_kernel_tuner_draws_are_its_own_beside_other_threads(name: str) -> None:
    """Another thread of the process drawing from the global random sources (a Dask
    worker's event loop does) leaves a seeded run as it was."""
    alone = [t.config for t in _run(name, PeerGrid(), budget=40).trials]
    stop = threading.Event()

    def draw() -> None:
        while not stop.is_set():
            random.random()
            np.random.random()

    other = threading.Thread(target=draw, daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns between nearly every draw
    other.start()
    try:
        beside = [t.config for t in _run(name, PeerGrid(), budget=40).trials]
    finally:
        stop.set()
        other.join()
        sys.setswitchinterval(interval)
    assert beside == alone


def _peer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("gpautotune-kt-")]


def test_kernel_tuner_thread_ends_with_the_run() -> None:
    result = _run("kt-pso", PeerGrid(), budget=3)
    assert result.used == 3 and not _peer_threads()
    run = TuningRun(PeerGrid().space, "kt-genetic_algorithm", seed=1, budget=50)
    config = run.ask()[0]
    run.tell(config, 1.0)
    assert len(_peer_threads()) == 1  # waiting for its next answer
    del run
    gc.collect()
    for thread in _peer_threads():
        thread.join(5)
    assert not _peer_threads()


def test_kernel_tuner_needs_an_enumerable_space() -> None:
    with pytest.raises(ConfigError, match="enumerates its search space"):
        tune(ConstrainedBitsProblem(), "kt-pso", 5)
    with pytest.raises(ConfigError, match="no strategy 'nonsense'"):
        strategy_class("kt-nonsense")


class ScriptedPeer(PeerStrategy):
    """A peer that proposes a fixed list of value dicts, recording what it is told."""

    name = "scripted"

    def __init__(self, space: Space, script: Sequence[dict[str, Any]]) -> None:
        super().__init__(space, seed=0)
        self.script = list(script)
        self.told: list[tuple[dict, str]] = []

    def _peer_ask(self) -> PeerAsk | None:
        return PeerAsk(self.script.pop(0), len(self.script)) if self.script else None

    def _peer_tell(self, handle: Any, trial: Trial, *, fresh: bool = True) -> None:
        self.told.append((dict(trial.config), "fresh" if fresh else "duplicate"))

    def _peer_refuse(self, handle: Any) -> None:
        self.told.append(({}, "refused"))


def test_fair_rules_refuse_answer_duplicates_and_spend_only_measurements() -> None:
    space = Space([IntRange("a", 0, 5)], constraints=["a != 2"])
    script = [{"a": 1}, {"a": 2}, {"a": 9}, {"a": 1}, {"a": 3}, {"a": 3}]
    peer = ScriptedPeer(space, script)
    run = TuningRun(space, peer, budget=5)
    while run.remaining and (configs := run.ask()):
        for config in configs:
            run.tell(config, Measurement.failure(Status.RUN_ERROR) if config["a"] == 3 else 1.0)
    assert [t.config["a"] for t in run.trials] == [1, 3]
    assert [kind for _, kind in peer.told] == ["fresh", "refused", "refused", "duplicate"] + [
        "fresh",
        "duplicate",
    ]
    assert peer.counters() == {"invalid_refused": 2, "duplicates": 2}
    assert run.trials[1].info == {"peer": "scripted", "invalid_refused": 2, "duplicates": 1}
    assert peer.stopped == "the peer has nothing more to propose"


def test_fair_rules_stop_at_the_cap_of_answers_without_budget(monkeypatch) -> None:
    from gpautotune.strategies.peers import _fair

    monkeypatch.setattr(_fair, "NO_BUDGET_CAP", 7)
    space = Space([IntRange("a", 0, 5)], constraints=["a != 2"])
    peer = ScriptedPeer(space, [{"a": 1}] + [{"a": 2}, {"a": 1}] * 10)
    result = tune(_Constant(space), peer, 5)
    assert result.used == 1 and peer.stopped.startswith("7 proposals in a row")
    assert peer.counters() == {"invalid_refused": 4, "duplicates": 3}


class _Constant(Problem):
    name = "constant"

    def __init__(self, space: Space) -> None:
        self.space = space

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        return Measurement.success(1.0)


def test_missing_extra_is_one_line_naming_it(monkeypatch) -> None:
    from gpautotune.strategies import _registry

    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    monkeypatch.delitem(sys.modules, "gpautotune.strategies.peers._optuna", raising=False)
    registered = {k: v for k, v in _registry._REGISTERED.items() if not k.startswith("optuna")}
    monkeypatch.setattr(_registry, "_REGISTERED", registered)
    with pytest.raises(MissingExtraError, match=r"pip install 'gpautotune\[peers\]'") as err:
        strategy_class("optuna-tpe")
    assert "\n" not in str(err.value) and "optuna" in str(err.value)


def test_gpautotune_imports_without_the_peers() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('optuna', 'kernel_tuner', 'smac', 'ConfigSpace'):\n"
        "            raise ModuleNotFoundError(name, name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import gpautotune, gpautotune.cli, gpautotune.tuner\n"
        "from gpautotune.strategies import available_strategies, make_strategy\n"
        "from gpautotune.space import IntRange, Space\n"
        "assert 'kt-pso' in available_strategies()\n"
        "from gpautotune.catalog import find_entry\n"
        "print(find_entry('optuna-gp')[0].summary)\n"
        "make_strategy('random', Space([IntRange('a', 0, 3)]))\n"
        "try:\n"
        "    make_strategy('smac-bb', Space([IntRange('a', 0, 3)]))\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines() == [
        # `gpautotune list` shows the peers all the same
        "needs the optional package optuna: pip install 'gpautotune[peers]'",
        "strategy 'smac-bb' needs the optional package ConfigSpace: "
        "pip install 'gpautotune[peers]'",
    ]


def test_the_comparison_files_name_the_peers_and_every_cache() -> None:
    from pathlib import Path

    from gpautotune.comparison import load_comparison
    from gpautotune.problems import find_data

    root = Path(__file__).resolve().parents[2]
    config = load_comparison(root / "configs" / "peers-kt-caches.yaml")  # options checked
    names = {s.name for s in config.strategies}
    assert {"gpr", "random"} <= names and names - {"gpr", "random"} <= set(PEER_STRATEGIES)
    for family in ("optuna-", "kt-"):  # SMAC's runs cost too much: K40c only (docs/peers.md)
        assert any(n.startswith(family) for n in names), family
    assert config.repetitions >= 10 and config.budget == 120 and config.checkpoints == [60, 120]
    caches = [p.options["path"] for p in config.problems if p.name == "kt-cache"]
    assert len(caches) == 12 and all(find_data(c).is_file() for c in caches)
    assert [p.name for p in config.problems].count("laplacian-replay") == 1
    k40c = load_comparison(root / "configs" / "peers-k40c.yaml")  # options checked too
    assert set(PEER_STRATEGIES) <= {s.name for s in k40c.strategies}
    assert load_comparison(root / "configs" / "peers-random-check.yaml").strategies


def test_peer_options_are_checked_by_their_settings(tmp_path) -> None:
    from gpautotune.comparison import load_comparison

    space = PeerGrid().space
    assert make_strategy("optuna-tpe", space, infeasible="constraint").infeasible == "constraint"
    assert make_strategy("kt-pso", space).settings() == {"scale": "first"}
    assert make_strategy("optuna-random", space).settings() == {}
    with pytest.raises(ConfigError, match=r"infeasible: Input should be 'fail' or 'constraint'"):
        make_strategy("optuna-gp", space, infeasible="skip")
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['infeasible'\]"):
        make_strategy("smac-hpo", space, infeasible="constraint")
    path = tmp_path / "peers.yaml"
    path.write_text(
        "problems: [{name: booth}]\n"
        "strategies: [{name: kt-pso, scale: hours}]\nrepetitions: 1\nbudget: 5\nstorage: x.db\n"
    )
    with pytest.raises(ConfigError, match=r"strategies\.0 \(kt-pso\).*scale") as err:
        load_comparison(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["optuna-tpe", "smac-random", "kt-random_sample"])
def test_warm_start_trials_are_not_measured_again(name: str) -> None:
    earlier = tune(PeerGrid(), "random", 8, seed=9).trials
    result = _run(name, PeerGrid(), budget=8, warm_start=earlier)
    measured = [t for t in result.trials if t.counts_in_budget]
    space = PeerGrid().space
    keys = lambda ts: set(space.row_keys(space.to_index([t.config for t in ts])).tolist())  # noqa: E731
    assert len(measured) == 8 and not keys(measured) & keys(earlier)


class ScaledGrid(PeerGrid):
    """PeerGrid with every value multiplied by ``factor`` (times in other units)."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        m = super().evaluate(config)
        return Measurement.success(m.value * self.factor) if m.ok else m


def test_kernel_tuner_sees_values_in_the_units_of_the_first() -> None:
    """Kernel Tuner's strategies assume milliseconds (basin hopping accepts a worse move
    with probability exp(-delta / T), T = 1); told values relative to the first measured
    one, they take the same path whatever the problem's unit."""
    first, second = (tune(ScaledGrid(f), "kt-basinhopping", 30, seed=4) for f in (1, 1e-10))
    assert [t.config for t in first.trials] == [t.config for t in second.trials]
    assert len(first.trials) > 10


def test_smac_model_sees_crashes_at_the_worst_finite_cost() -> None:
    from smac.runhistory.dataclasses import TrialValue

    from gpautotune.strategies.peers._smac import _finite

    seen: list[list[float]] = []
    build = _finite(lambda trials, store=False: seen.append([v.cost for v in trials.values()]))
    build({"a": TrialValue(cost=2.0), "b": TrialValue(cost=np.inf), "c": TrialValue(cost=3.0)})
    build({"a": TrialValue(cost=np.inf), "b": TrialValue(cost=np.inf)})  # nothing measured
    assert seen == [[2.0, 3.0, 3.0], [1.0, 1.0]]


@pytest.mark.parametrize("name", ["smac-hpo", "smac-random"])
def test_a_space_smaller_than_the_budget_ends_the_run(name: str) -> None:
    """Three valid configurations and a budget of 8: SMAC3 measures distinct valid ones
    and the run ends when it has none left to propose (its
    ConfigurationSpaceExhaustedException once went through the run). (The other peers
    end at the cap of answers without budget: test_fair_rules_stop_at_the_cap_...)"""
    result = tiny_run(name, 5, OPTIONS.get(name))
    keys = TINY.row_keys(TINY.to_index([t.config for t in result.trials])).tolist()
    assert 1 <= len(keys) == len(set(keys)) <= 3


def test_a_peer_stops_once_every_valid_configuration_is_measured() -> None:
    # optuna-gp refits its GP on each duplicate ask: 1,000 of them took minutes
    calls = 0

    def two_booleans(config: dict[str, Any]) -> float:
        nonlocal calls
        calls += 1
        return 1.0 + config["a"] + 2 * config["b"]

    space = Space([Boolean("a"), Boolean("b")])
    run = TuningRun(space, "optuna-gp", seed=0, budget=8)
    while not run.finished:
        for config in run.ask():
            run.tell(config, two_booleans(config))
    assert calls == 4 and run.strategy.stopped == "every valid configuration is measured"
    assert run.strategy.duplicates < 5
