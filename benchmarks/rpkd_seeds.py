"""rpkd: five student seeds per run, candidates of ``benchmarks/rpkd_seeds_rule.md``, on tuning seeds only.

    PYTHONPATH=src python benchmarks/rpkd_seeds.py 110          # appends to rpkd_seeds.jsonl (B, then C if needed)
    PYTHONPATH=src python benchmarks/rpkd_seeds.py 110 --all    # both candidates whatever B costs
    PYTHONPATH=src python benchmarks/rpkd_seeds.py --summary    # prints the table for rpkd_seeds.md

Each candidate runs the page's own ``run_protocols`` (three teachers with their probes, then the six student
parts) with ``workers=1``: one process, one thread, so ``time.process_time`` is the kernel CPU the rule
limits. The verdict words of the package's own ``claims`` are recorded for information only.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from explorables.core.threads import one_cpu_thread
from explorables.rpkd.claims import claims
from explorables.rpkd.experiment import RPKDConfig, run_protocols
from explorables.rpkd.training import ARMS

HERE = Path(__file__).parent
OUT = HERE / "rpkd_seeds.jsonl"
SEEDS5 = (0, 1, 2, 3, 4)
CANDIDATES = {"B": dict(seeds=SEEDS5), "C": dict(seeds=SEEDS5, arms=tuple(a for a in ARMS if a != "rpkd_kd"))}
CPU_LIMIT = 80.0  # kernel CPU seconds (one thread) a candidate may cost


def one(seed: int, name: str) -> dict:
    scale = "smoke" if seed < 0 else "book"  # a negative seed: a quick test of this script on the smoke preset
    cfg = RPKDConfig.preset(scale, seed=abs(seed), device="cpu", **CANDIDATES[name]).validated()
    with one_cpu_thread("cpu"):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        few, std = run_protocols(cfg, workers=1)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    rows = [{"kind": r.kind, "claim": r.claim, "word": r.verdict.split(":")[0], "measured": r.measured}
            for r in claims(few, std)]
    return {"seed": seed, "candidate": name, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "rows": rows}


def summary() -> None:
    rows = [json.loads(line) for line in OUT.read_text().splitlines()]
    print("| candidate | seed | kernel CPU s | wall s (under load) | ≤ 80 s |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['candidate']} | {r['seed']} | {r['cpu_s']} | {r['wall_s']} | {r['cpu_s'] <= CPU_LIMIT} |")
    for r in rows:
        print(f"\n{r['candidate']}, seed {r['seed']}:")
        for row in r["rows"]:
            print(f"- {row['kind']} | {row['claim']}: {row['word']} ({row['measured']})")


def main(args: list[str]) -> None:
    if "--summary" in args:
        summary()
        return
    for seed in [int(a) for a in args if not a.startswith("--")]:
        for name in CANDIDATES:
            row = one(seed, name)
            with OUT.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(name, seed, row["cpu_s"], row["wall_s"], flush=True)
            if name == "B" and row["cpu_s"] <= CPU_LIMIT and "--all" not in args:
                break


if __name__ == "__main__":
    main(sys.argv[1:])
