"""LaplacianProblem: statuses, registry, pickling, the isolated worker and its timeout."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.execution import IsolatedEvaluator
from gpautotune.problems import Status, make_problem
from gpautotune.problems.laplacian import NAIVE_CONFIG, LaplacianProblem, resolve_sizes
from gpautotune.problems.laplacian.generator import GeneratedKernel, generate_kernel

#: A kernel that never returns (a volatile store in a loop with a constant condition).
HANG_SOURCE = """
__kernel void laplacian(const __global uchar * psrc, __global uchar * pdst,
                        const int width, const int height) {
  volatile __global uchar * q = pdst;
  for (;;) { q[0] = q[1]; }
}
"""


class HangingLaplacian(LaplacianProblem):
    """Hangs for ``lws_y == 4`` configurations; the others are the real kernel."""

    def kernel(self, config: dict[str, Any]) -> GeneratedKernel:
        kernel = generate_kernel(config)
        return (
            GeneratedKernel(HANG_SOURCE, kernel.plan, kernel.local_size)
            if config["lws_y"] == 4
            else kernel
        )


@pytest.fixture(scope="module")
def problem(cl_device) -> LaplacianProblem:
    p = make_problem("laplacian", sizes=[[37, 19]], timeout_s=30)
    yield p
    p.close()


def test_registered_with_typed_options(problem):
    assert isinstance(problem, LaplacianProblem) and problem.measures_hardware
    assert problem.sizes == ((37, 19),)
    with pytest.raises(ConfigError):
        make_problem("laplacian", sizes="huge")


def test_size_presets_and_explicit_sizes():
    assert resolve_sizes("thesis")[0] == (768, 432) and len(resolve_sizes("thesis")) == 5
    assert resolve_sizes("64x32,40x20") == ((64, 32), (40, 20))
    with pytest.raises(ConfigError):
        resolve_sizes([[4, 4]])
    for flat in ([640, 360], None, [[640.7, 360]]):  # a flat pair was a bare TypeError
        with pytest.raises(ConfigError, match="image size|one size is"):
            resolve_sizes(flat)


@pytest.mark.parametrize(
    "options", [{"repeats": 0}, {"timeout_s": float("inf")}, {"startup_timeout_s": float("nan")}]
)
def test_options_that_would_fail_every_trial_are_refused(options):
    with pytest.raises(ConfigError, match="repeats|positive and finite"):
        LaplacianProblem(sizes=[[37, 19]], **options)
    if "repeats" not in options:
        with pytest.raises(ConfigError, match="positive and finite"):
            IsolatedEvaluator(**options)


def test_a_predicate_violation_is_invalid_without_touching_the_device(problem):
    bad = {**NAIVE_CONFIG, "elements_number": 5}
    m = problem.evaluate(bad)
    assert m.status is Status.INVALID and "elements_number" in m.error


def test_naive_config_measures_with_device_metrics(problem):
    m = problem.evaluate(NAIVE_CONFIG)
    assert m.status is Status.OK, m.error
    for key in (
        "device",
        "driver_version",
        "platform_version",
        "build_time_s",
        "copy_bandwidth_Bps",
        "bound_fraction",
        "source",
    ):
        assert key in m.metrics
    assert 0 < m.metrics["bound_fraction"]


def test_pickles_without_device_objects(problem):
    problem.prepare()
    clone = pickle.loads(pickle.dumps(problem))
    assert clone._runner is None and clone.space.count_valid() == problem.space.count_valid()
    assert clone.describe() == problem.describe()


@pytest.mark.slow
def test_a_hung_kernel_times_out_and_the_worker_serves_the_next(cl_device):
    problem = HangingLaplacian(sizes=[[37, 19]])
    evaluator = IsolatedEvaluator(timeout_s=4)
    try:
        hung = evaluator(problem, {**NAIVE_CONFIG, "threads_number": 32, "lws_y": 4})
        assert hung.measurement.status is Status.TIMEOUT
        after = evaluator(problem, NAIVE_CONFIG)
        assert after.measurement.status is Status.OK, after.measurement.error
        assert evaluator.workers_started == 2
    finally:
        evaluator.close()
    assert not evaluator.alive


def test_vector_recompute_fixed_false_or_tuned(cl_device):
    fixed = LaplacianProblem(sizes=[[37, 19]], vector_recompute=False)
    try:
        m = fixed.evaluate({**NAIVE_CONFIG, "vector_length": 4})  # x = 3 in vectors of 4
        assert m.status is Status.OK, m.error
        assert "vector_recompute=false" in m.metrics["source"]
        assert fixed.describe()["vector_recompute"] is False
    finally:
        fixed.close()
    tuned = LaplacianProblem(sizes=[[37, 19]], vector_recompute=None)
    assert tuned.space.names[-1] == "vector_recompute" and tuned.space.dims == 8
    assert pickle.loads(pickle.dumps(tuned)).space.dims == 8
    assert "vector_recompute" not in LaplacianProblem(sizes=[[37, 19]]).describe()
