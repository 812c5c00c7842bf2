"""The two ways in: a YAML file (CLI) and one Python call, and the shipped examples."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gpautotune import tune_kernel
from gpautotune.cli import app
from gpautotune.exceptions import ConfigError
from gpautotune.problems import Status
from gpautotune.storage import Journal

ROOT = Path(__file__).resolve().parents[3]
cli = CliRunner()

VADD = """
__kernel void vadd(__global float *c, __global const float *a, __global const float *b, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""


def _yaml(tmp_path: Path, x_source: str, cl_device) -> Path:
    (tmp_path / "k.cl").write_text(
        "__kernel void k(__global float *y, __global const float *x, int n) {\n"
        "  int i = get_global_id(0);\n  if (i < n) y[i] = 2.0f * x[i];\n}\n"
    )
    path = tmp_path / "k.yaml"
    path.write_text(
        f"""
problem:
  name: opencl-kernel
  source: {tmp_path / "k.cl"}
  kernel: k
  sizes: {{n: 300}}
  problem_size: n
  arguments:
    - {{name: y, zeros: n}}
    - {{name: x, {x_source}}}
    - {{name: n, value: n}}
  tune_params: {{block_size_x: [16, 32, 64, 8192]}}
  answer: {{y: "2 * x"}}
  platform: {cl_device.platform_index}
  device: {cl_device.device_index}
  probe_bandwidth: false
strategy: {{name: random}}
budget: 4
seed: 3
storage: {tmp_path / "k.db"}
"""
    )
    return path


def test_a_yaml_kernel_tunes_from_the_command_line(tmp_path, cl_device):
    result = cli.invoke(app, ["tune", str(_yaml(tmp_path, "random: n", cl_device))])
    assert result.exit_code == 0, result.output
    assert "4 evaluations: invalid 1, ok 3 (1 refused before launch)" in result.output
    trials = Journal(tmp_path / "k.db").trials(1)
    assert sorted(t.config["block_size_x"] for t in trials) == [16, 32, 64, 8192]


def test_a_factory_in_yaml_needs_allow_imports(tmp_path, cl_device):
    path = _yaml(tmp_path, "factory: tests.problems.kernel.kernel_factories:ramp", cl_device)
    refused = cli.invoke(app, ["tune", str(path)])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    message = " ".join(refused.output.split())
    assert "arguments.1.factory names Python code" in message and "--allow-imports" in message
    allowed = cli.invoke(app, ["tune", str(path), "--allow-imports", "--budget", "2"])
    assert allowed.exit_code == 0, allowed.output
    trials = Journal(tmp_path / "k.db").trials(1)
    assert len(trials) == 2 and all(t.status in (Status.OK, Status.INVALID) for t in trials)


def test_tune_kernel_returns_the_result_and_its_journal(tmp_path, cl_device):
    n = np.int32(5000)
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    c = np.zeros_like(a)
    result = tune_kernel(
        "vadd",
        VADD,
        n,
        [c, a, b, n],
        {"block_size_x": [32, 64, 128]},
        answer=[a + b, None, None, None],
        strategy="random",
        budget=3,
        seed=1,
        storage=tmp_path / "vadd.db",
        platform=cl_device.platform_index,
        probe_bandwidth=False,
    )
    assert result.used == 3 and all(t.ok for t in result.trials)
    assert result.best_config["block_size_x"] in (32, 64, 128)
    assert len(Journal(tmp_path / "vadd.db").trials(result.run_id)) == 3
    with pytest.raises(Exception, match="unknown option"):
        tune_kernel("vadd", VADD, n, [c, a, b, n], {"block_size_x": [32]}, grid_div=4)
    for size in (n + 0.7, [n + 0.5], True):
        with pytest.raises(ConfigError, match="not a whole number"):
            tune_kernel("vadd", VADD, size, [c, a, b, n], {"block_size_x": [32]})


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Your own kernel", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_the_readme_example_runs_as_a_plain_script(tmp_path, cl_device):
    """A script without a __main__ guard: the worker must not run it again."""
    code = _readme_example()
    assert len(code.strip().splitlines()) <= 20
    script = tmp_path / "vadd_example.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "block_size_x" in done.stdout
    trials = Journal(tmp_path / "vadd.db").trials(1)
    assert trials and all(t.status in (Status.OK, Status.INVALID) for t in trials)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "overrides"),
    [
        ("vadd.yaml", ["problem.sizes.n=20000"]),
        ("matmul.yaml", ["problem.sizes.n=48"]),
        ("conv2d.yaml", ["problem.sizes.w=40", "problem.sizes.h=24"]),
        ("transpose.yaml", ["problem.sizes.n=100"]),
    ],
)
def test_the_example_configs_run_from_the_repository(tmp_path, config, overrides, cl_device):
    args = ["tune", f"configs/kernels/{config}", "--budget", "3", "--db", str(tmp_path / "e.db")]
    for item in ["strategy.name=random", *overrides]:
        args += ["--set", item]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = cli.invoke(app, args)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    trials = Journal(tmp_path / "e.db").trials(1)
    assert len(trials) == 3 and any(t.ok for t in trials), [t.measurement.error for t in trials]
