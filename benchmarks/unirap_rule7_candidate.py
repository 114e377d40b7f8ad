"""Issue 41, eleventh pass (``benchmarks/unirap_rule7.md``): the third candidate's tuning harness.

``unirap_rule6_candidate.py``'s B0 (the book's setup: best of two phase-1 starts, 400 steps) with one change:

* ``D3``: ``stage_fractions`` (0.10, 0.15) instead of (0.15, 0.15): the curriculum's stage 1 (detection) 40 steps
  instead of 60, stage 2 (+ segmentation) 60 as before, so phase 1 is 100 steps and phase 2 300 (was 280); every
  model still trains 400 steps.

Prints one JSON line per base seed and a total line (the same counts as rule 6's harness).

Usage: ``PYTHONPATH=src python benchmarks/unirap_rule7_candidate.py D3 BASE [BASE ...]``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

import unirap_rule6_candidate as R6
import unirap_steps_candidate as H

from explorables.core.threads import one_cpu_thread
from explorables.unirap import experiment as X
from explorables.unirap.training import Member

FRACTIONS = {"D3": (0.10, 0.15)}


def models(candidate: str, base: int) -> tuple[list[dict[str, float]], list[int]]:
    cfg = replace(X.UniRAPConfig.preset("book"), seed=base, seeds=H.MEMBER_SEEDS,
                  stage_fractions=FRACTIONS[candidate]).validated()
    parsing, pool_data, _ = X.datasets(cfg)
    pool = {k: torch.as_tensor(np.concatenate([parsing[k], pool_data[k]])) for k in X.ARRAYS}
    members = [Member("curriculum", cfg.n_labelled, s) for s in cfg.seeds]
    plans = [X.member_schedule(cfg, m) for m in members]
    split, k = X.phase_steps(cfg), cfg.phase1_starts
    first = X.make_model(cfg, list(cfg.seeds) * k, "unified", [r for r in range(k) for _ in cfg.seeds])
    rows = slice(0, split)
    order = plans * k
    per = R6.train_loop("B0", 1, first, pool, torch.as_tensor(np.stack([i[rows] for i, _ in order], 1)),
                        torch.as_tensor(np.stack([w[rows] for _, w in order], 1)), cfg.lr)
    chosen = per[-X.START_WINDOW:].mean(0).reshape(k, len(members)).argmin(0)
    model = X.make_model(cfg, list(cfg.seeds), "unified")
    model.load_state_dict(X.fork(first.state_dict(), [int(r) * len(members) + m for m, r in enumerate(chosen)],
                                 "unified"))
    rows = slice(split, cfg.n_steps)
    R6.train_loop("B0", 2, model, pool, torch.as_tensor(np.stack([i[rows] for i, _ in plans], 1)),
                  torch.as_tensor(np.stack([w[rows] for _, w in plans], 1)), cfg.phase2_lr)
    summary, _ = X.score(cfg, model, members, lambda m: str(m.seed))
    got = [{k: v["per_seed"][0] for k, v in summary[str(s)][str(cfg.n_labelled)].items()} for s in cfg.seeds]
    return got, chosen.tolist()


if __name__ == "__main__":
    candidate = sys.argv[1]
    if candidate not in FRACTIONS:
        raise SystemExit(f"candidate must be one of {tuple(FRACTIONS)}")
    bases = tuple(int(a) for a in sys.argv[2:])
    rows: list = []
    with one_cpu_thread("cpu"):
        for base in bases:
            start = time.perf_counter()
            got, chosen = models(candidate, base)
            rows += got
            so_far = R6.report(rows)
            print(json.dumps({"base": base, "candidate": candidate, "seconds": round(time.perf_counter() - start, 1),
                              "chosen_start": chosen, "models": got, "so_far": so_far}), flush=True)
            if so_far["failing"] > 0:
                print(json.dumps({"stopped": "a failing model: 'failing <= B0's 0' cannot hold"}), flush=True)
                break
    print(json.dumps({"candidate": candidate, "bases": list(bases[: len(rows) // 10]), **R6.report(rows)}), flush=True)
