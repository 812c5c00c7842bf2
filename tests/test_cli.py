import pandas as pd
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.problems import BoothProblem, Measurement, Status, _registry
from gpautotune.storage import Journal

runner = CliRunner()


def test_tune_prints_best_and_resumes(booth_yaml, tmp_path):
    result = runner.invoke(app, ["tune", str(booth_yaml)])
    assert result.exit_code == 0, result.output
    assert "best value" in result.output and "12 evaluations" in result.output
    result = runner.invoke(app, ["tune", str(booth_yaml), "--budget", "15"])
    assert result.exit_code == 0
    trials = Journal(tmp_path / "b.db").trials(1)
    assert len(trials) == 15 and len({tuple(t.config.values()) for t in trials}) == 15


def test_show_export_space(booth_yaml, tmp_path):
    runner.invoke(app, ["tune", str(booth_yaml)])
    out = runner.invoke(app, ["show", str(tmp_path / "b.db")])
    assert out.exit_code == 0 and "booth" in out.output and "sobol" in out.output
    out = runner.invoke(app, ["export", str(tmp_path / "b.db"), "--csv", str(tmp_path / "t.csv")])
    assert out.exit_code == 0 and len(pd.read_csv(tmp_path / "t.csv")) == 12
    out = runner.invoke(app, ["space", str(booth_yaml)])
    assert out.exit_code == 0 and "441" in out.output


def test_merge_joins_journals_and_skips_what_is_there(booth_yaml, tmp_path):
    runner.invoke(app, ["tune", str(booth_yaml)])
    runner.invoke(app, ["tune", str(booth_yaml), "--seed", "3", "--db", str(tmp_path / "c.db")])
    joined = str(tmp_path / "all.db")
    out = runner.invoke(app, ["merge", joined, str(tmp_path / "b.db"), str(tmp_path / "c.db")])
    assert out.exit_code == 0, out.output
    assert " ".join(out.output.split()).count("1 runs copied, 0 already") == 2
    out = runner.invoke(app, ["merge", joined, str(tmp_path / "b.db")])
    assert "0 runs copied, 1 already" in " ".join(out.output.split())
    assert sorted(r.seed for r in Journal(joined).runs()) == [2, 3]
    part = str(tmp_path / "part.db")
    for option, copied in (("--problem=gemm", 0), ("--label=other", 0), ("--problem=booth", 1)):
        out = runner.invoke(app, ["merge", part, str(tmp_path / "b.db"), option])
        assert f"{copied} runs copied, 0 already" in " ".join(out.output.split()), option
    out = runner.invoke(app, ["merge", joined, str(tmp_path / "missing.db")])
    assert out.exit_code == 2 and "does not exist" in out.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("problem: {name: booth}\nbudget: -3\n", "budget"),
        ("problem: {name: booth, lvls: 2}\nbudget: 3\n", "lvls"),
        ("problem: {name: nope}\nbudget: 3\n", "unknown problem"),
        ("problem: {name: booth}\nstrategy: {name: sobol, kappa: 1}\nbudget: 3\n", "kappa"),
        ("problem: {name: booth}\nbudget: 3\nbugdet: 4\n", "bugdet"),
        ("problem: [\n", "YAML"),
    ],
)
def test_user_errors_exit_2_with_one_line(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["tune", str(path)])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


class _BoothWithBaseline(BoothProblem):
    """Booth with a declared baseline configuration (an ``x1``/``x2`` pair or a bad one)."""

    def __init__(self, x1: int = 0, x2: int = 0, valid: bool = True) -> None:
        super().__init__()
        self._baseline = {"x1": x1, "x2": x2}
        self._valid = valid

    def baseline(self) -> dict[str, int]:
        return dict(self._baseline)

    def evaluate(self, config):
        if not self._valid and dict(config) == self._baseline:
            return Measurement.failure(Status.RUN_ERROR, "the naive kernel crashed")
        return super().evaluate(config)


def booth_with_baseline(x1: int = 0, x2: int = 0, valid: bool = True) -> BoothProblem:
    return _BoothWithBaseline(x1, x2, valid)


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    """``booth-with-baseline`` in the problem registry during each test of this module."""
    monkeypatch.setitem(_registry._REGISTERED, "booth-with-baseline", booth_with_baseline)


def _tune_with_baseline(tmp_path, options: str) -> str:
    path = tmp_path / "baseline.yaml"
    path.write_text(
        f"problem: {{name: booth-with-baseline, {options}}}\n"
        f"strategy: {{name: sobol}}\nbudget: 10\nseed: 2\nstorage: {tmp_path / 'b.db'}\n"
    )
    result = runner.invoke(app, ["tune", str(path)])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_tune_reports_the_speedup_over_the_problems_baseline(tmp_path):
    output = _tune_with_baseline(tmp_path, "x1: -3, x2: 5")
    problem = _BoothWithBaseline(-3, 5)
    base = problem.evaluate(problem.baseline()).value
    best = min(t.value for t in Journal(tmp_path / "b.db").trials(1) if t.ok)
    assert f"baseline {base:.6g}; speedup of the best over it: {base / best:.2f}x" in output


def test_tune_says_when_the_baseline_fails(tmp_path):
    output = _tune_with_baseline(tmp_path, "x1: -3, x2: 5, valid: false")
    assert "baseline configuration failed (run_error): the naive kernel crashed" in output


def test_only_the_problems_report_metrics_are_printed(tmp_path, monkeypatch):
    monkeypatch.setattr(_BoothWithBaseline, "report_metrics", ("shown",))
    monkeypatch.setattr(
        BoothProblem,
        "evaluate",
        lambda self, config: Measurement.success(1.0 + abs(config["x1"]), shown=7, hidden=8),
    )
    output = _tune_with_baseline(tmp_path, "x1: 3")
    assert "shown 7" in output and "hidden" not in output


def test_tuning_files_name_registered_problems_only(tmp_path):
    path = tmp_path / "code.yaml"
    path.write_text("problem: {name: 'tests.test_cli:booth_with_baseline'}\nbudget: 3\n")
    result = runner.invoke(app, ["tune", str(path)])
    assert result.exit_code == 2 and "unknown problem 'tests.test_cli:booth_with_baseline'" in (
        " ".join(result.output.split())
    )


@pytest.mark.slow
def test_tune_on_local_dask_workers(booth_yaml, tmp_path):
    result = runner.invoke(app, ["tune", str(booth_yaml), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "12 evaluations" in result.output and "trials per worker" in result.output
    trials = Journal(tmp_path / "b.db").trials(1)
    assert len({t.info["worker"] for t in trials}) == 2
    assert len({tuple(t.config.values()) for t in trials}) == 12


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--workers", "0"], "workers must be >= 1"),
        (["--workers", "3", "--devices", "pocl:0,pocl:0"], "3 workers for 2 devices"),
        (["--scheduler", "tcp://127.0.0.1:1", "--devices", "0"], "when the workers of"),
    ],
)
def test_bad_worker_options_exit_2_with_one_line(booth_yaml, options, message):
    result = runner.invoke(app, ["tune", str(booth_yaml), *options])
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output


def test_help_lists_the_commands_in_their_order():
    out = runner.invoke(app, ["-h"], terminal_width=100)
    assert out.exit_code == 0, out.output
    commands = ("tune", "list", "show", "export", "space", "devices", "compare", "report")
    listed = [
        line.split()[1]
        for line in out.output.splitlines()
        if line.startswith("│ ") and line.split()[1] in (*commands, "explain", "spapt")
    ]
    assert listed == [*commands, "explain", "spapt"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("gpr", "(kernel). Default [unit, copula]; ties go to the earlier"),
        ("greedy", "stopped them; [lws_y] reproduces their heavy tail"),
    ],
)
def test_list_shows_bracketed_text_of_the_option_docs(name, text):
    """``[...]`` in a docstring is text, not rich markup that the table drops."""
    out = runner.invoke(app, ["list", name], env={"COLUMNS": "3000"})
    assert out.exit_code == 0, out.output
    assert text in out.output


def test_list_gpr_seeds_states_its_own_defaults_and_choices():
    """gpr-seeds documents its own defaults, not GPR's, and no acquisition it refuses."""
    out = runner.invoke(app, ["list", "gpr-seeds"], env={"COLUMNS": "3000"})
    assert out.exit_code == 0, out.output
    rows = {line.split("│")[1].strip(): line for line in out.output.splitlines() if "│" in line}
    assert "initial design size (default 24, the seeds')" in rows["n_init"]
    assert "max(10, 2 * dims)" not in rows["n_init"]
    assert "hedge is not offered" in rows["acquisition"] and "; or hedge" not in rows["acquisition"]
    assert "fixed (default)" in rows["model_choice"] and "loo (default)" not in rows["model_choice"]
    assert "None (default, the seeds'): never" in rows["stall"]
    assert "The default 7" not in rows["stall"]
