"""A plain function's identity in the run key: objectives that differ only in what is
bound to them (partial arguments, closures, lambdas, callable objects) are other runs, the
same objective is the same run in every Python session, and named functions keep the key
their stored runs were made with."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

from gpautotune import tune
from gpautotune.problems.function import FunctionProblem
from gpautotune.space import IntRange, Space

SPACE = Space([IntRange("x", 0, 20)])
ROOT = Path(__file__).resolve().parents[2]


def cost(config, size=1):
    return abs(config["x"] - size) + 0.0


class Cost:
    def __init__(self, size):
        self.size, self.tags = size, {"a", "b", "c"}

    def __call__(self, config):
        return cost(config, self.size)


def make(size):
    def objective(config):
        return cost(config, size)

    return objective


def _describe(objective) -> dict:
    return FunctionProblem(objective, SPACE).describe()


#: Objectives whose identity another session must give again (see the subprocess test).
SAME_IN_EVERY_SESSION = {
    "partial": functools.partial(cost, size=3),
    "lambda": lambda config: config["x"] in {"a", "b", "c"},
    "instance": Cost(2),
    "closure": make(4),
}


def test_a_named_module_level_function_keeps_its_key():
    assert _describe(cost) == {"name": "cost", "function": f"{__name__}:cost"}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (functools.partial(cost, size=3), functools.partial(cost, size=17)),
        (functools.partial(cost, 3), functools.partial(cost, 17)),
        (lambda c: cost(c, 5), lambda c: cost(c, 15)),
        (lambda c, s=5: cost(c, s), lambda c, s=15: cost(c, s)),
        (Cost(2), Cost(18)),
        (Cost(2).__call__, Cost(18).__call__),
        (make(2), make(18)),
    ],
)
def test_objectives_differing_in_what_is_bound_are_told_apart(first, second):
    assert _describe(first) != _describe(second)


def test_equal_objectives_made_twice_are_one(tmp_path):
    assert _describe(functools.partial(cost, size=3)) == _describe(functools.partial(cost, size=3))
    assert _describe(Cost(2)) == _describe(Cost(2)) and _describe(make(4)) == _describe(make(4))


def test_the_identity_is_the_same_in_another_session():
    code = (
        f"import json; from {__name__} import SAME_IN_EVERY_SESSION as O, _describe; "
        "print(json.dumps({k: _describe(f) for k, f in O.items()}))"
    )
    # as pytest imported this module; another hash seed: other set orders than here
    path = os.pathsep.join([str(ROOT), str(Path(__file__).parent)])
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    here = {k: _describe(f) for k, f in SAME_IN_EVERY_SESSION.items()}
    there = json.loads(out.stdout)
    assert there == json.loads(json.dumps(here))
    assert all("bound" in d for d in here.values())


def test_a_second_partial_gets_its_own_run(tmp_path):
    db = tmp_path / "p.db"
    first = tune(functools.partial(cost, size=3), "random", 10, space=SPACE, seed=0, storage=db)
    second = tune(functools.partial(cost, size=17), "random", 10, space=SPACE, seed=0, storage=db)
    assert first.run_id != second.run_id and second.used == 10
    assert first.best_config != second.best_config


def test_a_value_without_a_stable_text_is_warned_about_unless_the_run_is_named(tmp_path):
    lock = threading.Lock()

    def locked(config):
        with lock:
            return cost(config)

    problem = FunctionProblem(locked, SPACE)
    assert "'lock'" in problem.unidentified and "bound" in problem.describe()
    with pytest.warns(UserWarning, match=r"differing only in the closure value 'lock'.*label="):
        tune(locked, "random", 2, space=SPACE, seed=0, storage=tmp_path / "u.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tune(locked, "random", 2, space=SPACE, seed=0, storage=tmp_path / "u.db", label="a")
        tune(locked, "random", 2, space=SPACE, seed=0)  # in memory: nothing to resume
    assert FunctionProblem(locked, SPACE, name="locked").unidentified is None
