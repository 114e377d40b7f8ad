"""Table and decision of benchmarks/uggrh_power_rule.md (+ amendments 1-2) from benchmarks/uggrh_power.jsonl.

    PYTHONPATH=src python benchmarks/uggrh_power_report.py   # prints markdown
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).parent
SEEDS = (110, 111, 112)
CANDIDATES = ("C0", "C6", "C8")
PAGE_C0 = 44.8  # s, last quiet cold measurement of 11-uggrh with C0 (benchmarks/README.md, 2026-12-06 22:29 UTC)
REAL = {"yes", "no", "partly"}


def lower_end(measured: str, word: str) -> float:
    """Lower end of the interval after ``word`` ("lead" or "drop") in a gate's measured text."""
    m = re.search(rf"{word} [+\-−]?\d\.\d+ \[([+\-−]?\d\.\d+),", measured)
    return float(m.group(1).replace("−", "-"))


def main() -> None:
    lines: dict[tuple[str, int], dict] = {}
    for text in (HERE / "uggrh_power.jsonl").read_text().splitlines():
        d = json.loads(text)
        lines.setdefault((d["candidate"], d["base_seed"]), d)  # the first line counts (amendment 1)
    claims = [r["claim"] for r in next(iter(lines.values()))["rows"]]
    print("| row | " + " | ".join(f"{c} {s}" for c in CANDIDATES for s in SEEDS) + " |")
    print("|---|" + "---|" * (len(CANDIDATES) * len(SEEDS)))
    for i, claim in enumerate(claims):
        cells = [lines[(c, s)]["rows"][i]["verdict"] if (c, s) in lines else "–" for c in CANDIDATES for s in SEEDS]
        print(f"| {claim[:70]} | " + " | ".join(cells) + " |")
    print("| CPU s | " + " | ".join(str(lines[(c, s)]["cpu_s"]) if (c, s) in lines else "–"
                                    for c in CANDIDATES for s in SEEDS) + " |")  # fmt: skip
    print()
    cpu0 = [lines[("C0", s)]["cpu_s"] for s in SEEDS if ("C0", s) in lines]
    counts = {}
    for c in CANDIDATES:
        done = [s for s in SEEDS if (c, s) in lines]
        if len(done) < len(SEEDS):
            print(f"- {c}: ran on {done} only: not eligible")
            continue
        rows = [lines[(c, s)]["rows"] for s in SEEDS]
        heads = []
        for r in rows:
            learns = lower_end(next(x for x in r if x["kind"] == "gate" and "learn" in x["claim"])["measured"], "lead")
            room = lower_end(next(x for x in r if x["kind"] == "gate" and "hurt" in x["claim"])["measured"], "drop")
            speed = float(re.search(r"\((\d+)×\)", next(x for x in r if x["kind"] == "check")["measured"]).group(1))
            ok = all(x["verdict"] == "pass" for x in r if x["kind"] in ("check", "gate"))
            heads.append((learns, room, speed, ok))
        headroom = all(ok and le >= 0.20 and ro >= 0.06 and sp >= 10 for le, ro, sp, ok in heads)
        cpu = sum(lines[(c, s)]["cpu_s"] for s in SEEDS) / len(SEEDS)
        page = PAGE_C0 * cpu / (sum(cpu0) / len(cpu0)) if len(cpu0) == len(SEEDS) else float("nan")
        agree = [claims[i] for i in range(len(claims)) if rows[0][i]["kind"] == "claim"
                 and len({r[i]["verdict"] for r in rows}) == 1 and rows[0][i]["verdict"] in REAL]  # fmt: skip
        counts[c] = (len(agree), headroom and page <= 55.0, cpu)
        met = "met" if headroom else "NOT met"
        names = "; ".join(a[:40] for a in agree)
        print(f"- {c}: learns lower ends {[h[0] for h in heads]}, room lower ends {[h[1] for h in heads]}, speed "
              f"{[h[2] for h in heads]}x, all pass {all(h[3] for h in heads)}; headroom {met}; "
              f"mean CPU {cpu:.1f} s, projected page {page:.1f} s; eligible {counts[c][1]}; "
              f"claim rows reading one real word on all three: {len(agree)} ({names})")  # fmt: skip
    if "C0" not in counts:
        print("\nDecision: C0 incomplete: nothing adopted.")
        return
    best = max((c for c in counts if c != "C0" and counts[c][1]), key=lambda c: (counts[c][0], -counts[c][2]),
               default=None)  # fmt: skip
    if best is not None and counts[best][0] > counts["C0"][0]:
        print(f"\nDecision: {best} adopted ({counts[best][0]} rows vs C0's {counts['C0'][0]}).")
    else:
        print(f"\nDecision: C0 stays (C0 {counts['C0'][0]} rows; best eligible other: {best}).")


if __name__ == "__main__":
    main()
