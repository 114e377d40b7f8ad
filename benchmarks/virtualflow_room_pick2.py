"""Apply benchmarks/virtualflow_room_rule2.md to virtualflow_room_diag.py's output on tuning bases 134-139.

PYTHONPATH=src python benchmarks/virtualflow_room_pick2.py benchmarks/virtualflow_room_tune2.json
"""

from __future__ import annotations

import json
import sys

import numpy as np

from explorables.core.verdicts import gate, interval

KEY, BASES, MARGIN, CEILING = "32:800:64", (134, 135, 136, 137, 138, 139), 1.0, 50.0
COST = {12: 37.3, 18: 41.3, 24: 45.2}


def main() -> None:
    res = json.load(open(sys.argv[1]))
    stats = {}
    print("| T | base | per-seed means (dB) | interval | gate | useful per seed (beside) |")
    print("|---|---|---|---|---|---|")
    for t in COST:
        lows, passes = [], 0
        for b in BASES:
            g = [float(np.mean(res[f"{b}/{s}/{KEY}"][:t])) for s in range(5)]
            u = [float(np.mean(res[f"useful/{b}/{s}/{KEY}"][:t])) for s in range(5)]
            iv, word = interval(g), gate(g, MARGIN)
            lows.append(iv.low)
            passes += word == "pass"
            print(
                f"| {t} | {b} | {', '.join(f'{x:+.2f}' for x in g)} | {iv.format(2, signed=True)} | {word} | "
                f"{', '.join(f'{x:+.2f}' for x in u)} |"
            )
        stats[t] = (passes, float(np.mean(lows)))
    print()
    for t, (n, lbar) in stats.items():
        print(f"T = {t}: N = {n}/6, Lbar = {lbar:+.2f} dB, P = {COST[t]} s")
    ok = [t for t in (18, 24) if stats[t][0] >= stats[12][0] and COST[t] <= CEILING]
    pick = 12
    if ok:
        best = max(stats[t][1] for t in ok)
        cand = min(t for t in ok if stats[t][1] >= best - 0.05)
        if stats[cand][1] > stats[12][1] + 0.05:
            pick = cand
    print(f"Rule picks n_test_scenes = {pick}")


if __name__ == "__main__":
    main()
