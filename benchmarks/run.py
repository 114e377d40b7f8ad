"""Measure the book's budgets and write them as a Markdown table.

* each chapter's execution time from a cold kernel (jupytext + nbclient, kernel start included);
* each live lab's latency: median and worst over its scripted interactions
  (``explorables.<slug>.lab.benchmark_interactions``), split into redraws and reruns;
* OMWU: batched steps per second of :func:`explorables.omwu.simulate` against a plain
  per-game numpy loop (:func:`explorables.omwu.omwu_numpy`) on the same games, results checked equal.

Usage: ``python benchmarks/run.py [--write benchmarks/README.md] [--chapters omwu ...]``.
Budgets: chapter <= 60 s; redraw <= 150 ms; rerun <= 1 s. This script reports; tests do not time.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTER_BUDGET_S, REDRAW_BUDGET_S, RERUN_BUDGET_S = 60.0, 0.150, 1.0


def chapter_run(path: Path) -> dict[str, float]:
    """Execute a MyST notebook in a fresh kernel: wall time (s), and the kernel's CPU time (s, user +
    system, its child processes included) and peak resident memory (MB), sampled every 0.1 s.

    CPU time hardly depends on what else the machine runs, unlike wall time; together with the
    peak memory it sizes a course server (book/teaching.md)."""
    import threading

    import jupytext
    import psutil
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    usage = {"peak_mb": 0.0, "cpu_s": 0.0}
    done = threading.Event()

    def sample(pid: int) -> None:
        process = psutil.Process(pid)
        while not done.is_set():
            try:
                family = [process, *process.children(recursive=True)]
                usage["peak_mb"] = max(usage["peak_mb"], sum(p.memory_info().rss for p in family) / 2**20)
                times = process.cpu_times()
                usage["cpu_s"] = times.user + times.system + times.children_user + times.children_system
            except psutil.Error:
                pass
            done.wait(0.1)

    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    sampler: list[threading.Thread] = []

    def on_start(**_: object) -> None:
        pid = client.km.provisioner.process.pid
        sampler.append(threading.Thread(target=sample, args=(pid,), daemon=True))
        sampler[0].start()

    client.on_notebook_start = on_start
    start = time.perf_counter()
    try:
        client.execute()
    finally:
        wall = time.perf_counter() - start
        done.set()
        for thread in sampler:
            thread.join()
    return {"wall_s": wall, **usage}


def lab_latency(slug: str) -> dict[str, list[float]]:
    module = importlib.import_module(f"explorables.{slug}.lab")
    interactions = module.benchmark_interactions()
    timings: dict[str, list[float]] = {}
    for kind, calls in interactions.items():
        timings[kind] = []
        for call in calls:
            start = time.perf_counter()
            call()
            timings[kind].append(time.perf_counter() - start)
    return timings


def omwu_speed(games: int = 64, steps: int = 2_000) -> dict[str, float]:
    import numpy as np

    from explorables.omwu import omwu_numpy, random_interior_game, simulate

    rng = np.random.default_rng(0)
    A = np.stack([random_interior_game(4, rng)[0] for _ in range(games)])
    start = time.perf_counter()
    traj = simulate(A, 0.1, steps)
    batched = time.perf_counter() - start
    start = time.perf_counter()
    loops = [omwu_numpy(A[b], 0.1, steps) for b in range(games)]
    looped = time.perf_counter() - start
    err = max(np.abs(traj.log_x[:, b].numpy() - loops[b][0]).max() for b in range(games))
    assert err < 1e-12, f"batched and looped OMWU disagree by {err}"
    return {
        "games": games,
        "steps": steps,
        "batched_steps_per_s": games * steps / batched,
        "loop_steps_per_s": games * steps / looped,
        "max_abs_diff": err,
    }


def checkpoint_overhead(every_s: tuple[float, ...] = (60.0, 1.0, 0.0)) -> list[str]:
    """Wall time of the OMWU ``book`` run without checkpoints and with several intervals."""
    import tempfile

    from explorables.core.checkpoint import Checkpointer
    from explorables.omwu import OMWUConfig, run

    config = OMWUConfig.preset("book")
    start = time.perf_counter()
    reference = run(config).summary
    base = time.perf_counter() - start
    rows = [
        "| checkpoint interval | run time (s) | checkpoints written | time writing (s) | overhead |",
        "|---|---|---|---|---|",
    ]
    rows.append(f"| none | {base:.1f} | 0 | 0 | - |")
    for every in every_s:
        with tempfile.TemporaryDirectory() as folder:
            ck = Checkpointer(Path(folder), every_s=every)
            start = time.perf_counter()
            summary = run(config, checkpoint=ck).summary
            elapsed = time.perf_counter() - start
        assert {k: v for k, v in summary.items() if k != "timings"} == {
            k: v for k, v in reference.items() if k != "timings"
        }, "checkpointing changed the results"
        overhead = 100 * (elapsed / base - 1)
        rows.append(f"| every {every:g} s | {elapsed:.1f} | {ck.saves} | {ck.seconds_saving:.2f} | {overhead:+.0f}% |")
    return rows


def measure_this_checkout() -> None:
    """Make the chapter kernels import the package of the checkout this script belongs to.

    The kernels run in ``book/``, so a relative ``PYTHONPATH`` entry would not resolve there and
    they would silently import whichever checkout is installed (a git worktree measuring the main
    one's code). The checkout's ``src`` goes first; other entries are made absolute.
    """
    entries = [str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(ROOT / "src"), *entries]))


def main() -> int:
    measure_this_checkout()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the table into this Markdown file")
    parser.add_argument("--chapters", nargs="*", help="slugs to measure (default: all chapters in book/)")
    parser.add_argument(
        "--no-kernel", action="store_true", help="skip the OMWU kernel-speed and checkpoint benchmarks (minutes)"
    )
    args = parser.parse_args()
    chapters = sorted((ROOT / "book").glob("[0-9][0-9]-*.md"))
    if args.chapters:
        chapters = [c for c in chapters if c.stem[3:] in args.chapters]

    lines = [
        "| chapter | cold execution (s) | kernel CPU (s) | peak memory (MB) | lab redraw median / max (ms) "
        "| lab rerun median / max (ms) | within budget |",
        "|---|---|---|---|---|---|---|",
    ]
    for path in chapters:
        slug = path.stem[3:]
        run = chapter_run(path)
        exec_s = run["wall_s"]
        lat = lab_latency(slug)
        redraw, rerun = lat.get("redraw", [0.0]), lat.get("rerun", [0.0])
        # every interaction must meet its budget, so judge by the worst one
        ok = exec_s <= CHAPTER_BUDGET_S and max(redraw) <= REDRAW_BUDGET_S and max(rerun) <= RERUN_BUDGET_S
        lines.append(
            f"| {path.stem} | {exec_s:.1f} | {run['cpu_s']:.1f} | {run['peak_mb']:.0f} "
            f"| {1e3 * statistics.median(redraw):.0f} / {1e3 * max(redraw):.0f} "
            f"| {1e3 * statistics.median(rerun):.0f} / {1e3 * max(rerun):.0f} | {'yes' if ok else 'NO'} |"
        )
        print(lines[-1], flush=True)

    if args.no_kernel:
        if args.write:
            print("--write needs the kernel benchmarks too (drop --no-kernel)")
            return 2
        return 0
    speed = omwu_speed()
    kernel = [
        "",
        "OMWU kernel: batched `simulate` (torch, float64, CPU) against a per-game numpy loop (`omwu_numpy`), "
        f"{speed['games']} random 4x4 games x {speed['steps']} steps, results equal to {speed['max_abs_diff']:.1e}:",
        "",
        "| implementation | game-steps per second |",
        "|---|---|",
        f"| batched `simulate` | {speed['batched_steps_per_s']:,.0f} |",
        f"| per-game loop `omwu_numpy` | {speed['loop_steps_per_s']:,.0f} |",
        f"| speed-up | {speed['batched_steps_per_s'] / speed['loop_steps_per_s']:.1f}x |",
    ]
    ckpt = ["", "Checkpointing the OMWU `book` run (results checked identical to the run without checkpoints):", ""]
    ckpt += checkpoint_overhead()
    kernel += ckpt
    print("\n".join(kernel))
    machine = (
        f"Measured {date.today()} on {platform.machine()} with {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, torch {importlib.import_module('torch').__version__}."
    )
    if args.write:
        text = args.write.read_text() if args.write.exists() else ""
        marker = "<!-- results -->"
        head = text.split(marker)[0] if marker in text else text
        args.write.write_text(head + marker + "\n\n" + machine + "\n\n" + "\n".join(lines + kernel) + "\n")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
