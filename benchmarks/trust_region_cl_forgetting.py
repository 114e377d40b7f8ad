"""Chapter 12: does a less noisy forgetting measure (more evaluation samples) let the forgetting gate pass robustly?

Follows benchmarks/trust_region_cl_forgetting_rule.md (committed before this script ran): on tuning base seeds
100-104 only (never the book's 0-4), the book preset with ``n_samples`` = each candidate; per run the words of
every check and gate (claims are recorded, never read by the decision), fine-tuning's and replay's forgetting per
inner seed, and the run's CPU seconds (``time.process_time``; one thread). Writes
``benchmarks/trust_region_cl_forgetting.json`` and prints the rule's metric per candidate and the pick.

    PYTHONPATH=src nice -n 5 python benchmarks/trust_region_cl_forgetting.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from scipy.stats import norm

from explorables.core.tables import apply_gates
from explorables.trust_region_cl import TrustRegionCLConfig
from explorables.trust_region_cl.claims import FORGET_GATE, claims
from explorables.trust_region_cl.experiment import run

CURRENT = 256
CANDIDATES = (256, 384, 512, 768)
BASE_SEEDS = (100, 101, 102, 103, 104)
P_MIN = 0.99
CPU_SLACK_S = 6.0
OUT = Path(__file__).with_suffix(".json")


def one(n_samples: int, base: int) -> dict:
    cfg = TrustRegionCLConfig.preset("book", seed=base, n_samples=n_samples)
    cpu, wall = time.process_time(), time.time()
    results = run(cfg)
    cpu, wall = time.process_time() - cpu, time.time() - wall
    rows = apply_gates(claims(results))
    seq = results.summary["sequence"]["methods"]
    return {
        "n_samples": n_samples, "base_seed": base, "cpu_s": round(cpu, 1), "wall_s_under_load": round(wall, 1),
        "words": {r.claim: r.outcome for r in rows}, "kinds": {r.claim: r.kind for r in rows},
        "names": {r.claim: r.name for r in rows},
        "finetune_forgetting": seq["finetune"]["forgetting"]["per_seed"],
        "replay_forgetting": seq["replay"]["forgetting"]["per_seed"],
        "floor": results.summary["sequence"]["floor"]["mean"],
    }  # fmt: skip


def p_pass(values: list[float], n_inner: int) -> float:
    """Normal approximation of the chance that all ``n_inner`` inner seeds of one base seed reach FORGET_GATE."""
    import numpy as np

    x = np.asarray(values, float)
    return float(norm.cdf((x.mean() - FORGET_GATE) / x.std(ddof=1)) ** n_inner)


def main() -> None:
    runs = json.loads(OUT.read_text())["runs"] if OUT.is_file() else []
    done = {(r["n_samples"], r["base_seed"]) for r in runs}
    for n in CANDIDATES:
        for base in BASE_SEEDS:
            if (n, base) in done:
                continue
            runs.append(one(n, base))
            r = runs[-1]
            print(f"n_samples={n} base={base}: cpu {r['cpu_s']} s, wall {r['wall_s_under_load']} s; fine-tuning "
                  f"lowest {min(r['finetune_forgetting']):.3f}; "
                  + ", ".join(f"{r['names'][c] or k}:{w}" for c, w in r["words"].items()
                              if (k := r["kinds"][c]) in ("gate", "check")), flush=True)  # fmt: skip
            OUT.write_text(json.dumps({"runs": runs}, indent=1))
    n_inner = len(TrustRegionCLConfig.preset("book").seeds)
    summary = {}
    for n in CANDIDATES:
        mine = [r for r in runs if r["n_samples"] == n]
        ft = [v for r in mine for v in r["finetune_forgetting"]]
        gated = [c for c, k in mine[0]["kinds"].items() if k in ("gate", "check")]
        all_pass = all(r["words"][c] == "pass" for r in mine for c in gated)
        cpu = sum(r["cpu_s"] for r in mine) / len(mine)
        summary[n] = {"p_pass": p_pass(ft, n_inner), "finetune_mean": sum(ft) / len(ft), "finetune_min": min(ft),
                      "gates_checks_pass_all": all_pass, "mean_cpu_s": round(cpu, 1),
                      "words": {c: [r["words"][c] for r in mine] for c in mine[0]["words"]}}  # fmt: skip
    base_cpu = summary[CURRENT]["mean_cpu_s"]
    for n in CANDIDATES:
        s = summary[n]
        s["feasible"] = s["mean_cpu_s"] <= base_cpu + CPU_SLACK_S
        s["qualifies"] = s["gates_checks_pass_all"] and s["p_pass"] >= P_MIN and s["feasible"]
        print(f"n_samples={n}: P_pass {s['p_pass']:.4f}; fine-tuning mean {s['finetune_mean']:.3f}, lowest "
              f"{s['finetune_min']:.3f}; gates and checks pass on all: {s['gates_checks_pass_all']}; mean CPU "
              f"{s['mean_cpu_s']} s (feasible {s['feasible']}); qualifies {s['qualifies']}", flush=True)
    qualifying = [n for n in CANDIDATES if summary[n]["qualifies"]]
    if qualifying:
        pick, how = min(qualifying), "smallest qualifying"
    else:
        ok = [n for n in CANDIDATES if summary[n]["feasible"] and summary[n]["gates_checks_pass_all"]]
        best = max(ok, key=lambda n: summary[n]["p_pass"]) if ok else CURRENT
        better = ok and summary[best]["p_pass"] > summary[CURRENT]["p_pass"]
        pick, how = (best, "none qualifies: highest P_pass") if better else (CURRENT, "none qualifies: keep")
    print(f"pick: n_samples = {pick} ({how})")
    OUT.write_text(json.dumps({"rule": "benchmarks/trust_region_cl_forgetting_rule.md", "candidates": CANDIDATES,
                               "current": CURRENT, "base_seeds": BASE_SEEDS, "p_min": P_MIN,
                               "cpu_slack_s": CPU_SLACK_S, "n_inner": n_inner, "summary": summary, "pick": pick,
                               "how": how, "runs": runs}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
