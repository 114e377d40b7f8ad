"""Chapter 06 (virtualflow), issue 42, eighth pass: how many rooms the fixed-layout downstream is read on.

The rule (benchmarks/virtualflow_rooms_rule.md, committed before this ran): on tuning base seeds 100-104 x inner
seeds 0-4 (25 draws, book preset), train the networks once per draw (the package's ``train_models``), then read
the fixed-layout MVDR on the 6 test rooms and ``--extra`` more rooms of the split "fixed"
(:func:`~explorables.virtualflow.experiment.fixed_layout_rooms`, what the chapter runs). Candidate k extra rooms
reads the first 6 + k rooms (the package with ``n_fixed_scenes = k`` computes exactly that prefix). Per draw and
candidate: the mean over its rooms of supervised minus the empty slot (the gate "useful", >= 0.5 dB on every inner
seed of a base) and of reflow minus supervised (the downstream claim, reported). Cost: seconds per extra room
(one process, one torch thread), from two timed calls (test rooms alone, then with the extra rooms).

    PYTHONPATH=src python benchmarks/virtualflow_rooms.py --base 100 101 102 103 104 --inner 0 1 2 3 4 --extra 12
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np
import torch

from explorables.virtualflow.claims import USEFUL_GATE
from explorables.virtualflow.experiment import VirtualFlowConfig, build_example, fixed_layout_rooms, train_models

#: the candidates of the rule: extra rooms per inner seed
CANDIDATES = (0, 3, 6, 9, 12)
#: the slower of the two recorded quiet cold runs of the chapter before this pass (benchmarks/README.md), s
COLD_BEFORE = 43.8
#: the rule's ceiling on the projected quiet cold time, s
CEILING = 55.0


def draw(base: int, seed: int, extra: int, device: torch.device) -> tuple[dict[str, list[float]], float]:
    cfg = VirtualFlowConfig(seed=base)
    train = [build_example(cfg, seed, "train", i) for i in range(cfg.n_train_scenes)]
    test = [build_example(cfg, seed, "test", i) for i in range(cfg.n_test_scenes)]
    models = train_models(cfg, train, seed, device)
    t0 = time.perf_counter()
    fixed_layout_rooms(cfg, models, test, device, seed)
    t6 = time.perf_counter() - t0
    t0 = time.perf_counter()
    rooms = fixed_layout_rooms(dataclasses.replace(cfg, n_fixed_scenes=extra), models, test, device, seed)
    t_all = time.perf_counter() - t0
    return rooms, (t_all - t6) / extra


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", type=int, nargs="+", default=[100, 101, 102, 103, 104])
    p.add_argument("--inner", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--extra", type=int, default=max(CANDIDATES))
    a = p.parse_args()
    if min(a.base) < 100:
        raise SystemExit("tuning base seeds only (>= 100): base seeds 0-4 are the book's evaluation seeds")
    torch.set_num_threads(1)
    device = torch.device("cpu")
    print(f"load at start: {os.getloadavg()}", flush=True)
    gate: dict[int, dict[int, list[float]]] = {k: {} for k in CANDIDATES}
    claim: dict[int, list[float]] = {k: [] for k in CANDIDATES}
    costs = []
    for base in a.base:
        for seed in a.inner:
            t0 = time.perf_counter()
            rooms, c = draw(base, seed, a.extra, device)
            costs.append(c)
            sup, empty, reflow = (np.asarray(rooms[b]) for b in ("supervised", "empty", "reflow"))
            line = []
            for k in CANDIDATES:
                n = 6 + k
                g = float(np.mean(sup[:n] - empty[:n]))
                gate[k].setdefault(base, []).append(g)
                claim[k].append(float(np.mean(reflow[:n] - sup[:n])))
                line.append(f"{n} rooms {g:+.2f}")
            print(
                f"base {base} seed {seed} ({time.perf_counter() - t0:.0f} s, {c:.2f} s per extra room, load "
                f"{os.getloadavg()[0]:.2f}): supervised - empty: "
                + ", ".join(line)
                + "; per room: "
                + " ".join(f"{d:+.1f}" for d in sup - empty),
                flush=True,
            )
    c = float(np.median(costs))
    print(
        f"\nseconds per extra room: median {c:.2f} (min {min(costs):.2f}, max {max(costs):.2f}); load {os.getloadavg()}"
    )
    print(f"gate 'useful' (every inner seed >= {USEFUL_GATE} dB) per tuning base, and the rule's cost projection:")
    chosen = None
    for k in CANDIDATES:
        per_base = {b: min(v) for b, v in gate[k].items()}
        passes = all(m >= USEFUL_GATE for m in per_base.values())
        projected = COLD_BEFORE + 3 * k * c
        fits = projected <= CEILING
        r = np.asarray(claim[k])
        print(
            f"  k={k:2d} ({6 + k} rooms): smallest inner-seed mean per base "
            + ", ".join(f"{b}: {m:+.2f}" for b, m in per_base.items())
            + f" -> {'pass on all bases' if passes else 'fails'}; projected cold {projected:.1f} s "
            f"({'<=' if fits else '>'} {CEILING:g}); reflow - supervised per draw {r.mean():+.2f} ± {r.std(ddof=1):.2f}"
            f" (max {r.max():+.2f})"
        )
        if chosen is None and passes and fits:
            chosen = k
    print(f"\nRule picks: {'nothing (keep k = 0)' if chosen is None else f'n_fixed_scenes = {chosen}'}")


if __name__ == "__main__":
    main()
