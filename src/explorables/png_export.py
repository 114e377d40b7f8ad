"""PNG copies of plotly figures, written by kaleido in a child process that cannot hang the caller.

kaleido (plotly's image export) drives a Chromium through choreographer from a thread that the
calling thread joins with no time limit. When that Chromium stops answering, the caller waits
forever: ``make test`` hung that way on a loaded machine (the main thread in ``Thread.join``, the
browser idle). Here the export runs in its own process group, and a caller that has waited
``timeout_s`` kills the whole group (the browser included) and goes on without the PNGs.

``python -m explorables.png_export JOBS.json`` is the child: ``JOBS.json`` holds a list of
``[figure JSON, output path]`` pairs.
"""

from __future__ import annotations

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


def write_pngs(figures: dict[str, Any], out: Path, *, timeout_s: float = PNG_TIMEOUT_S,
               command: list[str] | None = None) -> tuple[list[str], str | None]:  # fmt: skip
    """Write ``out/<name>.png`` for each plotly figure; return (names written, why not or None).

    The PNGs are all written or none is listed: a child that fails, or is still running after
    ``timeout_s`` seconds (then its process group is killed), gives ``([], reason)``.
    ``command`` replaces the child's command line (tests use it to stand in a stuck export).
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    names = [f"{name}.png" for name in figures]
    with tempfile.TemporaryDirectory(prefix="explorables-png-") as tmp:
        jobs = Path(tmp) / "jobs.json"
        pairs = zip(figures.values(), names, strict=True)
        jobs.write_text(json.dumps([[fig.to_json(), str(out / name)] for fig, name in pairs]))
        argv = command or [sys.executable, "-m", "explorables.png_export", str(jobs)]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)  # fmt: skip
        try:
            _, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return [], f"the export was still running after {timeout_s:g} s and was stopped (a stuck browser)"
    if proc.returncode != 0:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        return [], (lines[-1][:160] if lines else f"the export exited with status {proc.returncode}")
    return names, None


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the child and everything it started (kaleido's Chromium), then reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):  # gone already, or no process groups
        proc.kill()
    proc.communicate()


def _main(jobs_path: str) -> int:
    import plotly.io as pio

    jobs = json.loads(Path(jobs_path).read_text())
    pio.write_images([pio.from_json(fig) for fig, _ in jobs], [path for _, path in jobs], scale=2)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1]))
