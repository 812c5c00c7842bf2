"""SpaptProblem end to end on tiny sizes: statuses, samples, speedup, baseline cache."""

from __future__ import annotations

import math
import shutil
import statistics

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status, make_problem
from gpautotune.problems.spapt import BaselineRecord, SpaptProblem

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

TINY = {"T": 60, "N": 60}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("spapt-cache")


def jacobi(cache, **options) -> SpaptProblem:
    return SpaptProblem("jacobi", sizes=options.pop("sizes", TINY), cache_dir=cache, **options)


def test_ok_measurement_keeps_samples_speedup_and_threads(cache) -> None:
    problem = jacobi(cache, repetitions=4)
    config = dict(problem.kernel.baseline, T2_J=8, T2_Ja=16, U2_J=3, RT2_J=2, SCR=True, VEC2=True)
    m = problem.evaluate(config)
    assert m.status is Status.OK, m.error
    assert len(m.samples) == 4 and m.value == pytest.approx(statistics.fmean(m.samples))
    assert m.metrics["speedup"] == pytest.approx(m.metrics["baseline_s"] / m.value)
    assert m.metrics["omp_num_threads"] >= 1 and "OMP_NUM_THREADS" in m.metrics
    assert m.metrics["checksum"] == m.metrics["reference"]  # tiling, unroll of j: bit-identical


def test_violated_dependence_is_a_wrong_result(cache) -> None:
    problem = jacobi(cache)
    m = problem.evaluate(dict(problem.kernel.baseline, U2_I=2))  # jams row i+1 into row i
    assert m.status is Status.WRONG_RESULT
    assert "VALIDATION-FAILED" in m.error and "for (" in m.metrics["source"]


def test_rejected_code_is_a_build_error_with_source_and_compiler_output(cache) -> None:
    orio = SpaptProblem("hessian", sizes={"N": 16}, orio_compat=True, cache_dir=cache)
    config = dict(orio.kernel.baseline, OMP=True)
    m = orio.evaluate(config)  # Orio's fixed private list names undeclared Y_copy, ...
    assert m.status is Status.BUILD_ERROR
    assert "Y_copy" in m.error and "private(i,j,ii,jj,iii,jjj,Y_copy" in m.metrics["source"]
    fixed = SpaptProblem("hessian", sizes={"N": 16}, cache_dir=cache).evaluate(config)
    assert fixed.status is Status.OK, fixed.error


def test_compilation_over_its_limit_is_a_timeout(cache) -> None:
    jacobi(cache).baseline_record()  # measured once with the normal limits, then cached
    problem = jacobi(cache, compile_timeout_s=0.01)
    m = problem.evaluate(dict(problem.kernel.baseline, U2_J=30, RT2_J=4))
    assert m.status is Status.TIMEOUT and "compilation exceeded" in m.error


def test_run_over_its_limit_is_a_timeout(cache) -> None:
    sizes = {"T": 1500, "N": 1500}
    jacobi(cache, sizes=sizes).baseline_record()
    problem = jacobi(cache, sizes=sizes, run_timeout_s=0.002)
    m = problem.evaluate(dict(problem.kernel.baseline, U2_J=2))
    assert m.status is Status.TIMEOUT and "run exceeded" in m.error


def test_invalid_configurations_are_not_compiled(cache) -> None:
    problem = jacobi(cache)
    assert problem.evaluate(dict(problem.kernel.baseline, T2_I=4, T2_Ia=2)).status is Status.INVALID
    assert problem.evaluate({"T2_I": 1}).status is Status.INVALID


def test_orio_failure_regions_are_build_errors_in_compatible_mode(cache) -> None:
    trmm = SpaptProblem("trmm", orio_compat=True, cache_dir=cache)
    m = trmm.evaluate(dict(trmm.kernel.baseline, RT2_I=2, RT2_K=2))
    assert m.status is Status.BUILD_ERROR and "newlb_k" in m.error


def test_baseline_is_a_configuration_of_the_space_as_the_contract_says(cache) -> None:
    problem = jacobi(cache)
    baseline = problem.baseline()
    assert baseline == dict(problem.kernel.baseline) and problem.space.violated(baseline) == []
    m = problem.evaluate(baseline)  # what `gpautotune tune` does to report a speedup
    assert m.ok and m.metrics["baseline_s"] == problem.baseline_record().mean_s


def test_baseline_is_measured_once_and_cached_on_disk(tmp_path, monkeypatch) -> None:
    record = jacobi(tmp_path).baseline_record()
    again = jacobi(tmp_path, run_timeout_s=5.0)  # limits are not part of the key

    def no_measure(*args, **kwargs):
        raise AssertionError("the cached baseline must not be measured again")

    monkeypatch.setattr(again.runner, "measure", no_measure)
    assert again.baseline_record() == record
    other = jacobi(tmp_path, sizes={"T": 61, "N": 60})
    assert other.cache.get(other._baseline_fields()) is None


def test_a_baseline_with_a_non_finite_checksum_is_refused_and_not_cached(tmp_path) -> None:
    problem = SpaptProblem("bicg", sizes={"N": 1}, cache_dir=tmp_path)  # checksum 0/0
    with pytest.raises(ConfigError, match=r"spapt/bicg at sizes \{'N': 1.*not finite.*larger"):
        problem.check()
    assert problem.cache.get(problem._baseline_fields()) is None
    m = problem.evaluate(problem.baseline())
    assert m.status is Status.RUN_ERROR and "not finite" in m.error
    stale = BaselineRecord(1e-3, (1e-3,), math.nan, 1, 0.1, 0.0)  # cached by an older version
    problem.cache.put(problem._baseline_fields(), stale)
    with pytest.raises(ConfigError, match="not finite"):
        SpaptProblem("bicg", sizes={"N": 1}, cache_dir=tmp_path).check()


def test_omp_threads_must_be_a_positive_integer() -> None:
    for bad in (0, -2, 1.5, "2"):
        with pytest.raises(ConfigError, match="omp_threads must be an integer >= 1"):
            SpaptProblem("bicg", omp_threads=bad)
    assert SpaptProblem("bicg", omp_threads=2).describe()["omp_threads"] == 2


def test_presets_and_size_overrides() -> None:
    assert SpaptProblem("bicg").sizes["N"] == 2000
    assert SpaptProblem("bicg", preset="thesis").sizes["N"] == 40000
    assert SpaptProblem("bicg", sizes={"N": 500}).describe()["sizes"]["N"] == 500
    with pytest.raises(ConfigError, match="no size"):
        SpaptProblem("bicg", sizes={"M": 3})
    with pytest.raises(ConfigError, match="preset"):
        SpaptProblem("bicg", preset="huge")


def test_registered_as_a_family() -> None:
    problem = make_problem("spapt/mm", preset="thesis", omp_threads=1)
    assert isinstance(problem, SpaptProblem) and problem.name == "spapt/mm"
    assert problem.measures_hardware and problem.describe()["sizes"] == {
        "M": 2000,
        "N": 2000,
        "K": 500,
    }
    with pytest.raises(ConfigError):
        make_problem("spapt/nope")
