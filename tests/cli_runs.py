"""Helpers for tests that drive ``python -m explorables`` in a subprocess (kill-and-resume checks).

One SIGKILL-and-resume test per distinct mechanism (each costs two to three full runs in subprocesses):
killed inside a checkpointed loop (``test_runner.py``, omwu), between parts (``test_tree_search.py``),
inside a torch model's training (``test_routing.py``), and in the language model's training while the
other parts run in a spawned worker process (``test_muon.py``). Each chapter's own parts and loops
resumed from a checkpoint are compared in process (``test_resume_kills.py``, the chapters' own tests:
e.g. ``test_tomato_mp.py::test_resuming_after_the_first_part_matches_an_uninterrupted_run``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from explorables.core.checkpoint import Checkpointer, read_checkpoint

ROOT = Path(__file__).resolve().parents[1]
# the package from this checkout, and ``tests`` importable (tests/run_toy.py); one thread: deterministic and fair
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    "OMP_NUM_THREADS": "1",
}


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m explorables *args`` from the repository root, capturing text output."""
    return subprocess.run([sys.executable, "-m", "explorables", *args], capture_output=True, text=True, env=ENV,
                          cwd=ROOT, **kwargs)  # fmt: skip


def untimed_results(folder: Path) -> dict:
    """``results.json`` of a run without its wall-clock ``timings`` (which differ between runs)."""
    data = json.loads((folder / "results.json").read_text())
    data.pop("timings", None)
    return data


def _entries(checkpoint: Path) -> dict:
    try:
        return read_checkpoint(checkpoint)["entries"]
    except Exception:  # the file is being replaced right now; look again
        return {}


def kill_mid_run(
    args: list[str], out: Path, ready: Callable[[dict], bool] = lambda entries: True, timeout_s: float = 300
) -> dict:
    """Start ``explorables *args --out out --checkpoint-every 0``, SIGKILL it once its checkpoint exists
    and ``ready(entries)`` holds, check it left no results, and return the checkpoint's entries."""
    proc = subprocess.Popen([sys.executable, "-m", "explorables", *args, "--out", str(out), "--checkpoint-every", "0"],
                            env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    checkpoint = out / Checkpointer.FILENAME
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if checkpoint.exists() and ready(_entries(checkpoint)):
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed; make it longer"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "results.json").exists()
    return _entries(checkpoint)
