"""Apply ``benchmarks/virtualflow_room_rule3.md`` to ``benchmarks/virtualflow_seeds.json``: a table per reading and
the pick.  ``PYTHONPATH=src .venv/bin/python benchmarks/virtualflow_seeds_pick.py``"""

from __future__ import annotations

import json
import math
from pathlib import Path

OTHER = ("physical", "useful", "headroom", "curved")
LEARN, REFLOW = "Virtual-Flow generates virtual-mic signa", "Reflow distillation gives one-step sampl"


def projected(n: int) -> float:
    return 40.0 * (1 + 0.8 * (math.ceil(n / 2) - 3) / 3)


def main() -> None:
    data = json.loads((Path(__file__).parent / "virtualflow_seeds.json").read_text())
    bases = sorted(data, key=int)
    print("| n | base | inner seeds | per-seed room values (dB) | room | other gates failing | learning | reflow |")
    print("|---|---|---|---|---|---|---|---|")
    verdict = {}
    for n in ("5", "6", "8", "10"):
        ok_room, ok_other = True, True
        for b in bases:
            for blk in data[b][n]:
                rows = blk["rows"]
                room_word, room_text = rows["room"][0], rows["room"][1].split(" dB")[0]
                bad = [g for g in OTHER if rows[g][0] != "pass"]
                ok_room &= room_word == "pass"
                ok_other &= not bad
                seeds = f"{blk['seeds'][0]}-{blk['seeds'][-1]}"
                vals = ", ".join(f"{v:+.2f}" for v in blk["room_per_seed"])
                print(f"| {n} | {b} | {seeds} | {vals} | {room_word} {room_text} | {', '.join(bad) or '-'} | "
                      f"{rows[LEARN][0]} | {rows[REFLOW][0]} |")
        verdict[int(n)] = (ok_room, ok_other, projected(int(n)))
    print()
    passing = []
    for n, (room, other, p) in verdict.items():
        fits = p <= 52.0
        note = " (reference, not a candidate)" if n == 5 else ""
        print(f"n = {n}: room on every reading {room}; other gates on every reading {other}; P {p:.1f} s "
              f"(<= 52: {fits}){note}")
        if n != 5 and room and other and fits:
            passing.append((p, n))
    if passing:
        print(f"Rule picks n = {min(passing)[1]}")
    else:
        print("No candidate passes: the rule keeps n = 5 (no change to the preset)")


if __name__ == "__main__":
    main()
