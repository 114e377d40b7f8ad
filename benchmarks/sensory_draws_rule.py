"""More draws at the same compute: 8 inner seeds of 16 items (D8) against the book run's 4 of 32 (K), on tuning base
seeds only (``benchmarks/sensory_draws_rule.md``, committed before this script ran any candidate).

``PYTHONPATH=src python benchmarks/sensory_draws_rule.py`` runs, per tuning base seed, the book preset as K and as D8
(the model loaded once), and prints one JSON line per (base seed, candidate) with every check's, gate's and claim's
word after the gates, the claim rows' measured strings and the run's CPU seconds; then the rule's outcome.
``--evaluate LOG..`` only reads such lines and applies the rule. Base seeds < 100 (0-4 are the seed study's) are
refused.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.core.tables import apply_gates
from explorables.sensory import experiment as E
from explorables.sensory.claims import claims
from explorables.sensory.llm import load_language_model

QUIET_COLD_S, CEILING_S = 44.0, 52.0  # the page's cold quiet time now, and this round's ceiling
CANDIDATES = {"K": dict(seeds=(0, 1, 2, 3), n_stimuli=32), "D8": dict(seeds=tuple(range(8)), n_stimuli=16)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bases", default="126,127,128,129,130")
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--candidates", default="K,D8")
    p.add_argument("--evaluate", nargs="*", default=None, help="only read these logs' JSON lines and apply the rule")
    args = p.parse_args()
    if args.evaluate is not None:
        evaluate(args.evaluate)
        return
    bases = [int(b) for b in args.bases.split(",")]
    if min(bases) < 100:
        raise SystemExit("tuning base seeds must be >= 100 (0-4 are the seed study's)")
    load_language_model(args.model)  # loaded once (reused by every run)
    for base in bases:
        for cand in args.candidates.split(","):
            cfg = E.SensoryConfig.preset("book", seed=base, model=args.model, **CANDIDATES[cand])
            start = time.process_time()
            res = E.run(cfg)
            cpu = time.process_time() - start
            rows = [r for r in apply_gates(claims(res)) if r.kind in ("check", "gate", "claim")]
            line = {"base_seed": base, "candidate": cand, "cpu_s": round(cpu, 1),
                    "words": [r.outcome for r in rows],
                    "rows": [f"{r.kind}:{r.name or r.claim[:40]}|{r.setting[:12]}" for r in rows],
                    "measured": [r.measured[:300] for r in rows if r.kind in ("gate", "claim")]}  # fmt: skip
            print(json.dumps(line), flush=True)


def evaluate(logs: list[str]) -> None:
    """The rule on the JSON lines of ``logs``."""
    lines = [json.loads(x) for f in logs for x in open(f) if x.startswith("{")]
    rows = lines[0]["rows"]
    is_claim = np.array([n.startswith("claim:") for n in rows])
    out = {}
    for cand in CANDIDATES:
        got = {x["base_seed"]: x for x in lines if x["candidate"] == cand}
        w = np.array([got[b]["words"] for b in sorted(got)])  # (bases, rows)
        ok = all("fail" not in ws[~is_claim].tolist() and "untested" not in ws.tolist() for ws in w)
        claim_w = w[:, is_claim]
        agree = sum(len(set(claim_w[:, j])) == 1 for j in range(claim_w.shape[1]))
        unclear = int((claim_w == "unclear").sum())
        census = {v: int((claim_w == v).sum()) for v in ("yes", "partly", "no", "unclear", "untested")}
        cpu = sum(got[b]["cpu_s"] for b in got)
        out[cand] = dict(ok=ok, agree=agree, unclear=unclear, cpu=cpu, bases=sorted(got))
        print(f"# {cand} on base seeds {sorted(got)}: checks and gates pass everywhere {ok}; claim rows agreeing "
              f"{agree}/{claim_w.shape[1]}; census {census}; CPU {cpu:.1f} s")  # fmt: skip
        for j, name in enumerate(n for n in rows if n.startswith("claim:")):
            print(f"#   {name}: {', '.join(claim_w[:, j])}")
    k, d = out["K"], out["D8"]
    if k["bases"] != d["bases"]:
        raise SystemExit("the candidates were not run on the same base seeds")
    cold = QUIET_COLD_S * d["cpu"] / k["cpu"]
    room = d["unclear"] < k["unclear"] and d["agree"] >= k["agree"]
    pick = "D8" if d["ok"] and cold <= CEILING_S and room else "K"
    print(f"# D8 projected quiet cold {cold:.1f} s (ceiling {CEILING_S}); room {room}; RULE: {pick}")


if __name__ == "__main__":
    main()
