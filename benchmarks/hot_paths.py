"""Hot paths (issue 38 item 7): what ``@checked`` costs in the loops that call ``omwu_step`` and
``centroid_bound``, and the OMWU batched kernel against the per-game loop.

Three measurements, each timed in CPU seconds of this process (``time.process_time``: every thread
of the process, so a sleeping OpenMP thread costs nothing and a spinning one counts) and in wall
seconds, the best of ``--repeats`` rounds, the variants of one measurement interleaved round by
round so that a change in the machine's load hits them alike:

1. ``omwu_step`` in its real loop: ``simulate`` on 64 random 4x4 games for 2,000 steps with the
   loop's ``omwu_step`` as the package ships it, replaced by its unchecked body, and replaced by the
   checked function with its checks forced on (what the loop would cost if every step checked).
2. ``centroid_bound`` in its real loop: tree_search's ``_small_trees`` (every tree with at most 7
   vertices, every target and prediction; the exact-optimum part cut to trees of 2 vertices), run
   with nested checks skipped as its ``run`` runs it, with the same three variants; and, the
   strictest reading, the bare call ``centroid_bound(n)`` repeated in a loop of its own (a body of
   about a tenth of a microsecond, where any Python wrapper shows).
3. The OMWU kernel: the batched ``simulate`` against the per-game numpy loop ``omwu_numpy`` on the
   same 64 games x 2,000 steps (the workload of ``benchmarks/run.py``), results checked equal,
   under the thread settings ``explorables`` chooses (printed).

Usage: ``PYTHONPATH=src python benchmarks/hot_paths.py [--repeats 5]``; prints Markdown tables
(results in ``benchmarks/hot_paths.md``). The 1-minute load average is printed before and after.
"""

# ruff: noqa: I001  (explorables is imported before torch on purpose)
from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import explorables  # noqa: F401  (first: core.threads sets the thread count and wait policy)
import numpy as np
import torch
from explorables.core import arguments
from explorables.omwu import dynamics, omwu_numpy, random_interior_game, simulate
from explorables.tree_search import experiment as ts_experiment
from explorables.tree_search import search as ts_search
from explorables.tree_search.experiment import TreeSearchConfig


class _StandIn:
    """Stands for a module's function in its loop, whether the loop calls ``f(...)`` or ``f.__wrapped__(...)``."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


@contextmanager
def replaced(module: Any, name: str, fn: Callable | None) -> Iterator[None]:
    """``module.name`` replaced by a stand-in calling ``fn`` (``None``: left as shipped)."""
    if fn is None:
        yield
        return
    before = getattr(module, name)
    setattr(module, name, _StandIn(fn))
    try:
        yield
    finally:
        setattr(module, name, before)


@contextmanager
def nested_checks_skipped() -> Iterator[None]:
    """The checks of nested calls switched off, as inside a ``@checked(skip_nested=True)`` ``run``."""
    token = arguments._skip_checks()
    try:
        yield
    finally:
        arguments._restore_checks(token)


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def interleaved(variants: dict[str, Callable[[], Any]], repeats: int) -> dict[str, tuple[float, float]]:
    """Best CPU and best wall seconds of each variant over ``repeats`` interleaved rounds."""
    best = {k: (float("inf"), float("inf")) for k in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            cpu, wall = timed(fn)
            best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
    return best


def games(n: int = 64) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.stack([random_interior_game(4, rng)[0] for _ in range(n)])


def checked_vs_bare(
    module: Any, name: str, workload: Callable[[], Any], repeats: int
) -> dict[str, tuple[float, float]]:
    """``workload`` with ``module.name`` as shipped, replaced by its unchecked body, and with its checks forced on."""
    checked = getattr(module, name)

    def run(fn: Callable | None) -> Callable[[], Any]:
        def go() -> None:
            with replaced(module, name, fn):
                workload()

        return go

    return interleaved(
        {
            "as shipped": run(None),
            "unchecked body": run(checked.__wrapped__),
            "checks forced on": run(arguments._ChecksOn(checked)),
        },
        repeats,
    )


def omwu_step_loop(repeats: int, steps: int = 2_000) -> dict[str, tuple[float, float]]:
    A = games()
    return checked_vs_bare(dynamics, "omwu_step", lambda: simulate(A, 0.1, steps), repeats)


def centroid_bound_loop(repeats: int) -> dict[str, tuple[float, float]]:
    cfg = TreeSearchConfig.preset("smoke").replace(exhaustive_max_size=7, optimal_max_size=2).validated()

    def small_trees() -> None:
        with nested_checks_skipped():
            ts_experiment._small_trees(cfg)

    return checked_vs_bare(ts_experiment, "centroid_bound", small_trees, repeats)


def centroid_bound_calls(repeats: int, calls: int = 200_000) -> dict[str, tuple[float, float]]:
    checked = ts_search.centroid_bound
    body = checked.__wrapped__
    ns = [int(n) for n in np.random.default_rng(0).integers(1, 10**6, calls)]

    def skipped() -> None:
        with nested_checks_skipped():
            for n in ns:
                checked(n)

    def bare() -> None:
        for n in ns:
            body(n)

    def on() -> None:
        for n in ns:
            checked(n)

    return interleaved({"checked, nested (skipped)": skipped, "unchecked body": bare, "checks on": on}, repeats)


def kernel(repeats: int, steps: int = 2_000) -> dict[str, Any]:
    A = games()
    n = len(A)
    out: dict[str, Any] = {}

    def batched() -> None:
        out["traj"] = simulate(A, 0.1, steps)

    def looped() -> None:
        out["loops"] = [omwu_numpy(A[b], 0.1, steps) for b in range(n)]

    best = interleaved({"batched `simulate`": batched, "per-game loop `omwu_numpy`": looped}, repeats)
    err = max(np.abs(out["traj"].log_x[:, b].numpy() - out["loops"][b][0]).max() for b in range(n))
    assert err < 1e-12, f"batched and looped OMWU disagree by {err}"
    return {"best": best, "game_steps": n * steps, "max_abs_diff": err}


def ratio_table(title: str, best: dict[str, tuple[float, float]], base: str) -> list[str]:
    lines = [
        title,
        "",
        "| variant | CPU s | wall s | CPU / unchecked | wall / unchecked |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (cpu, wall) in best.items():
        lines.append(f"| {name} | {cpu:.4f} | {wall:.4f} | {cpu / best[base][0]:.3f} | {wall / best[base][1]:.3f} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}, {os.cpu_count()} CPUs, "
        f"best of {args.repeats} interleaved rounds; 1-min load average {load:.1f} at the start"
    )
    print()
    lines = ratio_table(
        "`omwu_step` in `simulate`'s loop (64 games 4x4, 2,000 steps):",
        omwu_step_loop(args.repeats),
        "unchecked body",
    )
    lines += [
        "",
        *ratio_table(
            "`centroid_bound` in `_small_trees`' loop (trees up to 7 vertices, nested checks skipped as in `run`):",
            centroid_bound_loop(args.repeats),
            "unchecked body",
        ),
        "",
        *ratio_table(
            "`centroid_bound(n)` alone, 200,000 calls in a loop:", centroid_bound_calls(args.repeats), "unchecked body"
        ),
    ]
    k = kernel(args.repeats)
    (bc, bw), (lc, lw) = k["best"].values()
    lines += [
        "",
        f"OMWU kernel, 64 games 4x4 x 2,000 steps (results equal to {k['max_abs_diff']:.1e}):",
        "",
        "| implementation | CPU s | wall s | game-steps per CPU s | game-steps per wall s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (cpu, wall) in k["best"].items():
        lines.append(
            f"| {name} | {cpu:.3f} | {wall:.3f} | {k['game_steps'] / cpu:,.0f} | {k['game_steps'] / wall:,.0f} |"
        )
    lines.append(f"| speed-up (loop / batched) | | | {lc / bc:.1f}x | {lw / bw:.1f}x |")
    print("\n".join(lines))
    print(f"\n1-min load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
