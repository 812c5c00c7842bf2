import pandas as pd
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.storage import Journal

runner = CliRunner()


@pytest.fixture
def booth_yaml(tmp_path):
    path = tmp_path / "booth.yaml"
    path.write_text(
        f"problem: {{name: booth}}\nstrategy: {{name: sobol}}\nbudget: 12\nseed: 2\nstorage: {tmp_path / 'b.db'}\n"
    )
    return path


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
