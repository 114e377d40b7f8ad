"""How many inner seeds the book run needs for verdicts that hold over base seeds, on tuning base seeds only
(``benchmarks/sensory_stability_rule.md``, committed before this script ran any candidate).

``PYTHONPATH=src python benchmarks/sensory_stability_rule.py`` runs, per tuning base seed, the book preset's
``seed_alignment`` once for each inner seed 0..5 (inner seed i uses caption phrasing i mod 4, as the package does),
timing each with ``time.process_time``; then each candidate (the first m inner seeds, m = 3..6) is the book run with
``seeds = (0, .., m-1)`` reading the stored inner seeds (the same numbers the run would compute), and its claims table
is read. One JSON line per (base seed, candidate) with every gate and claim word and the parts of the moving rows;
then the rule's outcome. Base seeds < 100 (0-4 are the seed study's) are refused.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.core.tables import apply_gates
from explorables.sensory import experiment as E
from explorables.sensory.claims import claims

QUIET_COLD_S, QUIET_KERNEL_CPU_S, CEILING_S = 30.8, 47.5, 50.0  # benchmarks/README.md, 2026-12-06 04:25 quiet run
CANDIDATES = {"S3": 3, "S4": 4, "S5": 5, "S6": 6}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bases", default="121,122,123,124,125")
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--candidates", default="S3,S4,S5,S6", help="the candidates run (amendment: S3,S4)")
    p.add_argument("--evaluate", nargs="*", default=None, help="only read these logs' JSON lines and apply the rule")
    args = p.parse_args()
    if args.evaluate is not None:
        evaluate(args.evaluate, args.candidates.split(","))
        return
    bases = [int(b) for b in args.bases.split(",")]
    if min(bases) < 100:
        raise SystemExit("tuning base seeds must be >= 100 (0-4 are the seed study's)")
    store: dict[tuple[int, int], dict] = {}
    cpu: dict[tuple[int, int], float] = {}
    original = E.seed_alignment

    def stored(cfg, lm, seed, phrasing):
        key = (cfg.seed, seed)
        if key not in store:
            start = time.process_time()
            store[key] = original(cfg, lm, seed, phrasing)
            cpu[key] = time.process_time() - start
        return store[key]

    E.seed_alignment = stored
    cands = {c: CANDIDATES[c] for c in args.candidates.split(",")}
    words: dict[str, list[list[str]]] = {c: [] for c in cands}
    names: list[str] = []
    for base in bases:
        for cand, m in sorted(cands.items(), key=lambda kv: -kv[1]):  # the largest first: fills the store
            cfg = E.SensoryConfig.preset("book", seed=base, seeds=tuple(range(m)), model=args.model)
            res = E.run(cfg)
            rows = [r for r in apply_gates(claims(res)) if r.kind in ("gate", "claim")]
            names = [f"{r.kind}:{r.name or r.claim[:40]}|{r.setting[:12]}" for r in rows]
            words[cand].append([r.outcome for r in rows])
            line = {"base_seed": base, "candidate": cand, "words": [r.outcome for r in rows], "rows": names,
                    "verdicts": [r.verdict[:160] for r in rows if r.kind == "claim"],
                    "measured": [r.measured[:260] for r in rows if r.kind == "claim"]}  # fmt: skip
            print(json.dumps(line), flush=True)
        used = [round(cpu[(base, i)], 1) for i in range(max(cands.values()))]
        print(json.dumps({"base_seed": base, "inner_cpu_s": used}), flush=True)


def evaluate(logs: list[str], names: list[str]) -> None:
    """The rule on the JSON lines of ``logs`` (every base seed's words per candidate, and the inner seeds' CPU)."""
    lines = [json.loads(x) for f in logs for x in open(f) if x.startswith("{")]
    cpus = [c for x in lines if "inner_cpu_s" in x for c in x["inner_cpu_s"]]
    per_inner = float(np.mean(cpus))
    rows = next(x["rows"] for x in lines if "rows" in x)
    is_claim = np.array([n.startswith("claim:") for n in rows])
    outcome = {}
    for cand in names:
        got = {x["base_seed"]: x["words"] for x in lines if x.get("candidate") == cand}
        w = np.array([got[b] for b in sorted(got)])  # (bases, rows)
        gate_ok = all("fail" not in ws[~is_claim].tolist() for ws in w)
        agree = [len(set(w[:, j])) == 1 for j in range(w.shape[1]) if is_claim[j]]
        cold = QUIET_COLD_S * (1 + (CANDIDATES[cand] - 3) * per_inner / QUIET_KERNEL_CPU_S)
        ok = gate_ok and all(agree) and cold <= CEILING_S
        outcome[cand] = (ok, gate_ok, sum(agree), cold)
        print(f"# {cand} on base seeds {sorted(got)}: gates pass on every tuning seed {gate_ok}; claim rows agreeing "
              f"{sum(agree)}/{len(agree)}; projected quiet cold {cold:.1f} s (mean CPU per inner seed "
              f"{per_inner:.1f} s over {len(cpus)}); qualifies {ok}")  # fmt: skip
        for j in np.flatnonzero(is_claim):
            print(f"#   {rows[j]}: {', '.join(w[:, j])}")
    passing = [c for c in names if outcome[c][0]]
    if passing:
        pick = passing[0]
    else:
        fit = [c for c in names if outcome[c][1] and outcome[c][3] <= CEILING_S]
        best = max((outcome[c][2] for c in fit), default=-1)
        better = [c for c in fit if outcome[c][2] == best and best > outcome["S3"][2]]
        pick = better[0] if better else "S3"
    print(f"# RULE: {pick}")


if __name__ == "__main__":
    main()
