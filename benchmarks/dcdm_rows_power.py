"""Screen for benchmarks/dcdm_rows_power_rule.md: more intervention trials on the same trained models.

Runs the chapter at the book preset on one tuning base seed with the production intervention estimator wrapped:
the production numbers are computed first, exactly as the package does (same numpy generator; torch's global
generator restored after the extras), then, on the same member, with their own generators:

* R = 5 repeats of the production estimator (a random other used concept per input, 120 inputs): the per-member
  measurement noise;
* A: the 120 inputs, each towards every other used concept;
* B: every held-out input, one random other used concept each;
* C: every held-out input towards every other used concept.

Prints one JSON line per base seed (also appended to benchmarks/dcdm_rows_power_results.jsonl): every claim row's
word (production) and the intervention row's word per candidate, the per-seed numbers, and the CPU seconds of
the production estimator and of each candidate.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/dcdm_rows_power.py SEED [SEED ...]
"""

import json
import sys
import time

import numpy as np
import torch

from explorables.core.tables import apply_gates
from explorables.dcdm import claims as C
from explorables.dcdm import dcdm as M
from explorables.dcdm import experiment as X
from explorables.dcdm.metrics import majority_labels

REPEATS = 5
_production = X._intervention_scores
STATE: dict = {}


def estimate(models, e, x0, weights, target, labels_of, classify, t_edit) -> tuple[float, float]:
    """The production estimator on given (input, target) pairs: share with the new concept's label, with / without."""
    member = models.denoiser.member(e)
    pi_new = M.swap_weights(weights, torch.as_tensor(target))
    edited = M.intervene(x0, weights, pi_new, models.centres[e], member, models.schedule, t_edit).cpu().numpy()
    kept = M.intervene(x0, weights, weights, models.centres[e], member, models.schedule, t_edit).cpu().numpy()
    want = labels_of[target]
    return float((classify(edited) == want).mean()), float((classify(kept) == want).mean())


def pairs(weights, used, rng=None):
    """(input index, target) pairs: one random other used concept per input (``rng``) or every other one."""
    top = weights.argmax(-1).cpu().numpy()
    if rng is not None:
        tgt = np.array([rng.choice(used[used != k]) if (used != k).any() else k for k in top])
        return np.arange(len(top)), tgt
    idx = [(i, j) for i, k in enumerate(top) for j in used if j != k] or [(i, k) for i, k in enumerate(top)]
    a = np.array(idx)
    return a[:, 0], a[:, 1]


def wrapped(models, e, data, weights, usage, assign, classify, t_edit, rng):
    t0 = time.process_time()
    out = _production(models, e, data, weights, usage, assign, classify, t_edit, rng)
    STATE["cpu"]["production"] += time.process_time() - t0
    torch_state = torch.get_rng_state()
    labels_of = majority_labels(assign, data.y_train, len(usage))
    used = np.flatnonzero(usage >= 0.01)
    seed = STATE["seed"]
    n = len(weights)
    w_all = models.concept_weights(data.x_test)[e]
    t0 = time.process_time()
    reps = []
    for r in range(REPEATS):
        torch.manual_seed(10_000 * seed + 100 * e + r)
        i, tgt = pairs(weights, used, np.random.default_rng([seed, e, r]))
        reps.append(estimate(models, e, data.x_test[i], weights[i], tgt, labels_of, classify, t_edit))
    part = "mixture" if data.x_train.shape[1] == 2 else "images"
    STATE["reps"].setdefault(part, {})[e] = [h - b for h, b in reps]
    STATE["cpu"]["repeats"] += time.process_time() - t0
    for name, w, rng_c in (
        ("A", weights, None),
        ("B", w_all, np.random.default_rng([seed, e, 99])),
        ("C", w_all, None),
    ):
        torch.manual_seed(10_000 * seed + 100 * e + 77)
        t0 = time.process_time()
        i, tgt = pairs(w, used, rng_c)
        h, b = estimate(models, e, data.x_test[i], w[i], tgt, labels_of, classify, t_edit)
        STATE["cpu"][name] += time.process_time() - t0
        out[f"hit_{name}"], out[f"base_{name}"], out[f"n_{name}"] = h, b, len(i)
    out["n_production"] = n
    torch.set_rng_state(torch_state)
    return out


X._intervention_scores = wrapped


def main(seeds: list[int]) -> None:
    torch.set_num_threads(1)
    for seed in seeds:
        STATE.update(seed=seed, reps={}, cpu={k: 0.0 for k in ("production", "repeats", "A", "B", "C")})
        t0, w0 = time.process_time(), time.time()
        res = X.run(X.DCDMConfig.preset("book", seed=seed))
        total_cpu, wall = time.process_time() - t0, time.time() - w0
        rows = {}
        for r in apply_gates(C.claims(res)):
            if r.kind == "claim":
                rows[f"{r.claim} | {r.setting.split(',')[0]}"] = str(r.outcome)
        line = {"seed": seed, "cpu_total": round(total_cpu, 1), "wall": round(wall, 1), "rows": rows, "parts": {}}
        line["cpu"] = {k: round(v, 2) for k, v in STATE["cpu"].items()}
        for part in ("mixture", "images"):
            d = res.summary[part]["arms"]["dcdm"]
            hit, base = d["intervention_hit_per_seed"], d["intervention_base_per_seed"]
            gain = np.subtract(hit, base)
            reps = [STATE["reps"][part][e] for e in range(len(gain))]  # dcdm is the first arm: members 0..n-1
            p = {
                "production_gain": [round(g, 3) for g in gain],
                "production": C.intervention_verdict(hit, base),
                "inner_sd_production": round(float(np.std(gain, ddof=1)), 3),
            }
            p["repeat_gain_mean_per_member"] = [round(float(np.mean(x)), 3) for x in reps]
            if True:
                p["repeat_sd_per_member"] = [round(float(np.std(x, ddof=1)), 3) for x in reps]
            for name in ("A", "B", "C"):
                h, b = d[f"hit_{name}_per_seed"], d[f"base_{name}_per_seed"]
                g = np.subtract(h, b)
                p[f"{name}_gain"] = [round(v, 3) for v in g]
                p[f"{name}_n"] = d[f"n_{name}_per_seed"]
                p[f"{name}_inner_sd"] = round(float(np.std(g, ddof=1)), 3)
                p[name] = C.intervention_verdict(h, b)
            line["parts"][part] = p
        text = json.dumps(line)
        print(text, flush=True)
        with open("benchmarks/dcdm_rows_power_results.jsonl", "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]])
