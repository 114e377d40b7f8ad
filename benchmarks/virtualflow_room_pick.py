"""Apply benchmarks/virtualflow_room_rule.md to the output of virtualflow_room_diag.py (tuning bases 131-133).

PYTHONPATH=src python benchmarks/virtualflow_room_pick.py benchmarks/virtualflow_room_tune.json
"""

from __future__ import annotations

import json
import sys

import numpy as np

from explorables.core.verdicts import gate, interval

# (T test rooms, training "R:S:width" key) per candidate, and the rule's projected quiet cold time P (s)
CANDIDATES = {
    "C0": (6, "8:200:64", 22.9),
    "C1": (24, "8:200:64", 34.8),
    "C2": (12, "16:800:64", 27.4),
    "C3": (24, "16:800:64", 39.3),
    "C4": (12, "32:800:64", 32.4),
    "C5": (24, "32:800:64", 44.3),
}
TUNING = (131, 132, 133)
MARGIN, CEILING = 1.0, 50.0


def main() -> None:
    res = json.load(open(sys.argv[1]))
    rows = {}
    print("| candidate | P (s) | base | per-seed means (dB) | interval | gate | useful per seed (beside) |")
    print("|---|---|---|---|---|---|---|")
    for c, (t, key, cost) in CANDIDATES.items():
        lows, passes, allg = [], 0, []
        for b in TUNING:
            g = [float(np.mean(res[f"{b}/{s}/{key}"][:t])) for s in range(5)]
            u = [float(np.mean(res[f"useful/{b}/{s}/{key}"][:t])) for s in range(5)]
            iv = interval(g)
            word = gate(g, MARGIN)
            lows.append(iv.low)
            passes += word == "pass"
            allg += g
            print(
                f"| {c} | {cost} | {b} | {', '.join(f'{x:+.2f}' for x in g)} | {iv.format(2, signed=True)} | {word} | "
                f"{', '.join(f'{x:+.2f}' for x in u)} |"
            )
        rows[c] = dict(min_low=min(lows), passes=passes, mean=float(np.mean(allg)), cost=cost)
    print()
    for c, r in rows.items():
        print(
            f"{c}: passes on {r['passes']}/3, smallest low end {r['min_low']:+.2f}, mean g {r['mean']:+.2f}, "
            f"P {r['cost']}"
        )
    ok = [c for c, r in rows.items() if c != "C0" and r["passes"] == 3 and r["cost"] <= CEILING]
    if ok:
        best = max(rows[c]["min_low"] for c in ok)
        tied = [c for c in ok if rows[c]["min_low"] >= best - 0.05]
        pick = min(tied, key=lambda c: rows[c]["cost"])
        print(f"Rule picks {pick} (passes on all three tuning bases; largest smallest low end, ties by cost)")
        return
    fallback = [
        c
        for c, r in rows.items()
        if c != "C0" and r["passes"] >= 2 and r["mean"] > rows["C0"]["mean"] and r["cost"] <= CEILING
    ]
    if fallback:
        pick = max(fallback, key=lambda c: rows[c]["min_low"])
        print(f"No candidate passes on all three; fallback picks {pick} (the page says the gate may fail)")
    else:
        print("Rule picks C0 (no change)")


if __name__ == "__main__":
    main()
