"""The command line as a newcomer meets it: -h, --version, `list`, run names, storage URLs,
progress, and `report` repeating `compare`'s report."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.problems import BoothProblem, Measurement, Status, _registry
from gpautotune.storage import Journal
from gpautotune.version import __version__

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def booth_yaml(tmp_path):
    path = tmp_path / "booth.yaml"
    path.write_text("problem: {name: booth}\nstrategy: {name: random}\nbudget: 6\nseed: 2\n")
    return path


def test_version_and_short_help():
    assert runner.invoke(app, ["--version"]).output.strip() == f"gpautotune {__version__}"
    short, long = runner.invoke(app, ["-h"]), runner.invoke(app, ["--help"])
    assert (
        short.exit_code == 0 and short.output == long.output and "gpautotune list" in short.output
    )
    assert "--no-resume" in runner.invoke(app, ["tune", "-h"]).output
    assert runner.invoke(app, ["spapt", "-h"]).exit_code == 0


def test_list_shows_problems_and_strategies_with_defaults():
    out = _flat(runner.invoke(app, ["list"], env={"COLUMNS": "200"}).output)
    assert "laplacian-replay" in out and "register_rule='proxy'" in out
    assert "population=20" in out and "mutation=0.1" in out  # the genetic algorithm's
    detail = _flat(runner.invoke(app, ["list", "gpr"], env={"COLUMNS": "200"}).output)
    assert "stall_kappa" in detail and "10.0" in detail and "initial design size" in detail
    preset = _flat(runner.invoke(app, ["list", "gpr-seeds"], env={"COLUMNS": "200"}).output)
    assert "refit_every" in preset and "initial design size" in preset  # GPR's docs, inherited
    only = _flat(runner.invoke(app, ["list", "strategies"], env={"COLUMNS": "200"}).output)
    assert "two-stage" in only and "laplacian-replay" not in only
    bad = runner.invoke(app, ["list", "gprr"])
    assert bad.exit_code == 2 and "no problem or strategy is called 'gprr'" in _flat(bad.output)


def test_named_runs_show_and_export_their_names(booth_yaml, tmp_path):
    db = tmp_path / "n.db"
    for name in ("first", "second"):
        result = runner.invoke(app, ["tune", str(booth_yaml), "--db", str(db), "--name", name])
        assert result.exit_code == 0, result.output
    shown = runner.invoke(app, ["show", str(db)], env={"COLUMNS": "200"}).output
    assert "first" in shown and "second" in shown and "run 2 (second)" in shown
    runner.invoke(app, ["export", str(db), "--csv", str(tmp_path / "t.csv")])
    frame = pd.read_csv(tmp_path / "t.csv")
    assert frame.groupby("label").size().to_dict() == {"first": 6, "second": 6}
    only = runner.invoke(app, ["show", str(db), "--name", "first"], env={"COLUMNS": "200"})
    assert "second" not in only.output


def test_a_name_is_refused_with_another_strategy(booth_yaml, tmp_path):
    db = str(tmp_path / "n.db")
    assert runner.invoke(app, ["tune", str(booth_yaml), "--db", db, "--name", "a"]).exit_code == 0
    other = ["--set", "strategy.name=sobol"]
    clash = runner.invoke(app, ["tune", str(booth_yaml), "--db", db, "--name", "a", *other])
    assert clash.exit_code == 2 and "run name 'a' is taken" in _flat(clash.output)
    refused = runner.invoke(
        app, ["tune", str(booth_yaml), "--db", db, "--name", "a", "--no-resume"]
    )
    assert refused.exit_code == 2 and "already exists" in _flat(refused.output)
    resumed = runner.invoke(app, ["tune", str(booth_yaml), "--db", db, "--name", "a"])
    assert resumed.exit_code == 0 and len(Journal(db).runs()) == 1
    seed = runner.invoke(app, ["tune", str(booth_yaml), "--db", db, "--name", "a", "--seed", "5"])
    assert seed.exit_code == 0 and len(Journal(db).runs()) == 2  # a repetition of a


def test_sqlite_urls_on_the_command_line(booth_yaml, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["tune", str(booth_yaml), "--db", "sqlite:///runs/u.db"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "runs" / "u.db").is_file() and not (tmp_path / "sqlite:").exists()
    assert runner.invoke(app, ["show", "sqlite:///runs/u.db"]).exit_code == 0
    bad = runner.invoke(app, ["tune", str(booth_yaml), "--db", "file:u.db?mode=ro"])
    assert bad.exit_code == 2 and "URI filename" in _flat(bad.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["booth.yaml", "runs"]
    missing = runner.invoke(app, ["show", "sqlite:///nowhere.db"])
    assert missing.exit_code == 2 and "does not exist" in missing.output


class _AlwaysFails(BoothProblem):
    name = "always-fails"

    def evaluate(self, config):
        return Measurement.failure(Status.BUILD_ERROR, "no compiler")


def test_the_progress_bar_says_when_nothing_succeeded_yet(tmp_path, monkeypatch):
    monkeypatch.setitem(_registry._REGISTERED, "always-fails", _AlwaysFails)
    path = tmp_path / "fail.yaml"
    path.write_text(f"problem: {{name: always-fails}}\nbudget: 3\nstorage: {tmp_path / 'f.db'}\n")
    failed = runner.invoke(app, ["tune", str(path)], env={"COLUMNS": "200"})
    assert failed.exit_code == 0, failed.output
    assert "no success yet" in failed.output and "best -" not in failed.output
    path.write_text(f"problem: {{name: booth}}\nbudget: 3\nstorage: {tmp_path / 'o.db'}\n")
    done = runner.invoke(app, ["tune", str(path)], env={"COLUMNS": "200"})
    best = min(t.value for t in Journal(tmp_path / "o.db").trials(1) if t.ok)
    assert f"best {best:.6g}" in done.output and "3/3" in done.output


class _Interrupted(BoothProblem):
    """Booth whose evaluations end the command (``stop``: Ctrl-C or SIGTERM) after
    ``left`` of them."""

    name = "interrupted"
    left, stop = 0, KeyboardInterrupt

    def evaluate(self, config):
        if _Interrupted.left == 0:
            raise _Interrupted.stop
        _Interrupted.left -= 1
        return super().evaluate(config)


@pytest.mark.parametrize(("stop", "code"), [(KeyboardInterrupt, 130), (SystemExit(143), 143)])
def test_an_interrupted_run_says_what_is_stored_and_resumes_saying_so(
    tmp_path, monkeypatch, caplog, stop, code
):
    monkeypatch.setitem(_registry._REGISTERED, "interrupted", _Interrupted)
    monkeypatch.setattr(_Interrupted, "stop", stop)
    path = tmp_path / "i.yaml"
    db = tmp_path / "i.db"
    path.write_text(
        f"problem: {{name: interrupted}}\nstrategy: {{name: random}}\nbudget: 6\nseed: 1\n"
        f"storage: {db}\n"
    )
    monkeypatch.setattr(_Interrupted, "left", 2)
    stopped = runner.invoke(app, ["tune", str(path)], env={"COLUMNS": "300"})
    assert stopped.exit_code == code, stopped.output
    assert "Traceback" not in stopped.output
    assert (
        f"interrupted: 2 trials of run 1 (interrupted / random, seed 1) stored in {db}; run "
        "the same command to resume"
    ) in _flat(stopped.output)
    monkeypatch.setattr(_Interrupted, "left", 100)
    resumed = runner.invoke(app, ["tune", str(path)], env={"COLUMNS": "300"})
    assert resumed.exit_code == 0, resumed.output
    assert f"journal {db}; resuming run 1 with 2 trials stored" in _flat(resumed.output)
    said = [r for r in caplog.records if "resuming" in r.getMessage()]
    assert said == []  # not the tuner's own warning too: said once is enough
    again = runner.invoke(app, ["tune", str(path)], env={"COLUMNS": "300"})
    best = min(t.value for t in Journal(db).trials(1) if t.ok)
    assert "resuming run 1 with 6 trials stored (its budget is used" in _flat(again.output)
    assert f"6/6 best {best:.6g}" in _flat(again.output) and "no success" not in again.output


def test_the_package_and_the_help_start_without_the_heavy_libraries():
    code = textwrap.dedent(
        """
        import sys
        import gpautotune
        from gpautotune.cli import app
        heavy = [m for m in ("torch", "pandas", "scipy.stats", "SALib", "botorch", "sklearn")
                 if m in sys.modules]
        print(heavy)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "from gpautotune import tune; import sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_report_repeats_the_comparisons_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(
        textwrap.dedent(
            """
            problem: {name: booth}
            strategies:
              - {name: random, label: RS}
              - {name: sobol, label: Sobol}
            repetitions: 4
            budget: 8
            checkpoints: [3, 8]
            reference: Sobol
            storage: results/c.db
            workers: 1
            """
        )
    )
    compared = runner.invoke(app, ["compare", "c.yaml"])
    assert compared.exit_code == 0, compared.output
    folder = tmp_path / "results" / "c-report"
    first = (folder / "summary.csv").read_text(), (folder / "pairwise.csv").read_text()
    (folder / "summary.csv").unlink()
    reported = runner.invoke(app, ["report", "results/c.db"])
    assert reported.exit_code == 0, reported.output
    assert ((folder / "summary.csv").read_text(), (folder / "pairwise.csv").read_text()) == first
    summary = pd.read_csv(folder / "summary.csv")
    assert sorted(set(summary["budget"])) == [3, 8]
    assert set(pd.read_csv(folder / "pairwise.csv")["reference"]) == {"Sobol"}
    assert not (tmp_path / "results" / "c").exists()  # the old default folder


def test_a_value_of_nested_aliases_is_shown_short(booth_yaml, tmp_path):
    # each key lists ten aliases of the one before: a5 stands for 10^5 strings
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 6)
    ]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(booth_yaml.read_text() + "\n".join(lines) + "\n")
    result = runner.invoke(app, ["tune", str(bomb)])
    assert result.exit_code == 2 and "a5: Extra inputs are not permitted" in _flat(result.output)
    assert len(result.output) < 5_000


@pytest.mark.parametrize(
    ("text", "overrides"),
    [
        ("problem: {name: booth}\nstrategy: {n_init: 20}\nbudget: 30\n", []),
        ("problem: {name: booth}\nbudget: 30\n", ["strategy.n_init=20"]),
    ],
    ids=["section", "set"],
)
def test_a_strategy_section_without_a_name_sets_options_of_gpr(tmp_path, text, overrides):
    """README: the strategy defaults to gpr, and `--set` overrides any key."""
    from gpautotune.config import load_config

    path = tmp_path / "t.yaml"
    path.write_text(text)
    config = load_config(path, overrides)
    assert config.strategy.name == "gpr" and config.strategy.options == {"n_init": 20}
    assert config.storage_path() == "results/booth-gpr.db"
    named = load_config(path, [*overrides, "strategy.name=sobol"])
    assert named.strategy.name == "sobol"  # a name given is kept


def test_list_gives_the_whole_first_sentence():
    from gpautotune.catalog import find_entry

    (screening,) = find_entry("screening")  # not cut at "eq." to "Seed 003 eq"
    assert screening.summary.startswith("Seed 003 eq. 5.2: -1.5 x1 + 1.3 x3")
    (lhs,) = find_entry("lhs")
    assert (
        lhs.summary
        == "One Latin hypercube design, measured point after point (seed 000 §6, 003 §11.5)"
    )


def test_the_best_configurations_title_is_one_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("problem: {name: booth}\nstrategy: {name: random}\nbudget: 12\nseed: 2\n")
    result = runner.invoke(app, ["tune", str(path), "--db", str(tmp_path / "t.db")])
    assert result.exit_code == 0, result.output
    titles = [line.strip() for line in result.output.splitlines() if "best of run" in line]
    assert (
        len(titles) == 1 and titles[0].startswith("best of run 1 (trial ") and titles[0][-1] == ")"
    )
