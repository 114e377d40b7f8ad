"""A torch chapter's execution time on a busy or restricted CPU, with and without the thread setting.

``explorables`` sets torch's and BLAS's thread count from the CPUs the process may use
(:mod:`explorables.core.threads`). This script executes one chapter notebook from a cold
kernel (jupytext + nbclient, as ``benchmarks/run.py`` does) under these conditions:

* ``free``: nothing else pinned to our CPUs; the package's settings (thread count: here torch's
  own default; OpenMP threads sleep while waiting, ``OMP_WAIT_POLICY=PASSIVE``);
* ``free-active``: the same with ``OMP_WAIT_POLICY=ACTIVE`` (spinning threads, as torch does by
  itself: the state before the package set the policy);
* ``1cpu-torch-default``: the kernel may run on CPU 0 only (an affinity mask, as a container or
  Binder's quota gives), threads forced to torch's default (``EXPLORABLES_THREADS`` = physical
  cores), i.e. what happened before the package set the count;
* ``1cpu-package``: the same mask, the package's count (1 here);
* ``hog-package``: a busy loop pinned to the last CPU (another program on the machine), the
  package's count (it cannot see the other program: torch's default);
* ``hog-threads-1``: the same busy loop, ``EXPLORABLES_THREADS=1`` (the override a reader on a
  shared machine would set);
* ``free-threads-1``: no busy loop, ``EXPLORABLES_THREADS=1``;
* ``hog-active``: the busy loop, spinning OpenMP threads.

Results are in ``benchmarks/threads.md``.

Usage: ``python benchmarks/threads.py [--chapter 16-muon] [--scale smoke] [--conditions ...]``;
``--same-numbers SLUG`` instead runs ``explorables run SLUG --scale smoke`` with sleeping and with
spinning OpenMP threads and checks that the two ``results.json`` summaries are identical.
The ``parameters`` cell's ``SCALE`` is replaced by ``--scale``; ``book`` is what the site runs.
Times include the kernel start. The machine's load average is printed with each time.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDITIONS = ("free", "free-active", "free-threads-1", "hog-package", "hog-active", "hog-threads-1",
              "1cpu-torch-default", "1cpu-package")
HOG = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


def physical_cores() -> int:
    sys.path.insert(0, str(ROOT / "src" / "explorables" / "core"))
    try:  # load threads.py alone: importing explorables here would set the parent's environment
        import threads  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return threads.physical_cores()


@contextlib.contextmanager
def condition(name: str) -> Iterator[None]:
    cpus = sorted(os.sched_getaffinity(0))
    saved_env = dict(os.environ)
    for key in [k for k in os.environ if k.endswith("_NUM_THREADS") or k == "EXPLORABLES_THREADS"]:
        del os.environ[key]
    hog = None
    try:
        if name.startswith("1cpu"):
            os.sched_setaffinity(0, {cpus[0]})  # inherited by the kernel
            if name == "1cpu-torch-default":
                os.environ["EXPLORABLES_THREADS"] = str(physical_cores())
        if name.startswith("hog"):
            hog = subprocess.Popen([sys.executable, "-c", HOG, str(cpus[-1])])
        if name.endswith("threads-1"):
            os.environ["EXPLORABLES_THREADS"] = "1"
        os.environ.pop("OMP_WAIT_POLICY", None)
        if name.endswith("active"):
            os.environ["OMP_WAIT_POLICY"] = "ACTIVE"
        yield
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
        os.sched_setaffinity(0, set(cpus))
        os.environ.clear()
        os.environ.update(saved_env)


def execute(chapter: Path, scale: str) -> tuple[float, float, str]:
    """Seconds in all (kernel start included), seconds in the cells, torch's thread count."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(chapter)
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            cell.source = f'SCALE = "{scale}"'
    nb.cells.append(jupytext.reads("import torch\nprint(torch.get_num_threads())", fmt="py:percent").cells[0])
    start = time.perf_counter()
    resources = {"metadata": {"path": str(chapter.parent)}}
    NotebookClient(nb, timeout=900, kernel_name="python3", resources=resources, record_timing=True).execute()
    elapsed = time.perf_counter() - start
    in_cells = 0.0
    for cell in nb.cells:
        timing = cell.metadata.get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            begin, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                          for k in ("iopub.execute_input", "shell.execute_reply"))
            in_cells += (end - begin).total_seconds()
    threads_used = "".join(o.get("text", "") for o in nb.cells[-1].outputs).strip()
    return elapsed, in_cells, threads_used


def same_numbers(slug: str) -> bool:
    """Do sleeping (PASSIVE, the package's default) and spinning (ACTIVE) OpenMP threads give the
    same results? (They should: only the waiting changes, not the thread count.)"""
    import json
    import tempfile

    summaries = {}
    with tempfile.TemporaryDirectory() as tmp:
        for policy in ("PASSIVE", "ACTIVE"):
            out = Path(tmp) / policy
            env = {**os.environ, "OMP_WAIT_POLICY": policy}
            subprocess.run([sys.executable, "-m", "explorables", "run", slug, "--scale", "smoke", "--out", str(out),
                            "--no-figures", "--quiet"], env=env, check=True, timeout=900)
            summary = json.loads((out / "results.json").read_text())
            summary.pop("timings", None)  # wall-clock seconds: the only part expected to differ
            summaries[policy] = summary
    same = summaries["PASSIVE"] == summaries["ACTIVE"]
    print(f"{slug}: smoke summaries with PASSIVE and ACTIVE OpenMP waiting are {'identical' if same else 'DIFFERENT'}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", default="16-muon", help="book/<chapter>.md (default 16-muon)")
    parser.add_argument("--scale", default="smoke", choices=("smoke", "book"))
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--same-numbers", metavar="SLUG", help="only check that the wait policy changes no number")
    args = parser.parse_args(argv)
    if args.same_numbers:
        return 0 if same_numbers(args.same_numbers) else 1
    chapter = ROOT / "book" / f"{args.chapter}.md"
    print(f"{chapter.name}, SCALE={args.scale!r}, CPUs {sorted(os.sched_getaffinity(0))}, "
          f"physical cores {physical_cores()}")
    print(f"{'condition':20s} {'total s':>8s} {'cells s':>8s} {'torch threads':>14s} {'load avg before':>16s}")
    for name in args.conditions:
        load = os.getloadavg()[0]
        with condition(name):
            seconds, in_cells, used = execute(chapter, args.scale)
        print(f"{name:20s} {seconds:8.1f} {in_cells:8.1f} {used:>14s} {load:16.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
