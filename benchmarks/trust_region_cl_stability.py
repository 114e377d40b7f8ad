"""Chapter 12: how many inner seeds per run make the claims read the same word across base seeds?

Follows benchmarks/trust_region_cl_stability_rule.md (committed before this script ran): on tuning base seeds
100-104 only (never the book's 0-4), the book preset with ``seeds = (0, ..., n - 1)`` for every candidate ``n``;
per run the words of every gate and claim (through :func:`explorables.core.tables.apply_gates`, as the page reads
them) and the run's CPU seconds (``time.process_time``; one thread). Writes
``benchmarks/trust_region_cl_stability.json`` and prints the rule's metric per candidate and the pick.

    PYTHONPATH=src nice -n 5 python benchmarks/trust_region_cl_stability.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.trust_region_cl import TrustRegionCLConfig
from explorables.trust_region_cl.claims import claims
from explorables.trust_region_cl.experiment import run

CANDIDATES = (5, 6, 8)
BASE_SEEDS = (100, 101, 102, 103, 104)
CPU_LIMIT_S = 40.0
OUT = Path(__file__).with_suffix(".json")


def one(n: int, base: int) -> dict:
    cfg = TrustRegionCLConfig.preset("book", seed=base, seeds=tuple(range(n)))
    cpu, wall = time.process_time(), time.time()
    results = run(cfg)
    cpu, wall = time.process_time() - cpu, time.time() - wall
    rows = apply_gates(claims(results))
    words = {r.claim: r.outcome for r in rows if r.kind in ("gate", "claim")}
    kinds = {r.claim: r.kind for r in rows if r.kind in ("gate", "claim")}
    measured = {r.claim: r.measured for r in rows if r.kind == "claim"}
    return {"n": n, "base_seed": base, "cpu_s": round(cpu, 1), "wall_s_under_load": round(wall, 1), "words": words,
            "kinds": kinds, "measured": measured}  # fmt: skip


def main() -> None:
    runs = json.loads(OUT.read_text())["runs"] if OUT.is_file() else []
    done = {(r["n"], r["base_seed"]) for r in runs}
    for n in CANDIDATES:
        for base in BASE_SEEDS:
            if (n, base) in done:
                continue
            runs.append(one(n, base))
            r = runs[-1]
            print(f"n={n} base={base}: cpu {r['cpu_s']} s, wall {r['wall_s_under_load']} s; "
                  + "; ".join(f"{w}" for w in r["words"].values()), flush=True)  # fmt: skip
            OUT.write_text(json.dumps({"runs": runs}, indent=1))
    summary = {}
    for n in CANDIDATES:
        mine = [r for r in runs if r["n"] == n]
        claim_names = [c for c, k in mine[0]["kinds"].items() if k == "claim"]
        stable = [c for c in claim_names if len({r["words"][c] for r in mine}) == 1]
        cpu = sum(r["cpu_s"] for r in mine) / len(mine)
        summary[n] = {"stable_claims": len(stable), "of": len(claim_names), "stable": stable,
                      "mean_cpu_s": round(cpu, 1), "feasible": cpu <= CPU_LIMIT_S,
                      "words": {c: [r["words"][c] for r in mine] for c in mine[0]["words"]}}  # fmt: skip
        print(f"n={n}: {len(stable)} of {len(claim_names)} claims stable; mean CPU {cpu:.1f} s", flush=True)
        for c, w in summary[n]["words"].items():
            print(f"   {c[:70]:70s} {','.join(w)}")
    feasible = [n for n in CANDIDATES if summary[n]["feasible"]]
    best = max(summary[n]["stable_claims"] for n in feasible) if feasible else None
    pick = min(n for n in feasible if summary[n]["stable_claims"] == best) if feasible else min(CANDIDATES)
    print(f"pick: n = {pick}")
    OUT.write_text(json.dumps({"rule": "benchmarks/trust_region_cl_stability_rule.md", "candidates": CANDIDATES,
                               "base_seeds": BASE_SEEDS, "cpu_limit_s": CPU_LIMIT_S,
                               "summary": summary, "pick": pick, "runs": runs}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
