"""PNG copies of plotly figures, written by kaleido in a child process that cannot hang the caller.

kaleido (plotly's image export) drives a Chromium through choreographer from a thread that the
calling thread joins with no time limit. When that Chromium stops answering, the caller waits
forever: ``make test`` hung that way on a loaded machine (the main thread in ``Thread.join``, the
browser idle). Here the export runs in a child process, and a caller that has waited ``timeout_s``
kills the child and everything it started (the browser included) and goes on without the PNGs.

The child is ``python -P -c _CHILD JOBS.json`` (it imports plotly only, not this package):
``JOBS.json`` holds a list of ``[figure JSON, output path]`` pairs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Seconds a PNG export may take before it is stopped. A dozen figures take 3-6 s on the 2-core
#: machine at load 4-6; the bound is far above any slow machine, so only a stuck browser reaches it.
PNG_TIMEOUT_S = 300.0

#: The child's program: every figure in one kaleido session (``plotly.io.write_images``), at twice the size.
_CHILD = (
    "import json, sys; import plotly.io as pio; jobs = json.load(open(sys.argv[1], encoding='utf-8'));"
    " pio.write_images([pio.from_json(f) for f, _ in jobs], [p for _, p in jobs], scale=2)"
)


def write_pngs(figures: dict[str, Any], out: Path, *, timeout_s: float = PNG_TIMEOUT_S,
               command: list[str] | None = None) -> tuple[list[str], str | None]:  # fmt: skip
    """Write ``out/<name>.png`` for each plotly figure; return (names written, why not or None).

    The PNGs are all written or none is listed: a child that fails to start, fails, or is still
    running after ``timeout_s`` seconds gives ``([], reason)``; a stopped child is killed with every
    process it started (kaleido's Chromium runs in a session of its own), and whatever they left in
    their temporary folder (``TMPDIR`` points inside ours) is removed. ``command`` replaces the
    child's command line (tests use it to stand in a stuck export).
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    names = [f"{name}.png" for name in figures]
    with tempfile.TemporaryDirectory(prefix="explorables-png-", ignore_cleanup_errors=True) as tmp:
        jobs, err_path = Path(tmp) / "jobs.json", Path(tmp) / "stderr.txt"
        pairs = zip(figures.values(), names, strict=True)
        jobs.write_text(json.dumps([[fig.to_json(), str(out / name)] for fig, name in pairs]))
        argv = command or [sys.executable, "-P", "-c", _CHILD, str(jobs)]
        env = {**os.environ, "TMPDIR": tmp}
        try:
            with open(err_path, "w") as err:  # a file, not a pipe: nothing waits for a pipe's end
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True)
        except OSError as exc:
            return [], f"the export could not start ({type(exc).__name__}: {exc})"
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            return [], f"the export was still running after {timeout_s:g} s and was stopped (a stuck browser)"
        except BaseException:  # Ctrl-C: leave no export writing files after the caller has gone
            _kill_tree(proc)
            raise
        text = err_path.read_text(encoding="utf-8", errors="replace")
    if proc.returncode != 0:
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return [], (lines[-1][:160] if lines else f"the export exited with status {proc.returncode}")
    return names, None


def _kill_tree(proc: subprocess.Popen) -> None:
    """Kill the child and every process it started, then reap the child (each wait bounded).

    The child is frozen first, so it cannot start a process after its descendants were listed;
    each descendant's own process group goes too (choreographer starts Chromium with a new session).
    """
    import psutil

    try:
        root = psutil.Process(proc.pid)
        root.suspend()
        family = [root, *root.children(recursive=True)]
    except psutil.Error:  # gone already
        family = []
    for member in reversed(family):
        with contextlib.suppress(psutil.Error, OSError):
            if hasattr(os, "killpg") and member.pid != proc.pid:
                os.killpg(os.getpgid(member.pid), signal.SIGKILL)
            member.kill()
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    psutil.wait_procs(family[1:], timeout=10)
