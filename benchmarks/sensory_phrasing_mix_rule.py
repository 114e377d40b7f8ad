"""Do the caption phrasings mixed within each inner seed make the cue rows read one word over base seeds? On tuning
base seeds only (``benchmarks/sensory_phrasing_mix_rule.md``, committed before this script ran).

Today (C0) inner seed i of a run captions all of its items in phrasing i mod 4 (``experiment._alignment`` passes
``i % len(PHRASINGS)`` to ``seed_alignment``, which calls ``captions(stimuli, phrasing)``), so the four draws of the
interval are the four phrasings. C1 captions item j of inner seed i in phrasing (i + j) mod 4: every inner seed holds
all four phrasings, 8 items each (n = 32), and the stimulus draws, cues, openings, layers, k and every threshold are
C0's. C1 is applied here by replacing ``experiment.captions`` for the run (what a package change would do).

``PYTHONPATH=src python benchmarks/sensory_phrasing_mix_rule.py --candidate C0 --bases 135,136,137,138,139`` prints one
JSON line per base seed: every check's, gate's and claim's word, the claim rows' measured text, the gates' smallest
per-inner-seed margins (the headroom the rule asks), the controls' interval ends, and the run's CPU seconds
(``time.process_time``, model included). ``--evaluate LOG ...`` applies the rule to the lines. Base seeds outside
135-144 are refused.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.core.tables import apply_gates
from explorables.core.verdicts import interval
from explorables.sensory import claims as C
from explorables.sensory import experiment as E
from explorables.sensory.stimuli import PHRASINGS, captions

QUIET_COLD_S, QUIET_KERNEL_CPU_S, CEILING_S = 53.0, 80.0, 55.0  # page quiet 53.0 s wall, kernel CPU 80.0 s (k rule)
WORDS_HEADROOM, CUE_HEADROOM, CONTROL_HEADROOM = 0.02, 0.03, 0.005  # the rule file's headroom
CANDIDATES = ("C0", "C1")
WORDS = ("yes", "no", "partly")


def mixed_captions(stimuli, phrasing: int = 0) -> list[str]:
    """C1: item j in phrasing (phrasing + j) mod 4, i.e. (i + j) mod 4 for inner seed i."""
    per = [captions(stimuli, p) for p in range(len(PHRASINGS))]
    return [per[(phrasing + j) % len(PHRASINGS)][j] for j in range(stimuli.n)]


def headroom(res) -> dict:
    """The gates' smallest per-inner-seed margins over their bars, and the controls' interval ends vs chance."""
    a = res.summary["alignment"]
    chance = a["chance"]
    bow = [np.asarray(a["bag_of_words"][e]["values"]) - chance - C.WORDS_MARGIN for e in E.ENCODERS]
    vs, au = C.cue_shifts(res)
    ctrl = {}
    for name, v in a["control_draws"].items():
        iv = interval(v)
        ctrl[name] = round(max(abs(iv.low - chance), abs(iv.high - chance)), 4)
    return {"words_min_margin": round(float(min(b.min() for b in bow)), 4),
            "cue_min_margin": round(float(min(min(vs), min(au)) - C.CUE_SHIFT), 4),
            "controls_max_offset": ctrl}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--candidate", choices=CANDIDATES, default="C0")
    p.add_argument("--bases", default="135,136,137,138,139")
    p.add_argument("--evaluate", nargs="*", default=None, help="only read these logs' JSON lines and apply the rule")
    args = p.parse_args()
    if args.evaluate is not None:
        evaluate(args.evaluate)
        return
    bases = [int(b) for b in args.bases.split(",")]
    if min(bases) < 135 or max(bases) > 144:
        raise SystemExit("tuning base seeds must lie in 135-144")
    if args.candidate == "C1":
        E.captions = mixed_captions
    for base in bases:
        start = time.process_time()
        res = E.run(E.SensoryConfig.preset("book", seed=base))
        cpu = time.process_time() - start
        rows = [r for r in apply_gates(C.claims(res)) if r.kind in ("check", "gate", "claim")]
        line = {"base_seed": base, "candidate": args.candidate, "words": [r.outcome for r in rows],
                "rows": [f"{r.kind}:{r.name or r.claim[:40]}|{r.setting[:14]}" for r in rows],
                "measured": [r.measured[:200] for r in rows if r.kind == "claim"],
                "headroom": headroom(res), "captions": res.summary["alignment"]["captions"],
                "cpu_s": round(cpu, 1)}  # fmt: skip
        print(json.dumps(line), flush=True)


def evaluate(logs: list[str]) -> None:
    """The rule on the JSON lines of ``logs``: tuning seeds are those with a line for every candidate."""
    lines = [json.loads(x) for f in logs for x in open(f) if x.startswith("{")]
    bases = sorted(set.intersection(*({x["base_seed"] for x in lines if x["candidate"] == c} for c in CANDIDATES)))
    print(f"# tuning base seeds complete for every candidate: {bases}")
    if len(bases) < 3:
        print("# fewer than three: RULE: C0")
        return
    rows = next(x["rows"] for x in lines)
    is_claim = np.array([n.startswith("claim:") for n in rows])
    got = {c: {x["base_seed"]: x for x in lines if x["candidate"] == c} for c in CANDIDATES}
    cpu0 = np.mean([got["C0"][b]["cpu_s"] for b in bases])
    out = {}
    for cand in CANDIDATES:
        w = np.array([got[cand][b]["words"] for b in bases])
        h = [got[cand][b]["headroom"] for b in bases]
        passes = all(v == "pass" for ws in w for v in ws[~is_claim])
        room = all(x["words_min_margin"] >= WORDS_HEADROOM and x["cue_min_margin"] >= CUE_HEADROOM
                   and all(o <= C.CHANCE_TOL - CONTROL_HEADROOM for o in x["controls_max_offset"].values())
                   for x in h)  # fmt: skip
        agree = sum(len(set(w[:, j])) == 1 and w[0, j] in WORDS for j in np.flatnonzero(is_claim))
        unclear = int(np.sum(w[:, is_claim] == "unclear"))
        extra = np.mean([got[cand][b]["cpu_s"] for b in bases]) - cpu0
        cold = QUIET_COLD_S * (QUIET_KERNEL_CPU_S + extra) / QUIET_KERNEL_CPU_S
        ok = passes and room and cold <= CEILING_S
        out[cand] = (ok, agree)
        print(f"# {cand}: checks and gates pass {passes}; headroom {room} (words min "
              f"{min(x['words_min_margin'] for x in h):+.3f}, cue min {min(x['cue_min_margin'] for x in h):+.3f}, "
              f"controls max offset {max(max(x['controls_max_offset'].values()) for x in h):.3f}); claim rows "
              f"agreeing on a real word {agree}/{int(is_claim.sum())}; unclear row-seeds {unclear}; CPU {extra:+.1f} s "
              f"vs C0; projected quiet cold {cold:.1f} s; eligible {ok}")  # fmt: skip
        for j in np.flatnonzero(is_claim):
            print(f"#   {rows[j]}: {', '.join(w[:, j])}")
    pick = "C1" if out["C1"][0] and out["C1"][1] > out["C0"][1] else "C0"
    print(f"# RULE: {pick}")


if __name__ == "__main__":
    main()
