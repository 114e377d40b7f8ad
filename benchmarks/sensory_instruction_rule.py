"""The cue gate's candidate instructions on tuning base seeds only, with the instruction-following checks of
``benchmarks/sensory_instruction_rule.md`` (committed before this script ran any candidate).

``PYTHONPATH=src python benchmarks/sensory_instruction_rule.py`` prints one JSON line per base and inner seed (per
candidate: the gate's two shifts with the candidate's own instruction ("cued") and with the other sense's instruction
before the same opening ("contra"); the neutral "Describe it." + opening shifts, shared by every candidate; the CPU
seconds of each candidate's cued rows) and the rule's outcome. Base seeds < 100 (0-4 are the seed study's) are refused.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from explorables.sensory import stimuli as S
from explorables.sensory.llm import load_language_model, representations

CUE_SHIFT, MARGIN, INSTR_MEAN, INSTR_PHRASING, QUIET_COLD_S, CEILING_S = 0.10, 0.05, 0.10, 0.05, 48.1, 55.0
NEUTRAL = "Describe it."
OPEN = {"see": "I see", "hear": "I hear"}
OTHER = {"see": "hear", "hear": "see"}
CANDIDATES = {
    "K0": {"see": "Describe only what you would see.", "hear": "Describe only what you would hear."},
    "K2": {"see": "Describe only what you would see, not what you would hear.",
           "hear": "Describe only what you would hear, not what you would see."},
    "K3": {"see": "Describe only what you would see; leave out the sound.",
           "hear": "Describe only what you would hear; leave out the look."},
}  # fmt: skip


def _shifts(outs: list[str], n: int) -> tuple[float, float]:
    """Rows ``outs[:n]`` under the "see" opening, ``outs[n:2n]`` under "hear": the gate's (visual, auditory) shift."""
    see, hear = S.sense_fractions(outs[:n]), S.sense_fractions(outs[n : 2 * n])
    return see[0] - hear[0], hear[1] - see[1]


def run_seed(lm, base: int, inner: int, names: list[str], n: int = 32, tokens: int = 12) -> dict:
    texts = S.captions(S.sample_stimuli(n, np.random.default_rng([base, inner])), inner)  # the book run's draw
    out: dict = {"base_seed": base, "inner_seed": inner}
    for name in names:  # cued rows: timed per candidate, as the page runs them (caption shared by its rows)
        rows = [(s, i) for s in ("see", "hear") for i in range(n)]
        start = time.process_time()
        _, outs = representations(lm, [f"{texts[i]} {CANDIDATES[name][s]}" for s, i in rows], (lm.n_layers,), tokens,
                                  batch_size=256, openings=[OPEN[s] for s, _ in rows],
                                  groups=[(i,) for _, i in rows])  # fmt: skip
        out[name] = {"cued": [round(x, 4) for x in _shifts(outs, n)], "cpu_s": round(time.process_time() - start, 2),
                     "example_see": outs[0][:60], "example_hear": outs[n][:60]}  # fmt: skip
    # contra (each candidate's other-sense instruction before the opening) and neutral ("Describe it." + opening)
    conds = [(name, OTHER) for name in names] + [("neutral", None)]
    rows = [(c, s, i) for c in range(len(conds)) for s in ("see", "hear") for i in range(n)]

    def instr(c: int, s: str) -> str:
        name, _ = conds[c]
        return NEUTRAL if name == "neutral" else CANDIDATES[name][OTHER[s]]

    _, outs = representations(lm, [f"{texts[i]} {instr(c, s)}" for c, s, i in rows], (lm.n_layers,), tokens,
                              batch_size=512, openings=[OPEN[s] for _, s, _ in rows],
                              groups=[(i, instr(c, s)) for c, s, i in rows])  # fmt: skip
    for c, (name, _) in enumerate(conds):
        sh = [round(x, 4) for x in _shifts(outs[2 * c * n : 2 * (c + 1) * n], n)]
        if name == "neutral":
            out["neutral"] = sh
        else:
            out[name]["contra"] = sh
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-seeds", type=int, nargs="+", default=[117, 118, 119, 120])
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    ap.add_argument(
        "--model", default="smollm2-135m", help="tiny-random only to check the script (numbers mean nothing)"
    )
    args = ap.parse_args()
    if any(b < 100 for b in args.base_seeds):
        raise SystemExit("base seeds must be tuning seeds >= 100 (0-4 are the seed study's)")
    lm = load_language_model(args.model)
    lines = []
    for base in args.base_seeds:
        for inner in range(3):
            r = run_seed(lm, base, inner, args.candidates)
            lines.append(r)
            print(json.dumps(r), flush=True)
    # the opening alone: does "Describe it." + "I see" / "I hear" meet the gate's rule (all 6 >= CUE_SHIFT)?
    neutral_pass = sum(all(x >= CUE_SHIFT for r in lines if r["base_seed"] == b for x in r["neutral"])
                       for b in args.base_seeds)  # fmt: skip
    neutral_all = [x for r in lines for x in r["neutral"]]
    print(f"# neutral (opening alone): mean {np.mean(neutral_all):+.3f}, min {min(neutral_all):+.3f}; gate rule met "
          f"on {neutral_pass} of {len(args.base_seeds)} base seeds")  # fmt: skip
    result = {}
    for name in args.candidates:
        cued = np.array([r[name]["cued"] for r in lines])  # (bases*3, 2)
        contra = np.array([r[name]["contra"] for r in lines])
        diff = cued - contra
        inner = np.array([r["inner_seed"] for r in lines])
        per_phrasing = [float(diff[inner == p].mean()) for p in range(3)]
        cpu = sum(r[name]["cpu_s"] for r in lines)
        result[name] = {"min": float(cued.min()), "mean": float(cued.mean()), "instr": float(diff.mean()),
                        "per_phrasing": per_phrasing, "cpu": cpu,
                        "per_phrasing_cued_min": [float(cued[inner == p].min()) for p in range(3)]}  # fmt: skip
    for name, r in result.items():
        r["projected_s"] = QUIET_COLD_S * r["cpu"] / result["K0"]["cpu"]
        r["qualifies"] = bool(
            r["min"] >= CUE_SHIFT + MARGIN
            and r["instr"] >= INSTR_MEAN
            and min(r["per_phrasing"]) >= INSTR_PHRASING
            and r["projected_s"] <= CEILING_S
        )
        print(f"# {name}: cued min {r['min']:+.3f} mean {r['mean']:+.3f} (min per phrasing "
              f"{', '.join(f'{x:+.3f}' for x in r['per_phrasing_cued_min'])}); cued - contra mean {r['instr']:+.3f}, "
              f"per phrasing {', '.join(f'{x:+.3f}' for x in r['per_phrasing'])}; model CPU {r['cpu']:.1f} s, "
              f"projected quiet cold {r['projected_s']:.1f} s; qualifies: {r['qualifies']}")  # fmt: skip
    ok = [n for n in result if result[n]["qualifies"]]
    if neutral_pass >= 2:
        print("# RULE: K0 (the opening alone meets the gate's rule on >= 2 tuning base seeds: nothing is adopted)")
    elif not ok:
        print("# RULE: K0 (none qualifies: nothing changes)")
    else:
        order = list(CANDIDATES)
        print(f"# RULE: {max(ok, key=lambda n: (round(result[n]['instr'], 6), -order.index(n)))}")


if __name__ == "__main__":
    main()
