"""The cue gate's candidates on tuning base seeds only, and the rule of ``benchmarks/sensory_cue_rule.md``.

``PYTHONPATH=src python benchmarks/sensory_cue_rule.py`` prints one JSON line per candidate and base seed (the gate's
shifts per inner seed, the model's CPU seconds) and the rule's outcome. Base seeds 0-4 are refused.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.sensory import stimuli as S
from explorables.sensory.llm import load_language_model, representations

CUE_SHIFT, MARGIN, QUIET_COLD_S, CEILING_S = 0.10, 0.05, 48.1, 55.0
CANDIDATES = {
    "K0": dict(see=("Describe only what you would see.", "I see"),
               hear=("Describe only what you would hear.", "I hear"), echoes=()),
    "K1": dict(see=("Describe only what you would see.", "When I look at it, I see"),
               hear=("Describe only what you would hear.", "When I listen to it, I hear"),
               echoes=("look", "looks", "looking", "listen", "listens", "listening")),
    "K2": dict(see=("Describe only what you would see, not what you would hear.", "I see"),
               hear=("Describe only what you would hear, not what you would see.", "I hear"), echoes=()),
}


def shifts(lm, cand: dict, base: int, n: int = 32, tokens: int = 12) -> tuple[list[float], list[float], float]:
    """Per inner seed 0-2 (phrasing i): the gate's visual and auditory shifts under ``cand``; the model's CPU s."""
    saved = (S.OPENINGS, S.CUE_ECHOES)
    S.OPENINGS = {"none": "", "see": cand["see"][1], "hear": cand["hear"][1]}
    S.CUE_ECHOES = saved[1] | frozenset(cand["echoes"])
    try:
        vis, aud, cpu = [], [], 0.0
        for inner in range(3):
            texts = S.captions(S.sample_stimuli(n, np.random.default_rng([base, inner])), inner)
            rows = [(cue, t) for cue in ("see", "hear") for t in texts]
            start = time.process_time()
            _, outs = representations(lm, [f"{t} {cand[c][0]}" for c, t in rows], (30,), tokens, batch_size=256,
                                      openings=[cand[c][1] for c, _ in rows],
                                      groups=[(i % n, "named") for i in range(len(rows))])
            cpu += time.process_time() - start
            see, hear = S.sense_fractions(outs[:n]), S.sense_fractions(outs[n:])
            vis.append(see[0] - hear[0])
            aud.append(hear[1] - see[1])
        return vis, aud, cpu
    finally:
        S.OPENINGS, S.CUE_ECHOES = saved


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-seeds", type=int, nargs="+", default=[113, 114, 115, 116])
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    args = ap.parse_args()
    if any(b < 100 for b in args.base_seeds):
        raise SystemExit("base seeds must be tuning seeds >= 100 (0-4 are the seed study's)")
    lm = load_language_model("smollm2-135m")
    result = {}
    for name in args.candidates:
        allv, cpu = [], 0.0
        for base in args.base_seeds:
            v, a, c = shifts(lm, CANDIDATES[name], base)
            allv += v + a
            cpu += c
            print(json.dumps({"candidate": name, "base_seed": base, "visual": [round(x, 4) for x in v],
                              "auditory": [round(x, 4) for x in a], "cpu_s": round(c, 1)}), flush=True)
        result[name] = {"min": min(allv), "mean": float(np.mean(allv)), "cpu": cpu}
    for name, r in result.items():
        r["projected_s"] = QUIET_COLD_S * r["cpu"] / result["K0"]["cpu"] if "K0" in result else float("nan")
        r["qualifies"] = r["min"] >= CUE_SHIFT + MARGIN and r["projected_s"] <= CEILING_S
        print(f"# {name}: min shift {r['min']:+.3f}, mean {r['mean']:+.3f}, model CPU {r['cpu']:.1f} s, "
              f"projected quiet cold {r['projected_s']:.1f} s, qualifies: {r['qualifies']}")
    ok = [n for n in result if result[n]["qualifies"]]
    pick = max(ok, key=lambda n: (result[n]["min"], n == "K0")) if ok else "K0 (none qualifies: nothing changes)"
    print(f"# RULE: {pick}")


if __name__ == "__main__":
    main()
