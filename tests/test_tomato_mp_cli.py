"""Chapter 19 through the command line: a killed run resumed from its checkpoint ends with the
same results.json as an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from explorables.core.checkpoint import Checkpointer

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
       "OMP_NUM_THREADS": "1"}
# the datasets part is made longer than usual so that the kill lands while it runs
ARGS = ["run", "tomato_mp", "--scale", "smoke", "--quiet", "--no-figures", "--set", "datasets=moons,circles,iris"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorables", *args], capture_output=True, text=True, env=ENV,
                          cwd=ROOT)


def _results(folder: Path) -> dict:
    data = json.loads((folder / "results.json").read_text())
    data.pop("timings")
    return data


def test_kill_and_resume_matches_an_uninterrupted_run(tmp_path):
    full, interrupted = tmp_path / "full", tmp_path / "interrupted"
    done = _cli(*ARGS, "--out", str(full))
    assert done.returncode == 0, done.stderr

    proc = subprocess.Popen([sys.executable, "-m", "explorables", *ARGS, "--out", str(interrupted)], env=ENV,
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = interrupted / Checkpointer.FILENAME
    deadline = time.monotonic() + 300
    while not checkpoint.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (interrupted / "results.json").exists()

    resumed = _cli(*ARGS, "--out", str(interrupted), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "(resumed)" in resumed.stdout
    assert _results(interrupted) == _results(full)
