"""Chapter 06 (virtualflow), issue 42, ninth pass: how many rooms the fixed-layout downstream is read on.

The rule (benchmarks/virtualflow_rooms_rule2.md, committed before this ran): on NEW tuning base seeds 105-109 x inner
seeds 0-4 (25 draws, book preset), per draw the per-room fixed-layout values (the eighth pass's ``draw``, the
package's ``train_models`` and ``fixed_layout_rooms``), then for each candidate k the bootstrap probability that a
draw's mean of supervised - empty falls below the gate's 0.5 dB, P(all 5 inner seeds pass) per base, and the projected
quiet cold time 43.8 + 3 k 0.57 s. Per-room values are saved as JSON (``--out``) so the analysis can be recomputed.

    PYTHONPATH=src python benchmarks/virtualflow_rooms2.py --base 105 106 107 108 109 --inner 0 1 2 3 4 --extra 12
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from virtualflow_rooms import draw

from explorables.virtualflow.claims import USEFUL_GATE

CANDIDATES = (0, 3, 6, 9, 12)
COLD_BEFORE = 43.8  # s, slower recorded quiet cold run (benchmarks/README.md)
COST_PER_ROOM = 0.57  # s, the eighth pass's median seconds per extra room (benchmarks/virtualflow_rooms.md)
CEILING = 55.0  # s
P_ALL_MIN = 0.9
B = 4000


def p_fail(d: np.ndarray, base: int, seed: int, k: int) -> float:
    rng = np.random.default_rng(1000 * base + 10 * seed + k // 3)
    idx = rng.integers(0, len(d), size=(B, len(d)))
    return float(np.mean(d[idx].mean(axis=1) < USEFUL_GATE))


def p_fail_normal(d: np.ndarray) -> float:
    z = (USEFUL_GATE - d.mean()) / (d.std(ddof=1) / math.sqrt(len(d)))
    return 0.5 * math.erfc(-z / math.sqrt(2))


def analyse(data: dict[str, dict[str, dict[str, list[float]]]]) -> None:
    chosen = None
    for k in CANDIDATES:
        n = 6 + k
        proj = COLD_BEFORE + 3 * k * COST_PER_ROOM
        fits = proj <= CEILING
        parts, ok, claims, gate_ok = [], True, [], True
        for base, seeds in data.items():
            pa, pn, mins = 1.0, 1.0, []
            for seed, rooms in seeds.items():
                sup, empty, reflow = (np.asarray(rooms[b][:n]) for b in ("supervised", "empty", "reflow"))
                d = sup - empty
                mins.append(float(d.mean()))
                pa *= 1 - p_fail(d, int(base), int(seed), k)
                pn *= 1 - p_fail_normal(d)
                claims.append(float(np.mean(reflow - sup)))
            ok &= pa >= P_ALL_MIN
            gate_ok &= min(mins) >= USEFUL_GATE
            parts.append(f"{base}: P_all {pa:.3f} (normal {pn:.3f}, min mean {min(mins):+.2f})")
        r = np.asarray(claims)
        print(
            f"k={k:2d} ({n} rooms): "
            + "; ".join(parts)
            + f"\n      -> (a) P_all >= {P_ALL_MIN} on every base: {'yes' if ok else 'no'}; "
            f"gate as such on every base: "
            f"{'yes' if gate_ok else 'no'}; (b) projected cold {proj:.1f} s {'<=' if fits else '>'} {CEILING:g}; "
            f"reflow - supervised per draw {r.mean():+.2f} ± {r.std(ddof=1):.2f} (max {r.max():+.2f})",
            flush=True,
        )
        if chosen is None and ok and fits:
            chosen = k
    print(f"\nRule picks: {'nothing (keep k = 0)' if chosen is None else f'n_fixed_scenes = {chosen}'}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", type=int, nargs="+", default=[105, 106, 107, 108, 109])
    p.add_argument("--inner", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--extra", type=int, default=max(CANDIDATES))
    p.add_argument("--out", type=Path, default=Path("benchmarks/virtualflow_rooms2.json"))
    p.add_argument("--analyse-only", action="store_true", help="recompute the analysis from --out")
    a = p.parse_args()
    if a.analyse_only:
        analyse(json.loads(a.out.read_text()))
        return
    if min(a.base) < 100:
        raise SystemExit("tuning base seeds only (>= 100): base seeds 0-4 are the book's evaluation seeds")
    torch.set_num_threads(1)
    device = torch.device("cpu")
    print(f"load at start: {os.getloadavg()}", flush=True)
    data: dict[str, dict[str, dict[str, list[float]]]] = {}
    costs = []
    for base in a.base:
        for seed in a.inner:
            t0 = time.perf_counter()
            rooms, c = draw(base, seed, a.extra, device)
            costs.append(c)
            data.setdefault(str(base), {})[str(seed)] = {
                b: [float(x) for x in rooms[b]] for b in ("supervised", "empty", "reflow")
            }
            d = np.asarray(rooms["supervised"]) - np.asarray(rooms["empty"])
            print(
                f"base {base} seed {seed} ({time.perf_counter() - t0:.0f} s, {c:.2f} s per extra room, load "
                f"{os.getloadavg()[0]:.2f}): supervised - empty, 6 rooms {d[:6].mean():+.2f}, 12 rooms "
                f"{d[:12].mean():+.2f}, 18 rooms {d.mean():+.2f}; per room: " + " ".join(f"{x:+.1f}" for x in d),
                flush=True,
            )
            a.out.write_text(json.dumps(data))
    print(
        f"\nmeasured seconds per extra room (reported, not used): median {np.median(costs):.2f} "
        f"(min {min(costs):.2f}, max {max(costs):.2f}); load {os.getloadavg()}\n"
    )
    analyse(data)


if __name__ == "__main__":
    main()
