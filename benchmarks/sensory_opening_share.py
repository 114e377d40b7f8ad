"""How much of the cue gate's shift the forced answer opening gives without the instruction (tuning seeds only).

The gate "cue" (``claims.cue_gate_verdict``) reads, per inner seed (inner seed i uses caption phrasing i), the
mostly-visual fraction of 32 continuations (12 tokens) under "see" minus under "hear", and the mostly-auditory
fraction under "hear" minus under "see" (``stimuli.sense_fractions``). Under "see" the prompt ends with the "see"
instruction *and* the answer is opened with ``OPENINGS["see"]``, so the shift mixes the two. This script keeps the
package's openings and measure and changes only the instruction, per opening:

- ``cued``: the instruction of the opening's sense (what the gate reads);
- ``neutral``: the neutral instruction ``CUES["none"]`` ("Describe it."), same opening;
- ``contra``: the other sense's instruction ("... hear." before the "see" opening, and the mirror);
- ``instr_only``: the instruction of the sense with no opening (the model starts its answer itself).

``PYTHONPATH=src python benchmarks/sensory_opening_share.py`` prints one JSON line per base and inner seed and a
summary (mean over base seeds per phrasing). Base seeds < 100 (the seed study's 0-4) are refused. Diagnostic only:
nothing here feeds a verdict. Written after review 3 (notes/review_sensory3.md), which ran the same conditions with
the reverted "When I look at it, I see" openings.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.sensory import stimuli as S
from explorables.sensory.llm import load_language_model, representations

OTHER = {"see": "hear", "hear": "see"}
# condition -> (instruction cue, opening cue) for the row of each sense s
CONDITIONS = {
    "cued": lambda s: (s, s),
    "neutral": lambda s: ("none", s),
    "contra": lambda s: (OTHER[s], s),
    "instr_only": lambda s: (s, None),
}


def run_seed(lm, base: int, inner: int, n: int = 32, tokens: int = 12) -> dict:
    """The gate's two shifts under each condition for one base and inner seed (phrasing = inner)."""
    texts = S.captions(S.sample_stimuli(n, np.random.default_rng([base, inner])), inner)
    rows = [(c, s, i) for c in CONDITIONS for s in ("see", "hear") for i in range(n)]
    plan = [CONDITIONS[c](s) for c, s, _ in rows]  # (instruction cue, opening cue or None) per row
    items = [i for _, _, i in rows]
    _, outs = representations(
        lm, [S.prompt(texts[i], ins) for i, (ins, _) in zip(items, plan, strict=True)], (30,), tokens,
        batch_size=256, openings=[S.opening(op) if op else "" for _, op in plan],
        groups=[(i, "neutral" if ins == "none" else "named", ins) for i, (ins, _) in zip(items, plan, strict=True)],
    )  # fmt: skip
    res = {}
    for k, c in enumerate(CONDITIONS):
        see = S.sense_fractions(list(outs[2 * k * n : (2 * k + 1) * n]))
        hear = S.sense_fractions(list(outs[(2 * k + 1) * n : (2 * k + 2) * n]))
        res[c] = {"visual": round(see[0] - hear[0], 4), "auditory": round(hear[1] - see[1], 4)}
    res["example_neutral_see"] = outs[2 * 1 * n][:70]
    res["example_contra_see"] = outs[2 * 2 * n][:70]
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-seeds", type=int, nargs="+", default=[113, 114, 115, 116])
    args = ap.parse_args()
    if any(b < 100 for b in args.base_seeds):
        raise SystemExit("base seeds must be tuning seeds >= 100 (0-4 are the seed study's)")
    lm = load_language_model("smollm2-135m")
    print(f"# openings {S.OPENINGS}; instructions {S.CUES}", flush=True)
    table = {c: {a: [[] for _ in range(3)] for a in ("visual", "auditory")} for c in CONDITIONS}
    for base in args.base_seeds:
        for inner in range(3):
            start = time.time()
            r = run_seed(lm, base, inner)
            for c in CONDITIONS:
                for a in ("visual", "auditory"):
                    table[c][a][inner].append(r[c][a])
            print(
                json.dumps({"base_seed": base, "inner_seed": inner, "s": round(time.time() - start), **r}), flush=True
            )
    print("# mean over base seeds (min..max), per phrasing = inner seed; shift visual / auditory")
    for c in CONDITIONS:
        cells = []
        for p in range(3):
            v, a = table[c]["visual"][p], table[c]["auditory"][p]
            cells.append(
                f"p{p}: {np.mean(v):+.3f} ({min(v):+.2f}..{max(v):+.2f}) / "
                f"{np.mean(a):+.3f} ({min(a):+.2f}..{max(a):+.2f})"
            )
        print(f"# {c:10s} " + "; ".join(cells))
    allv = {c: [x for a in ("visual", "auditory") for p in range(3) for x in table[c][a][p]] for c in CONDITIONS}
    cued = np.array(allv["cued"])
    for c in CONDITIONS:
        x = np.array(allv[c])
        print(
            f"# {c:10s} all {len(x)} shifts: min {x.min():+.3f}, mean {x.mean():+.3f}; "
            f"mean ratio to cued {np.mean(x) / np.mean(cued):.2f}; >= 0.10 on {int((x >= 0.10).sum())}/{len(x)}"
        )
    d = cued - np.array(allv["contra"])
    print(
        f"# cued - contra (what the instruction moves with the opening held fixed): min {d.min():+.3f}, "
        f"mean {d.mean():+.3f}, max {d.max():+.3f}"
    )


if __name__ == "__main__":
    main()
