"""Chapter 19 through the command line: a killed run resumed from its checkpoint ends with the
same results.json as an uninterrupted one."""

from __future__ import annotations

from .cli_runs import cli, kill_mid_run, untimed_results

# the datasets part is made longer than usual so that the kill lands while it runs
ARGS = ["run", "tomato_mp", "--scale", "smoke", "--quiet", "--no-figures", "--set", "datasets=moons,circles,iris"]


def test_kill_and_resume_matches_an_uninterrupted_run(tmp_path):
    full, interrupted = tmp_path / "full", tmp_path / "interrupted"
    done = cli(*ARGS, "--out", str(full))
    assert done.returncode == 0, done.stderr

    kill_mid_run(ARGS, interrupted)

    resumed = cli(*ARGS, "--out", str(interrupted), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "(resumed)" in resumed.stdout
    assert untimed_results(interrupted) == untimed_results(full)
