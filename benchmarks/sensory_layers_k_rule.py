"""Which reading of the same model runs (layers averaged, k of mutual k-NN) gives cue-row verdicts that hold over base
seeds, on tuning base seeds only (``benchmarks/sensory_layers_k_rule.md``, committed before this script ran).

``PYTHONPATH=src python benchmarks/sensory_layers_k_rule.py`` runs, per tuning base seed, the book preset once (C0,
the current setting; the model's representations are computed for the book's layers 6-30 and kept in memory), then
every candidate (C0 again, C1-C3) from the kept representations: the same prompts, the same draws, the same hidden
states (a layer's hidden state does not depend on which other layers are recorded), only the layers averaged and k
differ. One JSON line per (base seed, candidate): every check's, gate's and claim's word, the moving rows' measured
text, and the CPU seconds (``time.process_time``) of the candidate's run from kept representations (encoders,
metrics, controls: everything but the model). Then the rule's outcome. Base seeds < 130 are refused.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.core.tables import apply_gates
from explorables.sensory import experiment as E
from explorables.sensory.claims import claims

QUIET_COLD_S, QUIET_KERNEL_CPU_S, CEILING_S = 53.0, 80.0, 55.0  # the brief: page today quiet 53.0 s, kernel CPU 80.0 s
FULL = (6, 12, 18, 24, 30)
CANDIDATES = {
    "C0": dict(),
    "C1": dict(layer_grid=(18, 24, 30)),
    "C2": dict(k=10),
    "C3": dict(k=10, layer_grid=(18, 24, 30)),
}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bases", default="130,131,132,133,134")
    p.add_argument("--evaluate", nargs="*", default=None, help="only read these logs' JSON lines and apply the rule")
    args = p.parse_args()
    if args.evaluate is not None:
        evaluate(args.evaluate)
        return
    bases = [int(b) for b in args.bases.split(",")]
    if min(bases) < 130:
        raise SystemExit("tuning base seeds must be >= 130 (0-4 are the seed study's, 100-129 used before)")
    store: dict = {}
    original = E.representations

    def kept(lm, prompts, layers, n_new_tokens=0, **kw):
        key = (tuple(prompts), tuple(kw.get("openings") or ()), n_new_tokens)
        if key not in store:
            store[key] = original(lm, prompts, FULL, n_new_tokens, **kw)
        reps, texts = store[key]
        return reps[:, [FULL.index(x) for x in layers]], texts

    E.representations = kept
    for base in bases:
        store.clear()
        start = time.process_time()
        E.run(E.SensoryConfig.preset("book", seed=base))  # fills the store (the model's work)
        model_cpu = time.process_time() - start
        for cand, change in CANDIDATES.items():
            cfg = E.SensoryConfig.preset("book", seed=base, **change)
            start = time.process_time()
            res = E.run(cfg)
            cpu = time.process_time() - start
            rows = [r for r in apply_gates(claims(res)) if r.kind in ("check", "gate", "claim")]
            line = {"base_seed": base, "candidate": cand, "words": [r.outcome for r in rows],
                    "rows": [f"{r.kind}:{r.name or r.claim[:40]}|{r.setting[:14]}" for r in rows],
                    "measured": [r.measured[:150] for r in rows if r.kind == "claim"],
                    "cpu_s_without_model": round(cpu, 1), "first_run_cpu_s": round(model_cpu, 1)}  # fmt: skip
            print(json.dumps(line), flush=True)


def evaluate(logs: list[str]) -> None:
    """The rule on the JSON lines of ``logs``."""
    lines = [json.loads(x) for f in logs for x in open(f) if x.startswith("{")]
    rows = next(x["rows"] for x in lines)
    is_claim = np.array([n.startswith("claim:") for n in rows])
    cpu0 = np.mean([x["cpu_s_without_model"] for x in lines if x["candidate"] == "C0"])
    outcome = {}
    for cand in CANDIDATES:
        got = {x["base_seed"]: x for x in lines if x["candidate"] == cand}
        w = np.array([got[b]["words"] for b in sorted(got)])  # (bases, rows)
        checks_ok = all(not any(v in ("fail", "untested") for v in ws[~is_claim]) for ws in w)
        agree = sum(len(set(w[:, j])) == 1 for j in np.flatnonzero(is_claim))
        unclear = int(np.sum(w[:, is_claim] == "unclear"))
        extra = np.mean([got[b]["cpu_s_without_model"] for b in got]) - cpu0
        cold = QUIET_COLD_S * (QUIET_KERNEL_CPU_S + extra) / QUIET_KERNEL_CPU_S
        ok = checks_ok and cold <= CEILING_S
        outcome[cand] = (ok, agree, unclear)
        print(f"# {cand} {CANDIDATES[cand]} on base seeds {sorted(got)}: checks and gates pass on every tuning seed "
              f"{checks_ok}; claim rows agreeing {agree}/{int(is_claim.sum())}; unclear row-seeds {unclear}; CPU "
              f"without the model {extra:+.1f} s vs C0; projected quiet cold {cold:.1f} s; eligible {ok}")  # fmt: skip
        for j in np.flatnonzero(is_claim):
            print(f"#   {rows[j]}: {', '.join(w[:, j])}")
    eligible = [c for c in CANDIDATES if c != "C0" and outcome[c][0] and outcome[c][1] > outcome["C0"][1]]
    pick = min(eligible, key=lambda c: (-outcome[c][1], outcome[c][2], list(CANDIDATES).index(c)), default="C0")
    print(f"# RULE: {pick}")


if __name__ == "__main__":
    main()
