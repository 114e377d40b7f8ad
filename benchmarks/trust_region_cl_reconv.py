"""Chapter 12: the re-convergence row's power (benchmarks/trust_region_cl_reconv_rule.md, committed before this ran):
one book run per tuning base seed 136-145 with 8 repeats of the re-convergence measurement; the candidates R = 1, 4, 8
are the first R repeats of the same run. Per R and tuning base seed, the row's word (``comparison_verdict``,
unchanged); the pick is the smallest R whose word is the same on every tuning base seed, else the highest agreement
(ties to the smaller), adopted only if it is not 1 and agrees more often than R = 1. Writes
``benchmarks/trust_region_cl_reconv.json`` and prints the pick.

    PYTHONPATH=src nice -n 5 python benchmarks/trust_region_cl_reconv.py
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from explorables.core.verdicts import interval
from explorables.trust_region_cl.claims import NAMED_BASELINES, STEPS_MARGIN, comparison_verdict
from explorables.trust_region_cl.experiment import TRAINED, TrustRegionCLConfig, run

CANDIDATES = (1, 4, 8)
BASE_SEEDS = tuple(range(136, 141))  # the amendment of the rule: five, not ten
OUT = Path(__file__).with_suffix(".json")


def one(base: int) -> dict:
    cfg = TrustRegionCLConfig.preset("book", seed=base, reconverge_repeats=max(CANDIDATES))
    t0 = time.time()
    res = run(cfg)
    wall = time.time() - t0
    runs = np.asarray(res.curves["reconvergence"]["steps_per_repeat"])  # (R, M, K - 1)
    n = len(cfg.seeds)
    out = {"base_seed": base, "wall_s_under_load": round(wall, 1), "timings": res.summary["timings"], "by_r": {}}
    for r in CANDIDATES:
        per_member = runs[:r].mean((0, 2))  # (M,)
        steps = {m: per_member[i * n : (i + 1) * n] for i, m in enumerate(TRAINED)}
        adv = {m: steps[m] - steps["trcl"] for m in NAMED_BASELINES}
        word = comparison_verdict(adv, STEPS_MARGIN, "re-convergence steps")
        out["by_r"][str(r)] = {
            "word": word.split(":")[0],
            "verdict": word,
            "steps": {m: v.tolist() for m, v in steps.items()},
            "half_width": {m: float((interval(a).high - interval(a).low) / 2) for m, a in adv.items()},
            "advantage_mean": {m: float(a.mean()) for m, a in adv.items()},
        }
    print(base, {r: out["by_r"][str(r)]["word"] for r in CANDIDATES}, f"{wall:.0f} s", flush=True)
    return out


def decide(runs: list[dict]) -> dict:
    table = {}
    for r in CANDIDATES:
        words = [x["by_r"][str(r)]["word"] for x in runs]
        modal, agree = Counter(words).most_common(1)[0]
        table[str(r)] = {"words": words, "modal": modal, "agreement": agree,
                         "mean_half_width": {m: float(np.mean([x["by_r"][str(r)]["half_width"][m] for x in runs]))
                                             for m in NAMED_BASELINES}}  # fmt: skip
    full = [r for r in CANDIDATES if table[str(r)]["agreement"] == len(runs)]
    pick = full[0] if full else max(CANDIDATES, key=lambda r: (table[str(r)]["agreement"], -r))
    adopt = pick if pick != 1 and table[str(pick)]["agreement"] > table["1"]["agreement"] else 1
    return {"table": table, "pick": pick, "adopted": adopt}


def main() -> None:
    done = json.loads(OUT.read_text())["runs"] if OUT.is_file() and "--resume" in sys.argv else []
    done = [x for x in done if x["base_seed"] in BASE_SEEDS]
    have = {x["base_seed"] for x in done}
    runs = list(done)
    record = {"rule": "benchmarks/trust_region_cl_reconv_rule.md", "candidates": list(CANDIDATES),
              "base_seeds": list(BASE_SEEDS), "runs": runs}  # fmt: skip
    for b in BASE_SEEDS:
        if b not in have:
            runs.append(one(b))
            runs.sort(key=lambda x: x["base_seed"])
            OUT.write_text(json.dumps(record, indent=1) + "\n")  # after each seed: --resume goes on from here
    if len(runs) == len(BASE_SEEDS):
        record.update(decide(runs))
        OUT.write_text(json.dumps(record, indent=1) + "\n")
        print(json.dumps({k: record[k] for k in ("pick", "adopted")}), json.dumps(record["table"], indent=1))


if __name__ == "__main__":
    main()
